# perfkit: a thin wrapper over CMake. The README's two set-up commands live here:
#   make demo    install build deps, build, run perfkit on the bundled demo workload
#   make install build, then install under PREFIX (default /usr/local; DESTDIR honoured)
#   make check   install build and test deps, then the whole test suite: normal build, the same
#                suite under ASan+UBSan (clang), a smoke run of every fuzz harness,
#                ThreadSanitizer over the threaded tests, the CLI suite under valgrind and a
#                Release (-O3) build of everything
# Every build here passes -DPK_WERROR=ON: warnings fail development and CI builds, while a
# plain `cmake` build (users, packagers) only reports them.
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
BUILD ?= build
ASAN_BUILD ?= build-asan
TSAN_BUILD ?= build-tsan
RELEASE_BUILD ?= build-release
TSAN_TESTS ?= test_region test_sampler test_overflow test_report test_export
# the label "bare" (install/bare-machine: a build on a debootstrap'ed Debian) is opt-in:
# make check-bare
CTEST_FLAGS ?= --output-on-failure -j$(JOBS) -LE bare

PREFIX ?= /usr/local

.PHONY: all deps deps-build build install demo check check-normal check-asan check-tsan check-release check-bare cli-record cli-valgrind bench fuzz-long clean

all: build

deps:
	@bash scripts/install-deps.sh

# building, installing and the demo need only the build dependencies
deps-build:
	@bash scripts/install-deps.sh --build

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPK_WERROR=ON

build: deps-build $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j$(JOBS)

# the tool, the library (shared and static, headers, pkg-config, CMake package), the man
# pages and the shell completions under $(PREFIX) (default /usr/local); DESTDIR is honoured
install: build
	DESTDIR="$(DESTDIR)" cmake --install $(BUILD) --prefix "$(PREFIX)"

demo: build
	@bash scripts/demo.sh $(BUILD)

check: deps check-normal check-asan check-tsan cli-valgrind check-release
	@echo "make check: all suites passed"

check-normal: build
	bash scripts/tracefs.sh
	cd $(BUILD) && ctest $(CTEST_FLAGS)

# One clang build serves both the sanitizer run of the whole suite and the fuzzers:
# everything is compiled with ASan+UBSan (no recovery) and fuzzer coverage hooks.
$(ASAN_BUILD)/CMakeCache.txt:
	cmake -S . -B $(ASAN_BUILD) -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=Debug \
		-DPK_SANITIZE=ON -DPK_FUZZ=ON -DPK_WERROR=ON

check-asan: deps $(ASAN_BUILD)/CMakeCache.txt
	cmake --build $(ASAN_BUILD) -j$(JOBS)
	bash scripts/tracefs.sh
	cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
		UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest $(CTEST_FLAGS)

# ThreadSanitizer over the multi-threaded self-monitoring code (regions, sampler, overflow
# signals): only those tests are built, to keep `make check` short.
$(TSAN_BUILD)/CMakeCache.txt:
	cmake -S . -B $(TSAN_BUILD) -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=Debug -DPK_TSAN=ON -DPK_WERROR=ON

check-tsan: deps $(TSAN_BUILD)/CMakeCache.txt
	cmake --build $(TSAN_BUILD) -j$(JOBS) --target $(TSAN_TESTS)
	cd $(TSAN_BUILD) && TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
		ctest $(CTEST_FLAGS) -R '^unit/($(shell echo $(TSAN_TESTS) | tr ' ' '|'))$$'

# gcc's -O3 (Release) sees more than -O2 (its -Wstringop-* and -Wmaybe-uninitialized
# warnings depend on inlining): everything, tests and examples included, is built that way
# with -Werror, and its unit, example and install tests run (-O3 code, no debug info). On
# 2 cores: about 30 s of build and 40 s of tests. The CLI suite (another 65 s, passing) is
# left to the builds above: its comparisons with perf are timing-sensitive.
$(RELEASE_BUILD)/CMakeCache.txt:
	cmake -S . -B $(RELEASE_BUILD) -DCMAKE_BUILD_TYPE=Release -DPK_WERROR=ON

check-release: deps $(RELEASE_BUILD)/CMakeCache.txt
	cmake --build $(RELEASE_BUILD) -j$(JOBS)
	cd $(RELEASE_BUILD) && ctest $(CTEST_FLAGS) -L 'unit|example|install'

# A fresh clone of HEAD built and installed (`make`, `make install DESTDIR=/tmp/x`) in a
# debootstrap'ed Debian 12 minbase root with only the build dependencies, then the installed
# tool, its man pages and the absence of the test-only tools checked
# (scripts/bare-build-test.sh). Needs root and the network: ~200 MB of downloads the first
# time (the base system and the packages are cached in /tmp/perfkit-bare), about 5 minutes
# on 2 cores. Not part of `make check`.
check-bare: deps $(BUILD)/CMakeCache.txt
	cd $(BUILD) && PK_BARE_TEST=1 ctest --output-on-failure -L bare

cli-record: build
	for d in tests/cli/cases/*/; do PERFKIT=$(BUILD)/tool/perfkit PK_CLI_RECORD=1 \
		bash tests/cli/run-case.sh $$d; done

# The CLI suite with every perfkit run under valgrind memcheck (errors or definitely-lost
# leaks fail a case; cases with a `no-valgrind` file are skipped): about 2.5 minutes on a
# 2-core machine, so it is part of `make check`.
cli-valgrind: build
	cd $(BUILD) && PK_CLI_VALGRIND=1 ctest $(CTEST_FLAGS) -L cli --timeout 200

bench: build
	@for b in bench/*.sh; do echo "== $$b"; bash $$b $(BUILD) || exit 1; done

# Long fuzz campaign (10 CPU-minutes per harness by default; FUZZ_SECS=N to change), with a
# coverage report in fuzz-campaign/summary.txt. Not run by CI (it would not fit the budget).
FUZZ_SECS ?= 600
fuzz-long: deps
	bash scripts/fuzz-campaign.sh $(FUZZ_SECS)

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(TSAN_BUILD) $(RELEASE_BUILD)
