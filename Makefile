# Thin wrapper over CMake. `make demo` and `make check` install what is
# missing (Debian packages, as root) before building.
BUILD      ?= build
ASAN_BUILD ?= build-asan
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
PREFIX     ?= /usr/local
DEMO_OUT   ?= demo-out
FUZZ_BUILD ?= build-fuzz
# make fuzz: seconds per harness; make check runs a short smoke of each.
FUZZ_SECONDS ?= 60
FUZZ_SMOKE_SECONDS ?= 7

.PHONY: all build deps demo check test asan fuzz install clean

all: build

build:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=$(PREFIX) >/dev/null
	cmake --build $(BUILD) -j $(JOBS)

deps:
	./scripts/deps.sh

demo: deps build
	./scripts/demo.sh $(BUILD)/roofline $(DEMO_OUT)

test: build
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

asan:
	cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Asan >/dev/null
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	ctest --test-dir $(ASAN_BUILD) --output-on-failure -j $(JOBS) -LE nosan

# libFuzzer harnesses (clang, ASan + UBSan); see fuzz/README.md.
fuzz:
	cmake -S fuzz -B $(FUZZ_BUILD) -DCMAKE_C_COMPILER=clang >/dev/null
	cmake --build $(FUZZ_BUILD) -j $(JOBS)
	./fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_SECONDS)

check: deps build
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)
	$(MAKE) --no-print-directory asan
	$(MAKE) --no-print-directory fuzz FUZZ_SECONDS=$(FUZZ_SMOKE_SECONDS)

install: build
	cmake --install $(BUILD)

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD) $(DEMO_OUT)
