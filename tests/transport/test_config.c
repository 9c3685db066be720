/* SPDX-License-Identifier: MIT */
/*
 * The configuration: the devices file (JACCL's N x N matrix) parsed, validated and cut to one
 * rank's row, read from disk with a size limit, and the environment with its precedence.
 */
#include "common/rg_check.h"
#include "rg_config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* --- helpers ------------------------------------------------------------------------------- */

static rg_status parse(const char *json, int rank, struct rg_devices *d, struct rg_err *e)
{
    rg__err_clear(e);
    return rg__devices_parse(json, "devices.json", rank, d, e);
}

/* Parses json as rank `rank` and expects RG_ERR_CONFIG with `needle` in a one-line message. */
static void expect_bad(const char *what, const char *json, int rank, const char *needle)
{
    struct rg_devices d;
    struct rg_err e;

    memset(&d, 0x5a, sizeof(d));
    rg_status st = parse(json, rank, &d, &e);
    ck_assert_msg(st == RG_ERR_CONFIG, "%s: status %s, message '%s'", what, rg_err_name(st), e.msg);
    ck_assert_int_eq(e.st, RG_ERR_CONFIG);
    ck_assert_msg(strncmp(e.msg, "devices.json", 12) == 0, "%s: no source in '%s'", what, e.msg);
    ck_assert_msg(strstr(e.msg, needle) != NULL, "%s: '%s' not in '%s'", what, needle, e.msg);
    ck_assert_msg(strchr(e.msg, '\n') == NULL, "%s: message spans lines: '%s'", what, e.msg);
    /* A failed parse leaves no half-filled row behind. */
    static const struct rg_devices zero;
    ck_assert_msg(memcmp(&d, &zero, sizeof(d)) == 0, "%s: output not cleared", what);
}

/*
 * An n x n matrix with `rails` rails per link (0: a plain string per cell). Rank i's device
 * toward j on rail k is "r<i>_<j>_<k>". Returns a malloc'd string.
 */
static char *matrix_json(int n, int rails)
{
    size_t cap = (size_t)n * (size_t)n * (size_t)(rails ? rails : 1) * 24 + 16, len = 0;
    char *s = malloc(cap);
    ck_assert_ptr_nonnull(s);
    len += (size_t)snprintf(s + len, cap - len, "[");
    for (int i = 0; i < n; i++) {
        len += (size_t)snprintf(s + len, cap - len, "%s[", i ? "," : "");
        for (int j = 0; j < n; j++) {
            const char *sep = j ? "," : "";
            if (i == j) {
                len += (size_t)snprintf(s + len, cap - len, "%snull", sep);
            } else if (rails == 0) {
                len += (size_t)snprintf(s + len, cap - len, "%s\"r%d_%d_0\"", sep, i, j);
            } else {
                len += (size_t)snprintf(s + len, cap - len, "%s[", sep);
                for (int k = 0; k < rails; k++)
                    len += (size_t)snprintf(s + len, cap - len, "%s\"r%d_%d_%d\"", k ? "," : "", i,
                                            j, k);
                len += (size_t)snprintf(s + len, cap - len, "]");
            }
        }
        len += (size_t)snprintf(s + len, cap - len, "]");
    }
    snprintf(s + len, cap - len, "]");
    ck_assert_uint_lt(len, cap - 1);
    return s;
}

/* Checks d against matrix_json(n, rails) as seen by `rank`. */
static void expect_generated_row(const struct rg_devices *d, int n, int rails, int rank)
{
    ck_assert_int_eq(d->size, n);
    ck_assert_int_eq(d->rank, rank);
    for (int j = 0; j < n; j++) {
        if (j == rank) {
            ck_assert_int_eq(d->nrails[j], 0);
            continue;
        }
        ck_assert_int_eq(d->nrails[j], rails ? rails : 1);
        for (int k = 0; k < d->nrails[j]; k++) {
            char want[RG_DEVNAME_MAX];
            snprintf(want, sizeof(want), "r%d_%d_%d", rank, j, k);
            ck_assert_str_eq(d->names[j][k], want);
        }
    }
}

/* --- valid matrices ------------------------------------------------------------------------ */

START_TEST(test_parse_2x2_plain_names)
{
    static const char json[] = "[[null, \"mlx5_0\"], [\"mlx5_1\", null]]";
    struct rg_devices d;
    struct rg_err e;

    ck_assert_int_eq(parse(json, 0, &d, &e), RG_OK);
    ck_assert_int_eq(e.st, RG_OK);
    ck_assert_int_eq(d.size, 2);
    ck_assert_int_eq(d.rank, 0);
    ck_assert_int_eq(d.nrails[0], 0);
    ck_assert_int_eq(d.nrails[1], 1);
    ck_assert_str_eq(d.names[1][0], "mlx5_0");

    ck_assert_int_eq(parse(json, 1, &d, &e), RG_OK);
    ck_assert_int_eq(d.rank, 1);
    ck_assert_int_eq(d.nrails[0], 1);
    ck_assert_int_eq(d.nrails[1], 0);
    ck_assert_str_eq(d.names[0][0], "mlx5_1");
}
END_TEST

/* Loop over the ranks: each row of a 3x3 matrix with two rails per link. */
START_TEST(test_parse_3x3_two_rails)
{
    char *json = matrix_json(3, 2);
    struct rg_devices d;
    struct rg_err e;

    ck_assert_int_eq(parse(json, _i, &d, &e), RG_OK);
    expect_generated_row(&d, 3, 2, _i);
    free(json);
}
END_TEST

/* A 4x4 matrix that mixes plain names and lists of one to four rails. */
static const char mixed_4x4[] =
    "[\n"
    " [null, \"a01\", [\"a02x\", \"a02y\"], [\"a03.0\", \"a03.1\", \"a03.2\", \"a03.3\"]],\n"
    " [[\"b10\"], null, \"b12\", [\"b13-0\", \"b13-1\", \"b13-2\"]],\n"
    " [[\"c20\", \"C20\"], [\"c21\"], null, \"c23\"],\n"
    " [[\"d30\", \"d31\", \"d32\", \"d33\"], [\"d31_a\", \"d31_b\", \"d31_c\"], \"d32\", null]\n"
    "]\n";
static const int mixed_rails[4][4] = {{0, 1, 2, 4}, {1, 0, 1, 3}, {2, 1, 0, 1}, {4, 3, 1, 0}};
static const char *const mixed_names[4][4][RG_MAX_RAILS] = {
    {{""}, {"a01"}, {"a02x", "a02y"}, {"a03.0", "a03.1", "a03.2", "a03.3"}},
    {{"b10"}, {""}, {"b12"}, {"b13-0", "b13-1", "b13-2"}},
    {{"c20", "C20"}, {"c21"}, {""}, {"c23"}},
    {{"d30", "d31", "d32", "d33"}, {"d31_a", "d31_b", "d31_c"}, {"d32"}, {""}},
};

START_TEST(test_parse_4x4_mixed)
{
    struct rg_devices d;
    struct rg_err e;

    ck_assert_int_eq(parse(mixed_4x4, _i, &d, &e), RG_OK);
    ck_assert_int_eq(d.size, 4);
    ck_assert_int_eq(d.rank, _i);
    for (int j = 0; j < 4; j++) {
        ck_assert_int_eq(d.nrails[j], mixed_rails[_i][j]);
        for (int k = 0; k < d.nrails[j]; k++)
            ck_assert_str_eq(d.names[j][k], mixed_names[_i][j][k]);
    }
}
END_TEST

/* The limits themselves are accepted: 64 ranks, 4 rails, a 63-character name. */
START_TEST(test_parse_limits_accepted)
{
    struct rg_devices d;
    struct rg_err e;
    char *json = matrix_json(RG_MAX_RANKS, RG_MAX_RAILS);

    ck_assert_int_eq(parse(json, RG_MAX_RANKS - 1, &d, &e), RG_OK);
    expect_generated_row(&d, RG_MAX_RANKS, RG_MAX_RAILS, RG_MAX_RANKS - 1);
    free(json);

    char name[RG_DEVNAME_MAX], text[256];
    memset(name, 'n', RG_DEVNAME_MAX - 1);
    name[RG_DEVNAME_MAX - 1] = '\0';
    snprintf(text, sizeof(text), "[[null, \"%s\"], [\"x\", null]]", name);
    ck_assert_int_eq(parse(text, 0, &d, &e), RG_OK);
    ck_assert_str_eq(d.names[1][0], name);
}
END_TEST

/* --- one bad input per class --------------------------------------------------------------- */

static const struct bad_case {
    const char *what, *json;
    int rank;
    const char *needle;
} bad_cases[] = {
    {"invalid JSON", "[[null, \"a\"],\n [\"b\" null]]", 0,
     "devices.json:2:10: invalid JSON: ']' expected"},
    {"empty text", "", 0, "devices.json:1:0: invalid JSON:"},
    {"trailing garbage", "[[null, \"a\"], [\"b\", null]] x", 0, "invalid JSON: end of file"},
    {"raw newline in a string", "[[null, \"a\nb\"], [\"b\", null]]", 0, "devices.json:1:"},
    {"not an array", "{\"rows\": []}", 0,
     "devices.json: expected an array of rows (an N x N matrix), got an object"},
    {"a bare number", "42", 0, "expected an array of rows (an N x N matrix), got a number"},
    {"row not an array", "[[null, \"a\"], \"b\"]", 0, "devices.json: row 1 is a string"},
    {"ragged row", "[[null, \"a\", \"b\"], [\"c\", null], [\"d\", \"e\", null]]", 0,
     "devices.json: row 1 has 2 cells, expected 3"},
    {"non-null diagonal", "[[\"a\", \"b\"], [\"c\", null]]", 0,
     "devices.json: [0][0]: the diagonal must be null, got a string"},
    {"null off the diagonal", "[[null, \"a\"], [null, null]]", 0,
     "devices.json: [1][0]: null off the diagonal"},
    {"number cell", "[[null, \"a\", \"b\"], [\"c\", null, 7], [\"d\", \"e\", null]]", 0,
     "devices.json: [1][2]: expected a device name or a list of names, got a number"},
    {"object cell", "[[null, {\"dev\": \"a\"}], [\"b\", null]]", 0,
     "devices.json: [0][1]: expected a device name or a list of names, got an object"},
    {"number in a list", "[[null, [\"a\", 1]], [[\"b\", \"c\"], null]]", 0,
     "devices.json: [0][1][1]: expected a device name, got a number"},
    {"empty list", "[[null, []], [\"b\", null]]", 0, "devices.json: [0][1]: empty list"},
    {"too many rails", "[[null, [\"a\", \"b\", \"c\", \"d\", \"e\"]], [\"f\", null]]", 1,
     "devices.json: [0][1]: 5 rails, at most 4"},
    {"asymmetric rails", "[[null, [\"a\", \"b\"]], [\"c\", null]]", 0,
     "devices.json: [0][1] has 2 rails but [1][0] has 1: a crossed or missing link"},
    {"asymmetric, far row",
     "[[null, \"a\", \"b\"], [\"c\", null, \"d\"], [\"e\", [\"f\", \"g\"], null]]", 0,
     "[1][2] has 1 rail but [2][1] has 2"},
    {"duplicate rail", "[[null, [\"a\", \"b\", \"a\"]], [[\"c\", \"d\", \"e\"], null]]", 0,
     "[0][1]: device \"a\" listed twice (rails 0 and 2)"},
    {"space in a name", "[[null, \"mlx5 0\"], [\"b\", null]]", 0,
     "[0][1]: device name \"mlx5 0\" has a character outside [A-Za-z0-9_.-] at offset 4"},
    {"newline in a name", "[[null, \"mlx5\\n0\"], [\"b\", null]]", 0,
     "[0][1]: device name \"mlx5?0\" has a character outside [A-Za-z0-9_.-] at offset 4"},
    {"slash in a name", "[[null, \"a\"], [[\"ok\", \"../x\"], null]]", 0,
     "[1][0][1]: device name \"../x\" has a character outside"},
    {"non-ASCII name", "[[null, \"r\\u00e9\"], [\"b\", null]]", 0,
     "[0][1]: device name \"r\xc3\xa9\" has a character outside"},
    {"empty name", "[[null, \"\"], [\"b\", null]]", 0, "[0][1]: empty device name"},
    {"too-long name",
     "[[null, \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"], [\"b\", "
     "null]]",
     0, "[0][1]: device name of 64 characters, at most 63"},
    {"rank too large", "[[null, \"a\"], [\"b\", null]]", 2,
     "devices.json: rank 2 out of range 0..1"},
    {"rank negative", "[[null, \"a\"], [\"b\", null]]", -1, "rank -1 out of range 0..1"},
    {"N=1", "[[null]]", 0, "devices.json: 1 rank, need at least 2"},
    {"N=0", "[]", 0, "devices.json: 0 ranks, need at least 2"},
};

START_TEST(test_parse_rejects)
{
    const struct bad_case *c = &bad_cases[_i];
    expect_bad(c->what, c->json, c->rank, c->needle);
}
END_TEST

START_TEST(test_parse_rejects_too_many_ranks)
{
    char *json = matrix_json(RG_MAX_RANKS + 1, 1);
    expect_bad("N > RG_MAX_RANKS", json, 0, "devices.json: 65 ranks, at most 64");
    free(json);
}
END_TEST

/* A long path is cut from the front, so the cell stays in the message. */
START_TEST(test_parse_long_source_keeps_cell)
{
    char source[4000];
    struct rg_devices d;
    struct rg_err e;

    memset(source, 'p', sizeof(source) - 1);
    source[sizeof(source) - 1] = '\0';
    rg__err_clear(&e);
    ck_assert_int_eq(rg__devices_parse("[[null, 1], [\"b\", null]]", source, 0, &d, &e),
                     RG_ERR_CONFIG);
    ck_assert_msg(strstr(e.msg, "[0][1]: expected a device name") != NULL, "'%s'", e.msg);
    ck_assert_msg(strncmp(e.msg, "...ppp", 6) == 0, "'%s'", e.msg);
}
END_TEST

/* An error already recorded is kept: the parse reports its status but does not overwrite. */
START_TEST(test_parse_keeps_first_error)
{
    struct rg_devices d;
    struct rg_err e;

    rg__err_clear(&e);
    rg__err_set(&e, RG_ERR_TIMEOUT, "earlier");
    ck_assert_int_eq(rg__devices_parse("[[null]]", "devices.json", 0, &d, &e), RG_ERR_CONFIG);
    ck_assert_int_eq(e.st, RG_ERR_TIMEOUT);
    ck_assert_str_eq(e.msg, "earlier");
}
END_TEST

/* --- rg__devices_load ---------------------------------------------------------------------- */

START_TEST(test_load_round_trip)
{
    char path[64];
    struct rg_devices d;
    struct rg_err e;

    rg_check_write_temp(path, mixed_4x4, strlen(mixed_4x4));
    for (int rank = 0; rank < 4; rank++) {
        rg__err_clear(&e);
        ck_assert_int_eq(rg__devices_load(path, rank, &d, &e), RG_OK);
        ck_assert_int_eq(d.size, 4);
        for (int j = 0; j < 4; j++) {
            ck_assert_int_eq(d.nrails[j], mixed_rails[rank][j]);
            for (int k = 0; k < d.nrails[j]; k++)
                ck_assert_str_eq(d.names[j][k], mixed_names[rank][j][k]);
        }
    }
    unlink(path);
}
END_TEST

/* A file's JSON errors carry the path and the line. */
START_TEST(test_load_bad_json_names_path)
{
    static const char text[] = "[\n  [null, \"a\"],\n  [\"b\", nul]\n]\n";
    char path[64], want[96];
    struct rg_devices d;
    struct rg_err e;

    rg_check_write_temp(path, text, strlen(text));
    rg__err_clear(&e);
    ck_assert_int_eq(rg__devices_load(path, 0, &d, &e), RG_ERR_CONFIG);
    snprintf(want, sizeof(want), "%s:3:", path);
    ck_assert_msg(strncmp(e.msg, want, strlen(want)) == 0, "'%s' lacks '%s'", e.msg, want);
    ck_assert_msg(strstr(e.msg, "invalid JSON") != NULL, "'%s'", e.msg);
    unlink(path);
}
END_TEST

START_TEST(test_load_missing_file)
{
    static const char path[] = "/nonexistent-rg-dir/devices.json";
    struct rg_devices d;
    struct rg_err e;
    char want[160];

    rg__err_clear(&e);
    ck_assert_int_eq(rg__devices_load(path, 0, &d, &e), RG_ERR_CONFIG);
    snprintf(want, sizeof(want), "%s: cannot open: %s", path, strerror(ENOENT));
    ck_assert_str_eq(e.msg, want);
}
END_TEST

START_TEST(test_load_directory)
{
    struct rg_devices d;
    struct rg_err e;

    rg__err_clear(&e);
    ck_assert_int_eq(rg__devices_load("/tmp", 0, &d, &e), RG_ERR_CONFIG);
    ck_assert_msg(strstr(e.msg, "/tmp: cannot read: ") == e.msg, "'%s'", e.msg);
}
END_TEST

/* A device file with no end is cut off at the limit, not read forever. */
START_TEST(test_load_endless_device)
{
    struct rg_devices d;
    struct rg_err e;

    rg__err_clear(&e);
    ck_assert_int_eq(rg__devices_load("/dev/zero", 0, &d, &e), RG_ERR_CONFIG);
    ck_assert_str_eq(e.msg, "/dev/zero: larger than 1 MiB: not a devices file");
}
END_TEST

/* Valid JSON padded with blanks to `size` bytes. */
static char *padded_json(size_t size)
{
    static const char json[] = "[[null, \"a\"], [\"b\", null]]";
    char *s = malloc(size);
    ck_assert_ptr_nonnull(s);
    memset(s, ' ', size);
    memcpy(s, json, strlen(json));
    s[size - 1] = '\n';
    return s;
}

/* Exactly 1 MiB is accepted; one byte more is refused with the file's name. */
START_TEST(test_load_size_limit)
{
    const size_t mib = 1024 * 1024;
    char path[64];
    struct rg_devices d;
    struct rg_err e;
    char *s = padded_json(mib + 1);

    rg_check_write_temp(path, s, mib);
    rg__err_clear(&e);
    ck_assert_int_eq(rg__devices_load(path, 1, &d, &e), RG_OK);
    ck_assert_str_eq(d.names[0][0], "b");
    unlink(path);

    rg_check_write_temp(path, s, mib + 1);
    rg__err_clear(&e);
    ck_assert_int_eq(rg__devices_load(path, 1, &d, &e), RG_ERR_CONFIG);
    ck_assert_msg(strncmp(e.msg, path, strlen(path)) == 0, "'%s'", e.msg);
    ck_assert_msg(strstr(e.msg, "larger than 1 MiB") != NULL, "'%s'", e.msg);
    unlink(path);
    free(s);
}
END_TEST

/* jansson would stop at a NUL byte; the loader refuses the file instead. */
START_TEST(test_load_nul_byte)
{
    static const char text[] = "[[null, \"a\"], [\"b\", null]]\0garbage";
    char path[64];
    struct rg_devices d;
    struct rg_err e;

    rg_check_write_temp(path, text, sizeof(text) - 1);
    rg__err_clear(&e);
    ck_assert_int_eq(rg__devices_load(path, 0, &d, &e), RG_ERR_CONFIG);
    ck_assert_msg(strstr(e.msg, "NUL byte at offset 26") != NULL, "'%s'", e.msg);
    unlink(path);
}
END_TEST

/* --- rg_config_init, rg_config_from_env ---------------------------------------------------- */

static const char *const all_vars[] = {
    "RG_RANK",
    "MLX_RANK",
    "JACCL_RANK",
    "RG_COORDINATOR",
    "MLX_JACCL_COORDINATOR",
    "JACCL_COORDINATOR",
    "RG_DEVICES_FILE",
    "MLX_IBV_DEVICES",
    "JACCL_IBV_DEVICES",
    "RG_QP_TYPE",
    "RG_TIMEOUT",
    "RG_ALGO",
    "MLX_JACCL_RING",
    "JACCL_RING",
    "RG_SECRET",
    "RG_SECRET_FILE",
};

/* Each test runs forked, but the developer's own shell may set these; start from none. */
static void clear_env(void)
{
    for (size_t i = 0; i < sizeof(all_vars) / sizeof(all_vars[0]); i++)
        ck_assert_int_eq(unsetenv(all_vars[i]), 0);
}

static void set(const char *name, const char *value)
{
    ck_assert_int_eq(setenv(name, value, 1), 0);
}

START_TEST(test_config_init)
{
    rg_config c;

    memset(&c, 0xab, sizeof(c));
    rg_config_init(&c);
    ck_assert_int_eq(c.rank, -1);
    ck_assert_int_eq(c.size, 0);
    ck_assert_str_eq(c.coordinator, "");
    ck_assert_str_eq(c.devices_file, "");
    ck_assert_int_eq(c.qp_type, RG_QPT_UC);
    ck_assert(c.timeout_s == 0);
    ck_assert_int_eq(c.algo, RG_ALGO_AUTO);
}
END_TEST

START_TEST(test_env_nothing_set)
{
    rg_config c;
    char err[128] = "stale";

    clear_env();
    rg_config_init(&c);
    ck_assert_int_eq(rg_config_from_env(&c, err, sizeof(err)), RG_OK);
    ck_assert_str_eq(err, "");
    ck_assert_int_eq(c.rank, -1);
    ck_assert_str_eq(c.coordinator, "");
    ck_assert_str_eq(c.devices_file, "");
    ck_assert_int_eq(c.qp_type, RG_QPT_UC);
    ck_assert(c.timeout_s == 0);
    ck_assert_int_eq(c.algo, RG_ALGO_AUTO);
}
END_TEST

/* Reads the environment into a fresh configuration and expects success. */
static rg_config from_env(void)
{
    rg_config c;
    char err[256];

    rg_config_init(&c);
    ck_assert_msg(rg_config_from_env(&c, err, sizeof(err)) == RG_OK, "'%s'", err);
    return c;
}

START_TEST(test_env_precedence)
{
    clear_env();
    set("RG_RANK", "2");
    set("MLX_RANK", "1");
    set("JACCL_RANK", "0");
    set("RG_COORDINATOR", "rg-host:1000");
    set("MLX_JACCL_COORDINATOR", "mlx-host:2000");
    set("JACCL_COORDINATOR", "jaccl-host:3000");
    set("RG_DEVICES_FILE", "/rg.json");
    set("MLX_IBV_DEVICES", "/mlx.json");
    set("JACCL_IBV_DEVICES", "/jaccl.json");
    rg_config c = from_env();
    ck_assert_int_eq(c.rank, 2);
    ck_assert_str_eq(c.coordinator, "rg-host:1000");
    ck_assert_str_eq(c.devices_file, "/rg.json");

    unsetenv("RG_RANK");
    unsetenv("RG_COORDINATOR");
    unsetenv("RG_DEVICES_FILE");
    c = from_env();
    ck_assert_int_eq(c.rank, 1);
    ck_assert_str_eq(c.coordinator, "mlx-host:2000");
    ck_assert_str_eq(c.devices_file, "/mlx.json");

    unsetenv("MLX_RANK");
    unsetenv("MLX_JACCL_COORDINATOR");
    unsetenv("MLX_IBV_DEVICES");
    c = from_env();
    ck_assert_int_eq(c.rank, 0);
    ck_assert_str_eq(c.coordinator, "jaccl-host:3000");
    ck_assert_str_eq(c.devices_file, "/jaccl.json");

    /* An empty variable counts as unset: the next name is read. */
    set("RG_RANK", "");
    set("MLX_RANK", "5");
    c = from_env();
    ck_assert_int_eq(c.rank, 5);
}
END_TEST

START_TEST(test_env_algo_and_timeout)
{
    clear_env();
    set("JACCL_RING", "0");
    ck_assert_int_eq(from_env().algo, RG_ALGO_MESH);
    set("MLX_JACCL_RING", "1");
    ck_assert_int_eq(from_env().algo, RG_ALGO_RING);
    set("RG_ALGO", "mesh");
    ck_assert_int_eq(from_env().algo, RG_ALGO_MESH);
    /* RG_ALGO=auto is found first, so MLX_JACCL_RING is not consulted. */
    set("RG_ALGO", "auto");
    ck_assert_int_eq(from_env().algo, RG_ALGO_AUTO);
    set("RG_ALGO", "ring");
    ck_assert_int_eq(from_env().algo, RG_ALGO_RING);

    set("RG_TIMEOUT", "2.5");
    ck_assert(from_env().timeout_s == 2.5);
    set("RG_TIMEOUT", "30");
    ck_assert(from_env().timeout_s == 30.0);
    set("RG_TIMEOUT", ".25");
    ck_assert(from_env().timeout_s == 0.25);
}
END_TEST

START_TEST(test_env_qp_type_authoritative)
{
    rg_config c;
    char err[128];

    clear_env();
    ck_assert_int_eq(from_env().qp_type, RG_QPT_UC);
    set("RG_QP_TYPE", "rc");
    ck_assert_int_eq(from_env().qp_type, RG_QPT_RC);
    /* Present, RG_QP_TYPE overrides a qp_type the caller set. */
    rg_config_init(&c);
    c.qp_type = RG_QPT_RC;
    set("RG_QP_TYPE", "uc");
    ck_assert_int_eq(rg_config_from_env(&c, err, sizeof(err)), RG_OK);
    ck_assert_int_eq(c.qp_type, RG_QPT_UC);
    /* Absent, the caller's choice stays. */
    unsetenv("RG_QP_TYPE");
    c.qp_type = RG_QPT_RC;
    ck_assert_int_eq(rg_config_from_env(&c, err, sizeof(err)), RG_OK);
    ck_assert_int_eq(c.qp_type, RG_QPT_RC);
}
END_TEST

START_TEST(test_env_explicit_fields_win)
{
    rg_config c;
    char err[128];

    clear_env();
    set("RG_RANK", "1");
    set("RG_COORDINATOR", "env:1");
    set("RG_DEVICES_FILE", "/env.json");
    set("RG_TIMEOUT", "9");
    set("RG_ALGO", "ring");
    rg_config_init(&c);
    c.rank = 0;
    strcpy(c.coordinator, "mine:7");
    strcpy(c.devices_file, "/mine.json");
    c.timeout_s = 3;
    c.algo = RG_ALGO_MESH;
    ck_assert_int_eq(rg_config_from_env(&c, err, sizeof(err)), RG_OK);
    ck_assert_int_eq(c.rank, 0);
    ck_assert_str_eq(c.coordinator, "mine:7");
    ck_assert_str_eq(c.devices_file, "/mine.json");
    ck_assert(c.timeout_s == 3);
    ck_assert_int_eq(c.algo, RG_ALGO_MESH);

    /* A variable for a field already set is not read, so a bad one there is harmless. */
    set("RG_RANK", "x");
    ck_assert_int_eq(rg_config_from_env(&c, err, sizeof(err)), RG_OK);
}
END_TEST

START_TEST(test_env_coordinator_forms)
{
    static const char *const good[] = {"localhost:5000", "10.0.0.1:1", "[::1]:65535",
                                       "node-3.cluster:00080"};
    clear_env();
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        set("RG_COORDINATOR", good[i]);
        ck_assert_str_eq(from_env().coordinator, good[i]);
    }
}
END_TEST

static const struct env_case {
    const char *name, *value, *needle;
} env_cases[] = {
    {"RG_RANK", "x", "RG_RANK='x': not a rank number"},
    {"MLX_RANK", "x", "MLX_RANK='x': not a rank number"},
    {"JACCL_RANK", "-1", "JACCL_RANK='-1': not a rank number"},
    {"RG_RANK", " 1", "RG_RANK=' 1': not a rank number"},
    {"RG_RANK", "+1", "RG_RANK='+1': not a rank number"},
    {"RG_RANK", "1x", "RG_RANK='1x': not a rank number"},
    {"RG_RANK", "1.0", "RG_RANK='1.0': not a rank number"},
    {"RG_RANK", "99999999999999999999999", "not a rank number"},
    {"RG_RANK", "64", "RG_RANK='64': rank out of range 0..63"},
    {"RG_RANK", "1\n2", "RG_RANK='1?2': not a rank number"},
    {"RG_COORDINATOR", "host", "RG_COORDINATOR='host': expected host:port"},
    {"RG_COORDINATOR", ":5000", "RG_COORDINATOR=':5000': empty host"},
    {"RG_COORDINATOR", "host:", "RG_COORDINATOR='host:': the port must be a number 1..65535"},
    {"RG_COORDINATOR", "host:0", "RG_COORDINATOR='host:0': the port must be a number"},
    {"RG_COORDINATOR", "host:65536", "RG_COORDINATOR='host:65536': the port must be a number"},
    {"RG_COORDINATOR", "host:50a", "the port must be a number 1..65535"},
    {"RG_COORDINATOR", "host:-1", "the port must be a number 1..65535"},
    {"RG_COORDINATOR", "host:1000000", "the port must be a number 1..65535"},
    {"RG_COORDINATOR", "::1:5000", "an IPv6 host needs brackets"},
    {"RG_COORDINATOR", "my host:5000", "the host has a blank or control character"},
    {"MLX_JACCL_COORDINATOR", "nohost", "MLX_JACCL_COORDINATOR='nohost': expected host:port"},
    {"JACCL_COORDINATOR", "h:99999", "JACCL_COORDINATOR='h:99999': the port must be"},
    {"RG_QP_TYPE", "ud", "RG_QP_TYPE='ud': expected uc or rc"},
    {"RG_TIMEOUT", "0", "RG_TIMEOUT='0': the timeout must be more than 0 seconds"},
    {"RG_TIMEOUT", "0.0", "RG_TIMEOUT='0.0': the timeout must be more than 0"},
    {"RG_TIMEOUT", "-1", "RG_TIMEOUT='-1': not a number of seconds"},
    {"RG_TIMEOUT", "abc", "RG_TIMEOUT='abc': not a number of seconds"},
    {"RG_TIMEOUT", "5s", "RG_TIMEOUT='5s': not a number of seconds"},
    {"RG_TIMEOUT", "inf", "RG_TIMEOUT='inf': not a number of seconds"},
    {"RG_TIMEOUT", "nan", "RG_TIMEOUT='nan': not a number of seconds"},
    {"RG_TIMEOUT", "1e400", "RG_TIMEOUT='1e400': not a number of seconds"},
    {"RG_TIMEOUT", "1e7", "RG_TIMEOUT='1e7': not a number of seconds"},
    {"RG_TIMEOUT", "10000000",
     "RG_TIMEOUT='10000000': the timeout must be at most 1000000 seconds"},
    {"RG_TIMEOUT", "0x10", "RG_TIMEOUT='0x10': not a number of seconds"},
    {"RG_TIMEOUT", " 5", "RG_TIMEOUT=' 5': not a number of seconds"},
    {"RG_RANK", "010x", "RG_RANK='010x': not a rank number"},
    {"RG_ALGO", "tree", "RG_ALGO='tree': expected auto, ring or mesh"},
    {"MLX_JACCL_RING", "2", "MLX_JACCL_RING='2': expected 1 (ring) or 0 (mesh)"},
    {"JACCL_RING", "yes", "JACCL_RING='yes': expected 1 (ring) or 0 (mesh)"},
    /* A secret, even a bad one, is never shown. */
    {"RG_SECRET", "short", "RG_SECRET='...': a secret needs at least 16 characters"},
    {"RG_SECRET", "sixteen chars ok",
     "RG_SECRET='...': a secret is printable ASCII with no blanks"},
    {"RG_SECRET_FILE", "/nonexistent/secret", "RG_SECRET_FILE='/nonexistent/secret': No such file"},
    {"RG_SECRET_FILE", "/dev/null", "RG_SECRET_FILE='/dev/null': not a regular file"},
};

START_TEST(test_env_rejects)
{
    const struct env_case *c = &env_cases[_i];
    rg_config cfg;
    char err[256];

    clear_env();
    set(c->name, c->value);
    rg_config_init(&cfg);
    ck_assert_int_eq(rg_config_from_env(&cfg, err, sizeof(err)), RG_ERR_CONFIG);
    ck_assert_msg(strncmp(err, c->name, strlen(c->name)) == 0, "'%s' does not start with %s", err,
                  c->name);
    ck_assert_msg(strstr(err, c->needle) != NULL, "'%s' not in '%s'", c->needle, err);
    ck_assert_msg(strchr(err, '\n') == NULL, "message spans lines: '%s'", err);
    /* A rejected environment leaves the configuration as it was. */
    ck_assert_int_eq(cfg.rank, -1);
    ck_assert_str_eq(cfg.coordinator, "");
    ck_assert(cfg.timeout_s == 0);
}
END_TEST

/* The job secret: from RG_SECRET, else one line of a file only its owner can read. */
START_TEST(test_env_secret)
{
    static const struct {
        const char *text;
        size_t len;
        int mode;
        const char *want; /* the secret read, or a piece of the error */
    } files[] = {
        {"0123456789abcdef\n", 17, 0600, "0123456789abcdef"},
        {"0123456789abcdef", 16, 0400, "0123456789abcdef"},
        {"0123456789abcdef\n", 17, 0640, "group or others may read it (chmod 600)"},
        {"0123456789abcdef\nsecond", 23, 0600, "must hold the secret on one line"},
        {"0123456789ab\0cdef\n", 18, 0600, "holds a NUL byte"},
        {"0123456789abcdef\r\n", 18, 0600, "printable ASCII with no blanks"},
        {"\n", 1, 0600, "at least 16 characters"},
    };
    char path[] = "/tmp/rg-secret-XXXXXX", err[256];
    rg_config cfg;

    clear_env();
    rg_config_init(&cfg);
    ck_assert_int_eq(rg_config_from_env(&cfg, err, sizeof(err)), RG_OK);
    ck_assert_str_eq(cfg.secret, ""); /* none set: none read, and create will say so */
    set("RG_SECRET", "0123456789abcdef0123");
    ck_assert_int_eq(rg_config_from_env(&cfg, err, sizeof(err)), RG_OK);
    ck_assert_str_eq(cfg.secret, "0123456789abcdef0123");
    /* A secret already set wins over the environment, as every field does. */
    set("RG_SECRET", "another-secret-of-the-env");
    ck_assert_int_eq(rg_config_from_env(&cfg, err, sizeof(err)), RG_OK);
    ck_assert_str_eq(cfg.secret, "0123456789abcdef0123");
    clear_env();
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        int fd = mkstemp(path);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(write(fd, files[i].text, files[i].len), (ssize_t)files[i].len);
        ck_assert_int_eq(fchmod(fd, (mode_t)files[i].mode), 0);
        close(fd);
        set("RG_SECRET_FILE", path);
        rg_config_init(&cfg);
        rg_status st = rg_config_from_env(&cfg, err, sizeof(err));
        unlink(path);
        memcpy(path + strlen(path) - 6, "XXXXXX", 6);
        if (files[i].want[0] == '0') {
            ck_assert_msg(st == RG_OK, "file %zu: %s", i, err);
            ck_assert_str_eq(cfg.secret, files[i].want);
        } else {
            ck_assert_int_eq(st, RG_ERR_CONFIG);
            ck_assert_msg(strstr(err, files[i].want) && !strchr(err, '\n'), "file %zu: '%s'", i,
                          err);
            ck_assert_str_eq(cfg.secret, "");
        }
    }
    /* RG_SECRET wins over the file; 256 characters are the most. */
    char big[RG_SECRET_MAX + 2];
    memset(big, 'k', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    set("RG_SECRET", big);
    ck_assert_int_eq(rg_config_from_env(&cfg, err, sizeof(err)), RG_ERR_CONFIG);
    ck_assert_ptr_nonnull(strstr(err, "at most 256"));
    big[RG_SECRET_MAX] = '\0';
    set("RG_SECRET", big);
    ck_assert_int_eq(rg_config_from_env(&cfg, err, sizeof(err)), RG_OK);
    ck_assert_str_eq(cfg.secret, big);
}
END_TEST

/* The communicator's own variables go through the shared parsers: no blanks, signs or hex
 * slip through, RG_DEBUG is 0 or 1, and a missing rank is named as such. No device needed:
 * each is refused before any is opened. */
START_TEST(test_comm_env_values)
{
    static const struct {
        const char *name, *value, *want;
    } cases[] = {
        {"RG_CHUNK_BYTES", " 4096", "RG_CHUNK_BYTES=' 4096': expected a size in bytes"},
        {"RG_CHUNK_BYTES", "+4096", "RG_CHUNK_BYTES='+4096': expected a size in bytes"},
        {"RG_CHUNK_BYTES", "1G",
         "RG_CHUNK_BYTES='1G': expected a size in bytes (or with K, M, G) "
         "from 4096 to 8388608"},
        {"RG_SLOTS", "0x10", "RG_SLOTS='0x10': expected a number from 2 to 64"},
        {"RG_DEBUG", "yes", "RG_DEBUG='yes': expected a number from 0 to 1"},
        {"RG_POLL_YIELD", "1\n2", "RG_POLL_YIELD='1?2': expected a number"},
        {"RG_IB_TIMEOUT", "32", "RG_IB_TIMEOUT='32': expected a number from 1 to 31"},
        {"RG_IB_TIMEOUT", "0", "RG_IB_TIMEOUT='0': expected a number from 1 to 31"},
        {"RG_IB_RETRY_CNT", "7", "RG_IB_RETRY_CNT='7': expected a number from 0 to 6"},
        /* From 1 (below the batch: a starved peer is granted at once) to the slots (8). */
        {"RG_RECV_KEEP", "0", "RG_RECV_KEEP='0': expected a number from 1 to 8"},
        {"RG_RECV_KEEP", "9", "RG_RECV_KEEP='9': expected a number from 1 to 8"},
        {"RG_RECV_KEEP", "1", "no rank: set rg_config.rank, or RG_RANK"},
        {"RG_RECV_KEEP", "8", "no rank: set rg_config.rank, or RG_RANK"},     /* fine: never owe */
        {"RG_IB_TIMEOUT", "18", "no rank: set rg_config.rank, or RG_RANK"},   /* fine: 1 s */
        {"RG_CHUNK_BYTES", "64K", "no rank: set rg_config.rank, or RG_RANK"}, /* fine: 64 KiB */
        {"RG_DEBUG", "0", "no rank: set rg_config.rank, or RG_RANK"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        rg_config cfg;
        rg_comm_h comm = NULL;
        char err[320];
        clear_env();
        set(cases[i].name, cases[i].value);
        rg_config_init(&cfg);
        ck_assert_int_eq(rg_comm_create(&cfg, &comm, err, sizeof(err)), RG_ERR_CONFIG);
        ck_assert_msg(strstr(err, cases[i].want) && !strchr(err, '\n'), "%s: '%s'", cases[i].name,
                      err);
        ck_assert_ptr_null(comm);
        unsetenv(cases[i].name);
    }
}
END_TEST

/* Overlong strings are refused rather than cut, and the value shown is shortened. */
START_TEST(test_env_rejects_overlong)
{
    char big[5000], err[256];
    rg_config cfg;

    clear_env();
    memset(big, 'a', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    set("MLX_IBV_DEVICES", big);
    rg_config_init(&cfg);
    ck_assert_int_eq(rg_config_from_env(&cfg, err, sizeof(err)), RG_ERR_CONFIG);
    ck_assert_msg(strstr(err, "MLX_IBV_DEVICES='aaa") == err, "'%s'", err);
    ck_assert_msg(strstr(err, "...': path longer than 4095 characters") != NULL, "'%s'", err);
    ck_assert_str_eq(cfg.devices_file, "");

    clear_env();
    big[300] = '\0';
    big[290] = ':';
    set("RG_COORDINATOR", big);
    ck_assert_int_eq(rg_config_from_env(&cfg, err, sizeof(err)), RG_ERR_CONFIG);
    ck_assert_msg(strstr(err, "longer than 255 characters") != NULL, "'%s'", err);
}
END_TEST

/* The status holds even when there is nowhere, or too little room, to write the message. */
START_TEST(test_env_small_err_buffer)
{
    rg_config cfg;
    char err[8];

    clear_env();
    set("RG_RANK", "x");
    rg_config_init(&cfg);
    ck_assert_int_eq(rg_config_from_env(&cfg, NULL, 0), RG_ERR_CONFIG);
    ck_assert_int_eq(rg_config_from_env(&cfg, err, sizeof(err)), RG_ERR_CONFIG);
    ck_assert_str_eq(err, "RG_RANK");
    ck_assert_int_eq(rg_config_from_env(NULL, err, sizeof(err)), RG_ERR_INVALID);
}
END_TEST

Suite *rg_suite_config(void)
{
    Suite *s = suite_create("config");

    TCase *tc = tcase_create("parse");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_parse_2x2_plain_names);
    tcase_add_loop_test(tc, test_parse_3x3_two_rails, 0, 3);
    tcase_add_loop_test(tc, test_parse_4x4_mixed, 0, 4);
    tcase_add_test(tc, test_parse_limits_accepted);
    tcase_add_loop_test(tc, test_parse_rejects, 0, (int)(sizeof(bad_cases) / sizeof(bad_cases[0])));
    tcase_add_test(tc, test_parse_rejects_too_many_ranks);
    tcase_add_test(tc, test_parse_long_source_keeps_cell);
    tcase_add_test(tc, test_parse_keeps_first_error);
    suite_add_tcase(s, tc);

    tc = tcase_create("load");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_load_round_trip);
    tcase_add_test(tc, test_load_bad_json_names_path);
    tcase_add_test(tc, test_load_missing_file);
    tcase_add_test(tc, test_load_directory);
    tcase_add_test(tc, test_load_size_limit);
    tcase_add_test(tc, test_load_endless_device);
    tcase_add_test(tc, test_load_nul_byte);
    suite_add_tcase(s, tc);

    tc = tcase_create("env");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_config_init);
    tcase_add_test(tc, test_env_nothing_set);
    tcase_add_test(tc, test_env_precedence);
    tcase_add_test(tc, test_env_algo_and_timeout);
    tcase_add_test(tc, test_env_qp_type_authoritative);
    tcase_add_test(tc, test_env_explicit_fields_win);
    tcase_add_test(tc, test_env_coordinator_forms);
    tcase_add_loop_test(tc, test_env_rejects, 0, (int)(sizeof(env_cases) / sizeof(env_cases[0])));
    tcase_add_test(tc, test_env_rejects_overlong);
    tcase_add_test(tc, test_env_secret);
    tcase_add_test(tc, test_comm_env_values);
    tcase_add_test(tc, test_env_small_err_buffer);
    suite_add_tcase(s, tc);
    return s;
}
