/* SPDX-License-Identifier: MIT */
/*
 * The trigger: whether a rule fires at its n-th matching event (nth, every, count, prob), and
 * the seeded draw prob uses. Pure, like the grammar (fi_plan.c): the unit tests cover every
 * trigger kind without a device, and the same seed fires at the same events on every platform.
 */
#include "fi_plan.h"

#include <stdbool.h>
#include <stdint.h>

#define FI__GOLDEN 0x9e3779b97f4a7c15ull

/* splitmix64's finalizer: every input bit reaches every output bit. */
static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

double fi_draw(uint64_t seed, int idx, uint64_t n)
{
    /*
     * Each input is mixed before the next joins, so related inputs (seed s at event n+1, seed
     * s+1 at event n) do not line up the way a plain xor or sum of the three would. Integer
     * arithmetic and an exact 53-bit conversion: the same draw on every platform.
     */
    uint64_t x = mix64(seed + FI__GOLDEN);
    x = mix64(x + (uint64_t)(int64_t)idx * FI__GOLDEN);
    x = mix64(x + n * FI__GOLDEN);
    return (double)(x >> 11) * 0x1.0p-53;
}

bool fi_rule_fires(const struct fi_rule *r, int idx, uint64_t n, uint64_t fired)
{
    if (!r || n == 0)
        return false;
    if (r->count && fired >= r->count)
        return false;
    if (r->every) {
        uint64_t start = r->nth ? r->nth : r->every;
        if (n < start || (n - start) % r->every != 0)
            return false;
    } else if (r->nth && (n != r->nth || fired > 0)) {
        return false;
    }
    /* With nth or every as well, prob thins out their events rather than replacing them. */
    if (r->prob > 0 && !(fi_draw(r->seed, idx, n) < r->prob))
        return false;
    return true;
}
