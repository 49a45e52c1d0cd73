"""The attestation from GitHub's own Sigstore instance (private repositories: an RFC 3161
timestamp, no transparency-log entry), which sigstore-python cannot load: refused in one
``signature_invalid`` line that says why, wherever it comes from (the attestations API, a
file beside a local tarball, ``trust verify`` with the instance's own trusted root), with
nothing installed."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from support.cli import CliResult, nexo
from support.github_server import GitHubServer, github_server
from support.shared_fixtures import skip_unless_present
from support.tarballs import tree_snapshot

from .helpers import SHARED_FIXTURES, cli_env

__all__ = ["github_server"]

ATTESTATIONS = SHARED_FIXTURES / "github-attestations"
ARTIFACT = "github_provenance_demo-0.0.12-py3-none-any.whl"
BUNDLES = "github_provenance_demo-0.0.12-py3-none-any-bundle.jsonl"
ASSET = "provenance-0.0.12-noarch.tar.gz"
POLICY = """\
schema_version = "1.0"
default = "require"
trusted_root = "{root}"

[[authors]]
owner = "github"
identity_regexp = '^https://github\\.com/github/.+$'
"""


def _policy(tmp_path: Path) -> Path:
    """A policy trusting the owner, with GitHub's instance as its trusted root."""
    policy = tmp_path / "trusted_keys.toml"
    policy.write_text(POLICY.format(root=ATTESTATIONS / "trusted_root.json"), encoding="utf-8")
    return policy


def _refused_in_one_line(result: CliResult, plugins: Path, before: dict[str, Any]) -> None:
    assert result.code == 1, result.stderr
    document = json.loads(result.stdout)
    assert document["kind"] == "signature_invalid", document
    assert "\n" not in document["error"]
    assert "no transparency-log entry" in document["error"]
    assert "RFC 3161" in document["error"]
    assert tree_snapshot(plugins) == before


@skip_unless_present("github-attestations")
def test_served_by_the_attestations_api_it_is_refused_with_its_reason(
    tmp_path: Path, github_server: GitHubServer
) -> None:
    data = (ATTESTATIONS / ARTIFACT).read_bytes()
    github_server.publish("github", "provenance-demo", "v0.0.12", {ASSET: data}, digests=True)
    bundles = [json.loads(line) for line in (ATTESTATIONS / BUNDLES).read_text().splitlines()]
    digest = hashlib.sha256(data).hexdigest()
    github_server.publish_attestations("github", "provenance-demo", digest, bundles)
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    before = tree_snapshot(plugins)
    result = nexo("plugin", "install", "github/provenance-demo@v0.0.12", "--yes", "--json",
                  "--dest", str(plugins), "--trusted-keys", str(_policy(tmp_path)),
                  env=cli_env(tmp_path, api=github_server.url), in_process=True)  # fmt: skip
    assert github_server.requests_to(f"/attestations/sha256:{digest}")
    _refused_in_one_line(result, plugins, before)


@pytest.mark.parametrize("name", [f"{ASSET}.intoto.jsonl", f"{ASSET}.sigstore.json"])
@skip_unless_present("github-attestations")
def test_beside_a_local_file_it_is_refused_with_its_reason(tmp_path: Path, name: str) -> None:
    dist = tmp_path / "dist"
    dist.mkdir()
    data = (ATTESTATIONS / ARTIFACT).read_bytes()
    tarball = dist / ASSET
    tarball.write_bytes(data)
    (dist / f"{ASSET}.sha256").write_text(f"{hashlib.sha256(data).hexdigest()}  {ASSET}\n")
    shutil.copy(ATTESTATIONS / BUNDLES, dist / name)
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    before = tree_snapshot(plugins)
    result = nexo("plugin", "install", str(tarball), "--yes", "--json", "--dest", str(plugins),
                  "--trusted-keys", str(_policy(tmp_path)), env=cli_env(tmp_path),
                  in_process=True)  # fmt: skip
    _refused_in_one_line(result, plugins, before)


@skip_unless_present("github-attestations")
def test_trust_verify_with_the_instances_own_root_says_why_in_json(tmp_path: Path) -> None:
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    before = tree_snapshot(plugins)
    result = nexo("plugin", "trust", "verify", str(ATTESTATIONS / ARTIFACT), "--bundle",
                  str(ATTESTATIONS / BUNDLES), "--trusted-keys", str(_policy(tmp_path)),
                  "--json", env=cli_env(tmp_path), in_process=True)  # fmt: skip
    _refused_in_one_line(result, plugins, before)
