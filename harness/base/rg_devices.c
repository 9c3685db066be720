/* SPDX-License-Identifier: MIT */
/* Device lists: "rxe0,rxe1" from the command line, and a JACCL devices file for the ranks. */
#include "base/rg_base.h"
#include "rg_parse.h"

#include <jansson.h>
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

int rg_devices_of_rank(const char *path, int rank, char (*devices)[64], int *n, char *err,
                       size_t errlen)
{
    json_error_t je;
    *n = 0;
    json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
    if (!root) {
        snprintf(err, errlen, "%s:%d: %s", path, je.line, je.text);
        return -1;
    }
    /* [rank][peer] = [rail devices], one device (one rail) or null (itself): the rank's rails
     * are those of its first peer's entry, as every entry of a row names the rank's own. */
    json_t *row = json_is_array(root) ? json_array_get(root, (size_t)rank) : NULL;
    size_t i;
    json_t *cell, *rails = NULL, *one = NULL;
    for (i = 0; json_is_array(row) && i < json_array_size(row) && !rails; i++) {
        cell = json_array_get(row, i);
        if (json_is_array(cell) || json_is_string(cell))
            rails = cell;
    }
    if (json_is_string(rails)) {
        one = json_array();
        json_array_append(one, rails);
        rails = one;
    }
    int rc = -1;
    if (!rails) {
        snprintf(err, errlen, "%s: no row of rails for rank %d", path, rank);
    } else {
        json_t *d;
        rc = 0;
        json_array_foreach(rails, i, d)
        {
            if (!json_is_string(d) || strlen(json_string_value(d)) >= 64 || *n == RG_MAX_RAILS) {
                snprintf(err, errlen, "%s: rank %d: rail %zu is not a device name", path, rank, i);
                rc = -1;
                break;
            }
            snprintf(devices[(*n)++], 64, "%s", json_string_value(d));
        }
    }
    json_decref(one);
    json_decref(root);
    return rc;
}
