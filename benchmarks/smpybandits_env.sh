#!/usr/bin/env bash
# Create (idempotently) the isolated virtual environment used to run the SMPyBandits
# reference benchmark (benchmarks/smpybandits_reference.py).
#
# SMPyBandits 0.9.7 fails at import with current scipy (scipy.special.btdtri is gone),
# but runs unpatched with numpy<2 and scipy<1.14.  It must NOT share the project's
# environment, so it lives in benchmarks/.smpy-venv (git-ignored).
#
# Usage:   bash benchmarks/smpybandits_env.sh          # progress on stderr
#          PY=$(bash benchmarks/smpybandits_env.sh | tail -n 1)
# The last line printed on stdout is the path of the venv's python interpreter.
#
# Environment variables:
#   PYTHON    interpreter used to create the venv (default: python3)
#   SMPY_VENV venv location (default: <this directory>/.smpy-venv)
set -euo pipefail

die() { echo "smpybandits_env.sh: error: $*" >&2; exit 1; }
log() { echo "smpybandits_env.sh: $*" >&2; }

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PYTHON="${PYTHON:-python3}"
VENV="${SMPY_VENV:-$HERE/.smpy-venv}"
VENV_PY="$VENV/bin/python"
STAMP="$VENV/.smpybandits-installed"

# Exact, tested versions (a lock, so the reference is reproducible).  SMPyBandits 0.9.7
# declares numpy, scipy, matplotlib, joblib, seaborn, scikit-learn and scikit-optimize as
# requirements; importing SMPyBandits.Policies actually loads numpy, scipy, matplotlib,
# seaborn (hence pandas) and joblib.  All versions below accept numpy 1.26 (numpy<2) and
# scipy 1.13 (scipy<1.14).  Optional extras (numba, tqdm) are deliberately NOT installed:
# this is SMPyBandits as `pip install SMPyBandits` gives it (numba-free dummy decorators).
REQUIREMENTS=(
    "SMPyBandits==0.9.7"
    "numpy==1.26.4"          # must be < 2
    "scipy==1.13.1"          # must be < 1.14 (scipy.special.btdtri removed in 1.14)
    "matplotlib==3.11.2"
    "seaborn==0.13.2"
    "pandas==3.0.6"
    "joblib==1.6.0"
    "scikit-learn==1.9.1"
    "scikit-optimize==0.10.2"
)
# The stamp records the interpreter version and the requirement list: changing either
# triggers a re-install.
SPEC="python=$("$PYTHON" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null) ${REQUIREMENTS[*]}" \
    || die "cannot run '$PYTHON'"

# --- No-op when the stamp says this exact environment is already installed.
if [[ -x "$VENV_PY" && -f "$STAMP" ]] && [[ "$(head -n 1 "$STAMP")" == "$SPEC" ]]; then
    log "already set up ($VENV)"
    echo "$VENV_PY"
    exit 0
fi

# --- (Re)create the venv from scratch: --clear wipes a partial or outdated install.
log "creating virtual environment in $VENV"
"$PYTHON" -m venv --clear "$VENV" >&2 || die "'$PYTHON -m venv' failed (is the venv module installed?)"

log "installing ${REQUIREMENTS[*]}"
# pip's output goes to stderr so that stdout's last line stays the interpreter path.
"$VENV_PY" -m pip install --no-input "${REQUIREMENTS[@]}" >&2 \
    || die "pip install failed (PyPI must be reachable; see the messages above)"

# --- Smoke test: the package must import unpatched and the benchmarked policies must work.
log "checking that SMPyBandits imports and runs"
"$VENV_PY" - >&2 <<'EOF' || die "SMPyBandits does not import or run in $VENV (see the traceback above)"
import contextlib, sys
with contextlib.redirect_stdout(sys.stderr):  # SMPyBandits prints banners at import
    import SMPyBandits.Policies as P
for name in ("UCB", "Exp3"):
    policy = getattr(P, name)(2)
    policy.startGame()
    for _ in range(20):
        policy.getReward(policy.choice(), 1.0)
print("SMPyBandits OK; DiscountedUCB available: %s, SWUCB available: %s"
      % (hasattr(P, "DiscountedUCB"), hasattr(P, "SWUCB")))
EOF

# --- Write the stamp last, so an interrupted run is redone next time.
{
    echo "$SPEC"
    echo "# installed $(date -u +%Y-%m-%dT%H:%M:%SZ); pip freeze:"
    "$VENV_PY" -m pip freeze
} > "$STAMP" || die "cannot write $STAMP"

log "done"
echo "$VENV_PY"
