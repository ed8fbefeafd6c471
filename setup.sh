#!/usr/bin/env bash
# Sets up everything Sluice needs on a fresh machine: a virtual environment with the
# project and its test dependencies.  Safe to run again.
set -euo pipefail
cd "$(dirname "$0")"
PY=${PYTHON:-python3.11}
command -v "$PY" >/dev/null 2>&1 || PY=python3
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip >/dev/null 2>&1 || true
.venv/bin/python -m pip install --quiet -e '.[test]'
echo "setup done: .venv ready"
