"""Releases, receipts and configuration read as the reference tools read them (real CLI).

The reference is lordmacu/nexo-rs: ``crates/ext-installer/src/lib.rs`` (052ee4a2;
``resolve_release_with_contract``) and ``extract_contract.rs`` (the typed manifest parse),
``src/plugin_admin.rs`` and ``crates/config`` (eec3f33) for ``discovery.yaml``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.github_server import GitHubServer
from support.tarballs import manifest_text, release_assets, tree_snapshot

CLEARED = ("NEXO_GITHUB_TOKEN", "GITHUB_TOKEN", "GH_TOKEN", "GITHUB_API_URL", "NEXO_INSTALL_TARGET")


@pytest.fixture
def server() -> Iterator[GitHubServer]:
    with GitHubServer() as running:
        yield running


@pytest.fixture
def env(tmp_path: Path, server: GitHubServer) -> dict[str, str]:
    """An isolated NEXO_HOME pointing at the loopback GitHub."""
    environment = {key: value for key, value in os.environ.items() if key not in CLEARED}
    environment.update(
        NEXO_HOME=str(tmp_path / "home"),
        NEXO_GITHUB_API_BASE=server.url,
        NEXO_HTTP_RETRY_BASE_MS="1",
        NO_PROXY="127.0.0.1",
        GH_CONFIG_DIR=str(tmp_path / "gh"),
    )
    return environment


def nexo(env: dict[str, str], *args: str, cwd: Path | None = None) -> tuple[int, Any, str]:
    """Exit code, the parsed ``--json`` document (or stdout) and stderr of one CLI run."""
    completed = subprocess.run(
        [sys.executable, "-m", "nexo_pkg", "plugin", *args],
        capture_output=True, text=True, check=False, env=env, timeout=120, cwd=cwd,
        stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert "Traceback" not in completed.stderr, completed.stderr
    try:
        document: Any = json.loads(completed.stdout)
    except json.JSONDecodeError:
        document = completed.stdout
    return completed.returncode, document, completed.stderr


def plugins_dir(env: dict[str, str]) -> Path:
    return Path(env["NEXO_HOME"]) / "state" / "plugins"


# --- the release's manifest asset is a manifest -----------------------------------------------


@pytest.mark.parametrize(
    ("edit", "needle"),
    [
        (lambda text: "colour = 1\n" + text, "colour"),
        (lambda text: text.replace('version = "1.0.0"', 'version = "1.0"'), "version"),
        (lambda text: text.replace('version = "1.0.0"', 'version = "v1.0.0"'), "version"),
        (lambda text: text + "\n[plugin.bogus]\nx = 1\n", "bogus"),
    ],
    ids=["unknown-root-key", "two-part-version", "v-version", "unknown-table"],
)
def test_a_manifest_asset_the_reference_cannot_parse_refuses_the_release(
    env: dict[str, str], server: GitHubServer, edit: Any, needle: str
) -> None:
    """extract_contract.rs / lib.rs@052ee4a2 `resolve_release_with_contract`: the
    `nexo-plugin.toml` asset goes through `contract.parse_manifest`, a typed
    `toml::from_str::<PluginManifest>` (deny_unknown_fields, `version: semver::Version`); a
    failure is `ReleaseShape`, so the reference installs nothing from that release."""
    assets = release_assets("hello", "1.0.0")
    assets["nexo-plugin.toml"] = edit(manifest_text("hello", "1.0.0")).encode()
    server.publish("acme", "hello", "v1.0.0", assets)
    code, document, _ = nexo(env, "install", "acme/hello", "--json")
    assert code == 1
    assert document["kind"] == "manifest_invalid"
    assert "nexo-plugin.toml" in document["error"]
    assert needle in document["error"]
    assert tree_snapshot(plugins_dir(env)) == {}


def test_a_plugin_toml_asset_is_still_accepted(env: dict[str, str], server: GitHubServer) -> None:
    """Beyond the reference (it reads only `nexo-plugin.toml`): a release whose manifest asset
    is `plugin.toml` installs, its manifest judged the same way."""
    assets = release_assets("hello", "1.0.0", manifest_asset=False)
    assets["plugin.toml"] = manifest_text("hello", "1.0.0").encode()
    server.publish("acme", "hello", "v1.0.0", assets)
    code, document, stderr = nexo(env, "install", "acme/hello", "--json")
    assert code == 0, stderr
    assert document["version"] == "1.0.0"
