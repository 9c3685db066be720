/* SPDX-License-Identifier: MIT */
/* libFuzzer target: the scenario parser (harness/rg_scenario.c) on arbitrary bytes. Every input
 * must end in 0 or -1 with one line in err: no crash, no leak, no read past the input. */
#include "scenario/rg_scenario.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static rg_scenario sc;
    char err[512];
    /* An exact-size copy, so ASan sees a read one byte past the text. */
    char *text = malloc(size ? size : 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    int rc = rg_scenario_parse(text, size, "fuzz.yaml", &sc, err, sizeof(err));
    if (rc != 0 && (!err[0] || strchr(err, '\n')))
        abort(); /* a refusal is one line, always */
    free(text);
    return 0;
}
