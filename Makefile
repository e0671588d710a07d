# impactbandits — the two commands for a fresh machine are `make demo` and `make test`.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
DEMO_OUT ?= runs/demo

.PHONY: demo test test-slow docs bench figures kernels ledger lint typecheck format clean clean-kernels

# $(call heartbeat,WHAT,COMMAND): run COMMAND; while it runs, print "  ... still WHAT" with the
# time elapsed at a steady interval (HEARTBEAT_INTERVAL), so that a long quiet step (pip's install
# phase, numba compiling) is never silent. The printing loop ends with the recipe's shell,
# whatever ends it (Ctrl-C included).
HEARTBEAT_INTERVAL ?= 20
define heartbeat
start=$$(date +%s); me=$$$$; \
( trap 'kill $$s 2>/dev/null; exit 0' TERM; \
  while kill -0 $$me 2>/dev/null; do sleep $(HEARTBEAT_INTERVAL) >/dev/null 2>&1 & s=$$!; wait $$s; \
  kill -0 $$me 2>/dev/null && echo "  ... still $(1) ($$(( $$(date +%s) - start )) s)"; done ) & \
beat=$$!; trap 'kill $$beat 2>/dev/null' EXIT; trap 'exit 130' INT; trap 'exit 143' TERM; \
$(2)
endef

$(VENV)/.installed-base: pyproject.toml
	@echo "make: creating the virtual environment $(VENV) and installing impactbandits with its" \
	  "dependencies (NumPy, SciPy, pandas, pyarrow, matplotlib, numba, ...) with pip"
	@$(call heartbeat,installing into $(VENV),{ test -x $(PY) || $(PYTHON) -m venv $(VENV); } && \
	  $(PY) -m pip install --quiet --progress-bar off -e .)
	@touch $@

$(VENV)/.installed-dev: pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $@ $(VENV)/.installed-base

## kernels: build the compiled loops of the built-in policies ahead of time (needs a C compiler;
## about 161 CPU s to build the compiled loops; does nothing when every loop is current; prints
## each loop as it compiles); a process that finds its loop there never imports numba, and
## numba's JIT runs any other step (a user's, or one edited since)
kernels: $(VENV)/.installed-base
	$(PY) -m impactbandits.kernels.build

## demo: create .venv, install (pip), reproduce Lindner et al. Figure 1 (quick scale) and its
## report, saying what it does as it goes; numba's JIT compiles the round loops the figure needs
## on their first use (cached on disk: later runs load them), `make kernels` builds every loop
## ahead of time. It takes 70 CPU s on a fresh clone, pip's install included (142 s of wall time on 2 cores at load 6)
demo: $(VENV)/.installed-base
	@echo "make demo: reproducing Lindner et al. Figure 1 at quick scale into $(DEMO_OUT);" \
	  "numba compiles each round loop the figure needs on its first use"
	@if [ -t 1 ]; then $(VENV)/bin/impactbandits reproduce lindner-fig1 --quick --out $(DEMO_OUT); \
	else $(call heartbeat,reproducing lindner-fig1,$(VENV)/bin/impactbandits reproduce lindner-fig1 --quick --out $(DEMO_OUT)); fi

## test: create .venv with the dev extras, build the kernels and run the test suite (the
## kernel tests run on both the ahead-of-time module and numba's JIT); the long statistical
## checks marked `slow` are left to test-slow
test: $(VENV)/.installed-dev kernels
	$(PY) -m pytest -q -m "not slow"

## test-slow: only the long statistical and end-to-end checks (marked `slow`)
test-slow: $(VENV)/.installed-dev kernels
	$(PY) -m pytest -q -m slow

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
## seconds and peak memory per figure and the totals (runs kept in runs/full;
## 3,823 CPU s for all 26 registered figures at full paper scale (3.5 to 1,839 CPU s each))
figures: $(VENV)/.installed-dev kernels
	$(PY) benchmarks/fidelity/time_figures.py --out runs/full

## ledger: check every figure's claims on its full-scale run (reusing a current store in
## runs/full, running or completing the others) and regenerate the fidelity ledger from the
## verdicts (docs/fidelity/claims.toml, then docs/fidelity.md)
ledger: $(VENV)/.installed-dev kernels
	$(PY) benchmarks/fidelity/ledger.py --runs runs/full
	$(PY) docs/fidelity/build.py

lint: $(VENV)/.installed-dev
	$(VENV)/bin/ruff check src tests benchmarks
	$(VENV)/bin/ruff format --check src tests benchmarks

## typecheck: mypy over the package and tests/typing_user_code.py (settings in pyproject.toml)
typecheck: $(VENV)/.installed-dev
	$(VENV)/bin/mypy

format: $(VENV)/.installed-dev
	$(VENV)/bin/ruff format src tests benchmarks
	$(VENV)/bin/ruff check --fix src tests benchmarks

## clean-kernels: drop numba's on-disk cache and the module built ahead of time (the next
## `make kernels`, `make test` or `make demo` rebuilds it)
clean-kernels:
	find src -path '*/__pycache__/*' \( -name '*.nbi' -o -name '*.nbc' \) -delete
	rm -f src/impactbandits/kernels/_aot.*.so src/impactbandits/kernels/_aot.json

clean:
	rm -rf $(VENV) runs build dist site .cache .pytest_cache .ruff_cache .mypy_cache
