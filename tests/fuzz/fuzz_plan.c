/* SPDX-License-Identifier: MIT */
/* libFuzzer target: the fault-plan grammar (faultinject/fi_plan*.c), as RG_FI_PLAN or a plan
 * file would hand it over (NUL-terminated). Errors are one line; no crash, no leak. */
#include "fi_plan.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct fi_plan plan;
    char err[512];
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    if (fi_plan_parse(text, "fuzz", &plan, err, sizeof(err)) != 0 && (!err[0] || strchr(err, '\n')))
        abort();
    free(text);
    return 0;
}
