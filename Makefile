# Stowage top-level entry points. On a fresh Debian machine: `make demo` and `make test`.
# Every target installs missing Debian packages first (make deps), then builds with CMake + Ninja.
# (chromium renders report.html in a test; the cross toolchains and QEMU build and run firmware on emulated
# Cortex-M and RISC-V machines in the firmware tests; gdb-multiarch and openocd serve firmware projects' debug and
# flash targets.)

BUILD      ?= build
ASAN_BUILD ?= build-asan
FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?=
FUZZ_RUNS ?=
FUZZ_MAX_LEN ?=
JOBS       ?= $(shell nproc)
CTEST_ARGS ?=

DEB_PACKAGES := build-essential cmake ninja-build pkg-config \
  libonnx-dev libprotobuf-dev protobuf-compiler libflatbuffers-dev flatbuffers-compiler \
  libtomlplusplus-dev libcli11-dev nlohmann-json3-dev libfmt-dev libgtest-dev libgmock-dev \
  libbenchmark-dev libonnx-testdata chromium \
  gcc-arm-none-eabi libnewlib-arm-none-eabi qemu-system-arm gdb-multiarch openocd \
  nodejs

# RISC-V firmware (riscv32-virt): 1.4 GB installed, so opt-in with `make deps-riscv`; its tests skip without it.
RISCV_PACKAGES := gcc-riscv64-unknown-elf picolibc-riscv64-unknown-elf qemu-system-misc

# libFuzzer (`make fuzz` only): clang and its runtime libraries (libclang_rt.fuzzer).
FUZZ_PACKAGES := clang-14 libclang-rt-14-dev

.PHONY: all deps deps-riscv install-packages install-ort-oracle install-tflite-oracle build build-asan bench demo test test-unit fuzz random clean

all: build

# Installs only what is missing; silent when everything is present.
deps:
	@$(MAKE) --no-print-directory install-packages PACKAGES="$(DEB_PACKAGES)"
	@$(MAKE) --no-print-directory install-ort-oracle
	@$(MAKE) --no-print-directory install-tflite-oracle

# ONNX Runtime (npm package onnxruntime-node, CPU library included) as the e2e tests' reference, pinned by
# tools/ort-oracle/package-lock.json. --ignore-scripts: its install script only fetches optional GPU libraries.
# Offline, one warning and the oracle tests skip; make goes on.
# The Debian package npm only when the command is missing: NodeSource's nodejs package bundles npm and conflicts
# with Debian's (asking apt for npm there fails).
ORT_ORACLE := tools/ort-oracle
install-ort-oracle:
	@if [ ! -d $(ORT_ORACLE)/node_modules/onnxruntime-node ]; then \
	  command -v npm >/dev/null 2>&1 || $(MAKE) --no-print-directory install-packages PACKAGES=npm || true; \
	  if (cd $(ORT_ORACLE) && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null 2>&1); then \
	    echo "make deps: installed ONNX Runtime (onnxruntime-node) in $(ORT_ORACLE)"; \
	  else \
	    rm -rf $(ORT_ORACLE)/node_modules; \
	    echo "make deps: warning: could not install onnxruntime-node (npm ci in $(ORT_ORACLE) failed; offline?); the ONNX Runtime oracle tests will skip"; \
	  fi; \
	fi

# TFLite's interpreter (the WebAssembly build inside the npm package @tensorflow/tfjs-tflite, 41 MB) as the e2e tests'
# reference for .tflite models, pinned by tools/tflite-oracle/package-lock.json; its .npmrc leaves out the peer
# dependency @tensorflow/tfjs-core (run.js loads the WebAssembly module directly). Offline, one warning and the
# TFLite oracle tests skip.
TFLITE_ORACLE := tools/tflite-oracle
install-tflite-oracle:
	@if [ ! -d $(TFLITE_ORACLE)/node_modules/@tensorflow/tfjs-tflite ]; then \
	  command -v npm >/dev/null 2>&1 || $(MAKE) --no-print-directory install-packages PACKAGES=npm || true; \
	  if (cd $(TFLITE_ORACLE) && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null 2>&1); then \
	    echo "make deps: installed TFLite's interpreter (@tensorflow/tfjs-tflite) in $(TFLITE_ORACLE)"; \
	  else \
	    rm -rf $(TFLITE_ORACLE)/node_modules; \
	    echo "make deps: warning: could not install @tensorflow/tfjs-tflite (npm ci in $(TFLITE_ORACLE) failed; offline?); the TFLite interpreter oracle tests will skip"; \
	  fi; \
	fi

deps-riscv:
	@$(MAKE) --no-print-directory install-packages PACKAGES="$(RISCV_PACKAGES)"

install-packages:
	@missing=""; for p in $(PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "make deps: installing$$missing"; \
	  SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	fi

# The release build compiles only the unit tests that are too slow for the sanitizer build (`make test` runs every
# other unit test there); configure with -DSTOWAGE_RELEASE_UNIT_TESTS=all to build and run them all here too.
$(BUILD)/build.ninja:
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release -DSTOWAGE_RELEASE_UNIT_TESTS=slow

build: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS)

# The benchmarks (bench/; not part of `make build`, which `make test` runs): their tables and commands are in
# bench/RESULTS.md.
bench: build
	cmake --build $(BUILD) -j $(JOBS) --target stowage_benchmarks

# -g1 (line tables, which sanitizer reports need) instead of -g: Compiler.cpp compiled in 7.4 s instead of 8.7 s.
$(ASAN_BUILD)/build.ninja:
	cmake -S . -B $(ASAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Debug -DSTOWAGE_SANITIZE=ON \
	  "-DCMAKE_CXX_FLAGS_DEBUG=-O0 -g1" "-DCMAKE_C_FLAGS_DEBUG=-O0 -g1"

# Debug + AddressSanitizer/UndefinedBehaviorSanitizer build of the library, CLI and unit tests.
build-asan: deps $(ASAN_BUILD)/build.ninja
	cmake --build $(ASAN_BUILD) -j $(JOBS) --target stowage stowage_unit_tests

# Builds the model zoo's DS-CNN, compiles it, runs it on the host and prints output and report.
demo: build
	@./tools/demo.sh $(BUILD)

# Unit tests under ASan/UBSan first, then the release build's tests: conformance, e2e and the unit tests that skip
# themselves under the sanitizers.
test: build build-asan
	cd $(ASAN_BUILD) && ctest --output-on-failure -L unit -j $(JOBS) $(CTEST_ARGS)
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) $(CTEST_ARGS)

# libFuzzer on every parser (tests/fuzz): a clang build with ASan/UBSan in $(FUZZ_BUILD), then each target for
# FUZZ_SECONDS (FUZZ_TARGETS: a subset, e.g. "onnx tflite"; FUZZ_RUNS: stop a target after that many executions;
# FUZZ_MAX_LEN: largest input in bytes);
# findings in $(FUZZ_BUILD)/fuzz/findings/<target>/.
$(FUZZ_BUILD)/build.ninja:
	CC=clang-14 CXX=clang++-14 cmake -S . -B $(FUZZ_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSTOWAGE_FUZZ=ON \
	  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1" "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -g1"

fuzz: deps
	@$(MAKE) --no-print-directory install-packages PACKAGES="$(FUZZ_PACKAGES)"
	@$(MAKE) --no-print-directory $(FUZZ_BUILD)/build.ninja
	cmake --build $(FUZZ_BUILD) -j $(JOBS) --target stowage_fuzz_targets
	FUZZ_RUNS=$(FUZZ_RUNS) FUZZ_MAX_LEN=$(FUZZ_MAX_LEN) ./tools/fuzz.sh $(FUZZ_BUILD) $(FUZZ_SECONDS) $(FUZZ_TARGETS)

# Random models x random boards, checked differentially (docs/testing.md): RANDOM_SECONDS of seeds from RANDOM_FIRST,
# findings shrunk into $(BUILD)/random-run/reproducers/. stowage-random is not part of `make build` (make test does
# not need it: its slice runs in-process in the e2e tests).
RANDOM_SECONDS ?= 600
RANDOM_FIRST ?= 1
random: build
	cmake --build $(BUILD) -j $(JOBS) --target stowage-random
	$(BUILD)/bin/stowage-random run --first $(RANDOM_FIRST) --seeds 100000000 --seconds $(RANDOM_SECONDS) --jobs $(JOBS) \
	  --out $(BUILD)/random-run

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD)
