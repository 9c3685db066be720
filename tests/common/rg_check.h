/* SPDX-License-Identifier: MIT */
/*
 * The test runner's shared bits. Each tests/<part>/test_*.c (unit) or it_*.c (integration)
 * file exports one suite constructor; tests/unit_main.c and tests/integration_main.c list them.
 */
#ifndef RG_CHECK_H
#define RG_CHECK_H

#include <check.h>
#include <sys/types.h>

/* Unit suites. */
Suite *rg_suite_status(void);
Suite *rg_suite_reduce(void);
Suite *rg_suite_config(void);
Suite *rg_suite_verbs_gid(void);
Suite *rg_suite_vpair_pattern(void);
Suite *rg_suite_plan(void);
Suite *rg_suite_fi_plan(void);
Suite *rg_suite_fi_own(void);
Suite *rg_suite_scenario(void);
Suite *rg_suite_data(void);
Suite *rg_suite_report(void);
Suite *rg_suite_judge(void);
Suite *rg_suite_paths(void);
Suite *rg_suite_wire(void);
Suite *rg_suite_sweep_outcome(void);
Suite *rg_suite_measure(void);
Suite *rg_suite_progress(void);
Suite *rg_suite_phases(void);
Suite *rg_suite_opt(void);
Suite *rg_suite_sweep(void);
Suite *rg_suite_sidechan(void);
Suite *rg_suite_parse(void);
Suite *rg_suite_bench(void);
Suite *rg_suite_timeline(void);
Suite *rg_suite_clock(void);
Suite *rg_suite_symbolize(void);
Suite *rg_suite_objcode(void);
Suite *rg_suite_compare(void);
Suite *rg_suite_sides(void);
Suite *rg_suite_slow(void);
Suite *rg_suite_triage(void);
Suite *rg_suite_signature(void);
Suite *rg_suite_trace(void);
Suite *rg_suite_ev_schema(void);
Suite *rg_suite_tri_qp(void);

/* Integration suites: they need rxe devices named in $RG_SOFTROCE_DEVICES. */
Suite *rg_suite_it_verbs(void);
Suite *rg_suite_it_coll(void);
Suite *rg_suite_it_fi(void);
Suite *rg_suite_it_plugin(void);
Suite *rg_suite_it_run(void);
Suite *rg_suite_it_exec(void);
Suite *rg_suite_it_bench(void);
Suite *rg_suite_it_report(void);

/*
 * Runs the suites forked, prints Check's summary and a plain "<label>: N passed, M failed"
 * line, appends the same to $RG_TALLY when set, and returns the exit status.
 */
int rg_check_main(const char *label, Suite *(*const *suites)(void), int n);

/*
 * A file of this build: `rel` ("bin/railguard", "lib/railguard-fi.so") relative to the build
 * flavour's directory, found from the test binary's own path (<flavour>/tests/<binary>).
 * Fails the test when the path does not fit.
 */
void rg_check_build_file(char *out, size_t len, const char *rel);

/* The run's scratch directory, removed with everything in it when rg_check_main's run ends. */
const char *rg_check_tmpdir(void);
/* Writes len bytes into a new file in it; its path goes to path (at least 64 bytes). */
void rg_check_write_temp(char *path, const char *data, size_t len);
/* A whole file (at most 64 KiB, not empty), allocated (free it); fails the test otherwise. */
char *rg_check_slurp(const char *path);

/*
 * Runs bin with args (NULL-terminated, after the program name) and env (NAME, VALUE pairs,
 * NULL-terminated, set in the child; or NULL), its stdout and stderr into out; kills it and
 * fails the test after timeout_s. Returns its exit status.
 */
int rg_check_cmd(const char *bin, const char *const *env, const char *const *args, double timeout_s,
                 char *out, size_t outlen);

/*
 * One rank of an external launch, started as a launcher would: PMI_RANK/PMI_SIZE and a job
 * secret set, stdout and stderr into log, bin with args (NULL-terminated, after the program
 * name) run under wrap's words when wrap is not NULL (unshare ... --, say). rg_check_wait_rank
 * waits up to timeout_s (kills it and fails the test after) and returns its exit status.
 */
pid_t rg_check_launch_rank(const char *bin, const char *const *wrap, int rank, int size,
                           const char *const *args, const char *log);
int rg_check_wait_rank(pid_t pid, const char *log, double timeout_s);

/* A free loopback TCP port (bound to 0, read back, closed); -1 when none could be had. */
int rg_check_free_port(void);

/* The rxe devices of this run ($RG_SOFTROCE_DEVICES), split; 0 when there are none. */
int rg_check_devices(char names[][64], int max);

#endif
