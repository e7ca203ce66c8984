#!/usr/bin/env bash
# Create (or reuse) .venv with Python 3.13+ and install a2a-trio into it.
# Usage: scripts/venv.sh [extra]   e.g. scripts/venv.sh dev
set -euo pipefail
cd "$(dirname "$0")/.."
extra="${1:-}"

find_python() {
  for candidate in python3.13 python3.14 python3; do
    if command -v "$candidate" >/dev/null 2>&1 &&
       "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 13))' 2>/dev/null; then
      command -v "$candidate"; return
    fi
  done
  # pyenv installs (this project's machines have 3.13.0 there)
  for candidate in "$(pyenv root 2>/dev/null || echo "$HOME/.pyenv")"/versions/3.1[3-9]*/bin/python3; do
    [ -x "$candidate" ] && { echo "$candidate"; return; }
  done
  echo "a2a-trio needs Python 3.13 or newer (quart-trio requires it); none found" >&2
  exit 1
}

if [ ! -x .venv/bin/python ]; then
  PYENV_VERSION="${PYENV_VERSION:-3.13.0}" "$(PYENV_VERSION=${PYENV_VERSION:-3.13.0} find_python)" -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip
if [ -n "$extra" ]; then
  .venv/bin/python -m pip install -q -e ".[$extra]"
else
  .venv/bin/python -m pip install -q -e .
fi
