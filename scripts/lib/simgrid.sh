# shellcheck shell=bash
# Which SimGrid topolab runs on, and where scripts/setup builds it. Sourced by every topolab command.
#
# topolab runs on SimGrid 4.1 (November 2025), built from its PyPI source distribution: Debian 12's
# libsimgrid-dev is 3.32, whose SMPI is quadratic in eager messages at thousands of ranks (README,
# "Which SimGrid"). One build serves every clone on the machine: it lives outside the repository, in
# $TOPOLAB_SIMGRID_PREFIX or by default /opt/topolab/simgrid-4.1 (root) or
# ~/.local/share/topolab/simgrid-4.1, and scripts/setup links it into the clone as .venv/simgrid.

SIMGRID_VERSION=4.1
SIMGRID_SDIST_SHA256=23ac24cb5b2467f1f051c992ec921b4a9f8f5ac2df16c489bd01bf1c44e6e817

simgrid_default_prefix() {
  if [ -n "${TOPOLAB_SIMGRID_PREFIX:-}" ]; then
    printf '%s\n' "$TOPOLAB_SIMGRID_PREFIX"
  elif [ "$(id -u)" = 0 ]; then
    printf '/opt/topolab/simgrid-%s\n' "$SIMGRID_VERSION"
  else
    printf '%s/topolab/simgrid-%s\n' "${XDG_DATA_HOME:-$HOME/.local/share}" "$SIMGRID_VERSION"
  fi
}

# Put the clone's SimGrid (.venv/simgrid, made by scripts/setup) first for this command and its children:
# smpicc and smpirun on PATH, simgrid.pc for CMake's pkg-config. Where it is on PATH already, its place
# there was chosen (a caller may put another smpirun before it) and is kept.
use_topolab_simgrid() {
  local simgrid="$1/.venv/simgrid"
  [ -x "$simgrid/bin/smpirun" ] || return 1
  case ":$PATH:" in
    *":$simgrid/bin:"*) ;;
    *) export PATH="$simgrid/bin:$PATH" ;;
  esac
  export PKG_CONFIG_PATH="$simgrid/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
}

# build_once WHAT PREFIX FINGERPRINT COMMAND...: run COMMAND, which installs into PREFIX the WHAT (SimGrid, Python
# dependencies) named by FINGERPRINT (its .topolab-fingerprint, written last), unless PREFIX already has it. One
# build at a time per prefix (a lock file beside it): a setup started while another builds the same prefix says so,
# waits, and reuses what the other built when it is the same. COMMAND runs in a subshell; its status is returned.
build_once() {
  local what=$1 prefix=$2 fingerprint=$3
  shift 3
  [ "$(cat "$prefix/.topolab-fingerprint" 2>/dev/null)" = "$fingerprint" ] && return 0
  mkdir -p "$(dirname "$prefix")" || return 1
  (
    exec 9>>"$prefix.lock" || exit 1
    if ! flock -n 9; then
      printf 'setup: another setup is building %s into %s: waiting for it\n' "$what" "$prefix" >&2
      flock 9
      if [ "$(cat "$prefix/.topolab-fingerprint" 2>/dev/null)" = "$fingerprint" ]; then
        printf 'setup: reusing the %s the other setup built in %s\n' "$what" "$prefix" >&2
        exit 0
      fi
    fi
    "$@"
  )
}

# simgrid_build_once PREFIX FINGERPRINT COMMAND...: build_once for SimGrid.
simgrid_build_once() {
  build_once SimGrid "$@"
}

# needs_no_simgrid ARG...: true when the arguments only ask for help or a listing (-h, --help or --list before
# any `--`): such a command answers from the Python environment alone, without setting up or building SimGrid.
needs_no_simgrid() {
  local arg
  for arg in "$@"; do
    case "$arg" in
      --) return 1 ;;
      -h | --help | --list) return 0 ;;
    esac
  done
  return 1
}

# python_environment REPO: make sure the clone has its Python environment (scripts/setup --python when missing).
python_environment() {
  [ -x "$1/.venv/bin/python" ] || "$1/scripts/setup" --python >&2
}

# cmake_progress LABEL: read a CMake build's output and show its progress on stderr, from cmake's own "[ 42%]"
# (Makefiles) or "[12/58]" (Ninja) lines: one line updated in place on a terminal, else a line at each quarter (logs
# stay short). Used by scripts/setup (SimGrid) and scripts/build (the apps).
cmake_progress() {
  local label="$1" line pct quarter=0
  while IFS= read -r line; do
    if [[ $line =~ ^\[\ *([0-9]+)%\] ]]; then
      pct=${BASH_REMATCH[1]}
    elif [[ $line =~ ^\[([0-9]+)/([0-9]+)\] ]]; then
      pct=$((100 * BASH_REMATCH[1] / BASH_REMATCH[2]))
    else
      continue
    fi
    if [ -t 2 ]; then
      printf '\r%s %3d%%' "$label" "$pct" >&2
    elif ((pct / 25 > quarter)); then
      quarter=$((pct / 25))
      printf '%s %d%%\n' "$label" "$pct" >&2
    fi
  done
  if [ -t 2 ]; then printf '\n' >&2; fi
}
