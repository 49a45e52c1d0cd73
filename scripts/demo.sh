#!/usr/bin/env bash
# End-to-end demo on a fresh machine: scaffold a Python plugin, pack it reproducibly, install
# the tarball offline, and run the handshake conformance checks against the installed copy.
#
# Needs python3 (>= 3.11) and network access to the package index for the two setup steps
# (the virtualenv and the nexoai wheel); everything after them runs offline.
#
# The demo runs in a home of its own (HOME and NEXO_HOME in a temporary directory, removed at
# the end): it never reads your ~/.nexo (configuration, trust policy) nor leaves anything in
# its cache. DEMO_NO_SETUP=1 skips the setup steps and uses the `nexo` on PATH, with the
# wheelhouse PIP_FIND_LINKS names.
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$PWD"

step() { printf '\n==> %s\n' "$*" >&2; }

if [ -z "${DEMO_NO_SETUP:-}" ]; then
  python=${PYTHON:-python3}
  if [ ! -x .venv/bin/python ]; then
    step "create .venv"
    "$python" -m venv .venv
  fi
  step "pip install -e ."
  .venv/bin/python -m pip install --quiet --disable-pip-version-check -e .

  # pack vendors requirements.txt (nexoai) with pip; fetch the wheel once so the demo itself
  # runs with no index at all.
  step "pip download nexoai into .cache/wheelhouse"
  .venv/bin/python -m pip download --quiet --disable-pip-version-check --no-deps \
    --dest .cache/wheelhouse 'nexoai>=0.4'

  export PATH="$repo/.venv/bin:$PATH"
  export PIP_FIND_LINKS="$repo/.cache/wheelhouse"
fi
export PIP_NO_INDEX=1
export PIP_DISABLE_PIP_VERSION_CHECK=1

work="$(mktemp -d "${TMPDIR:-/tmp}/nexo-demo.XXXXXX")"
trap 'rm -rf "$work"' EXIT
cd "$work"

# A home of its own: nothing of the user's ~/.nexo is read or written.
mkdir -p "$work/home"
export HOME="$work/home"
export NEXO_HOME="$work/home/.nexo"
export XDG_CACHE_HOME="$work/home/.cache"
unset NEXO_CONFIG_DIR
step "home: $HOME (NEXO_HOME=$NEXO_HOME)"

step "nexo plugin new demo --lang python"
nexo plugin new demo --lang python
cd demo

step "nexo plugin lint (finds plugin.toml)"
nexo plugin lint

step "nexo plugin pack"
nexo plugin pack
ls -l dist

step "sha256sum -c"
(cd dist && sha256sum -c demo-0.1.0-noarch.tar.gz.sha256)

step "nexo plugin pack again: same bytes"
first="$(cut -d' ' -f1 dist/demo-0.1.0-noarch.tar.gz.sha256)"
nexo plugin pack 2>/dev/null
second="$(cut -d' ' -f1 dist/demo-0.1.0-noarch.tar.gz.sha256)"
[ "$first" = "$second" ] && echo "identical: $first"

step "nexo plugin install dist/demo-0.1.0-noarch.tar.gz --dest $work/plugins --yes"
nexo plugin install dist/demo-0.1.0-noarch.tar.gz --dest "$work/plugins" --yes

step "nexo plugin check $work/plugins/demo-0.1.0"
nexo plugin check "$work/plugins/demo-0.1.0"

step "done"
