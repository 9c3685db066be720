/* SPDX-License-Identifier: MIT */
/* Integration tests: real verbs traffic on the rxe devices ci/softroce brought up. */
#include "common/rg_check.h"

#include <stdio.h>

int main(void)
{
    static Suite *(*const suites[])(void) = {
        rg_suite_it_verbs, rg_suite_it_coll, rg_suite_it_fi,    rg_suite_it_plugin,
        rg_suite_it_run,   rg_suite_it_exec, rg_suite_it_bench, rg_suite_it_report,
    };
    char devs[8][64];
    int n = rg_check_devices(devs, 8);
    /* Without devices nothing here can run, and that must not look like a pass. */
    if (n == 0) {
        fprintf(stderr, "integration: no rxe devices: RG_SOFTROCE_DEVICES is empty; run through "
                        "ci/softroce exec (make check does)\n");
        return 2;
    }
    printf("integration: on rxe device(s):");
    for (int i = 0; i < n; i++)
        printf(" %s", devs[i]);
    printf("\n");
    fflush(stdout);
    return rg_check_main("integration", suites, (int)(sizeof(suites) / sizeof(suites[0])));
}
