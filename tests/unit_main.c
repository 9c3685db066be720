/* SPDX-License-Identifier: MIT */
/* Unit tests: pure logic, no device needed. Runs on the host, plain and under ASan/UBSan. */
#include "common/rg_check.h"

#include <stdlib.h>

int main(void)
{
    /* RG_CHECK_SHARD=K/2 splits this order; under ASan the first half (fi_plan, scenario) took
     * 159 s and the second 80 s side by side, the best of the three orders tried. */
    static Suite *(*const suites[])(void) = {
        rg_suite_status,        rg_suite_reduce,        rg_suite_config,  rg_suite_verbs_gid,
        rg_suite_vpair_pattern, rg_suite_plan,          rg_suite_fi_plan, rg_suite_fi_own,
        rg_suite_scenario,      rg_suite_data,          rg_suite_report,  rg_suite_judge,
        rg_suite_sweep,         rg_suite_sidechan,      rg_suite_parse,   rg_suite_paths,
        rg_suite_bench,         rg_suite_timeline,      rg_suite_clock,   rg_suite_slow,
        rg_suite_measure,       rg_suite_opt,           rg_suite_triage,  rg_suite_signature,
        rg_suite_trace,         rg_suite_ev_schema,     rg_suite_tri_qp,  rg_suite_symbolize,
        rg_suite_wire,          rg_suite_sweep_outcome, rg_suite_objcode, rg_suite_compare,
        rg_suite_sides,         rg_suite_progress,      rg_suite_phases,
    };
    const char *label = getenv("RG_TEST_LABEL");
    return rg_check_main(label && *label ? label : "unit", suites,
                         (int)(sizeof(suites) / sizeof(suites[0])));
}
