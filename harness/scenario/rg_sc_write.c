/* SPDX-License-Identifier: MIT */
/* A scenario written back as YAML (rg_sc_parse.h): what a sweep's reproduce file holds. */
#include "rg_sc_parse.h"
#include "data/rg_data.h"
#include "fi_plan.h"
#include "rg_parse.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

/* --- writing ------------------------------------------------------------------------------- */

/* Rules are the plan grammar's words: quoted, since a rule may hold "#" (qp=#2). */
static void write_quoted(FILE *f, const char *str)
{
    fputc('"', f);
    for (; *str; str++) {
        if (*str == '"' || *str == '\\')
            fputc('\\', f);
        fputc(*str, f);
    }
    fputc('"', f);
}

int rg_scenario_write(FILE *f, const rg_scenario *sc, const char *comment)
{
    char want[RG_SC_EXPECT_STR_MAX];
    if (comment && *comment)
        fprintf(f, "# %s\n", comment);
    fprintf(f, "name: %s\nranks: %d\n", sc->name, sc->ranks);
    /* %.17g: the seconds read back as the same double. */
    if (!sc->exec.on) {
        /* The shape as the file had it: what the transport fits stays its to fit. */
        if (sc->rails_fit)
            fprintf(f, "rails: up to %d\n", sc->rails_asked);
        else
            fprintf(f, "rails: %d\n", sc->rails);
        if (!sc->qp_fit)
            fprintf(f, "qp: %s\n", sc_qp_names[sc->qp]);
        fprintf(f, "algorithm: %s\ntimeout: %.17g\nzero_copy: %s\n", sc_algo_names[sc->algo],
                sc->timeout_s, sc->zero_copy ? "true" : "false");
    }
    fprintf(f, "deadline: %.17g\nseed: %llu\nownership: %s\n", sc->deadline_s,
            (unsigned long long)sc->seed, sc->ownership ? "true" : "false");
    if (sc->trace)
        fputs("trace: true\n", f);
    if (sc->exclusive[0])
        fprintf(f, "exclusive: %s\n", sc->exclusive);
    if (sc->nenv) {
        fputs("env:\n", f);
        for (int i = 0; i < sc->nenv; i++) {
            fprintf(f, "  %s: ", sc->env[i].name);
            write_quoted(f, sc->env[i].value);
            fputc('\n', f);
        }
    }
    if (sc->nfaults) {
        fputs("faults:\n", f);
        for (int i = 0; i < sc->nfaults; i++) {
            fputs("  - {rule: ", f);
            write_quoted(f, sc->fault[i].rule);
            fprintf(f, ", optional: %s}\n", sc->fault[i].optional ? "true" : "false");
        }
    }
    if (sc->exec.on) {
        static const char *const keys[] = {"command", "server", "client", "launcher"};
        const char *vals[] = {sc->exec.command, sc->exec.server, sc->exec.client,
                              sc->exec.launcher};
        fputs("exec:\n", f);
        for (int k = 0; k < 4; k++) {
            if (!vals[k][0])
                continue;
            fprintf(f, "  %s: ", keys[k]);
            write_quoted(f, vals[k]);
            fputc('\n', f);
        }
        if (sc->exec.client_after >= 0)
            fprintf(f, "  client_after: %.17g\n", sc->exec.client_after);
        if (sc->exec.services) {
            fputs("  service: [", f);
            for (int r = 0, n = 0; r < 64; r++)
                if (sc->exec.services & (UINT64_C(1) << r))
                    fprintf(f, "%s%d", n++ ? ", " : "", r);
            fprintf(f, "]\n  service_grace: %.17g\n", sc->exec.service_grace);
        }
    } else {
        fputs("program:\n", f);
    }
    for (int i = 0; i < sc->nops; i++) {
        const rg_sc_op *op = &sc->ops[i];
        unsigned keys = sc_kind_keys[op->kind];
        fprintf(f, "  - {op: %s", sc_kind_names[op->kind]);
        if (keys & B(S_DTYPE))
            fprintf(f, ", dtype: %s", rg_data_dtype_name(op->dtype));
        if (keys & B(S_COUNT))
            fprintf(f, ", count: %zu", op->count);
        if (keys & B(S_REDOP))
            fprintf(f, ", redop: %s", rg_data_redop_name(op->redop));
        if (keys & B(S_ROOT))
            fprintf(f, ", root: %d", op->root);
        if (keys & B(S_FROM))
            fprintf(f, ", from: %d, to: %d", op->from, op->to);
        if (keys & B(S_REPEAT))
            fprintf(f, ", repeat: %d", op->repeat);
        if (keys & B(S_INPLACE))
            fprintf(f, ", inplace: %s", op->inplace ? "true" : "false");
        if ((keys & B(S_VALUES)) && op->values != RG_VALUES_EXACT)
            fprintf(f, ", values: %s", rg_data_values_names[op->values]);
        fputs("}\n", f);
    }
    fputs("expect:\n", f);
    for (int r = 0; r < sc->ranks; r++)
        fprintf(f, "  %d: %s\n", r,
                rg_sc_expect_str(sc->expect[r], sc->expect_at[r], sc->expect_cls[r], want,
                                 sizeof(want)));
    return ferror(f) ? -1 : 0;
}

int rg_scenario_save(const char *path, const rg_scenario *sc, const char *comment)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    int rc = rg_scenario_write(f, sc, comment);
    return fclose(f) != 0 || rc ? -1 : 0;
}
