/* SPDX-License-Identifier: MIT */
#include "rg_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int rg_check_main(const char *label, Suite *(*const *suites)(void), int n)
{
    SRunner *sr = srunner_create(NULL);
    for (int i = 0; i < n; i++)
        srunner_add_suite(sr, suites[i]());
    /* Forked always: a crash or hang in one test is that test's failure, not the run's end. */
    srunner_set_fork_status(sr, CK_FORK);
    srunner_run_all(sr, CK_NORMAL);
    int run = srunner_ntests_run(sr), failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    printf("%s: %d passed, %d failed\n", label, run - failed, failed);
    const char *tally = getenv("RG_TALLY");
    if (tally && *tally) {
        FILE *f = fopen(tally, "a");
        if (!f) {
            fprintf(stderr, "%s: cannot append to RG_TALLY file %s\n", label, tally);
            return 1;
        }
        fprintf(f, "%s %d %d\n", label, run - failed, failed);
        fclose(f);
    }
    /* A run that executed nothing is not a pass. */
    return failed == 0 && run > 0 ? 0 : 1;
}

int rg_check_devices(char names[][64], int max)
{
    const char *s = getenv("RG_SOFTROCE_DEVICES");
    int n = 0;
    while (s && *s && n < max) {
        size_t len = strcspn(s, " ");
        if (len > 0 && len < 64) {
            memcpy(names[n], s, len);
            names[n][len] = '\0';
            n++;
        }
        s += len;
        s += strspn(s, " ");
    }
    return n;
}
