#!/usr/bin/env bash
# A Python environment with the official `openai` client, for the test that drives
# `rein serve` with it. Lives in $REIN_PYTHON_ENV (default: the user cache's rein/venv).
# Does nothing when the pinned version is already there.
set -euo pipefail
version="3.57.0"
venv="${REIN_PYTHON_ENV:-${XDG_CACHE_HOME:-$HOME/.cache}/rein/venv}"
if "$venv/bin/python" -c "import openai, sys; sys.exit(openai.__version__ != '$version')" 2>/dev/null; then
  exit 0
fi
echo "rein setup: installing openai==$version into $venv" >&2
python3 -m venv "$venv"
"$venv/bin/python" -m pip install -q --disable-pip-version-check "openai==$version"
