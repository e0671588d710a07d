#!/usr/bin/env bash
# Create (idempotently) an isolated environment that runs one paper's public code unpatched,
# for the side-by-side harnesses in this folder.  Nothing here is imported by the library:
# the authors' code is read and run, never copied into impactbandits.
#
# Usage:   bash benchmarks/fidelity/authors_env.sh lindner|ron|cella|metelli     # progress on stderr
#          PY=$(bash benchmarks/fidelity/authors_env.sh lindner | tail -n 1)
# The last two lines on stdout are the venv's python interpreter and the source directory.
#
# Sources: the pinned commit (below) of the public repository, taken from the first of
#   AUTHORS_SRC_<NAME>  a plain checkout of it (e.g. AUTHORS_SRC_LINDNER=~/spb), copied as is;
#   AUTHORS_MIRROR      a folder holding <owner>+<name>/repo git directories (local snapshots);
#   otherwise           a clone of https://github.com/<owner>/<name> (needs the network), kept
#                       in benchmarks/fidelity/.authors/<name>/git for the next time.
# Everything is written under benchmarks/fidelity/.authors/<name>/ (git-ignored).
set -euo pipefail

die() { echo "authors_env.sh: error: $*" >&2; exit 2; }
log() { echo "authors_env.sh: $*" >&2; }

NAME="${1:-}"
PATHS=()
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PYTHON="${PYTHON:-python3}"
MIRROR="${AUTHORS_MIRROR:-}"

case "$NAME" in
  lindner)
    REPO="david-lindner/single-peaked-bandits"; COMMIT="8e1dd52"
    # np.int (removed in numpy 1.24), PuLP with its bundled CBC, pandas/scipy of that era.
    REQUIREMENTS=("numpy==1.23.5" "scipy==1.11.4" "pandas==2.0.3" "PuLP==2.7.0"
                  "matplotlib==3.8.4" "seaborn==0.13.2")
    ;;
  ron)
    REPO="tomron/CSRviaMAB"; COMMIT="cb90260"
    REQUIREMENTS=("numpy==1.26.4" "scipy==1.13.1" "pandas==2.2.3" "matplotlib==3.8.4")
    ;;
  cella)
    REPO="LeonardoCella/DelayDependentPayoffs"; COMMIT="06c4031"
    REQUIREMENTS=("numpy==1.26.4" "scipy==1.13.1" "matplotlib==3.8.4")
    ;;
  metelli)
    REPO="albertometelli/stochastic-rising-bandits"; COMMIT="2b49e82"
    REQUIREMENTS=("numpy==1.26.4" "tqdm==4.66.5")
    PATHS=("src")  # the snapshot lacks the large data files; the code is all under src/
    ;;
  *) die "NAME: expected one of lindner, ron, cella, metelli (got '${NAME}')" ;;
esac

ROOT="$HERE/.authors/$NAME"
VENV="$ROOT/venv"
SRC="$ROOT/src"
VENV_PY="$VENV/bin/python"
STAMP="$VENV/.installed"
upper="$(echo "$NAME" | tr '[:lower:]' '[:upper:]')"
override_var="AUTHORS_SRC_$upper"
SPEC="python=$("$PYTHON" -c 'import sys; print("%d.%d" % sys.version_info[:2])') $REPO@$COMMIT ${REQUIREMENTS[*]}"

if [[ -x "$VENV_PY" && -f "$STAMP" && -d "$SRC" ]] && [[ "$(head -n 1 "$STAMP")" == "$SPEC" ]]; then
  log "already set up ($ROOT)"
  echo "$VENV_PY"; echo "$SRC"; exit 0
fi

mkdir -p "$ROOT"
rm -rf "$SRC"; mkdir -p "$SRC"
if [[ -n "${!override_var:-}" ]]; then
  log "copying sources from \$$override_var=${!override_var}"
  cp -a "${!override_var}/." "$SRC/"
else
  if [[ -n "$MIRROR" ]]; then
    GITDIR="$MIRROR/${REPO/\//+}/repo"
    [[ -d "$GITDIR" ]] || die "AUTHORS_MIRROR: no snapshot of $REPO at $GITDIR; set $override_var instead"
  else
    GITDIR="$ROOT/git"
    if ! git --git-dir="$GITDIR" cat-file -e "$COMMIT^{commit}" 2>/dev/null; then
      log "cloning https://github.com/$REPO into $GITDIR"
      rm -rf "$GITDIR"
      git clone --quiet --bare "https://github.com/$REPO.git" "$GITDIR" >&2 \
        || die "cannot clone https://github.com/$REPO; set $override_var or AUTHORS_MIRROR"
    fi
  fi
  log "exporting $REPO@$COMMIT from $GITDIR"
  git --git-dir="$GITDIR" archive "$COMMIT" "${PATHS[@]}" | tar -x -C "$SRC" \
    || die "cannot export commit $COMMIT of $REPO"
fi

log "creating virtual environment in $VENV"
"$PYTHON" -m venv --clear "$VENV" >&2
log "installing ${REQUIREMENTS[*]}"
"$VENV_PY" -m pip install --quiet --no-input "${REQUIREMENTS[@]}" >&2 || die "pip install failed"

if [[ "$NAME" == lindner ]]; then
  # The repository's README: run the FICO preprocessing once before importing experiments.py.
  log "running the authors' FICO preprocessing"
  (cd "$SRC/src/single_peaked_bandits/fico_experiment" \
     && PYTHONPATH="$SRC/src" "$VENV_PY" preprocessing.py >&2) || die "FICO preprocessing failed"
fi

{ echo "$SPEC"; echo "# installed $(date -u +%Y-%m-%dT%H:%M:%SZ)"; "$VENV_PY" -m pip freeze; } > "$STAMP"
log "done"
echo "$VENV_PY"; echo "$SRC"
