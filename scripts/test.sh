#!/usr/bin/env bash
# Set up a virtualenv, install nexo-pkg with its test extras, then run every check CI runs:
# ruff, ruff format, mypy (strict), the import contracts (lint-imports) and pytest. Extra
# arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."

# The fleet tests run a real OCI registry (CNCF distribution) with htpasswd auth, and copy
# artifacts with skopeo; the check tests run plugins inside bubblewrap, as the daemon does, on
# the system python3; the version model is tested against the Rust `semver` crate as Debian
# packages it (librust-semver-dev, built offline with the machine's cargo). On a fresh CI
# machine, as root, install them; elsewhere those tests skip when they are missing.
if [ "${CI:-}" = "true" ] && [ "$(id -u)" = "0" ] \
  && { ! command -v docker-registry >/dev/null || ! command -v htpasswd >/dev/null \
    || ! command -v skopeo >/dev/null || ! command -v bwrap >/dev/null \
    || [ ! -x /usr/bin/python3 ] || ! compgen -G '/usr/share/cargo/registry/semver-1.*' >/dev/null; }; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker-registry apache2-utils skopeo \
    bubblewrap python3 librust-semver-dev >/dev/null
  # The package starts its own service on :5000; the tests run their own registries.
  if command -v systemctl >/dev/null && systemctl is-active --quiet docker-registry 2>/dev/null; then
    systemctl stop docker-registry || true
  fi
fi

python=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$python" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e '.[test]'

# Tests vendor the real nexoai SDK with pip; fetch its wheel once here so the tests
# themselves stay on loopback (pip runs with --no-index against this directory).
.venv/bin/python -m pip download --quiet --disable-pip-version-check --no-deps \
  --dest .cache/wheelhouse 'nexoai>=0.4'
# The uv/pipx end-to-end test installs nexo-pkg itself offline: it needs every dependency,
# the build backend, and what pipx seeds its environments with.
.venv/bin/python -m pip download --quiet --disable-pip-version-check \
  --dest .cache/wheelhouse . 'setuptools>=77' wheel pip
export NEXO_TEST_WHEELHOUSE="$PWD/.cache/wheelhouse"

.venv/bin/ruff check .
.venv/bin/ruff format --check .
.venv/bin/mypy
# The floors of docs/architecture.md ([tool.importlinter] in pyproject.toml).
.venv/bin/lint-imports
# One pytest worker per core (pytest-xdist; NEXO_TEST_WORKERS=0 runs them in this process):
# most tests wait on the processes and servers they start.
.venv/bin/python -m pytest -n "${NEXO_TEST_WORKERS:-auto}" "$@"
# The author commands once more as Windows's CPython would run them (no O_NONBLOCK, killpg,
# SIGKILL, fcntl, dir_fd, ...): a new POSIX-only call on their path fails here.
mapfile -t author_tests < <(grep -v '^#' scripts/author-tests.txt)
.venv/bin/python -m pytest -q -n "${NEXO_TEST_WORKERS:-auto}" --windows-shim "${author_tests[@]}"
