#!/usr/bin/env bash
# Run Pike-Burke & Grünewälder's own code for "Recovering Bandits" (NeurIPS 2019) in an
# environment of its own and write mean cumulative regret per algorithm and horizon to JSON.
#
# Expects the authors' repository github.com/ciarapb/recovering_bandits at commit
#     abe86450323f66a0c6e23a81b8847a94c87013ea   (2019-12-06, "Update README.md")
# given either as a checkout / plain export (a folder holding functs/ and setups/) or as a git
# directory that contains that commit (then `git archive` is used). Every file used is checked
# against the git blob ids of that commit before anything runs.
#
# Usage:
#   bash run_authors.sh --authors-dir DIR --venv DIR --out FILE [--python PY] [-- DRIVER-ARGS]
# DRIVER-ARGS go to run_authors.py, e.g.  --reps 5 --T 1000 --seed0 1 --jobs 2
#   --runs default                         (logistic_l5, gamma_l5: RGP-UCB, RGP-TS, UCB-Z;
#                                           gp_l05, gp_l2, gp_l5: RGP-UCB, RGP-TS, dRGP-UCB/TS d=2)
#   --runs logistic_l5:rogue gp_l2:drgpts3 ...
#
# --python picks the interpreter the environment is built on:
#   * a Python 2.7 (the authors' language): virtualenv 16.7.12 is bootstrapped with that
#     interpreter's own pip, then the versions of the authors' README are installed
#     (numpy 1.15.4, scipy 0.19.1, GPy 1.9.2 -- GPy and paramz build from source: needs gcc
#     and the Python 2.7 headers; not their matplotlib 1.5.3, see below) and py27.patch is
#     applied (2 hunks);
#   * a Python 3 (tested: 3.11): `python -m venv`, current numpy/scipy/GPy pinned below, and
#     py3.patch is applied (20 hunks).
# Default: python2.7 if it runs, else a pyenv-installed 2.7 (pyenv root/versions/2.7*), else python3.
# The venv is created once (a stamp file records what was installed); the authors' files are
# copied into a fresh DIR-of-venv/authors-src.XXXXXX (removed at exit) and patched there --
# the given checkout is never modified.
# Each repetition runs in a fresh interpreter started with a fixed minimal environment (see
# step 3 and early_load() in run_authors.py): in Python 2 the authors' d-step search (d >= 2)
# breaks near-ties by memory addresses, so those numbers are exactly reproducible only with the
# same venv path (README, "Reproducibility"). Nothing here touches the impactbandits environment.
set -euo pipefail

EXPECTED_COMMIT="abe86450323f66a0c6e23a81b8847a94c87013ea"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
die() { echo "run_authors.sh: error: $*" >&2; exit 2; }
log() { echo "run_authors.sh: $*" >&2; }

AUTHORS_DIR=""; VENV=""; OUT=""; PYTHON=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --authors-dir) AUTHORS_DIR="${2:?}"; shift 2 ;;
    --venv) VENV="${2:?}"; shift 2 ;;
    --out) OUT="${2:?}"; shift 2 ;;
    --python) PYTHON="${2:?}"; shift 2 ;;
    --) shift; break ;;
    -h|--help) sed -n '2,30p' "$0"; exit 0 ;;
    *) die "unknown argument '$1' (driver arguments go after --)" ;;
  esac
done
[[ -n "$AUTHORS_DIR" && -n "$VENV" && -n "$OUT" ]] || die "--authors-dir, --venv and --out are required"
[[ -d "$AUTHORS_DIR" ]] || die "no such directory: $AUTHORS_DIR"
command -v patch >/dev/null || die "GNU patch is needed (Debian package 'patch')"
AUTHORS_DIR="$(cd "$AUTHORS_DIR" && pwd)"
VENV="$(mkdir -p "$VENV" && cd "$VENV" && pwd)"
OUT="$(mkdir -p "$(dirname "$OUT")" && cd "$(dirname "$OUT")" && pwd)/$(basename "$OUT")"
# Work from the venv folder: a stray os.py (or similar) in the caller's directory must not
# shadow the standard library of `python -c` / `python -m`.
cd "$VENV"
if [[ -z "$PYTHON" ]]; then
  if python2.7 -c 'pass' 2>/dev/null; then
    PYTHON=python2.7
  elif command -v pyenv >/dev/null && ls "$(pyenv root)"/versions/2.7*/bin/python2.7 >/dev/null 2>&1; then
    PYTHON="$(ls "$(pyenv root)"/versions/2.7*/bin/python2.7 | tail -n 1)"  # installed, not selected
  else
    PYTHON=python3
  fi
fi
PYVER="$("$PYTHON" -c 'import sys; print("%d.%d" % sys.version_info[:2])')" || die "cannot run '$PYTHON'"

if [[ "$PYVER" == 2.7 ]]; then
  MODE=py27; PATCH="$HERE/py27.patch"
  # The versions named in the authors' README.md (python 2.7.12, numpy 1.15.4, scipy 0.19.1,
  # GPy 1.9.2) and GPy's dependencies, pinned to versions that support 2.7. Their README also
  # names matplotlib 1.5.3, used only by their notebooks and wrappers: left out on purpose.
  # GPy 1.9.2 would import it (and scan the machine's fonts) at import time, before the arms
  # exist, which moves the memory addresses the authors' tie-breaking depends on (see
  # run_authors.py, early_load); without it, and with plotting library "none" (step 3), GPy
  # imports fine.
  REQUIREMENTS=("numpy==1.15.4" "scipy==0.19.1" "six==1.17.0" "decorator==4.4.2"
                "paramz==0.9.5" "GPy==1.9.2")
elif [[ "$PYVER" == 3.* ]]; then
  MODE=py3; PATCH="$HERE/py3.patch"
  # Current releases; matplotlib is not installed here either (plotting library "none").
  REQUIREMENTS=("numpy==2.4.6" "scipy==1.17.1" "six==1.17.0" "decorator==5.3.1"
                "paramz==0.10.0" "GPy==1.15.0")
else
  die "unsupported Python $PYVER (need 2.7 or 3.x)"
fi

# --- 1. The environment (once; redone when the interpreter or the requirement list changes).
# First, because `python3 -m venv --clear` empties the venv folder.
VENV_PY="$VENV/bin/python"
STAMP="$VENV/.recovering-authors-installed"
SPEC="$MODE python=$("$PYTHON" -c 'import sys; print(sys.version.split()[0])') ${REQUIREMENTS[*]}"
if [[ -x "$VENV_PY" && -f "$STAMP" && "$(head -n 1 "$STAMP")" == "$SPEC" ]]; then
  log "environment already set up ($VENV)"
else
  log "creating the $MODE environment in $VENV"
  rm -rf "$VENV/bin" "$VENV/lib" "$VENV/lib64" "$VENV/include" "$VENV/pyvenv.cfg" "$VENV/_bootstrap"
  if [[ "$MODE" == py27 ]]; then
    "$PYTHON" -m pip install -q --disable-pip-version-check --target "$VENV/_bootstrap" "virtualenv==16.7.12" >&2
    PYTHONPATH="$VENV/_bootstrap" "$PYTHON" -m virtualenv --no-download -q "$VENV" >&2
    rm -rf "$VENV/_bootstrap"
    # numpy/scipy as binary wheels (cp27mu manylinux1); GPy 1.9.2 and paramz build from source.
    "$VENV_PY" -m pip install -q --disable-pip-version-check --only-binary numpy,scipy \
      "${REQUIREMENTS[@]}" >&2
  else
    "$PYTHON" -m venv --clear "$VENV" >&2
    "$VENV_PY" -m pip install -q --disable-pip-version-check "${REQUIREMENTS[@]}" >&2
  fi
  { echo "$SPEC"; "$VENV_PY" -m pip freeze --disable-pip-version-check 2>/dev/null; } > "$STAMP"
fi

# --- 2. The authors' files, checked against the blob ids of the expected commit.
FILES="functs/__init__.py e69de29bb2d1d6434b8b29ae775ad8c2e48c5391
functs/drgpts_functs.py d13565d87983b9202eeb67f6193b80e38bd85c5d
functs/drgpucb_functs.py 4c894c8dc4153049f31dc90afec9d27472288984
functs/gen_functs.py 9b6fba1c6a70cbb6a90b1e3c8baa0c43f0aababd
functs/rgpts_functs.py 12b849d63a8d2d77f33fa5afe7a07528bf174ea9
functs/rgpucb_functs.py d8faccef58ef56544748f8a4dad85e50b25d6a85
functs/rogueucbtuned_gamma_functs.py 51e4b4998a5bf39b0153864e9ff56e9edc0dab60
functs/rogueucbtuned_logistic_functs.py 879f677ba20a0491181abbfe51dbf7aeb613790a
functs/ucbz_functs.py 882552aaa7bc9c6929f3ea53949a9f2d3c464251
setups/__init__.py e69de29bb2d1d6434b8b29ae775ad8c2e48c5391
setups/rgp_gamma_l25_setup.py e160668511b3bab1b34e8bd60f6346d7e2cefa9a
setups/rgp_gamma_l5_setup.py dd478c68ddd2e4c6f5451676b44e8552a67fb802
setups/rgp_gamma_l75_setup.py ab90f292a5b76216baa40a3cdc29854ec191395e
setups/rgp_gp_K30_l4_setup.py d5a1472d2a77fba6c8b65fb84d3fab6c8894f183
setups/rgp_gp_l05_setup.py 5766853e9bc87231cd3bea65c726b5e03965eb6e
setups/rgp_gp_l2_setup.py d6c4e702de5704c427898168efd12f1b36972932
setups/rgp_gp_l5_setup.py 8e34e8c14736f4733bdb14d9851a240e417e86da
setups/rgp_logistic_l25.py a1722a3375ec77d01c2bf5d1cb6bfc25f9e4519b
setups/rgp_logistic_l5_setup.py dc9e43a998ae36a56521d4bca63ad1200fc765cd
setups/rgp_logistic_l75_setup.py a94020059ccd6c3a95bb06a3b08541789c470e87"

# A fresh copy per run (several runs may share one venv), removed when the run ends.
SRC="$(mktemp -d "$VENV/authors-src.XXXXXX")"
trap 'rm -rf "$SRC"' EXIT
mkdir -p "$SRC/functs" "$SRC/setups"
if [[ -d "$AUTHORS_DIR/functs" && -d "$AUTHORS_DIR/setups" ]]; then
  if git -C "$AUTHORS_DIR" rev-parse HEAD >/dev/null 2>&1; then
    head="$(git -C "$AUTHORS_DIR" rev-parse HEAD)"
    [[ "$head" == "$EXPECTED_COMMIT" ]] || log "warning: checkout HEAD is $head, expected $EXPECTED_COMMIT (files are checked below)"
  fi
  while read -r f _; do cp "$AUTHORS_DIR/$f" "$SRC/$f" || die "missing $f in $AUTHORS_DIR"; done <<< "$FILES"
elif git --git-dir="$AUTHORS_DIR" cat-file -e "$EXPECTED_COMMIT^{commit}" 2>/dev/null; then
  log "extracting $EXPECTED_COMMIT from git directory $AUTHORS_DIR"
  git --git-dir="$AUTHORS_DIR" archive "$EXPECTED_COMMIT" functs setups | tar -x -C "$SRC"
else
  die "$AUTHORS_DIR is neither a checkout (functs/, setups/) nor a git directory holding $EXPECTED_COMMIT"
fi
# git blob id = sha1("blob <size>\0" + content); checked with the chosen interpreter (2.7 or 3).
"$PYTHON" - "$SRC" <<PYEOF || die "the authors' files differ from commit $EXPECTED_COMMIT"
import hashlib, sys
src = sys.argv[1]
bad = 0
for line in """$FILES""".strip().splitlines():
    path, blob = line.split()
    data = open(src + "/" + path, "rb").read()
    got = hashlib.sha1(b"blob " + str(len(data)).encode() + b"\0" + data).hexdigest()
    if got != blob:
        sys.stderr.write("  %s: blob %s, expected %s\n" % (path, got, blob))
        bad += 1
sys.exit(1 if bad else 0)
PYEOF
log "authors' files match $EXPECTED_COMMIT; applying $(basename "$PATCH")"
(cd "$SRC" && patch -p1 -s --no-backup-if-mismatch < "$PATCH") || die "patch failed"

# --- 3. Run, "sealed" (see early_load() in run_authors.py): the driver is copied beside the
# authors' packages and started there with no arguments and a fixed minimal environment; the
# options travel as JSON on stdin. Python 2 breaks the authors' exact ties by the memory
# addresses of their Arm objects, which would otherwise shift with this script's command line.
# GPy reads $HOME/.config/GPy/user.cfg: plotting library "none", since matplotlib is not
# installed (GPy 1.9.2's default "matplotlib" would fail at import); nothing here plots.
cp "$HERE/run_authors.py" "$SRC/run_authors.py"
mkdir -p "$SRC/home/.config/GPy"
printf '[plotting]\nlibrary = none\n' > "$SRC/home/.config/GPy/user.cfg"
"$VENV_PY" -c 'import json, sys; print(json.dumps({"argv": sys.argv[1:]}))' \
  --out "$OUT" --patch "$PATCH" --mode "$MODE" "$@" > "$SRC/options.json"
log "running ($MODE): run_authors.py $*"
(cd "$SRC" && env -i PATH=/usr/bin:/bin HOME=home LC_ALL=C \
   PYTHONDONTWRITEBYTECODE=1 PYTHONNOUSERSITE=1 \
   OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 \
   "$VENV_PY" run_authors.py < options.json)
log "wrote $OUT"
