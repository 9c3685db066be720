/* SPDX-License-Identifier: MIT */
/*
 * railguard exec --count: what each process of each rank did, read back from its evidence
 * after the run, so a fault plan can be written against what the program really does (which
 * op it posts, how many completions each queue gets, which call sites it polls from) rather
 * than guessed and reported NOT_EXERCISED afterwards.
 */
#include "rg_exec.h"

#include <stdio.h>
#include <stdlib.h>

static const char *const qp_type[] = {
    [2] = "RC", [3] = "UC", [4] = "UD", [9] = "XRC_SEND", [10] = "XRC_RECV"};

static void by_op(FILE *f, const uint64_t *posts, const uint64_t *cqe)
{
    for (int op = FI_OP_SEND; op <= FI_OP_ATOMIC; op++)
        if (posts[op] || cqe[op])
            fprintf(f, "  %s %llu/%llu", fi_op_name((enum fi_op)op), (unsigned long long)posts[op],
                    (unsigned long long)cqe[op]);
}

static void one_rank(FILE *f, const char *dir, int r)
{
    /* 3 MB: the heap's (a leak check reads .bss whole at every exit). */
    rg_evidence *ev = calloc(1, sizeof(*ev));
    char err[400];
    if (!ev || rg_evidence_read_rank(dir, r, ev, err, sizeof(err)) != 0) {
        fprintf(f, "  rank %d: evidence unreadable: %s\n", r, ev ? err : "out of memory");
        free(ev);
        return;
    }
    if (!ev->totals) {
        fprintf(f,
                "  rank %d: no counts (the shim never summarised: it did not run under it, "
                "or was killed before its exit)\n",
                r);
        free(ev);
        return;
    }
    fprintf(f,
            "  rank %d: %llu QP(s), %llu CQ(s); posted send %llu, recv %llu; %llu polls, %llu "
            "completions (%llu in error)\n",
            r, (unsigned long long)ev->qps, (unsigned long long)ev->cqs,
            (unsigned long long)ev->posts_send, (unsigned long long)ev->posts_recv,
            (unsigned long long)ev->polls, (unsigned long long)ev->cqe,
            (unsigned long long)ev->cqe_err);
    fprintf(f, "    by op (posted/completed, what op= and nth= count):");
    by_op(f, ev->op_posts, ev->op_cqe);
    fputc('\n', f);
    for (int i = 0; i < ev->nqpl; i++) {
        const struct rg_ev_qpl *q = &ev->qpl[i];
        const char *t = q->type >= 0 && q->type < 11 && qp_type[q->type] ? qp_type[q->type] : "?";
        fprintf(f, "    qp=#%lld (qp %llu on %s, %s%s, pid %ld):", (long long)q->ord,
                (unsigned long long)q->qpn, q->dev, t, q->srq ? ", receives from an SRQ" : "",
                q->pid);
        by_op(f, q->posts, q->cqe);
        fputc('\n', f);
    }
    if (ev->qpl_over)
        fprintf(f, "    and %d QP(s) more\n", ev->qpl_over);
    for (int i = 0; i < ev->nsites; i++) {
        const rg_ev_site *s = &ev->site[i];
        if (!s->verb[0])
            continue;
        rg_sym_site name;
        char why[600], text[800], site[600];
        rg_sym_sites(ev->objs[s->obj], &s->off, 1, &name, why, sizeof(why));
        rg_ev_site_text(ev, s, 1, true, site, sizeof(site));
        /* The site is already OBJ+0xOFF: only what names it more is said after it. */
        if (name.func[0] && !name.nearest)
            snprintf(text, sizeof(text), "%s%s%s", name.func, name.where[0] ? " at " : "",
                     name.where);
        else if (name.func[0])
            snprintf(text, sizeof(text), "no debug info; nearest symbol: %s", name.func);
        else
            snprintf(text, sizeof(text), "no debug info, no symbol");
        fprintf(f, "    site=%s  %-9s %llu call(s)", site, s->verb, (unsigned long long)s->calls);
        for (int op = FI_OP_SEND; op <= FI_OP_ATOMIC; op++)
            if (s->ops[op])
                fprintf(f, " %s %llu", fi_op_name((enum fi_op)op), (unsigned long long)s->ops[op]);
        fprintf(f, "  %s\n", text);
    }
    if (ev->sites_lost || ev->sites_over)
        fprintf(f, "    calls from sites not kept: %llu (tables full)\n",
                (unsigned long long)(ev->sites_lost + (uint64_t)ev->sites_over));
    free(ev);
}

void exec_count_table(FILE *f, const char *dir, int ranks)
{
    fprintf(f, "\ncounts (railguard exec --count), each process's last summary:\n");
    for (int r = 0; r < ranks; r++)
        one_rank(f, dir, r);
}
