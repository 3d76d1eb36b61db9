# pgmrouter: PGM (RFC 3208) router assist for Linux.
#
#   make            build the daemon, the client, the test peers and tools into build/
#   make deps       install the Debian packages that are missing (apt-get; nothing when all are)
#   make check      make deps, build, run every test stage (root for namespace tests)
#   make layers     check that every #include follows the layering (README, Layout)
#   make security-test  the attack suite (tests/security): one script per threat, live daemon
#   make soak       an hour of streams under loss and churn (SOAK_SECONDS), tests/soak/README;
#                   make soak-smoke: 3 minutes of it (a stage of make check)
#   make demo       the namespace lab with real OpenPGM peers, with and without router assist
#   make lab        the same topology left running, with an interactive pgmrouter session
#   make bench      every benchmark, one table, CSV and PNG plots under build/bench/results
#   make fuzz       every fuzzer for FUZZ_SECONDS each (default 300; tests/fuzz/README)
#   make fuzz-coverage  each fuzzer's corpus replayed through a coverage build: lines and
#                   functions reached per target and per source folder (llvm-cov)
#   make coverage   line coverage of control/ and dataplane/ from the unit tests (lcov)
#   make install    PREFIX=/usr/local DESTDIR=
#   make deb        the Debian package build/deb/pgmrouter_VERSION_ARCH.deb (debian/), lintian run
#
# Sources are found by directory: every .c under dataplane/, control/, cli/ and router/ goes into
# libpgmrouter.a except the two programs' mains; every tests/unit/test_*.c is one Check runner.

PREFIX ?= /usr/local
DESTDIR ?=
SBINDIR ?= $(PREFIX)/sbin
BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man
SYSCONFDIR ?= /etc
UNITDIR ?= /lib/systemd/system

# `make` alone builds everything (the object-tree rules below would otherwise come first).
.DEFAULT_GOAL := all
B := build
V ?= 0
Q := $(if $(filter 1,$(V)),,@)
quiet = $(if $(filter 1,$(V)),,@printf '  %-7s %s\n' $(1) $(2);)
CC ?= cc
CLANG ?= clang
VERSION := 0.9.0

# Debian packages the build, the tests, the lab and the benchmarks need.
DEB_PACKAGES := build-essential pkg-config clang libclang-rt-14-dev llvm-14 gcovr lcov valgrind \
	libmnl-dev libnetfilter-queue-dev libpcap-dev libjson-c-dev check libsubunit-dev \
	libpgm-dev libzmq3-dev libreadline-dev libsnmp-dev snmpd snmp \
	iptables nftables smcroute frr iproute2 tshark jq gnuplot-nox procps psmisc \
	linux-perf python3-matplotlib debhelper dpkg-dev lintian python3-prometheus-client

WARNINGS := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
	-Wpointer-arith -Wvla -Wformat=2 -Wno-format-nonliteral
CFLAGS ?= -O2 -g
# Link-time optimisation of the daemon (and of the benchmark tools, its baselines: measured the
# same way): the packet path crosses the codec, the control plane and the output in one call
# chain. The objects carry both forms (fat), so the tests link the plain code, as fast as before.
LTO ?= -flto=auto
BASE_CFLAGS = -std=c11 -D_GNU_SOURCE -DPGMROUTER_VERSION='"$(VERSION)"' -I. $(WARNINGS) \
	-fno-strict-aliasing
PKG_CFLAGS = $(shell pkg-config --cflags libmnl libnetfilter_queue libpcap json-c 2>/dev/null)
PKG_LIBS = $(shell pkg-config --libs libmnl libnetfilter_queue libpcap json-c 2>/dev/null) -lm
CHECK_LIBS = $(shell pkg-config --libs check 2>/dev/null) -lpthread
PEER_CFLAGS = $(shell pkg-config --cflags openpgm-5.3 libzmq 2>/dev/null) -Wno-error=deprecated-declarations
PEER_LIBS = $(shell pkg-config --libs openpgm-5.3 libzmq 2>/dev/null) -lpthread
CLIENT_LIBS = -lreadline
# The AgentX subagent (router/snmp): only the daemon links net-snmp's agent library.
SNMP_LIBS = -lnetsnmpagent -lnetsnmp
MIBDIR ?= /usr/share/snmp/mibs

SAN_FLAGS := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
# ThreadSanitizer: the daemon with workers on threads (make tsan; README, Workers). It cannot be
# combined with ASan; its reports abort the daemon (TSAN_OPTIONS in the tests' runs).
# GCC sees format truncations at -O1 with this instrumentation that -O2 does not (the sizes are
# the same): warnings, not errors, in this build only.
TSAN_FLAGS := -O1 -g -fsanitize=thread -fno-omit-frame-pointer -Wno-error=format-truncation
COV_FLAGS := -O0 -g --coverage
FUZZ_FLAGS := -O1 -g -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer \
	-fsanitize-coverage-ignorelist=tests/fuzz/coverage-ignore.txt
# The fuzzers rebuilt for make fuzz-coverage: clang's source-based coverage, no sanitizer.
FUZZCOV_FLAGS := -O0 -g -fprofile-instr-generate -fcoverage-mapping

MAINS := router/pgmrouterd.c cli/client/pgmrouter.c
LIB_SRCS := $(filter-out $(MAINS),$(shell find dataplane control cli router -name '*.c' | sort))
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
# Code only the tests use (tests/lib), and the unit runners' shared helpers.
TEST_LIB_SRCS := $(wildcard tests/lib/*.c)
UNIT_HELPERS := $(filter-out $(UNIT_SRCS),$(wildcard tests/unit/*.c)) $(TEST_LIB_SRCS)
# Headers the runners include (tests/unit/*.h, and the test peers' pure cores such as
# tests/peers/dlr_core.h), so that a change rebuilds them.
UNIT_HEADERS := $(wildcard tests/unit/*.h tests/lib/*.h tests/peers/*.h)
PEER_SRCS := $(wildcard tests/peers/*.c)
BENCH_SRCS := $(wildcard tests/bench/*.c)
FUZZ_SRCS := $(wildcard tests/fuzz/fuzz_*.c)

UNIT_BINS := $(patsubst tests/unit/%.c,$(B)/tests/%,$(UNIT_SRCS))
ASAN_UNIT_BINS := $(patsubst tests/unit/%.c,$(B)/asan/tests/%,$(UNIT_SRCS))
COV_UNIT_BINS := $(patsubst tests/unit/%.c,$(B)/cov/tests/%,$(UNIT_SRCS))
PEER_BINS := $(patsubst tests/peers/%.c,$(B)/peers/%,$(PEER_SRCS))
BENCH_BINS := $(patsubst tests/bench/%.c,$(B)/bench/%,$(BENCH_SRCS))
FUZZ_BINS := $(patsubst tests/fuzz/%.c,$(B)/fuzz/%,$(FUZZ_SRCS))
FUZZCOV_BINS := $(patsubst tests/fuzz/%.c,$(B)/fuzzcov/bin/%,$(FUZZ_SRCS))

# One object tree per build flavour: obj (normal), asan, tsan, cov (gcov), fuzzobj (clang +
# libFuzzer), fuzzcov (clang, source-based coverage).
define flavour
$(1)_OBJS := $$(patsubst %.c,$(B)/$(1)/%.o,$$(LIB_SRCS))
$(B)/$(1)/%.o: %.c
	@mkdir -p $$(@D)
	$$(call quiet,CC,$$@)$$(if $$(filter fuzzobj fuzzcov,$(1)),$$(CLANG),$$(CC)) $$(BASE_CFLAGS) $$(PKG_CFLAGS) $(2) -MMD -MP -c $$< -o $$@
$(B)/$(1)/libpgmrouter.a: $$($(1)_OBJS)
	@rm -f $$@
	$$(call quiet,AR,$$@)ar rcs $$@ $$^
endef
$(eval $(call flavour,obj,$$(CFLAGS) $$(if $$(LTO),$$(LTO) -ffat-lto-objects)))
$(eval $(call flavour,asan,$$(SAN_FLAGS)))
$(eval $(call flavour,tsan,$$(TSAN_FLAGS)))
$(eval $(call flavour,cov,$$(COV_FLAGS)))
$(eval $(call flavour,fuzzobj,$$(FUZZ_FLAGS)))
$(eval $(call flavour,fuzzcov,$$(FUZZCOV_FLAGS)))
$(fuzzobj_OBJS): tests/fuzz/coverage-ignore.txt
# The views (control/view.c) are fuzz_cp's oracle after every operation: edges kept (they are
# the shows fuzz_cli runs), comparisons not traced (they compare state, not input bytes, and
# their callbacks were a quarter of fuzz_cp's time).
$(B)/fuzzobj/control/view.o: FUZZ_FLAGS += -fno-sanitize-coverage=trace-cmp

.PHONY: all deps check layers unit unit-asan tsan cli-test cli-update ns-test e2e-test security-test soak soak-smoke fuzz fuzz-smoke fuzz-coverage bench \
	bench-smoke demo lab coverage install uninstall clean format tools deb deb-test

all: $(B)/pgmrouterd $(B)/pgmrouter $(PEER_BINS) $(BENCH_BINS)

tools: $(PEER_BINS) $(BENCH_BINS)

$(B)/pgmrouterd: router/pgmrouterd.c $(B)/obj/libpgmrouter.a
	$(call quiet,LD,$@)$(CC) $(BASE_CFLAGS) $(PKG_CFLAGS) $(CFLAGS) $(LTO) $< $(B)/obj/libpgmrouter.a $(PKG_LIBS) \
		$(SNMP_LIBS) -o $@

$(B)/pgmrouter: cli/client/pgmrouter.c $(B)/obj/libpgmrouter.a
	$(call quiet,LD,$@)$(CC) $(BASE_CFLAGS) $(PKG_CFLAGS) $(CFLAGS) $< $(B)/obj/libpgmrouter.a $(PKG_LIBS) \
		$(CLIENT_LIBS) -o $@

$(B)/tests/%: tests/unit/%.c $(UNIT_HELPERS) $(UNIT_HEADERS) $(B)/obj/libpgmrouter.a
	@mkdir -p $(@D)
	$(call quiet,LD,$@)$(CC) $(BASE_CFLAGS) $(PKG_CFLAGS) $(CFLAGS) $< $(UNIT_HELPERS) $(B)/obj/libpgmrouter.a \
		$(PKG_LIBS) $(CHECK_LIBS) -o $@

$(B)/asan/tests/%: tests/unit/%.c $(UNIT_HELPERS) $(UNIT_HEADERS) $(B)/asan/libpgmrouter.a
	@mkdir -p $(@D)
	$(call quiet,LD,$@)$(CC) $(BASE_CFLAGS) $(PKG_CFLAGS) $(SAN_FLAGS) $< $(UNIT_HELPERS) $(B)/asan/libpgmrouter.a \
		$(PKG_LIBS) $(CHECK_LIBS) -o $@

$(B)/cov/tests/%: tests/unit/%.c $(UNIT_HELPERS) $(UNIT_HEADERS) $(B)/cov/libpgmrouter.a
	@mkdir -p $(@D)
	$(call quiet,LD,$@)$(CC) $(BASE_CFLAGS) $(PKG_CFLAGS) $(COV_FLAGS) $< $(UNIT_HELPERS) $(B)/cov/libpgmrouter.a \
		$(PKG_LIBS) $(CHECK_LIBS) -o $@

$(B)/peers/%: tests/peers/%.c $(wildcard tests/peers/*.h tests/lib/*.h) $(B)/obj/libpgmrouter.a
	@mkdir -p $(@D)
	$(call quiet,LD,$@)$(CC) $(BASE_CFLAGS) $(PKG_CFLAGS) $(PEER_CFLAGS) $(CFLAGS) $< $(B)/obj/libpgmrouter.a \
		$(PKG_LIBS) $(PEER_LIBS) -o $@

$(B)/bench/%: tests/bench/%.c $(wildcard tests/lib/*.h) $(B)/obj/libpgmrouter.a
	@mkdir -p $(@D)
	$(call quiet,LD,$@)$(CC) $(BASE_CFLAGS) $(PKG_CFLAGS) $(CFLAGS) $(LTO) $< $(B)/obj/libpgmrouter.a \
		$(PKG_LIBS) -lpthread -o $@

$(B)/fuzz/%: tests/fuzz/%.c $(wildcard tests/fuzz/*.h) $(TEST_LIB_SRCS) $(B)/fuzzobj/libpgmrouter.a
	@mkdir -p $(@D)
	$(call quiet,LD,$@)$(CLANG) $(BASE_CFLAGS) $(PKG_CFLAGS) -O1 -g -fsanitize=fuzzer,address,undefined \
		$< $(TEST_LIB_SRCS) $(B)/fuzzobj/libpgmrouter.a $(PKG_LIBS) -o $@

$(B)/fuzzcov/bin/%: tests/fuzz/%.c $(wildcard tests/fuzz/*.h) $(TEST_LIB_SRCS) $(B)/fuzzcov/libpgmrouter.a
	@mkdir -p $(@D)
	$(call quiet,LD,$@)$(CLANG) $(BASE_CFLAGS) $(PKG_CFLAGS) $(FUZZCOV_FLAGS) -fsanitize=fuzzer \
		$< $(TEST_LIB_SRCS) $(B)/fuzzcov/libpgmrouter.a $(PKG_LIBS) -o $@

# Installs the Debian packages that are missing; quiet when everything is present.
deps:
	@missing=""; for p in $(DEB_PACKAGES); do \
		dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
		echo "deps: installing$$missing"; \
		if [ "$$(id -u)" != 0 ]; then echo "deps: run as root to install:$$missing" >&2; exit 1; fi; \
		export DEBIAN_FRONTEND=noninteractive; \
		apt-get update -qq >/dev/null && apt-get install -y -qq --no-install-recommends $$missing >/dev/null \
			|| { echo "deps: apt-get install failed" >&2; exit 1; }; \
	fi

# The README's test command: the packages first (a fresh machine has none), then every stage
# runs; the exit status says whether all passed.
check: deps
	@$(MAKE) --no-print-directory all
	@tests/run-checks.sh

layers:
	@tests/layers.sh

unit: $(UNIT_BINS)
	@tests/run-unit.sh $(UNIT_BINS)

unit-asan: $(ASAN_UNIT_BINS)
	@ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 CK_FORK=no \
		tests/run-unit.sh $(ASAN_UNIT_BINS)

CLI_TEST_BINS := $(B)/pgmrouterd $(B)/pgmrouter $(B)/tests/cli-driver $(B)/tests/cli-abuse \
	$(B)/tests/cli-pty $(B)/asan/pgmrouterd $(B)/asan/tests/cli-driver

cli-test: $(CLI_TEST_BINS)
	@tests/cli/run.sh

# Regenerates the CLI golden transcripts tests/cli/*.out from tests/cli/*.in.
cli-update: $(B)/tests/cli-driver
	@tests/cli/run.sh --update

$(B)/tests/cli-driver: tests/cli/driver.c $(B)/obj/libpgmrouter.a
	@mkdir -p $(@D)
	$(call quiet,LD,$@)$(CC) $(BASE_CFLAGS) $(PKG_CFLAGS) $(CFLAGS) $< $(B)/obj/libpgmrouter.a $(PKG_LIBS) -o $@

$(B)/asan/tests/cli-driver: tests/cli/driver.c $(B)/asan/libpgmrouter.a
	@mkdir -p $(@D)
	$(call quiet,LD,$@)$(CC) $(BASE_CFLAGS) $(PKG_CFLAGS) $(SAN_FLAGS) $< $(B)/asan/libpgmrouter.a $(PKG_LIBS) -o $@

$(B)/tests/cli-abuse: tests/cli/abuse.c $(B)/obj/libpgmrouter.a
	@mkdir -p $(@D)
	$(call quiet,LD,$@)$(CC) $(BASE_CFLAGS) $(PKG_CFLAGS) $(CFLAGS) $< $(B)/obj/libpgmrouter.a $(PKG_LIBS) -o $@

$(B)/tests/cli-pty: tests/cli/pty.c
	@mkdir -p $(@D)
	$(call quiet,LD,$@)$(CC) $(BASE_CFLAGS) $(CFLAGS) $< -lutil -o $@

$(B)/asan/pgmrouterd: router/pgmrouterd.c $(B)/asan/libpgmrouter.a
	$(call quiet,LD,$@)$(CC) $(BASE_CFLAGS) $(PKG_CFLAGS) $(SAN_FLAGS) $< $(B)/asan/libpgmrouter.a $(PKG_LIBS) \
		$(SNMP_LIBS) -o $@

# The daemon under ThreadSanitizer, for tests run with ROUTER_CMD=build/tsan/pgmrouterd.
tsan: $(B)/tsan/pgmrouterd

$(B)/tsan/pgmrouterd: router/pgmrouterd.c $(B)/tsan/libpgmrouter.a
	$(call quiet,LD,$@)$(CC) $(BASE_CFLAGS) $(PKG_CFLAGS) $(TSAN_FLAGS) $< $(B)/tsan/libpgmrouter.a \
		$(PKG_LIBS) $(SNMP_LIBS) -o $@

ns-test: all
	@tests/ns/run.sh

e2e-test: all
	@tests/e2e/run.sh

# The attack suite (tests/security/README): one script per threat against a live daemon.
security-test: all
	@tests/security/run.sh

# The soak (tests/soak/README): SOAK_SECONDS of streams under loss and churn, sampled and
# plotted under tests/soak/results/; soak-smoke is its 3-minute version, a stage of make check.
SOAK_SECONDS ?= 3600
soak: all
	@SOAK_SECONDS=$(SOAK_SECONDS) tests/soak/run.sh

soak-smoke: all
	@SOAK_SECONDS=180 tests/soak/run.sh

FUZZ_SECONDS ?= 300
fuzz: $(FUZZ_BINS)
	@tests/fuzz/run.sh $(FUZZ_SECONDS) $(FUZZ_BINS)

# make check's stage: each fuzzer briefly (7 of them, about 80 s on 2 cores).
FUZZ_SMOKE_SECONDS ?= 10
fuzz-smoke: $(FUZZ_BINS)
	@tests/fuzz/run.sh $(FUZZ_SMOKE_SECONDS) $(FUZZ_BINS)

# Each fuzzer's seeds and the corpus its last make fuzz grew (build/fuzz/corpus/NAME), replayed
# once through the coverage build: lines and functions of the library reached (tests/fuzz/README).
fuzz-coverage: $(FUZZCOV_BINS)
	@tests/fuzz/coverage.sh $(FUZZCOV_BINS)

bench: deps
	@$(MAKE) --no-print-directory all
	@tests/bench/run.sh

bench-smoke: all
	@tests/bench/run.sh --smoke

demo: deps
	@$(MAKE) --no-print-directory all
	@tests/lab/demo.sh

lab: deps
	@$(MAKE) --no-print-directory all
	@tests/lab/demo.sh --interactive

coverage: $(COV_UNIT_BINS)
	@rm -f $$(find $(B)/cov -name '*.gcda')
	@CK_FORK=no tests/run-unit.sh $(COV_UNIT_BINS) >/dev/null
	@lcov -q --capture --directory $(B)/cov --output-file $(B)/cov/all.info 2>/dev/null
	@lcov -q --extract $(B)/cov/all.info '*/control/*' '*/dataplane/wire/*' -o $(B)/cov/core.info 2>/dev/null
	@lcov --summary $(B)/cov/core.info 2>&1 | grep -E 'lines|functions'
	@lcov -q --extract $(B)/cov/all.info '*/control/*' -o $(B)/cov/control.info 2>/dev/null
	@printf 'control/ only:\n'; lcov --summary $(B)/cov/control.info 2>&1 | grep -E 'lines|functions'
	@lcov --list $(B)/cov/core.info 2>/dev/null | grep -E '\.c' || true

# The daemon runs as user pgmrouter after set-up: created here (a package does it in its
# postinst), owning the configuration directory so that `write memory` can replace the file.
install: $(B)/pgmrouterd $(B)/pgmrouter
	install -d $(DESTDIR)$(SBINDIR) $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man8 \
		$(DESTDIR)$(SYSCONFDIR)/pgmrouter $(DESTDIR)$(UNITDIR) $(DESTDIR)$(MIBDIR)
	if [ -z "$(DESTDIR)" ]; then \
		getent passwd pgmrouter >/dev/null || \
			useradd --system --no-create-home --home-dir /nonexistent \
				--shell /usr/sbin/nologin --no-user-group --gid nogroup pgmrouter; \
		chown pgmrouter:root $(SYSCONFDIR)/pgmrouter; chmod 0750 $(SYSCONFDIR)/pgmrouter; \
	fi
	install -m 0755 $(B)/pgmrouterd $(DESTDIR)$(SBINDIR)/pgmrouterd
	install -m 0755 $(B)/pgmrouter $(DESTDIR)$(BINDIR)/pgmrouter
	install -m 0644 router/pgmrouterd.8 $(DESTDIR)$(MANDIR)/man8/pgmrouterd.8
	install -m 0644 cli/client/pgmrouter.8 $(DESTDIR)$(MANDIR)/man8/pgmrouter.8
	install -m 0644 router/snmp/PGM-MIB.txt $(DESTDIR)$(MIBDIR)/PGM-MIB.txt
	install -m 0644 router/pgmrouterd.conf.example $(DESTDIR)$(SYSCONFDIR)/pgmrouter/pgmrouterd.conf.example
	sed 's|@SBINDIR@|$(SBINDIR)|g; s|@SYSCONFDIR@|$(SYSCONFDIR)|g' router/pgmrouterd.service.in \
		> $(DESTDIR)$(UNITDIR)/pgmrouterd.service

# The Debian package, built from a copy of the tree under build/deb (dpkg-buildpackage cleans
# its tree and writes beside it); lintian's errors fail the target, its warnings are printed.
DEB_DIR := $(B)/deb
deb:
	@rm -rf $(DEB_DIR) && mkdir -p $(DEB_DIR)/src
	@tar -cf - --exclude=./build --exclude=./.git --exclude=./tests/fuzz/corpus-run \
		--exclude=./tests/bench/results --exclude=./tests/soak/results . | tar -xf - -C $(DEB_DIR)/src
	@cd $(DEB_DIR)/src && dpkg-buildpackage -b -us -uc -j2 > ../build.log 2>&1 \
		|| { tail -30 ../build.log; echo "deb: dpkg-buildpackage failed ($(DEB_DIR)/build.log)" >&2; exit 1; }
	@ls $(DEB_DIR)/pgmrouter_*.deb
	@lintian --fail-on error $(DEB_DIR)/pgmrouter_*.changes

# make check's stage: builds the package, installs it into a scratch root and checks it.
deb-test:
	@tests/deb/run.sh

uninstall:
	rm -f $(DESTDIR)$(SBINDIR)/pgmrouterd $(DESTDIR)$(BINDIR)/pgmrouter \
		$(DESTDIR)$(MANDIR)/man8/pgmrouterd.8 $(DESTDIR)$(MANDIR)/man8/pgmrouter.8 \
		$(DESTDIR)$(UNITDIR)/pgmrouterd.service $(DESTDIR)$(MIBDIR)/PGM-MIB.txt

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf $(B)

-include $(shell find $(B) -name '*.d' 2>/dev/null)
