/* SPDX-License-Identifier: MIT */
/*
 * rg_base.h - the runner's small tools, below every other sub-part of harness/ (see
 * docs/architecture.md): the one clock, files and logs, status lines, paths and commands,
 * loopback ports, device lists, text for shells and markup, the version, and the one verdict
 * table (here, below the scenario grammar, because a scenario's known failures name verdicts).
 * Nothing here knows a scenario or a rank.
 */
#ifndef RG_BASE_H
#define RG_BASE_H

#include "railguard/plugin.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* --- time, files, lines (rg_base.c) ---------------------------------------------------------- */
/* CLOCK_MONOTONIC in seconds: every deadline of the runner is read on it. */
double rg_now_s(void);
/* Whether the file's last 64 KiB hold needle (with NULL: whether it has any byte). */
bool rg_file_has(const char *path, const char *needle);
/* The last `max` bytes of a log, cut at a line start, made one line for a finding. */
void rg_log_tail(const char *path, char *out, size_t max);
/* One status line on fd, whole: prefix (or NULL), then fmt; at most 1 KiB, any CR or LF in
 * it made a blank, so a message cannot forge a line of its own. Retries EINTR. */
void rg_say_line(int fd, const char *prefix, const char *fmt, va_list ap);
/* mkdir -p: --out's parents are made too. -1 with errno when a part cannot be. */
int rg_mkdirs(const char *path);
/* A new job secret: 32 random bytes as 64 hex digits and a NUL into hex (65 bytes), what
 * RG_SECRET carries to the ranks. 0, or -1 when the kernel gives no randomness. */
#define RG_JOB_SECRET_HEX 65
int rg_job_secret(char *hex);

/* --- paths and commands (rg_paths.c) ------------------------------------------------------- */
/* Whether `name` (a path, or a word looked up on PATH) is an executable file. */
bool rg_executable(const char *name);
/* The most words a command given as one string may have (a long mpirun line fits). */
#define RG_CMD_WORDS 256
/*
 * A command given as one string, split into words as a POSIX shell splits them, without any
 * expansion: blanks separate words; '...' is literal; "..." is literal but for \", \\, \$ and
 * \` (and a backslash-newline, dropped); a backslash outside quotes takes the next character
 * as it is. Nothing else is special: no $VAR, no globs, no ; | & < > (a command that needs them
 * says sh -c '...'). The words go into buf, at most max of them in words[] (NULL after the
 * last). Returns the number of words (0 for none), or -1 with what is wrong in err (an
 * unclosed quote, a control character, too many words, too long).
 */
int rg_split_words(const char *arg, char *buf, size_t buflen, char **words, int max, char *err,
                   size_t errlen);
/*
 * rg_split_words, then the first word an executable file or a program on PATH now, so a typo
 * is one line before anything runs. Returns the number of words, or -1 with err ("empty" for
 * none).
 */
int rg_command_words(const char *arg, char *buf, size_t buflen, char **words, int max, char *err,
                     size_t errlen);
/* A path-like option's value into dst: not empty and shorter than len, else one line
 * "railguard CMD: FLAG: bad or too long value '...'" and -1. */
int rg_opt_path(const char *cmd, const char *flag, const char *v, char *dst, size_t len);
/* NAME in the lib directory beside the railguard executable SELF: ../lib/railguard/ (an
 * install) when it is there, else ../lib/ (the build tree); "" when the path does not fit. */
void rg_beside(char *out, size_t len, const char *self, const char *name);
/* The stock scenarios' directory beside SELF: ../share/railguard/scenarios (an install) or the
 * source tree's scenarios/ (SELF in build/FLAVOUR/bin); -1 and "" when neither is there. */
int rg_stock_scenarios(char *out, size_t len, const char *self);

/* --- helper programs (rg_capture.c) --------------------------------------------------------- */
/*
 * Runs argv (looked up on PATH, no shell; its stdin and stderr /dev/null) until it exits or
 * limit_s passes, its standard output into out (NUL-terminated; past outlen - 1 bytes the rest
 * is read and dropped). 0 with its wait status in *status; -1 with why when it could not start,
 * is not installed (exit 127) or ran out of time (then killed).
 */
int rg_capture(char *const argv[], double limit_s, char *out, size_t outlen, int *status, char *why,
               size_t whylen);

/* --- loopback ports (rg_ports.c) ----------------------------------------------------------- */
/* A TCP port on loopback free a moment ago, or -1; whether something listens on one now. */
int rg_free_port(void);
bool rg_port_listening(int port);

/* --- device lists (rg_devices.c) ----------------------------------------------------------- */
/* A device list ("rxe0,rxe1" or blank-separated) into devices[], at most RG_MAX_RAILS;
 * -1 after one line "railguard CMD: FROM: ..." on stderr. */
int rg_devices_parse(const char *cmd, const char *list, const char *from, char (*devices)[64],
                     int *n);
/* A JACCL devices file: every pair of the `ranks` ranks joined by devices[0..rails). 0, or
 * -1 with errno. */
int rg_devices_write(const char *path, int ranks, int rails, const char (*devices)[64]);
/* Rank `rank`'s rail devices from such a file (JACCL's format: [rank][peer] = the rank's
 * devices toward that peer, null for itself; each row names the rank's own): 0, or -1 with err
 * naming the file. */
int rg_devices_of_rank(const char *path, int rank, char (*devices)[64], int *n, char *err,
                       size_t errlen);

/* --- text for other readers (rg_text.c) ---------------------------------------------------- */
/* "0.3 (git 968ae2c)": the release and the commit it was built from. */
const char *rg_version(void);
/* The commit alone, as `git describe` said it ("968ae2c", "v0.3-4-g968ae2c-dirty"). */
const char *rg_version_git(void);
/*
 * Appends " WORD" to the command line in buf (len bytes), quoted for a POSIX shell when it
 * holds anything but letters, digits and _-./,:=+@% ('a b' -> 'a b', it's -> 'it'\''s'), so a
 * printed reproduce line pastes back as the same command. Returns -1 (buf cut) when it does
 * not fit.
 */
int rg_shell_word(char *buf, size_t len, const char *word);
/* FNV-1a 64 of n bytes at p, from h (RG_FNV_START to begin): the digests a plan keeps of its
 * points and of the code its call sites are in. */
#define RG_FNV_START 0xcbf29ce484222325ull
uint64_t rg_fnv(uint64_t h, const void *p, size_t n);
/* Text for HTML or XML (element content and double-quoted attributes): & < > " ' escaped,
 * control characters but tab and newline as '?' (XML 1.0 forbids them even escaped). */
void rg_markup_text(FILE *f, const char *s);
/* Copies as much of src as fits into dst (len bytes): findings and lines are cut, never
 * refused. */
void rg_cut(char *dst, size_t len, const char *src);
/* In a child about to exec a railguard command: its stdout and stderr into log (truncated),
 * or left as they are when log cannot be opened. */
void rg_child_output(const char *log);
/* Waits for child pid at most limit_s seconds: its waitpid status into *st and 0, or -1 when
 * the limit passed (then it is SIGKILLed, its whole process group when `group`, and reaped). */
int rg_child_wait(int pid, double limit_s, bool group, int *st);

/* --- one option table per command (rg_opt.c) ---------------------------------------------- */
/*
 * A command's options as one table, from which come its getopt_long parser, --help, its part
 * of the man page and the shell's completion. A value is checked as it is read; a bad one is
 * one line "railguard CMD: FLAG: why 'value'" (FLAG as typed, -j or --jobs) and exit 2.
 */
typedef enum {
    RG_OPT_FLAG,    /* a bool at off, set */
    RG_OPT_PATH,    /* a char[len] at off, by rg_opt_path's rules */
    RG_OPT_TEXT,    /* a const char * at off: the value as given (argv outlives the options) */
    RG_OPT_INT,     /* an int at off, lo..hi */
    RG_OPT_SECONDS, /* a double at off, seconds lo..hi (rg_parse_seconds) */
    RG_OPT_CALL,    /* call(): 0, or -1 with why (empty when it said its line itself) */
} rg_opt_kind;

typedef struct rg_opt {
    const char *name; /* the long name, without "--" */
    char letter;      /* its one-letter form, or 0 */
    rg_opt_kind kind;
    const char *arg;  /* the value's name in --help and the man page ("DIR"); NULL: it takes
                       * none (a flag, or a call given val NULL) */
    const char *help; /* what it does, in a sentence or two */
    size_t off, len;  /* its field in the command's options, and that field's size (PATH) */
    double lo, hi;    /* INT and SECONDS: the bounds */
    int (*call)(void *opts, const struct rg_opt *o, const char *val, char *why, size_t len);
    size_t given; /* 1 + the offset of a bool set when the option is given; 0: none */
} rg_opt;

typedef struct rg_cli {
    const char *cmd;      /* "exec" */
    const char *synopsis; /* what follows "railguard CMD " in the usage line */
    const char *about;    /* what the command does: --help's paragraph and the man page's */
    const rg_opt *opts;
    int nopts;
    bool stop_at_word;    /* options end at the first word that is not one (a command's own) */
    const rg_opt *shared; /* a table another command shares (the bench's spec), after opts */
    int nshared;
} rg_cli;

/* argv[1..] read by the table into opts: 0 with argv[*first..] left (first may be NULL), 1
 * after --help was printed (exit 0), 2 after one line on stderr. */
int rg_cli_parse(const rg_cli *cli, int argc, char **argv, void *opts, int *first);
/* --help's text; the command's section of the man page (troff); its words for completion. */
void rg_cli_help(const rg_cli *cli, FILE *f);
void rg_cli_man(const rg_cli *cli, FILE *f);
void rg_cli_words(const rg_cli *cli, FILE *f, bool newline);
/* The entry named (long name), or NULL. */
const rg_opt *rg_cli_find(const rg_cli *cli, const char *name);

/* --- verdicts (ULFM/Jepsen style), per rank -------------------------------------------------- */
/*
 * The one verdict table, lowest precedence first. A rank can have several findings (it reported
 * corruption, then crashed in finalize); its verdict is the finding of highest precedence, and
 * every finding is kept beside it. Later verdicts join this table, never one beside it.
 */
#define RG_VERDICTS(X)                                                                             \
    X(OK, "ok", "returned success; every output, guard band and send buffer was right")            \
    X(UNSUPPORTED, "unsupported",                                                                  \
      "the transport declared it lacks what a step needs, or returned RG_ERR_UNSUPPORTED: the "    \
      "step did not run, which is neither a pass nor a failure (reported as skipped)")             \
    X(DETECTED, "detected", "returned an error after a planned fault had fired on some rank")      \
    X(KILLED, "killed", "ended by its own kill, stop or exit fault, as planned")                   \
    X(NOT_EXERCISED, "NOT_EXERCISED", "a planned fault fired on no rank: the run proves nothing")  \
    X(LEAK, "LEAK",                                                                                \
      "ended normally, but verbs objects (QPs, CQs, MRs, PDs, channels, contexts) or file "        \
      "descriptors the transport made were never freed")                                           \
    X(SLOW_DETECTION, "SLOW_DETECTION",                                                            \
      "failed, but more than half the timeout after a peer's failure it could have been told "     \
      "of at once, or returned its timeout later than the call's timeout and a margin")            \
    X(NOT_FAIL_STOP, "NOT_FAIL_STOP",                                                              \
      "after a call returned an error, the same call again returned success, or outlived the "     \
      "timeout before failing: the transport carries on after a failure")                          \
    X(BUFFER_REWRITTEN_IN_FLIGHT, "BUFFER_REWRITTEN_IN_FLIGHT",                                    \
      "the program wrote memory the NIC owned: a send buffer before its completion, or a "         \
      "posted receive buffer past what arrived")                                                   \
    X(ERROR_SWALLOWED, "ERROR_SWALLOWED",                                                          \
      "a call the shim handed an error (an error completion, a negative poll, ENOMEM) returned "   \
      "success: so did every later call, or only a later call returned the error")                 \
    X(ERROR_WITHOUT_FAULT, "ERROR_WITHOUT_FAULT",                                                  \
      "returned an error though no planned fault had fired before it")                             \
    X(ERROR, "ERROR", "the harness could not run the rank, or the shim did not instrument it")     \
    X(CRASH, "CRASH", "died by a signal, exited without a verdict, or non-zero after it")          \
    X(DEADLOCK, "DEADLOCK",                                                                        \
      "hung: still running at the deadline, or no rank moved for longer than its timeout; "        \
      "backtrace taken, then killed")                                                              \
    X(SILENT_CORRUPTION, "SILENT_CORRUPTION",                                                      \
      "returned success with wrong data, a broken guard band or a changed send buffer")

#define RG__VERDICT_ENUM(id, name, what) RG_V_##id,
typedef enum { RG_VERDICTS(RG__VERDICT_ENUM) RG_V_COUNT } rg_verdict;
#undef RG__VERDICT_ENUM

const char *rg_verdict_name(rg_verdict v);
/* What the verdict means, one line (docs and --help use it). */
const char *rg_verdict_meaning(rg_verdict v);
/* The verdict named (as rg_verdict_name spells it), or -1. */
int rg_verdict_of(const char *name);

/* --- causes: what triage proves from evidence (triage/rg_tri_why.c) ------------------------- */
/*
 * The one table of causes a failure's evidence can prove, so a known-failures file can name
 * one (`cause:`) and a result can carry the one its files proved. The name is what files
 * hold; the title what reports say; `trace` whether only the ranks' verbs trace proves it (a
 * run gated on such a cause records the trace); `verdict` the first failure it is proven for
 * (RG_V_COUNT: any), so an entry naming another can be refused.
 */
#define RG_CAUSES(X)                                                                               \
    X(ERROR_IGNORED, "error-ignored", "an error polled, then ignored", 0, RG_V_ERROR_SWALLOWED)    \
    X(BUFFER_REUSED, "buffer-reused", "a buffer reused in flight", 0,                              \
      RG_V_BUFFER_REWRITTEN_IN_FLIGHT)                                                             \
    X(UC_NO_RECV, "uc-send-without-receive", "a UC send with no receive posted for it", 1,         \
      RG_V_COUNT)                                                                                  \
    X(NEVER_SENT, "wait-never-sent", "a wait for a message never sent", 1, RG_V_COUNT)             \
    X(NO_DEADLINE, "wait-without-deadline", "a wait with no deadline", 0, RG_V_DEADLOCK)

#define RG__CAUSE_ENUM(id, name, title, trace, verdict) RG_C_##id,
typedef enum { RG_C_NONE, RG_CAUSES(RG__CAUSE_ENUM) RG_C_COUNT } rg_cause;
#undef RG__CAUSE_ENUM

/* "uc-send-without-receive", "" for RG_C_NONE. */
const char *rg_cause_name(rg_cause c);
/* "a UC send with no receive posted for it", "" for RG_C_NONE. */
const char *rg_cause_title(rg_cause c);
/* Whether only a verbs trace proves it. */
bool rg_cause_needs_trace(rg_cause c);
/* The first failure's verdict it is proven for, or -1 for any. */
int rg_cause_verdict(rg_cause c);
/* The cause named (as rg_cause_name spells it, not none), or -1. */
int rg_cause_of(const char *name);

#endif
