# impactbandits — the two commands for a fresh machine are `make demo` and `make test`.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
DEMO_OUT ?= runs/demo

.PHONY: demo test docs bench figures kernels lint format clean clean-kernels

$(VENV)/.installed-base: pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[fast]'
	touch $@

$(VENV)/.installed-dev: pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $@ $(VENV)/.installed-base

# the compiled loops built ahead of time (impactbandits.kernels.aot): rebuilt when a source
# changes (the build itself checks the exact list and does nothing if the module is current)
KERNEL_SOURCES := $(wildcard src/impactbandits/kernels/*.py) src/impactbandits/kernels/aot_shim.c \
	src/impactbandits/opportunity/objective.py
KERNELS_STAMP  := src/impactbandits/kernels/_aot.json

$(KERNELS_STAMP): $(VENV)/.installed-base $(KERNEL_SOURCES)
	$(PY) -m impactbandits.kernels.build

## kernels: build the compiled loops ahead of time (needs a C compiler; ~20 s); without them
## numba's JIT runs the same code with more memory and start-up time per process
kernels: $(KERNELS_STAMP)

## demo: create .venv, install, reproduce Lindner et al. Figure 1 (quick scale) and its report
## (if the kernels cannot be built ahead of time, numba's JIT runs them)
demo: $(VENV)/.installed-base
	-@$(MAKE) --no-print-directory kernels
	$(VENV)/bin/impactbandits reproduce lindner-fig1 --quick --out $(DEMO_OUT)

## test: create .venv with the dev extras, build the kernels and run the test suite (the
## kernel tests run on both the ahead-of-time module and numba's JIT)
test: $(VENV)/.installed-dev kernels
	$(PY) -m pytest -q

$(VENV)/.installed-docs: pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev,docs]'
	touch $@ $(VENV)/.installed-dev $(VENV)/.installed-base

## docs: build the documentation site into site/ in strict mode (broken links fail); the four
## tutorials are executed during the build
docs: $(VENV)/.installed-docs
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --site-dir site

## bench: throughput and memory benchmarks (SMPyBandits reference in its own venv) and issue
## 13's engine table (benchmarks/engine_table.py); e.g. BENCH_FLAGS=--skip-figures or --quick
bench: $(VENV)/.installed-dev kernels
	$(PY) benchmarks/run.py $(BENCH_FLAGS)

## figures: every registered figure at full paper scale, one after another; prints wall/CPU
## seconds and peak memory per figure and the totals (runs kept in runs/full; ~16 min on 2 cores)
figures: $(VENV)/.installed-dev kernels
	$(PY) benchmarks/fidelity/time_figures.py --out runs/full

lint: $(VENV)/.installed-dev
	$(VENV)/bin/ruff check src tests benchmarks
	$(VENV)/bin/ruff format --check src tests benchmarks

format: $(VENV)/.installed-dev
	$(VENV)/bin/ruff format src tests benchmarks
	$(VENV)/bin/ruff check --fix src tests benchmarks

## clean-kernels: drop numba's cached kernels and the module built ahead of time (the next
## `make kernels`, `make test` or `make demo` rebuilds it)
clean-kernels:
	rm -f src/impactbandits/kernels/__pycache__/*.nbi src/impactbandits/kernels/__pycache__/*.nbc
	rm -f src/impactbandits/kernels/_aot.*.so $(KERNELS_STAMP)

clean:
	rm -rf $(VENV) runs build dist site .cache .pytest_cache .ruff_cache
