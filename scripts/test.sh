#!/usr/bin/env bash
# Set up a virtualenv, install nexo-pkg with its test extras, then run every check CI runs:
# ruff, ruff format, mypy (strict) and pytest. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."

python=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$python" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e '.[test]'

# Tests vendor the real nexoai SDK with pip; fetch its wheel once here so the tests
# themselves stay on loopback (pip runs with --no-index against this directory).
.venv/bin/python -m pip download --quiet --disable-pip-version-check --no-deps \
  --dest .cache/wheelhouse 'nexoai>=0.4'
export NEXO_TEST_WHEELHOUSE="$PWD/.cache/wheelhouse"

.venv/bin/ruff check .
.venv/bin/ruff format --check .
.venv/bin/mypy
.venv/bin/python -m pytest "$@"
