# impactbandits — the two commands for a fresh machine are `make demo` and `make test`.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
DEMO_OUT ?= runs/demo

.PHONY: demo test docs bench figures lint format clean clean-kernels

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

## demo: create .venv, install, reproduce Lindner et al. Figure 1 (quick scale) and its report
demo: $(VENV)/.installed-base
	$(VENV)/bin/impactbandits reproduce lindner-fig1 --quick --out $(DEMO_OUT)

## test: create .venv with the dev extras and run the test suite
test: $(VENV)/.installed-dev
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
bench: $(VENV)/.installed-dev
	$(PY) benchmarks/run.py $(BENCH_FLAGS)

## figures: every registered figure at full paper scale, one after another; prints wall/CPU
## seconds and peak memory per figure and the totals (runs kept in runs/full; ~16 min on 2 cores)
figures: $(VENV)/.installed-dev
	$(PY) benchmarks/fidelity/time_figures.py --out runs/full

lint: $(VENV)/.installed-dev
	$(VENV)/bin/ruff check src tests benchmarks
	$(VENV)/bin/ruff format --check src tests benchmarks

format: $(VENV)/.installed-dev
	$(VENV)/bin/ruff format src tests benchmarks
	$(VENV)/bin/ruff check --fix src tests benchmarks

## clean-kernels: drop numba's on-disk cache of the compiled loops (the next run compiles them)
clean-kernels:
	find src -path '*/__pycache__/*' \( -name '*.nbi' -o -name '*.nbc' \) -delete

clean:
	rm -rf $(VENV) runs build dist site .cache .pytest_cache .ruff_cache
