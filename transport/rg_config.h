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

/*
 * The job secret from the environment: RG_SECRET, else the first line of RG_SECRET_FILE (a
 * regular file that group and others cannot read). Writes it to out (RG_SECRET_MAX + 1 bytes)
 * and returns RG_OK, or RG_OK with out "" when neither is set; a bad value or file is
 * RG_ERR_CONFIG with one line in err naming the variable. Shared by rg_config_from_env and
 * rg_comm_create, so a plugin that fills rg_config by hand still finds the launcher's secret.
 */
rg_status rg__secret_from_env(char *out, char *err, size_t errlen);

#endif
