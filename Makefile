# graft: the two commands of the README, plus the sanitizer and benchmark builds.
#   make demo       train the digits CNN and the character LSTM, then a leak hunt with graft.doctor
#                   (installs missing Debian packages first)
#   make python     build the Python package into build/python (PYTHONPATH=build/python)
#   make test       build and run every test suite
#   make test-torch2  graft.doctor's PyTorch backend against a current PyTorch 2.x from PyPI (and the
#                   NumPy bindings against NumPy 2.x), in a virtual environment of its own
#                   (build/venv-torch2: several GB of CUDA libraries)
#   make test-asan  the C++ suites under AddressSanitizer + UndefinedBehaviorSanitizer
#   make bench      side-by-side benchmarks: libtorch, glibc malloc, backend:malloc (installs libtorch-dev)
#   make fuzz       the long differential fuzz against Debian's PyTorch (FUZZ_SEED, FUZZ_CASES)
JOBS ?= $(shell nproc)
BUILD ?= build
ASAN_BUILD ?= build-asan
BENCH_BUILD ?= build-bench

.PHONY: deps demo python test test-torch2 test-asan bench fuzz format clean

deps:
	@tools/install-deps.sh

$(BUILD)/build.ninja: | deps
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release

demo: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS) --target digits_cnn char_lstm graft_python
	./$(BUILD)/examples/digits_cnn data/digits/digits.csv $(BUILD)/digits_cnn.safetensors
	./$(BUILD)/examples/char_lstm data/sonnets/sonnets.txt
	PYTHONPATH=$(BUILD)/python /usr/bin/python3 examples/python/digits_cnn.py data/digits/digits.csv $(BUILD)/digits_cnn_py.safetensors
	@echo; echo "== leak hunt: a training script with the classic memory habits, under graft.doctor =="
	PYTHONPATH=$(BUILD)/python /usr/bin/python3 -m graft.doctor --html $(BUILD)/leak_hunt.html examples/python/leak_hunt.py
	@echo; echo "== the same script with the doctor's fixes: reported clean =="
	PYTHONPATH=$(BUILD)/python /usr/bin/python3 -m graft.doctor --fail-on-leak --html $(BUILD)/leak_hunt_fixed.html examples/python/leak_hunt_fixed.py

python: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS) --target graft_python

# the Python parity tier compares against Debian's PyTorch (python3-torch); the doctor's HTML
# report is checked in Debian's headless Chromium
test: deps $(BUILD)/build.ninja
	@tools/install-deps.sh python3-torch chromium
	cmake --build $(BUILD) -j $(JOBS)
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# the doctor's fixtures and the 16-bit floats on PyTorch 2.x (make test runs them on Debian's
# 1.13, which lacks many float16 CPU kernels), and the NumPy edge cases on NumPy 2.x (Debian's
# is 1.24): the environment is made once and reused; it holds PyTorch,
# NumPy and pytest from PyPI, beside Debian's Python that graft is built for
TORCH2_VENV ?= $(BUILD)/venv-torch2
test-torch2: python
	@test -x $(TORCH2_VENV)/bin/python || /usr/bin/python3 -m venv $(TORCH2_VENV)
	@$(TORCH2_VENV)/bin/python -c 'import torch, numpy, pytest' 2>/dev/null || \
	  $(TORCH2_VENV)/bin/pip install --progress-bar off 'torch>=2,<3' numpy pytest
	# graft installed there as a user installs it (pip install ., build isolation: setuptools from
	# PyPI), from the tree built above; the tests then use the installed package
	GRAFT_BUILD_DIR=$(CURDIR)/$(BUILD) $(TORCH2_VENV)/bin/pip install --progress-bar off -q .
	cd tests/python && $(CURDIR)/$(TORCH2_VENV)/bin/python -m pytest -q -p no:cacheprovider \
	  test_doctor_torch.py test_binding_edges.py test_parity_reduced_float.py test_autocast.py \
	  test_parity_ops_more.py

test-asan: deps
	# -O1 -g1 (line tables): half the compile time of -O2 -g, and still file:line in reports
	cmake -S . -B $(ASAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG" -DGRAFT_SANITIZE=ON -DGRAFT_BUILD_EXAMPLES=OFF
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest --output-on-failure -j $(JOBS)

bench:
	@tools/install-deps.sh libtorch-dev libbenchmark-dev
	cmake -S . -B $(BENCH_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release -DGRAFT_BUILD_BENCH=ON -DGRAFT_BUILD_TESTS=OFF -DGRAFT_BUILD_EXAMPLES=OFF
	cmake --build $(BENCH_BUILD) -j $(JOBS)
	./$(BENCH_BUILD)/bench/eager_overhead
	./$(BENCH_BUILD)/bench/conv_bench
	./$(BENCH_BUILD)/bench/alloc_bench --benchmark_repetitions=9 --benchmark_report_aggregates_only=true
	bench/compare_backends.sh $(BENCH_BUILD) 5
	./$(BENCH_BUILD)/bench/doctor_overhead
	@if /usr/bin/python3 -c 'import torch' 2>/dev/null; then PYTHONPATH=$(BENCH_BUILD)/python /usr/bin/python3 bench/python_overhead.py; else echo 'bench/python_overhead.py skipped: python3-torch is not installed'; fi
	PYTHONPATH=$(BENCH_BUILD)/python /usr/bin/python3 bench/doctor_overhead.py

# the long differential fuzz against Debian's PyTorch (the slice in make test runs seed 0):
#   make fuzz FUZZ_SEED=3 FUZZ_CASES=100000   (summary in $(BUILD)/fuzz_diff.json)
FUZZ_SEED ?= 1
FUZZ_CASES ?= 100000
fuzz: python
	@tools/install-deps.sh python3-torch
	PYTHONPATH=$(BUILD)/python /usr/bin/python3 tools/fuzz_diff.py --seed $(FUZZ_SEED) --cases $(FUZZ_CASES) --out $(BUILD)/fuzz_diff.json

format:
	@tools/install-deps.sh clang-format
	clang-format -i $$(git ls-files '*.h' '*.cpp' ':!:tests/programs/**')

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(BENCH_BUILD)
