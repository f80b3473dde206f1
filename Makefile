# Thin wrapper over CMake (`make help` lists the targets).
#
#   make deps     install the missing Debian packages (scripts/deps.sh; as
#                 root, else it prints the apt-get line): the one step that
#                 touches the system
#   make demo     deps, build, then the main job on the built-in presets
#   make check    deps, build, the release tests, then ASan + UBSan,
#                 valgrind memcheck and a short fuzz run
#   make test     build and the release tests alone: no deps, no sanitizers
#   make          build only (build/, with build/compile_commands.json)
#   make install  the binary, libraries, headers, man page and roofline.pc
BUILD      ?= build
ASAN_BUILD ?= build-asan
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
PREFIX     ?= /usr/local
DEMO_OUT   ?= demo-out
FUZZ_BUILD ?= build-fuzz
# make fuzz: seconds per harness; make check runs a short smoke of each,
# of at least FUZZ_SMOKE_RUNS inputs a harness (its seeds counted).
FUZZ_SECONDS ?= 60
FUZZ_SMOKE_SECONDS ?= 7
FUZZ_MIN_RUNS ?= 0
FUZZ_SMOKE_RUNS ?= 10000

.PHONY: all build deps demo check test asan memcheck fuzz install clean help

all: build

build:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=$(PREFIX) >/dev/null
	cmake --build $(BUILD) -j $(JOBS)

deps:
	./scripts/deps.sh

demo: deps build
	./scripts/demo.sh $(BUILD)/cli/roofline $(DEMO_OUT)

test: build
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

# The WebAssembly explorer is built once, by the release build: its tests
# (explorer_browser, test_explorer_cli) are release-only (label nosan), and
# the sanitizer build would compile the same module (emcc, no sanitizer) again.
asan:
	cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Asan -DRF_WASM=OFF >/dev/null
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	ctest --test-dir $(ASAN_BUILD) --output-on-failure -j $(JOBS) -LE nosan

# valgrind memcheck over the unit tests and the fuzz-corpus replays of the
# release build: it sees reads of uninitialised memory, which ASan does not.
# The CLI tables run under ASan + UBSan (make asan) instead: under valgrind
# they take minutes, under ASan seconds. Measurement and CUDA tests time
# real kernels and stay out, and so do the install checks and the two
# entry comparisons (shell scripts around a compiler, pkg-config, the
# entry's driver or Node.js: valgrind follows no exec, so it would be
# checking the shell; rf_cli_run runs under ASan in test_entry instead).
# JOBS at a time: valgrind runs one process on one core.
MEMCHECK_OPTS = --error-exitcode=97 --leak-check=full \
  --errors-for-leak-kinds=definite,indirect --show-leak-kinds=definite,indirect
memcheck: build
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS) -T memcheck -R '^(test_|fuzz_replay_)' \
	  -E 'measure|cuda|bench|_install$$|^test_entry$$|^test_explorer_cli$$' --overwrite MemoryCheckCommandOptions="$(MEMCHECK_OPTS)"

# libFuzzer harnesses (clang, ASan + UBSan); see fuzz/README.md.
fuzz:
	cmake -S fuzz -B $(FUZZ_BUILD) -DCMAKE_C_COMPILER=clang >/dev/null
	cmake --build $(FUZZ_BUILD) -j $(JOBS)
	JOBS=$(JOBS) ./fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_SECONDS) $(FUZZ_MIN_RUNS)

check: deps
	$(MAKE) --no-print-directory test
	$(MAKE) --no-print-directory asan
	$(MAKE) --no-print-directory memcheck
	$(MAKE) --no-print-directory fuzz FUZZ_SECONDS=$(FUZZ_SMOKE_SECONDS) FUZZ_MIN_RUNS=$(FUZZ_SMOKE_RUNS)

install: build
	cmake --install $(BUILD)

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD) $(DEMO_OUT)

help:
	@sed -n '/^#   make/,/^$$/s/^#  //p' $(firstword $(MAKEFILE_LIST))
