/* SPDX-License-Identifier: MIT */
/*
 * rg_parse.h - one parser per kind of value: integers, seconds, sizes and booleans, as the
 * command line, the environment, scenario files and fault plans all spell them. A leaf part:
 * transport/, faultinject/ and harness/ link it, and it links nothing of theirs, so the three
 * cannot disagree on what "4096" or "1.5" means.
 *
 * Every parser takes the whole string, with no blanks, no sign that the range does not allow,
 * no base prefix unless asked for, and no trailing junk; it returns 0 and the value, or -1
 * and leaves *out alone. None reads the locale. None allocates.
 */
#ifndef RG_PARSE_H
#define RG_PARSE_H

#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Decimal, "-" allowed only when lo < 0. "010" is ten, never octal; "+1", " 1", "1 " fail. */
int rg_parse_int(const char *s, int64_t lo, int64_t hi, int64_t *out);

/* As rg_parse_int for unsigned values, or "0x" hex too when `hex`. */
int rg_parse_uint(const char *s, bool hex, uint64_t lo, uint64_t hi, uint64_t *out);

/*
 * An opaque 64-bit value (a wr_id, an address, a key, a GUID) as it crosses a file or a
 * socket in JSON: a string of "0x" and lowercase hex digits, written with RG_HEX64 (a printf
 * format taking a uint64_t) and read back exactly with rg_parse_uint(s, true, 0, UINT64_MAX).
 * Never a JSON number: most readers lose exactness past 2^53, and jansson refuses integers past
 * INT64_MAX outright, so a wr_id that is a pointer or a tagged value would not come back.
 */
#define RG_HEX64 "\"0x%" PRIx64 "\""

/* Seconds: digits with an optional fraction ("10", "1.5", ".5"); no exponent, no hex, no inf
 * or nan. Must lie in [lo, hi]. */
int rg_parse_seconds(const char *s, double lo, double hi, double *out);

/* Bytes: digits with an optional K, M or G (powers of 1024): "4096", "64K", "16M". */
int rg_parse_size(const char *s, uint64_t lo, uint64_t hi, uint64_t *out);

/* A switch: exactly "0" or "1". (Anything else is an error, not "on": RG_DEBUG=0 is off.) */
int rg_parse_bool(const char *s, bool *out);

/* NULL when s is host:port (an IPv6 host in brackets, a port 1..65535), else why not. */
const char *rg_parse_hostport_problem(const char *s);

/*
 * A value as an error message may show it: at most 64 characters (cut with "..."), control
 * characters (a newline, say) as '?', so the message stays one line. Returns out.
 */
const char *rg_parse_show(const char *s, char *out, size_t len);

/*
 * The job secret, as every part reads it (docs/security.md): RG_SECRET, else the first line of
 * RG_SECRET_FILE, a regular file that group and others cannot read. 16 to 256 printable
 * characters, no blanks. Writes it to out (RG_PARSE_SECRET_MAX + 1 bytes) and returns 0, or 0
 * with out "" when neither is set; a bad value or file is -1 with "NAME='value': why" in err
 * (a secret's value is never shown, a file's path is). The transport's side channel and the
 * runner's clock exchange both prove it, so both must read the same thing.
 */
#define RG_PARSE_SECRET_MIN 16
#define RG_PARSE_SECRET_MAX 256
int rg_parse_secret_env(char *out, char *err, size_t errlen);

/*
 * Proving the secret (parse/rg_proof.c, which links libcrypto; the shim does not link it):
 * HMAC-SHA256(secret, label | a | b | rank | size | version), the numbers in network order,
 * a and b each RG_PROOF_NONCE bytes (two challenges), into mac (RG_PROOF_MAC bytes). The label
 * (at most RG_PROOF_LABEL_MAX characters) names the handshake and direction, so one proof
 * never passes for another. rg_proof_random fills p with n random bytes: 0, or -1.
 */
#define RG_PROOF_NONCE 32
#define RG_PROOF_MAC 32
#define RG_PROOF_LABEL_MAX 32
void rg_proof_mac(const char *secret, const char *label, const uint8_t *a, const uint8_t *b,
                  int rank, int size, int version, uint8_t *mac);
int rg_proof_random(uint8_t *p, size_t n);

#endif
