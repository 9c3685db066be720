# SPDX-License-Identifier: MIT
# railguard's one Makefile. Three build flavours share one set of rules:
#   rel  - -O2, what `make run` and the integration tests use
#   asan - ASan + UBSan, the unit tests run here as well
#   cov  - --coverage, for `make coverage`
# Targets that build or run call ci/deps first, which installs missing Debian packages.

BUILD    ?= build
RAILS    ?= 2
# The release (reports, --version, the shared library's name); its first number is the soname's.
RELEASE  := 0.4.0
SOMAJOR  := 0
SOFTROCE  = ci/softroce
# Builds a target starts itself (make check, run, sweep ...) compile on every core: serial, make
# check's three builds and fifteen mutants took 257 s here against 129 s with -j2. Under a
# parent's -j the jobserver already shares the cores, and a -j of ours would switch it off.
JOBS     ?= $(shell nproc 2>/dev/null || echo 1)
BUILDMAKE = $(MAKE) --no-print-directory $(if $(findstring jobserver,$(MAKEFLAGS)),,-j$(JOBS))
CC       ?= cc
PKGS      = check libibverbs jansson yaml-0.1 libcrypto

WARN     := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
            -Wpointer-arith -Wformat=2
BASE_CFLAGS := -std=c11 -D_GNU_SOURCE -g $(WARN) -Iinclude -Iparse -Itransport -Ifaultinject -Iharness -Itests \
               -Itests/transport -I$(BUILD)/gen -MMD -MP
PKG_CFLAGS   = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS     = $(shell pkg-config --libs $(PKGS) 2>/dev/null)

FLAVOUR_rel  := -O2
FLAVOUR_asan := -O1 -fno-omit-frame-pointer -fsanitize=address,undefined \
                -fno-sanitize-recover=all
FLAVOUR_cov  := -O0 --coverage

# The reduction kernels (transport/rg_reduce.c) are plain loops over three operands that may
# overlap: GCC's -O2 cost model leaves a loop that needs a run-time overlap check scalar, so
# they get the model that versions it: float32 sum of 1 MiB 183 -> 47-52 us natively here
# (in a TCG guest, which emulates SSE lane by lane, no change). Probed, so a compiler without
# the flag builds them as before.
VECT_CFLAGS := $(shell $(CC) -fvect-cost-model=dynamic -Werror -E -x c /dev/null >/dev/null 2>&1 && \
                 echo -fvect-cost-model=dynamic)
%/rg_reduce.o: CFLAGS += $(VECT_CFLAGS)

# The value parsers (integers, seconds, sizes, booleans): a leaf every other part links, so
# the command line, the environment and the files cannot disagree on what a value means.
PARSE_SRC     := parse/rg_parse.c
# Proving the job secret (HMAC, libcrypto): the transport and the runner, not the shim.
PROOF_SRC     := parse/rg_proof.c
TRANSPORT_SRC := $(sort $(wildcard transport/*.c)) $(PARSE_SRC) $(PROOF_SRC)
# The fault plan's pure half, linked into the unit tests; the shim itself is a preload library.
FI_PLAN_SRC   := faultinject/fi_plan.c faultinject/fi_plan_value.c faultinject/fi_plan_names.c
FI_PURE_SRC   := $(FI_PLAN_SRC) faultinject/fi_fires.c faultinject/fi_ev_format.c
# The ownership sanitizer needs no device either: the unit tests link it with an event catcher.
FI_OWN_SRC    := faultinject/fi_own.c
# The harness's pure parts (scenario parser, inputs and references, verdicts and reports),
# linked into the unit tests. The `railguard` command links these, its runner and the fault-plan
# library (fi_plan*.c: the plan grammar has one owner, which the shim links too), never the
# transport or the shim: it reaches them through dlopen, the plan file and the shim's events.
# harness/ is in sub-parts (docs/architecture.md), each a folder with one header; the pure ones
# and the pure files of the others are linked into the unit tests.
HARNESS_PARTS    := base data scenario evidence result rank wire launch judge report triage sweep cmd
HARNESS_PURE_SRC := $(sort $(wildcard $(addprefix harness/,$(addsuffix /*.c,base data scenario \
                        evidence result judge report triage sweep compare)))) \
                    harness/wire/rg_wire.c \
                    harness/launch/rg_proc.c harness/launch/rg_symbolize.c harness/launch/rg_clock.c \
                    harness/launch/rg_objcode.c harness/launch/rg_slow_measure.c \
                    harness/launch/rg_progress.c \
                    harness/rank/rg_transport.c \
                    harness/rank/rg_bench_spec.c \
                    harness/cmd/rg_report_cmd.c harness/cmd/rg_sweep_run.c \
                    harness/cmd/rg_sweep_code.c harness/cmd/rg_sides.c harness/cmd/rg_run_opts.c
HARNESS_SRC   := $(sort $(wildcard harness/*/*.c))
FI_SHIM_SRC   := $(FI_PLAN_SRC) faultinject/fi_fires.c faultinject/fi_event.c faultinject/fi_ev_format.c faultinject/fi_own.c faultinject/fi_dl.c \
                 faultinject/fi_shim.c faultinject/fi_clock.c faultinject/fi_rules.c \
                 faultinject/fi_ring.c faultinject/fi_srq.c \
                 faultinject/fi_datapath.c faultinject/fi_late.c faultinject/fi_trace.c faultinject/fi_verbs.c \
                 faultinject/fi_caller.c faultinject/fi_notify.c faultinject/fi_progress.c \
                 faultinject/fi_control.c $(PARSE_SRC)
PROBE_SRC     := tests/faultinject/fi_probe.c
FLOOR_SRC     := tests/transport/floor.c $(PARSE_SRC)
HELPER_SRC    := tests/common/rg_check.c tests/common/rg_ev_gen.c tests/transport/vpair.c tests/transport/drive.c
UNIT_SRC      := tests/unit_main.c $(sort $(wildcard tests/*/test_*.c tests/*/*/test_*.c))
IT_SRC        := tests/integration_main.c $(sort $(wildcard tests/*/it_*.c tests/*/*/it_*.c))
SMOKE_SRC     := tests/transport/smoke.c tests/transport/vpair.c
DRIVE_SRC     := tests/transport/drive_main.c tests/transport/drive.c harness/data/rg_data.c

ALL_C := $(sort $(TRANSPORT_SRC) $(HELPER_SRC) $(UNIT_SRC) $(IT_SRC) $(SMOKE_SRC) $(DRIVE_SRC) $(FLOOR_SRC) \
                $(wildcard faultinject/*.c tests/faultinject/*.c harness/*/*.c tests/harness/*/*.c \
                           tests/parse/*.c tests/fuzz/*.c examples/*/*.c adapters/*/*.cpp))
ALL_H  = $(wildcard parse/*.h transport/*.h faultinject/*.h harness/*/*.h tests/*/*.h \
                    include/railguard/*.h adapters/*/*.h)

.PHONY: all deps build run check check-full check-unit check-integration coverage format mutants \
        regression sweep sweep-mutants mutants-stock mutant-seeds fuzz bench soak \
        format-check arrows install uninstall jaccl gloo corpus \
        softroce-up softroce-shell softroce-down clean distclean help
.DEFAULT_GOAL := all

all: build

help:
	@echo "make run            the conformance suite on soft-RoCE (installs what is missing)"
	@echo "make run NODES=2    the two-node scenarios across two soft-RoCE nodes on a wire"
	@echo "make check          unit tests (plain, ASan+UBSan) and integration tests on rxe"
	@echo "make check-full     the full transport matrix on 4 rails (sizes to 64 MiB)"
	@echo "make regression     the upstream regression suite: reference and mutants"
	@echo "make sweep          every fault point of every sweep program (long)"
	@echo "make sweep-mutants  each mutant against the sweep that reaches its bug"
	@echo "make mutants-stock  each mutant against the default suite: every one must fail it"
	@echo "make mutants        build the mutants (tests/mutants/*.patch) under build/mutants"
	@echo "make bench          the link and railguard bench in one boot: BENCHMARKS.md, docs/bench.png"
	@echo "make mutant-seeds   each mutant under 20 seeds: which oracle catches it, how often"
	@echo "make soak           stock + regression suites under load: false verdicts in N runs"
	@echo "make fuzz           libFuzzer on every parser of outside bytes (FUZZ_RUNS=N)"
	@echo "make coverage       lcov report over unit, integration and conformance runs"
	@echo "make format-check   clang-format over every C file (make format rewrites them)"
	@echo "make arrows         the parts' include arrows run one way (docs/architecture.md)"
	@echo "make install        PREFIX=/usr/local DESTDIR=: command, libraries, headers, .pc, scenarios, man"
	@echo "make uninstall      what make install put there, with the same variables"
	@echo "make jaccl          JACCL_SRC=/path/to/mlx: upstream JACCL and its railguard adapter"
	@echo "make gloo           Gloo's ibverbs transport (Debian's libgloo-dev) and its adapter"
	@echo "make corpus         every verbs program Debian ships that runs on rxe, clean and faulted"
	@echo "make softroce-shell a shell with $(RAILS) rxe rails up"
	@echo "make clean          the builds (make distclean: the cached guest kernel too)"

deps:
	@ci/deps

# railguard's version for the reports, rewritten only when `git describe` changes.
RG_VERSION_H := $(BUILD)/gen/rg_version.h
$(RG_VERSION_H): FORCE
	@mkdir -p $(@D); v=$$(git describe --always --dirty 2>/dev/null || echo unknown); \
	 printf '#define RG_VERSION "%s"\n#define RG_RELEASE "%s"\n' "$$v" "$(RELEASE)" > $@.tmp; \
	 cmp -s $@.tmp $@ && rm -f $@.tmp || mv $@.tmp $@
.PHONY: FORCE
FORCE:

# Quiet by default, one line per file; `make V=1` shows every command.
ifeq ($(V),1)
Q :=
quiet =
else
Q := @
quiet = @printf '  %-3s %s\n' '$(1)' '$(2)'
endif

# --- one rule set per flavour ----------------------------------------------------------------
define FLAVOUR
$(1)_DIR := $(BUILD)/$(1)
$(1)_LIB := $(BUILD)/$(1)/lib/librailguard.a
obj_$(1) = $$(patsubst %.c,$(BUILD)/$(1)/obj/%.o,$$(1))

$(BUILD)/$(1)/obj/harness/base/rg_text.o: $(RG_VERSION_H)

$(BUILD)/$(1)/obj/%.o: %.c
	@mkdir -p $$(@D)
	$$(call quiet,CC,$$<)
	$(Q)$$(CC) $$(BASE_CFLAGS) $$(FLAVOUR_$(1)) $$(PKG_CFLAGS) $$(CFLAGS) -c $$< -o $$@

$$($(1)_LIB): $$(call obj_$(1),$(TRANSPORT_SRC))
	@mkdir -p $$(@D)
	$$(call quiet,AR,$$@)
	$(Q)rm -f $$@ && ar rcs $$@ $$^

$(BUILD)/$(1)/tests/unit: $$(call obj_$(1),$(UNIT_SRC) $(HELPER_SRC) $(FI_PURE_SRC) $(FI_OWN_SRC) \
                                          $(HARNESS_PURE_SRC)) \
                          $$($(1)_LIB)
	@mkdir -p $$(@D)
	$$(call quiet,LD,$$@)
	$(Q)$$(CC) $$(FLAVOUR_$(1)) $$(LDFLAGS) -o $$@ $$^ $$(PKG_LIBS)

$(BUILD)/$(1)/tests/integration: $$(call obj_$(1),$(IT_SRC) $(HELPER_SRC) harness/data/rg_data.c) $$($(1)_LIB)
	@mkdir -p $$(@D)
	$$(call quiet,LD,$$@)
	$(Q)$$(CC) $$(FLAVOUR_$(1)) $$(LDFLAGS) -o $$@ $$^ $$(PKG_LIBS)

$(BUILD)/$(1)/bin/rg-smoke: $$(call obj_$(1),$(SMOKE_SRC)) $$($(1)_LIB)
	@mkdir -p $$(@D)
	$$(call quiet,LD,$$@)
	$(Q)$$(CC) $$(FLAVOUR_$(1)) $$(LDFLAGS) -o $$@ $$^ $$(PKG_LIBS)

$(BUILD)/$(1)/bin/rg-drive: $$(call obj_$(1),$(DRIVE_SRC)) $$($(1)_LIB)
	@mkdir -p $$(@D)
	$$(call quiet,LD,$$@)
	$(Q)$$(CC) $$(FLAVOUR_$(1)) $$(LDFLAGS) -o $$@ $$^ $$(PKG_LIBS)

# The shim is a preload library: position-independent objects, only its wrappers exported,
# every symbol resolved at link time. Not built under ASan (a preloaded .so would need libasan
# first in the process).
$(BUILD)/$(1)/pic/%.o: %.c
	@mkdir -p $$(@D)
	$$(call quiet,CC,$$<)
	$(Q)$$(CC) $$(BASE_CFLAGS) $$(FLAVOUR_$(1)) -fPIC $$(PKG_CFLAGS) $$(CFLAGS) -c $$< -o $$@

$(BUILD)/$(1)/lib/railguard-fi.so: $$(patsubst %.c,$(BUILD)/$(1)/pic/%.o,$(FI_SHIM_SRC)) \
                                   faultinject/fi_exports.map
	@mkdir -p $$(@D)
	$$(call quiet,LD,$$@)
	$(Q)$$(CC) $$(FLAVOUR_$(1)) $$(LDFLAGS) -shared -Wl,--version-script=faultinject/fi_exports.map \
	    -Wl,-z,defs -o $$@ $$(filter %.o,$$^) -libverbs

# librailguard as a shared library for programs and adapters that link it (pkg-config
# railguard): the public rg_* calls exported, the internals (rg__*) not.
$(BUILD)/$(1)/lib/librailguard.so.$(RELEASE): $$(patsubst %.c,$(BUILD)/$(1)/pic/%.o,$(TRANSPORT_SRC)) \
                                              transport/librailguard.map
	@mkdir -p $$(@D)
	$$(call quiet,LD,$$@)
	$(Q)$$(CC) $$(FLAVOUR_$(1)) $$(LDFLAGS) -shared -Wl,-soname,librailguard.so.$(SOMAJOR) \
	    -Wl,--version-script=transport/librailguard.map -Wl,-z,defs -o $$@ $$(filter %.o,$$^) \
	    -libverbs -ljansson -lcrypto

# The reference transport as a plugin (railguard/plugin.h): only its table exported.
$(BUILD)/$(1)/lib/railguard-transport.so: $$(patsubst %.c,$(BUILD)/$(1)/pic/%.o,$(TRANSPORT_SRC)) \
                                          transport/rg_plugin.map
	@mkdir -p $$(@D)
	$$(call quiet,LD,$$@)
	$(Q)$$(CC) $$(FLAVOUR_$(1)) $$(LDFLAGS) -shared -Wl,--version-script=transport/rg_plugin.map \
	    -Wl,-z,defs -o $$@ $$(filter %.o,$$^) -libverbs -ljansson -lcrypto

# make bench's floor for the 8-byte all_reduce: a 2-process exchange with nothing but verbs.
$(BUILD)/$(1)/bin/rg-floor: $$(call obj_$(1),$(FLOOR_SRC))
	@mkdir -p $$(@D)
	$$(call quiet,LD,$$@)
	$(Q)$$(CC) $$(FLAVOUR_$(1)) $$(LDFLAGS) -o $$@ $$^ -libverbs

$(BUILD)/$(1)/bin/rg-fi-probe: $$(call obj_$(1),$(PROBE_SRC))
	@mkdir -p $$(@D)
	$$(call quiet,LD,$$@)
	$(Q)$$(CC) $$(FLAVOUR_$(1)) $$(LDFLAGS) -o $$@ $$^ -libverbs

$(BUILD)/$(1)/bin/railguard: $$(call obj_$(1),$(HARNESS_SRC) $(FI_PURE_SRC) $(PARSE_SRC) $(PROOF_SRC))
	@mkdir -p $$(@D)
	$$(call quiet,LD,$$@)
	$(Q)$$(CC) $$(FLAVOUR_$(1)) $$(LDFLAGS) -rdynamic -o $$@ $$^ $$(shell pkg-config --libs jansson yaml-0.1) -lcrypto -ldl -lm

# A transport that misbehaves on purpose, for the runner's own tests.
# Its DT_RPATH is its own directory, where librg-test-verbs-beside.so (libibverbs under another
# name) waits: a dlopen of that bare name must be found there under the shim too.
$(BUILD)/$(1)/lib/rg-test-bad-plugin.so: $(BUILD)/$(1)/pic/tests/harness/rank/bad_plugin.o
	@mkdir -p $$(@D)
	$$(call quiet,LD,$$@)
	$(Q)$$(CC) $$(FLAVOUR_$(1)) $$(LDFLAGS) -shared -Wl,-z,defs -Wl,--disable-new-dtags \
	    -Wl,-rpath,'$$$$ORIGIN' -o $$@ $$^
	$(Q)ln -sf $$$$($$(CC) -print-file-name=libibverbs.so.1) $$(@D)/librg-test-verbs-beside.so

# A v2 adapter declaring part of the capabilities, forwarding to the reference beside it.
$(BUILD)/$(1)/lib/rg-test-subset-plugin.so: $(BUILD)/$(1)/pic/tests/harness/rank/subset_plugin.o
	@mkdir -p $$(@D)
	$$(call quiet,LD,$$@)
	$(Q)$$(CC) $$(FLAVOUR_$(1)) $$(LDFLAGS) -shared -Wl,-z,defs -o $$@ $$^ -ldl

$(BUILD)/$(1)/bin/rg-fi-threads: $$(call obj_$(1),tests/faultinject/fi_threads.c)
	@mkdir -p $$(@D)
	$$(call quiet,LD,$$@)
	$(Q)$$(CC) $$(FLAVOUR_$(1)) $$(LDFLAGS) -o $$@ $$^ -libverbs -lpthread

# The same probe resolving every verb with dlsym on its own dlopen handle, as NCCL does.
$(BUILD)/$(1)/obj/tests/faultinject/fi_probe_dl.o: $(PROBE_SRC)
	@mkdir -p $$(@D)
	$$(call quiet,CC,$$<)
	$(Q)$$(CC) $$(BASE_CFLAGS) $$(FLAVOUR_$(1)) -DFI_PROBE_DLOPEN $$(CFLAGS) -c $$< -o $$@

$(BUILD)/$(1)/bin/rg-fi-probe-dl: $(BUILD)/$(1)/obj/tests/faultinject/fi_probe_dl.o
	@mkdir -p $$(@D)
	$$(call quiet,LD,$$@)
	$(Q)$$(CC) $$(FLAVOUR_$(1)) $$(LDFLAGS) -o $$@ $$^ -ldl

# The man page and the shell's completion, written by the command from its option tables.
$(BUILD)/$(1)/share/railguard.1: docs/man/railguard.1.in $(BUILD)/$(1)/bin/railguard
	@mkdir -p $$(@D)
	$$(call quiet,GEN,$$@)
	$(Q){ sed '/@OPTIONS@/,$$$$d' $$<; $(BUILD)/$(1)/bin/railguard help --man; \
	      sed '1,/@OPTIONS@/d' $$<; } >$$@.tmp && mv $$@.tmp $$@

$(BUILD)/$(1)/share/railguard.bash: $(BUILD)/$(1)/bin/railguard
	@mkdir -p $$(@D)
	$$(call quiet,GEN,$$@)
	$(Q)$$< help --completion >$$@.tmp && mv $$@.tmp $$@

build-$(1): $(BUILD)/$(1)/tests/unit $(BUILD)/$(1)/tests/integration $(BUILD)/$(1)/bin/rg-smoke \
            $(BUILD)/$(1)/bin/rg-drive $(BUILD)/$(1)/bin/rg-floor $(BUILD)/$(1)/bin/railguard \
            $(BUILD)/$(1)/share/railguard.1 $(BUILD)/$(1)/share/railguard.bash \
            $(BUILD)/$(1)/lib/railguard-transport.so \
            $(if $(filter asan,$(1)),,$(BUILD)/$(1)/lib/railguard-fi.so \
                $(BUILD)/$(1)/lib/librailguard.so.$(RELEASE) \
                $(BUILD)/$(1)/lib/rg-test-bad-plugin.so $(BUILD)/$(1)/lib/rg-test-subset-plugin.so \
                $(BUILD)/$(1)/bin/rg-fi-probe $(BUILD)/$(1)/bin/rg-fi-probe-dl \
                $(BUILD)/$(1)/bin/rg-fi-threads)
.PHONY: build-$(1)
endef
$(foreach f,rel asan cov,$(eval $(call FLAVOUR,$(f))))

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)

build: deps
	@$(BUILDMAKE) build-rel

# --- mutants: the reference transport with one upstream bug's class rebuilt in it -----------
# Each tests/mutants/NAME.patch applies (patch -p1, no fuzz) to a copy of transport/ under
# build/mutants/NAME and builds there as a plugin; nothing in transport/ knows of them. A patch
# that no longer applies, or a mutant that no longer builds, fails `make mutants` (and so
# `make check`): refresh it against the new transport.
MUTANTS     := $(sort $(basename $(notdir $(wildcard tests/mutants/*.patch))))
MUTANT_DIR  := $(BUILD)/mutants
MUTANT_SOS  := $(foreach m,$(MUTANTS),$(MUTANT_DIR)/$(m)/railguard-transport.so)
MUTANT_CFLAGS = $(filter-out -MMD -MP,$(BASE_CFLAGS)) -O2 -fPIC $(PKG_CFLAGS) $(CFLAGS)

# A patch with a "# combine: A B" line is mutants A and B first, then its own hunks: several
# bugs in one transport (triage's own test), each bug's text kept in one place. rg_reduce.c
# gets the reference's own VECT_CFLAGS: a mutant differs from the reference by its patch
# alone (make bench's callgrind against mlx-3152 compared a scalar reduction with a vector one).
$(MUTANT_DIR)/%/railguard-transport.so: tests/mutants/%.patch $(TRANSPORT_SRC) \
                                        $(wildcard transport/*.h) transport/rg_plugin.map \
                                        $(wildcard tests/mutants/*.patch)
	@rm -rf $(MUTANT_DIR)/$* && mkdir -p $(MUTANT_DIR)/$*
	@cp -r transport $(MUTANT_DIR)/$*/transport
	@for p in $$(sed -n 's/^# combine: *//p' $<) $*; do \
	    patch -s -p1 --fuzz=0 --no-backup-if-mismatch -d $(MUTANT_DIR)/$* \
	        < tests/mutants/$$p.patch || \
	    { echo "mutants: tests/mutants/$$p.patch no longer applies (for $*): refresh it" >&2; \
	      exit 1; }; done
	$(call quiet,LD,$@)
	$(Q)$(CC) $(MUTANT_CFLAGS) $(VECT_CFLAGS) -c -o $(MUTANT_DIR)/$*/rg_reduce.o \
	    $(MUTANT_DIR)/$*/transport/rg_reduce.c
	$(Q)$(CC) $(MUTANT_CFLAGS) -shared -Wl,--version-script=transport/rg_plugin.map -Wl,-z,defs \
	    -o $@ $$(ls $(MUTANT_DIR)/$*/transport/*.c | grep -v '/rg_reduce\.c$$') \
	    $(MUTANT_DIR)/$*/rg_reduce.o $(PARSE_SRC) $(PROOF_SRC) -libverbs -ljansson -lcrypto
	@nm -D --defined-only $@ | grep -q ' rg_plugin_v2$$' || \
	    { echo "mutants: $@ has no plugin table" >&2; rm -f $@; exit 1; }

# deps first: the prerequisites are made in order.
mutants: deps $(MUTANT_SOS)
	@echo "mutants: $(words $(MUTANTS)) built in $(MUTANT_DIR): $(MUTANTS)"

# The upstream regression suite: every scenarios/regression/NAME.yaml against the reference
# (must pass) and its mutant (must fail), one soft-RoCE session, a table and its counts.
regression: deps
	@$(BUILDMAKE) build-rel mutants
	$(SOFTROCE) exec --rails $(RAILS) --timeout 1200 -- ci/regression $(BUILD)

# Full sweeps of the reference transport: every error-completion and negative-poll point, and
# a receive-delay point every few posts, of every scenarios/sweep program. Not part of CI
# (make check runs a bounded one); expect it to take a while: one scenario run per point.
# Then each mutant against the sweep of the fault kind that reaches its bug (sweep-mutants).
# SWEEP_PROGRAMS (scenario files) and SWEEP_MUTANTS (names) narrow both halves: make check's
# bounded run of this target uses them. SWEEP_SHARD=K/N runs shard K of N of every sweep into
# BUILD/sweep and no mutants (a CI matrix: one machine a shard, `make sweep-mutants` its own
# job); ci/sweep-merge BUILD OUT SHARD_DIR... joins them (.github/workflows/railguard.yml).
# Each sweep's runs are kept as BUILD/sweep/NAME-KIND/runs.tar (ci/sweep-all: --work in TMPDIR).
# SWEEP_LIST=1 only plans (BUILD/sweep/NAME-KIND/plan.json, no point run, no mutants), and
# SWEEP_PLANS=DIR gives every sweep its plan from such a DIR: the shards of a matrix share one.
SWEEP_KINDS ?= error negpoll delay
SWEEP_PROGRAMS ?=
SWEEP_MUTANTS ?=
SWEEP_SHARD ?=
SWEEP_PLANS ?=
SWEEP_LIST ?=
sweep: deps
	@$(BUILDMAKE) build-rel mutants
	RG_SWEEP_PROGRAMS='$(SWEEP_PROGRAMS)' RG_SWEEP_MUTANTS='$(SWEEP_MUTANTS)' \
	RG_SWEEP_SHARD='$(SWEEP_SHARD)' RG_SWEEP_PLANS='$(abspath $(SWEEP_PLANS))' \
	RG_SWEEP_LIST='$(SWEEP_LIST)' \
	$(SOFTROCE) exec --rails $(RAILS) --timeout 7200 -- \
	    sh -c 'st=0; ci/sweep-all $(BUILD) $(SWEEP_KINDS) || st=1; \
	           [ -n "$$RG_SWEEP_SHARD" ] || [ "$$RG_SWEEP_LIST" = 1 ] || ci/sweep-mutants $(BUILD) || \
	           st=1; exit $$st'

# The default suite (railguard run, no scenario: what a third-party transport's CI runs)
# against every mutant, --fail-fast: each must fail it, the reference pass it whole. About a
# minute a mutant at most; MUTANTS_STOCK (names) narrows it and MUTANTS_STOCK_REF=no leaves the
# reference's run out, as make check's bounded run does (its conformance suite ran it).
MUTANTS_STOCK ?=
MUTANTS_STOCK_REF ?=
mutants-stock: deps
	@$(BUILDMAKE) build-rel mutants
	RG_MUTANTS_STOCK='$(MUTANTS_STOCK)' RG_MUTANTS_STOCK_REF='$(MUTANTS_STOCK_REF)' \
	$(SOFTROCE) exec --rails $(RAILS) --timeout 2400 -- ci/mutants-stock $(BUILD)

# Only the mutants' sweeps: every mutant must fail its sweep, the reference pass it.
sweep-mutants: deps
	@$(BUILDMAKE) build-rel mutants
	RG_SWEEP_MUTANTS='$(SWEEP_MUTANTS)' \
	$(SOFTROCE) exec --rails $(RAILS) --timeout 1800 -- ci/sweep-mutants $(BUILD)

# The benchmark (not part of CI; 11-19 minutes, measured 2026-11-29): in one soft-RoCE
# boot the link's own figures (perftest, by the wall clock and by its own) and `railguard
# bench` of the reference transport (RC and UC, 2 and 4 ranks, with and without the shim,
# every operation, callgrind against the mlx-3152 mutant); then BENCHMARKS.md and its plot,
# docs/bench.png.
# BENCH_QUICK=1: two sizes, few iterations, one callgrind run, into BENCH_MD and BENCH_PNG
# (make check's bounded run, which writes under build/ and never over BENCHMARKS.md).
# BENCH_FULL=1: the link timed one way too, at every size of the grid (not only in the pairs),
# and what no target reads: the grids under the shim and with registered buffers, callgrind
# under the shim's counting plan, the 2 MiB profile.
# BENCH_PARTS="phases ...": only these parts of ci/bench, into the same BENCH_OUT.
BENCH_QUICK ?=
BENCH_FULL  ?=
BENCH_PARTS ?=
BENCH_OUT   ?= $(BUILD)/bench
BENCH_MD    ?= BENCHMARKS.md
BENCH_PNG   ?= docs/bench.png
bench: deps
	@ci/deps bench
	@$(BUILDMAKE) build-rel mutants
	RG_BENCH_QUICK='$(BENCH_QUICK)' RG_BENCH_FULL='$(BENCH_FULL)' RG_BENCH_PARTS='$(BENCH_PARTS)' \
	$(SOFTROCE) exec --rails 1 --timeout 3600 -- ci/bench $(BUILD) $(BENCH_OUT)
	ci/bench-report $(BENCH_OUT) $(BENCH_MD) $(BENCH_PNG)

# How much luck each oracle needs: every regression scenario against its mutant under SEEDS
# seeds (default 20); one row per scenario, runs caught and by which verdict.
# MUTANT_SEEDS_ONLY: regression scenario names to run (default every one).
SEEDS ?= 20
MUTANT_SEEDS_ONLY ?=
mutant-seeds: deps
	@$(BUILDMAKE) build-rel mutants
	RG_MUTANT_SEEDS_ONLY='$(MUTANT_SEEDS_ONLY)' $(SOFTROCE) exec --rails $(RAILS) --timeout 5400 -- ci/mutant-seeds $(BUILD) $(SEEDS)

# The soak: the stock suite and the regression scenarios on the reference, round after round
# under a new seed, -j 2, beside SOAK_HOGS busy loops, until SOAK_RUNS scenario runs are
# judged; every FAIL or XPASS is a false verdict (the reference is correct). Prints "false
# verdicts: N in M scenario runs"; fails on any. make check runs a bounded one (one round,
# without the regression and exec *-flush scenarios);
# SOAK_TALLY: append "soak P F" there. SOAK_SCENARIOS: what a round runs (default every stock
# scenario, exec and regression ones too).
SOAK_RUNS ?= 2000
SOAK_HOGS ?= 2
SOAK_SCENARIOS ?=
SOAK_TALLY ?=
soak: deps
	@$(BUILDMAKE) build-rel
	RG_SOAK_SCENARIOS='$(SOAK_SCENARIOS)' \
	$(SOFTROCE) exec --rails $(RAILS) --timeout $$(( $(SOAK_RUNS) * 6 + 600 )) -- \
	    ci/soak $(BUILD) $(SOAK_RUNS) $(SOAK_HOGS) $(if $(SOAK_TALLY),$(abspath $(SOAK_TALLY)))

# --- fuzzing: libFuzzer (Debian's clang) on every parser of outside bytes ---------------------
# One target per parser: scenario files, fault plans, devices files, the side channel's
# frames and handshake, the runners' clock exchange, and the shim's evidence read back by the
# runner (a round trip of every 64-bit value). Each starts from its checked-in corpus (tests/fuzz/corpus/NAME, copied
# so findings never touch the tree) and runs FUZZ_SECONDS under ASan and UBSan; a crash, a leak or a two-line error fails the target and
# leaves the input in $(BUILD)/fuzz/. The last line of each says how many inputs ran.
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 60
# FUZZ_RUNS=N runs N inputs per target instead of FUZZ_SECONDS (the 10-million-input sittings).
FUZZ_BOUND = $(if $(FUZZ_RUNS),-runs=$(FUZZ_RUNS),-max_total_time=$(FUZZ_SECONDS))
FUZZ_SAID  = $(if $(FUZZ_RUNS),, in $(FUZZ_SECONDS) s)
FUZZ_FLAGS    = $(filter-out -MMD -MP,$(BASE_CFLAGS)) -O1 -g -fno-omit-frame-pointer \
                -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all $(PKG_CFLAGS)
FUZZ_TARGETS := scenario plan devices sidechan clock evidence
FUZZ_SRC_scenario := $(wildcard harness/scenario/*.c) harness/data/rg_data.c \
                     harness/base/rg_verdict.c harness/base/rg_paths.c $(FI_PLAN_SRC) $(PARSE_SRC)
FUZZ_SRC_plan     := $(FI_PLAN_SRC) $(PARSE_SRC)
FUZZ_SRC_devices  := transport/rg_config.c transport/rg_status.c $(PARSE_SRC)
# The side channel's three files are included by its target, to reach their static parts.
FUZZ_SRC_sidechan := transport/rg_status.c $(PROOF_SRC)
# rg_clock.c likewise, by its target, for its static handshake and ping handlers.
FUZZ_SRC_clock    := $(PARSE_SRC) $(PROOF_SRC)
# The shim's line writer and the runner's reader, linked together: what one writes the other
# must read back exactly.
FUZZ_SRC_evidence := faultinject/fi_event.c faultinject/fi_ev_format.c harness/evidence/rg_evidence.c \
                     harness/evidence/rg_ev_field.c harness/evidence/rg_ev_schema.c \
                     harness/evidence/rg_trace.c tests/common/rg_ev_gen.c $(PARSE_SRC)
FUZZ_LIBS         := $(shell pkg-config --libs jansson yaml-0.1 libcrypto 2>/dev/null) -lm

$(BUILD)/fuzz/fuzz-%: tests/fuzz/fuzz_%.c $(PARSE_SRC) $(wildcard harness/*/*.c harness/*/*.h \
                      faultinject/*.c faultinject/*.h transport/*.c transport/*.h)
	@mkdir -p $(@D)
	$(call quiet,LD,$@)
	$(Q)$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ $< $(FUZZ_SRC_$*) $(FUZZ_LIBS)

fuzz: deps $(foreach t,$(FUZZ_TARGETS),$(BUILD)/fuzz/fuzz-$(t))
	@st=0; for t in $(FUZZ_TARGETS); do \
	    rm -rf $(BUILD)/fuzz/corpus-$$t && cp -r tests/fuzz/corpus/$$t $(BUILD)/fuzz/corpus-$$t; \
	    ( cd $(BUILD)/fuzz && ./fuzz-$$t $(FUZZ_BOUND) -print_final_stats=1 \
	        -max_len=65536 corpus-$$t >fuzz-$$t.log 2>&1 ) || st=1; \
	    n=$$(sed -n 's/^stat::number_of_executed_units: *//p' $(BUILD)/fuzz/fuzz-$$t.log); \
	    r=$$(sed -n 's/^stat::average_exec_per_sec: *//p' $(BUILD)/fuzz/fuzz-$$t.log); \
	    echo "fuzz: $$t: $${n:-?} inputs$(FUZZ_SAID) ($${r:-?}/s), $$(grep -c '^==.*ERROR' \
	        $(BUILD)/fuzz/fuzz-$$t.log) crash(es) (log $(BUILD)/fuzz/fuzz-$$t.log)"; \
	done; exit $$st

# --- the corpus: verbs programs Debian ships ----------------------------------------------------
# scenarios/corpus/: perftest's latency, atomic and UD tests, librdmacm's examples and rsockets
# tools, qperf, libfabric's fi_pingpong, ucx_perftest and an MPI job under Open MPI over UCX,
# each clean and faulted, judged by railguard run (docs/exec.md, "The corpus"). Their packages
# come from `ci/deps corpus`; the MPI program is built here. CORPUS_SCENARIOS picks what runs.
CORPUS_SCENARIOS ?= scenarios/corpus/
# One scenario at a time: two at once share what the programs do not keep apart (qperf's RDMA CM
# port, rejected as in use; mckey's multicast group, which made a lost datagram read ok until
# each case had a group of its own). The whole corpus takes about two hours so.
CORPUS_JOBS ?= 1
CORPUS_TIMEOUT ?= 10800
corpus: deps
	@sh ci/deps corpus
	@$(BUILDMAKE) build-rel
	@mkdir -p $(BUILD)/corpus
	$(call quiet,CC,$(BUILD)/corpus/mpi-allreduce)
	$(Q)mpicc -O2 $(WARN) -o $(BUILD)/corpus/mpi-allreduce tests/corpus/mpi_allreduce.c
	rm -rf $(BUILD)/corpus-run
	$(SOFTROCE) exec --rails $(RAILS) --timeout $(CORPUS_TIMEOUT) -- $(BUILD)/rel/bin/railguard run \
	    -j $(CORPUS_JOBS) --out $(BUILD)/corpus-run $(CORPUS_SCENARIOS)

# --- third-party transports -------------------------------------------------------------------
# Upstream JACCL and its adapter, from the user's mlx checkout (docs/adapters.md). Without
# JACCL_SRC it says so and builds nothing.
jaccl:
	@$(if $(JACCL_SRC),sh ci/deps jaccl &&) $(MAKE) --no-print-directory -C adapters/jaccl \
	    JACCL_SRC=$(JACCL_SRC) OUT=$(abspath $(BUILD))/jaccl

# Gloo's ibverbs transport from Debian's libgloo-dev and its adapter (docs/adapters.md).
# GLOO_RUN="scenario.yaml..." (or scenarios/, the stock suite: make check's): then runs them
# on it in soft-RoCE, gated by its known failures.
GLOO_RUN ?=
gloo: deps
	@sh ci/deps gloo && $(MAKE) --no-print-directory -C adapters/gloo OUT=$(abspath $(BUILD))/gloo
	$(if $(GLOO_RUN),@$(BUILDMAKE) build-rel && rm -rf $(BUILD)/gloo-run && \
	    $(SOFTROCE) exec --rails $(RAILS) --timeout 1200 -- $(BUILD)/rel/bin/railguard run \
	    --transport $(abspath $(BUILD))/gloo/railguard-gloo.so \
	    --known adapters/gloo/known-failures.yaml --out $(BUILD)/gloo-run $(GLOO_RUN))

# --- install ---------------------------------------------------------------------------------
# Like a library and a tool: the command; the shim and the reference transport in
# PREFIX/lib/railguard and the stock scenarios in PREFIX/share/railguard (the command finds them
# from where it is, so these two follow PREFIX alone, whatever LIBDIR and DATADIR say);
# librailguard static and shared and railguard.pc in LIBDIR (lib64 is fine); the headers in
# INCLUDEDIR/railguard; the man pages. DESTDIR stages it, as packagers do.
PREFIX     ?= /usr/local
LIBDIR     ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
DATADIR    ?= $(PREFIX)/share
MANDIR     ?= $(DATADIR)/man
PLUGINDIR  := $(PREFIX)/lib/railguard
SCENARIODIR := $(PREFIX)/share/railguard
D          := $(DESTDIR)

install: build
	@$(BUILDMAKE) $(BUILD)/rel/lib/librailguard.so.$(RELEASE)
	$(call quiet,INSTALL,$(D)$(PREFIX))
	$(Q)install -d $(D)$(PREFIX)/bin $(D)$(PLUGINDIR) $(D)$(LIBDIR)/pkgconfig \
	    $(D)$(INCLUDEDIR)/railguard $(D)$(SCENARIODIR) $(D)$(MANDIR)/man1 $(D)$(MANDIR)/man5
	$(Q)install -m 755 $(BUILD)/rel/bin/railguard $(D)$(PREFIX)/bin/railguard
	$(Q)install -m 755 $(BUILD)/rel/lib/railguard-fi.so $(BUILD)/rel/lib/railguard-transport.so \
	    $(D)$(PLUGINDIR)/
	$(Q)install -m 644 $(BUILD)/rel/lib/librailguard.a $(D)$(LIBDIR)/librailguard.a
	$(Q)install -m 755 $(BUILD)/rel/lib/librailguard.so.$(RELEASE) $(D)$(LIBDIR)/
	$(Q)ln -sf librailguard.so.$(RELEASE) $(D)$(LIBDIR)/librailguard.so.$(SOMAJOR)
	$(Q)ln -sf librailguard.so.$(SOMAJOR) $(D)$(LIBDIR)/librailguard.so
	$(Q)install -m 644 include/railguard/plugin.h transport/railguard.h \
	    faultinject/rg_faultinject.h $(D)$(INCLUDEDIR)/railguard/
	$(Q)sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' \
	    -e 's|@PLUGINDIR@|$(PLUGINDIR)|' -e 's|@SCENARIODIR@|$(SCENARIODIR)|' \
	    -e 's|@RELEASE@|$(RELEASE)|' railguard.pc.in \
	    >$(D)$(LIBDIR)/pkgconfig/railguard.pc
	$(Q)rm -rf $(D)$(SCENARIODIR)/scenarios && cp -R scenarios $(D)$(SCENARIODIR)/
	$(Q)install -m 644 $(BUILD)/rel/share/railguard.1 $(D)$(MANDIR)/man1/
	$(Q)install -d $(D)$(DATADIR)/bash-completion/completions
	$(Q)install -m 644 $(BUILD)/rel/share/railguard.bash \
	    $(D)$(DATADIR)/bash-completion/completions/railguard
	$(Q)install -m 644 docs/man/railguard-scenario.5 $(D)$(MANDIR)/man5/

uninstall:
	rm -f $(D)$(PREFIX)/bin/railguard $(D)$(LIBDIR)/librailguard.* $(D)$(LIBDIR)/pkgconfig/railguard.pc \
	    $(D)$(MANDIR)/man1/railguard.1 $(D)$(MANDIR)/man5/railguard-scenario.5 \
	    $(D)$(DATADIR)/bash-completion/completions/railguard
	rm -rf $(D)$(PLUGINDIR) $(D)$(INCLUDEDIR)/railguard $(D)$(SCENARIODIR)

# --- the main job ----------------------------------------------------------------------------
# The conformance suite: every scenario under scenarios/ against the reference transport, each
# rank under the fault-injection shim. Logs, events, JUnit and JSON reports land in build/run,
# emptied first: the runner numbers its directories per run, so an old run's would mix in.
# NODES=2: the two-node scenarios (scenarios/nodes/: wire faults across a real wire) on two
# soft-RoCE nodes, one rank on each, started over ssh by railguard run --hosts (ci/run-nodes;
# NODES_SCENARIOS narrows them); results in BUILD/run-nodes. RUN_SCENARIOS: what a one-node
# run runs (make check's run inside the guest, on ci/softroce's native branch, narrows it).
NODES ?= 1
NODES_SCENARIOS ?=
RUN_SCENARIOS ?= scenarios/ scenarios/exec/
run: deps
	@$(BUILDMAKE) build-rel
ifeq ($(NODES),2)
	RG_NODES_SCENARIOS='$(NODES_SCENARIOS)' \
	$(SOFTROCE) exec --nodes 2 --rails $(RAILS) --timeout 2400 -- ci/run-nodes $(BUILD)
else
	rm -rf $(BUILD)/run
	$(SOFTROCE) exec --rails $(RAILS) --timeout 2400 -- $(BUILD)/rel/bin/railguard run \
	    --out $(BUILD)/run $(RUN_SCENARIOS)
endif

# --- tests ---------------------------------------------------------------------------------
# Unit tests run on the host (no device needed; the guest is ~6x slower), twice: plain and
# under ASan+UBSan. The integration tests, the conformance suite (what `make run` runs, into
# build/check-run) and the upstream regression suite (reference and mutants) share one
# soft-RoCE session; then every other target the README documents, bounded
# (ci/targets-check). The last line sums them all.
TALLY = $(BUILD)/tally

check: deps
	@$(BUILDMAKE) build-rel build-asan mutants
	@rm -f $(TALLY) $(TALLY).why $(TALLY).notes && rm -rf $(BUILD)/check-run && mkdir -p $(BUILD)
	@st=0; t0=$$(date +%s); \
	 echo "== [$$(( $$(date +%s) - t0 )) s] the include arrows (make arrows: its recipe, not a sub-make, so make -n stays a dry run)"; \
	 { ci/arrows --self-test && ci/arrows $(abspath $(TALLY)); } || st=1; \
	 echo "== [$$(( $$(date +%s) - t0 )) s] unit tests"; \
	 RG_TALLY=$(abspath $(TALLY)) $(BUILD)/rel/tests/unit || st=1; \
	 echo "== [$$(( $$(date +%s) - t0 )) s] unit tests under ASan+UBSan, in two halves side by side"; \
	 pids=""; for k in 1 2; do \
	     RG_TALLY=$(abspath $(TALLY)) RG_TEST_LABEL=unit-asan-$$k RG_CHECK_SHARD=$$k/2 \
	         ASAN_OPTIONS=detect_leaks=1 $(BUILD)/asan/tests/unit >$(BUILD)/unit-asan-$$k.log 2>&1 & \
	     pids="$$pids $$!"; \
	 done; \
	 for p in $$pids; do wait $$p || st=1; done; cat $(BUILD)/unit-asan-1.log $(BUILD)/unit-asan-2.log; \
	 echo "== [$$(( $$(date +%s) - t0 )) s] install (staged), and the example adapter built with pkg-config alone"; \
	 ci/install-check build $(BUILD) $(abspath $(TALLY)) || st=1; \
	 echo "== [$$(( $$(date +%s) - t0 )) s] the CI workflow runs what .ci/run runs"; \
	 ci/workflow-check $(abspath $(TALLY)) || st=1; \
	 echo "== [$$(( $$(date +%s) - t0 )) s] integration tests, then the conformance suite, on soft-RoCE"; \
	 RG_TALLY=$(abspath $(TALLY)) ci/guest-step $(abspath $(TALLY)) \
	     integration,conformance,install-run,mpirun,asan-run,memcheck,regression,triage,bisect,sweep-error,sweep-negpoll,sites,shards,native \
	     $(BUILD)/check-guest.log -- \
	     $(SOFTROCE) exec --rails $(RAILS) --timeout 2400 -- ci/check-guest $(BUILD) $(abspath $(TALLY)) || st=1; \
	 echo "== [$$(( $$(date +%s) - t0 )) s] two soft-RoCE nodes on a wire (ci/nodes-check): straight, then crossed"; \
	 { ci/nodes-step --self-test && ci/nodes-step $(abspath $(TALLY)) nodes $(BUILD)/nodes.log -- \
	     $(SOFTROCE) exec --nodes 2 --rails $(RAILS) --timeout 900 -- ci/nodes-check $(abspath $(TALLY)); } || st=1; \
	 ci/nodes-step $(abspath $(TALLY)) nodes-crossed $(BUILD)/nodes-crossed.log -- \
	     $(SOFTROCE) exec --nodes 2 --rails $(RAILS) --cross --timeout 600 -- ci/nodes-check $(abspath $(TALLY)) || st=1; \
	 echo "== [$$(( $$(date +%s) - t0 )) s] the conformance run's page in headless chromium"; \
	 ci/page-check $(BUILD)/check-run $(BUILD)/rel/bin/railguard $(abspath $(TALLY)) || st=1; \
	 echo "== [$$(( $$(date +%s) - t0 )) s] every documented make target, bounded (ci/targets-check)"; \
	 ci/targets-check $(BUILD) $(abspath $(TALLY)) || st=1; \
	 echo "== [$$(( $$(date +%s) - t0 )) s] summary"; \
	 ci/tally $(TALLY) arrows unit unit-asan-1 unit-asan-2 install workflow integration conformance install-run \
	     mpirun asan-run memcheck regression triage bisect sweep-error sweep-negpoll sites shards native nodes \
	     nodes-crossed \
	     page soak targets \
	     || st=1; \
	 exit $$st

# The full matrix: ranks 2-4 x ring/mesh x 1-4 rails, sizes from one element to 64 MiB (prime
# counts), every dtype over four rails. Needs a guest with 4 rails; not part of CI.
# CHECK_FULL=quick: the first case of the sizes and dtypes loops only, no 64 MiB case (make
# check's bounded run).
CHECK_FULL ?= 1
check-full: deps
	@$(BUILDMAKE) build-rel
	@rm -f $(TALLY).full && mkdir -p $(BUILD)
	@st=0; RG_CHECK_FULL=$(CHECK_FULL) RG_TALLY=$(abspath $(TALLY).full) \
	    $(SOFTROCE) exec --rails 4 --timeout 5400 -- $(BUILD)/rel/tests/integration || st=1; \
	 ci/tally $(TALLY).full integration || st=1; exit $$st

check-unit: deps
	@$(BUILDMAKE) build-rel build-asan
	$(BUILD)/rel/tests/unit && $(BUILD)/asan/tests/unit

check-integration: deps
	@$(BUILDMAKE) build-rel
	$(SOFTROCE) exec --rails $(RAILS) --timeout 1200 -- $(BUILD)/rel/tests/integration

# --- coverage --------------------------------------------------------------------------------
# Lines run by the unit tests, the integration tests and the conformance suite (the plugin and
# the shim write their counts from every rank they run in). The goal is 85 % of the lines of
# transport/ and faultinject/ each; a part below it is named on the last line and fails.
# COV_SUITES (integration suites, CK_RUN_SUITE) and COV_SCENARIOS narrow what runs: make
# check's bounded run of this target uses them, with COV_GOAL=0 (too little runs to hold 85 %).
COV_GOAL ?= 85
COV_SUITES ?=
COV_SCENARIOS ?= scenarios/
coverage: deps
	@$(BUILDMAKE) build-cov
	@find $(BUILD)/cov -name '*.gcda' -delete
	-$(BUILD)/cov/tests/unit
	-$(if $(COV_SUITES),CK_RUN_SUITE='$(COV_SUITES)') RG_COV_SCENARIOS='$(COV_SCENARIOS)' \
	    $(SOFTROCE) exec --rails $(RAILS) --timeout 2400 -- ci/coverage-guest $(BUILD)
	@# lcov 1.16 on Debian 12 prints "Subroutine ... redefined" noise from geninfo; drop it.
	@lcov --quiet --capture --directory $(BUILD)/cov/obj --directory $(BUILD)/cov/pic \
	    --output-file $(BUILD)/cov/all.info \
	    --rc lcov_branch_coverage=0 2>&1 | { grep -v 'redefined at' || true; }
	@lcov --quiet --extract $(BUILD)/cov/all.info '$(CURDIR)/transport/*' \
	    '$(CURDIR)/faultinject/*' '$(CURDIR)/harness/*' '$(CURDIR)/parse/*' \
	    --output-file $(BUILD)/cov/src.info
	@genhtml --quiet $(BUILD)/cov/src.info --output-directory $(BUILD)/coverage
	@st=0; for part in transport faultinject harness parse; do \
	    lcov --quiet --extract $(BUILD)/cov/src.info "$(CURDIR)/$$part/*" \
	        --output-file $(BUILD)/cov/$$part.info; \
	    pct=$$(lcov --summary $(BUILD)/cov/$$part.info 2>&1 | sed -n 's/^ *lines\.*: \([0-9.]*\)%.*/\1/p'); \
	    echo "coverage: $$part/: lines $${pct:-?}%"; \
	    case $$part in transport|faultinject) \
	        awk -v p="$${pct:-0}" -v g=$(COV_GOAL) 'BEGIN {exit !(p >= g)}' || \
	        { echo "coverage: $$part/ is below $(COV_GOAL)%" >&2; st=1; } ;; esac; \
	done; \
	lcov --summary $(BUILD)/cov/src.info 2>&1 | awk \
	    '/lines/ {l=$$2} /functions/ {f=$$2} END {print "coverage: all lines " l ", functions " f \
	     " (report: $(BUILD)/coverage/index.html)"}'; exit $$st

# --- style -----------------------------------------------------------------------------------
format:
	clang-format -i $(ALL_C) $(ALL_H)

# The arrows between the parts, and inside harness/ between its sub-parts, run one way: every
# quoted include checked (ci/arrows), after a self-test that plants one wrong arrow of each kind.
arrows:
	@ci/arrows --self-test && ci/arrows $(if $(ARROWS_TALLY),$(abspath $(ARROWS_TALLY)))

format-check:
	@clang-format --dry-run -Werror $(ALL_C) $(ALL_H) && \
	    echo "format-check: clean"

# --- soft-RoCE for developers ----------------------------------------------------------------
softroce-up: deps
	$(SOFTROCE) up --rails $(RAILS)

softroce-shell: deps
	@$(BUILDMAKE) build-rel
	$(SOFTROCE) shell --rails $(RAILS)

softroce-down:
	$(SOFTROCE) down --rails $(RAILS)

# `clean` keeps the cached guest kernel (build/softroce); `distclean` removes everything.
clean:
	rm -rf $(BUILD)/rel $(BUILD)/asan $(BUILD)/cov $(BUILD)/coverage $(TALLY)

distclean:
	rm -rf $(BUILD)
