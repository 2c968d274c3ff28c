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
