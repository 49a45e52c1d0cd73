"""NX148 on real manifests: a sandbox path this host lacks is one bwrap cannot mount.

The daemon builds its bwrap argv with ``--ro-bind P P`` for every ``fs_read_paths`` entry and
``--bind P P`` for every ``fs_write_paths`` entry (``build_bwrap_args`` in
``crates/core/src/agent/plugin_sandbox.rs``, lordmacu/nexo-rs 9de9b39), and bwrap refuses a
source that does not exist, so the daemon accepts such a manifest and then cannot spawn the
plugin. The first-party browser plugin lists four alternative browser binaries; no host has
all four.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from support.lint_cli import run_lint_json
from support.shared_fixtures import shared_files, shared_fixture, skip_unless_present

REAL = ("daemon-parity", "real-manifests")
BROWSER = "nexo-plugin-browser__nexo-plugin.toml__idx0e0f3215.toml"
pytestmark = skip_unless_present(*REAL, BROWSER)

BROWSERS = (
    "/usr/bin/chromium",
    "/usr/bin/chromium-browser",
    "/usr/bin/google-chrome",
    "/usr/bin/google-chrome-stable",
)


def sandbox_paths(manifest: Path) -> list[str]:
    """The allowlist entries lint looks up: enabled sandbox, absolute, no ``${state_dir}`` (a
    relative entry is an error of its own, NX144)."""
    with manifest.open("rb") as handle:
        data = tomllib.load(handle)
    plugin = data.get("plugin", {})
    sandbox = plugin.get("sandbox", {}) if isinstance(plugin, dict) else {}
    if not isinstance(sandbox, dict) or sandbox.get("enabled") is not True:
        return []
    return [
        entry
        for key in ("fs_read_paths", "fs_write_paths")
        for entry in sandbox.get(key, [])
        if isinstance(entry, str) and entry.startswith("/") and "${state_dir}" not in entry
    ]


def nx148(manifests: list[Path]) -> dict[str, list[str]]:
    code, report = run_lint_json(manifests)
    assert code in (0, 1), report
    return {
        file["path"]: [d["key_path"] for d in file["diagnostics"] if d["code"] == "NX148"]
        for file in report["files"]
    }


def test_the_browser_plugin_warns_for_each_browser_this_host_lacks() -> None:
    manifest = shared_fixture(*REAL, BROWSER)
    found = nx148([manifest])[str(manifest)]
    missing = [index for index, path in enumerate(BROWSERS) if not Path(path).exists()]
    # No host has all four, so at least one warning always fires.
    assert missing
    assert found == [f"plugin.sandbox.fs_read_paths[{index}]" for index in missing]


def test_no_real_manifest_whose_sandbox_paths_all_exist_draws_it() -> None:
    manifests = shared_files("*.toml", *REAL)
    assert manifests
    found = nx148(manifests)
    for manifest in manifests:
        expected_missing = [path for path in sandbox_paths(manifest) if not Path(path).exists()]
        assert bool(found[str(manifest)]) == bool(expected_missing), manifest.name
        assert len(found[str(manifest)]) == len(expected_missing), manifest.name
