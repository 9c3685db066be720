/* SPDX-License-Identifier: MIT */
/* libFuzzer target: the devices-file parser (transport/rg_config.c, JACCL's format) for ranks
 * 0..3 of whatever matrix the bytes hold. Errors are one line; no crash, no leak. */
#include "rg_config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct rg_devices dv;
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    for (int rank = 0; rank < 4; rank++) {
        struct rg_err e = {0};
        if (rg__devices_parse(text, "fuzz.json", rank, &dv, &e) != RG_OK &&
            (!e.msg[0] || strchr(e.msg, '\n')))
            abort();
    }
    free(text);
    return 0;
}
