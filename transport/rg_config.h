/* SPDX-License-Identifier: MIT */
/*
 * rg_config.h - the devices file (JACCL's format) and the environment, turned into what
 * one rank needs: its row of the device matrix.
 */
#ifndef RG_CONFIG_H
#define RG_CONFIG_H

#include "rg_internal.h"

/*
 * One rank's row of the devices file. Cell [i][j] of the N x N JSON array is null on the
 * diagonal, a device name, or a non-empty list of names (one per rail): the device rank i
 * uses for rail k toward rank j.
 */
struct rg_devices {
    int size;                 /* N */
    int rank;                 /* whose row this is */
    int nrails[RG_MAX_RANKS]; /* 0 on the diagonal */
    char names[RG_MAX_RANKS][RG_MAX_RAILS][RG_DEVNAME_MAX];
};

/*
 * Parses and validates the whole matrix, keeps row `rank`. `source` names the text in
 * messages (a path, or "MLX_IBV_DEVICES"). Every problem is RG_ERR_CONFIG with a one-line
 * message naming source and cell, e.g. "devices.json: [1][2]: expected a device name or a
 * list of names, got a number".
 */
rg_status rg__devices_parse(const char *text, const char *source, int rank, struct rg_devices *out,
                            struct rg_err *e);
/* Reads the file at path (at most 1 MiB) and parses it. */
rg_status rg__devices_load(const char *path, int rank, struct rg_devices *out, struct rg_err *e);

#endif
