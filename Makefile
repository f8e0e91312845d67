# The two commands of the README: `make run` and `make test`.
# Both create .venv on first use and install the project into it; the install builds the
# C modules in place (setup.py: the tracepoints', the Chrome JSON import's and the
# codelets' kernels), again whenever their sources change.

PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: run test lint format bench fuzz asan soak models torch clean

NATIVE := setup.py profiler_core/formats/pvti/_ring.c profiler_core/formats/pvti/_ring.h \
	$(wildcard ipu_engine/pvti/*.c ipu_engine/pvti/*.h) \
	$(wildcard profiler_core/trace/*.c profiler_core/trace/*.h) \
	$(wildcard ipu_engine/codelets/*.c ipu_engine/codelets/*.h) \
	$(wildcard ipu_engine/poplar/*.c ipu_engine/poplar/*.h)

$(STAMP): pyproject.toml $(NATIVE)
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

run: $(STAMP)
	$(PY) -m popvision_py.demo

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

format: $(STAMP)
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

test: lint
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest -q

# The property-based readers' suite at 10,000 random cases per property, and as many random
# engine programs with bad calls mixed in (make test runs the same properties on a few fixed
# cases); hypothesis prints each property's figures, the engine suite its own.
FUZZ_EXAMPLES ?= 10000
FUZZ_TESTS := tests/profiler_core/test_trace_fuzz.py tests/profiler_core/test_report_fuzz.py \
	tests/profiler_core/test_profile_pop_bad_input.py tests/profiler_core/test_debug_cbor.py \
	tests/profiler_core/test_debug_cbor_v1.py tests/profiler_core/test_chrome_events_fuzz.py \
	tests/profiler_core/test_chrome_native_path.py tests/ipu_engine/test_engine_fuzz.py

fuzz: $(STAMP)
	POPVISION_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) QT_QPA_PLATFORM=offscreen $(PY) -m pytest -q \
		--hypothesis-show-statistics $(FUZZ_TESTS)

# The Chrome JSON kernel and the nesting walk (profiler_core/trace/*.c) built with
# AddressSanitizer and run under their tests: any read past a buffer fails the run. The
# in-place modules are rebuilt as usual afterwards.
ASAN_LIB = $(shell $(CC) -print-file-name=libasan.so)
ASAN_TESTS := tests/profiler_core/test_chrome_native_path.py tests/profiler_core/test_chrome_native_kernel.py \
	tests/profiler_core/test_trace_nesting.py \
	tests/profiler_core/test_chrome_tolerant.py tests/profiler_core/test_trace_bad_input.py

ASAN_CFLAGS = -shared -fPIC -fsanitize=address -fno-omit-frame-pointer -g -O1 \
	-I$$($(PY) -c "import sysconfig; print(sysconfig.get_paths()['include'])")
EXT = $$($(PY) -c "import sysconfig; print(sysconfig.get_config_var('EXT_SUFFIX'))")

asan: $(STAMP)
	$(CC) $(ASAN_CFLAGS) profiler_core/trace/_chrome_scan.c profiler_core/trace/_chrome_event.c \
		profiler_core/trace/_chrome_intern.c profiler_core/trace/_json_text.c \
		profiler_core/trace/_json_number.c -o profiler_core/trace/_chrome_scan$(EXT)
	$(CC) $(ASAN_CFLAGS) profiler_core/trace/_walk.c -o profiler_core/trace/_walk$(EXT)
	PYTHONMALLOC=malloc LD_PRELOAD=$(ASAN_LIB) ASAN_OPTIONS=detect_leaks=0 \
		QT_QPA_PLATFORM=offscreen $(PY) -m pytest -q $(ASAN_TESTS); \
		status=$$?; $(PY) -m pip install --quiet -e '.[dev]'; exit $$status

# The window soak of issue 30 at full length: 200 cycles of open / compare / every page / close
# in one process (make test runs 40); the memory after the last cycle within 10% of after
# cycle 20, no Qt warning, no exception, nothing left behind. About 4-8 minutes.
SOAK_CYCLES ?= 200

soak: $(STAMP)
	POPVISION_SOAK_CYCLES=$(SOAK_CYCLES) QT_QPA_PLATFORM=offscreen $(PY) -m pytest -q -s \
		tests/popvision_py/test_window_cycles.py

# Every light model shipped in the onnx package (AlexNet ... ZFNet-512, VGG-19), each on 1 IPU,
# against onnxruntime on a seeded input; make test runs three of them. About 3 minutes and
# up to 5 GB.
models: $(STAMP)
	POPVISION_LIGHT_MODELS=all $(PY) -m pytest -q tests/ipu_engine/test_onnx_light.py

# ipu_engine.poptorch, PopTorch's face for torch models, in a venv of its own so that .venv and
# `make test` stay without torch: installs the [torch] extra (torch, onnxscript, torchvision;
# torch from the package index pulls ~3 GB of GPU libraries), then runs the shim's tests and
# PopTorch's documented examples (resources/examples/poptorch/), their reports opened in the
# window offscreen. About 5 minutes after the install.
TORCH_VENV ?= .venv-torch
TORCH_PY := $(TORCH_VENV)/bin/python
TORCH_STAMP := $(TORCH_VENV)/.installed

$(TORCH_STAMP): pyproject.toml $(NATIVE)
	test -x $(TORCH_PY) || $(PYTHON) -m venv $(TORCH_VENV)
	$(TORCH_PY) -m pip install --quiet --upgrade pip
	$(TORCH_PY) -m pip install --quiet -e '.[dev,torch]'
	touch $(TORCH_STAMP)

torch: $(TORCH_STAMP)
	QT_QPA_PLATFORM=offscreen $(TORCH_PY) -m pytest -q tests/ipu_engine/test_poptorch_*.py

bench: $(STAMP)
	$(PY) -m benchmarks

clean:
	rm -rf $(VENV) $(TORCH_VENV) .pytest_cache build *.egg-info
	find ipu_engine profiler_core -name '*.so' -delete
