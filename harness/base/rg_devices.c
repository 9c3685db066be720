/* SPDX-License-Identifier: MIT */
/* Device lists: "rxe0,rxe1" from the command line, and a JACCL devices file for the ranks. */
#include "base/rg_base.h"
#include "rg_parse.h"

#include <stdio.h>
#include <string.h>

int rg_devices_write(const char *path, int ranks, int rails, const char (*devices)[64])
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fputc('[', f);
    for (int i = 0; i < ranks; i++) {
        fputs(i ? ",\n [" : "[", f);
        for (int j = 0; j < ranks; j++) {
            fputs(j ? "," : "", f);
            if (i == j) {
                fputs("null", f);
                continue;
            }
            fputc('[', f);
            for (int k = 0; k < rails; k++)
                fprintf(f, "%s\"%s\"", k ? "," : "", devices[k]);
            fputc(']', f);
        }
        fputc(']', f);
    }
    fputs("]\n", f);
    return fclose(f);
}

int rg_devices_parse(const char *cmd, const char *list, const char *from, char (*devices)[64],
                     int *n)
{
    char buf[512], shown[72];
    *n = 0;
    if (!list || strlen(list) >= sizeof(buf)) {
        fprintf(stderr, "railguard %s: %s: bad device list\n", cmd, from);
        return -1;
    }
    snprintf(buf, sizeof(buf), "%s", list);
    for (char *save = NULL, *t = strtok_r(buf, ", ", &save); t; t = strtok_r(NULL, ", ", &save)) {
        if (*n == RG_MAX_RAILS || strlen(t) >= 64) {
            fprintf(stderr, "railguard %s: %s: at most %d devices of < 64 characters: '%s'\n", cmd,
                    from, RG_MAX_RAILS, rg_parse_show(t, shown, sizeof(shown)));
            return -1;
        }
        snprintf(devices[(*n)++], 64, "%s", t);
    }
    if (!*n) {
        fprintf(stderr, "railguard %s: %s: no device named\n", cmd, from);
        return -1;
    }
    return 0;
}
