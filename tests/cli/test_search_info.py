"""``nexo plugin search`` and ``info`` against the loopback GitHub: the search asks for the
nexo-plugin topic with install's token rules; ``info`` shows a release's targets, checksums
and verified signer, and installs nothing."""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path

import pytest
from support.cli import nexo
from support.github_server import GitHubServer
from support.private_sigstore import PrivateSigstore
from support.tarballs import (
    asset_name,
    plugin_tarball,
    release_assets,
    sidecar_line,
    tree_snapshot,
)

IDENTITY = "https://github.com/acme/hello/.github/workflows/release.yml@refs/tags/v1.0.0"

# `nexo plugin ...` in this process: these runs need no process of their own.
plugin = partial(nexo, "plugin", in_process=True)


def test_search_asks_for_the_topic_with_the_token(
    home: Path, server: GitHubServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    server.add_repository("acme/nexo-plugin-weather", "Weather forecasts for agents")
    server.add_repository("acme/weather-station", "Not a plugin", topics=("iot",))
    server.add_repository("other/slack", "Slack channel plugin")
    monkeypatch.setenv("NEXO_GITHUB_TOKEN", "ghp_" + "a" * 36)
    result = plugin("search", "weather", "--json")
    assert result.code == 0, result.stderr
    document = json.loads(result.stdout)
    assert [r["full_name"] for r in document["repositories"]] == ["acme/nexo-plugin-weather"]
    (request,) = server.requests_to("/search/repositories")
    assert "topic%3Anexo-plugin" in request.path or "topic:nexo-plugin" in request.path
    assert request.headers["authorization"] == "Bearer ghp_" + "a" * 36
    result = plugin("search", "weather")
    assert result.stdout.startswith("acme/nexo-plugin-weather")
    result = plugin("search", "nothing-like-this")
    assert result.code == 0
    assert "No plugin repository matches" in result.stderr


def test_search_failures_are_one_line(home: Path, server: GitHubServer, tmp_path: Path) -> None:
    before = tree_snapshot(tmp_path)
    server.fail(status=500, times=None)
    result = plugin("search", "weather", "--json")
    assert result.code == 1
    assert json.loads(result.stdout)["kind"] == "network"
    assert "Traceback" not in result.stderr
    result = plugin("search", " ", "--json")
    assert result.code == 2
    assert json.loads(result.stdout)["kind"] == "usage"
    assert tree_snapshot(tmp_path) == before  # no NEXO_HOME, no cache made


def test_info_shows_targets_and_the_verified_signer(
    home: Path, server: GitHubServer, tmp_path: Path
) -> None:
    private_sigstore = PrivateSigstore.create()
    assets = release_assets("hello", "1.0.0")
    musl = "x86_64-unknown-linux-musl"
    other = plugin_tarball("hello", "1.0.0")
    assets[asset_name("hello", "1.0.0", musl)] = other
    assets[asset_name("hello", "1.0.0", musl) + ".sha256"] = sidecar_line(
        other, asset_name("hello", "1.0.0", musl)
    ).encode()
    name = asset_name("hello", "1.0.0")
    bundle = private_sigstore.sign(assets[name], identity=IDENTITY)
    assets[name + ".sigstore.json"] = json.dumps(bundle).encode()
    server.publish("acme", "hello", "v1.0.0", assets)
    private_sigstore.write_trusted_root(tmp_path / "root.json")
    policy = tmp_path / "trusted_keys.toml"
    policy.write_text(
        'schema_version = "1.0"\ndefault = "require"\ntrusted_root = "root.json"\n\n'
        '[[authors]]\nowner = "acme"\nidentity_regexp = '
        "'^https://github\\.com/acme/hello/\\.github/workflows/release\\.yml@refs/tags/v.*$'\n"
    )
    result = plugin(
        "info", "acme/hello", "--trusted-keys", str(policy), "--target", "noarch", "--json"
    )
    assert result.code == 0, result.stderr
    document = json.loads(result.stdout)
    assert (document["id"], document["version"], document["tag"]) == ("hello", "1.0.0", "v1.0.0")
    assert sorted(entry["target"] for entry in document["targets"]) == sorted([musl, "noarch"])
    assert document["signature"]["status"] == "verified"
    assert document["signature"]["identity"] == IDENTITY
    assert document["min_nexo_version"] == ">=0.1.0"
    assert document["asset"] == name
    assert not (home / "state" / "plugins").exists()


def test_info_refuses_what_install_refuses(
    home: Path, server: GitHubServer, tmp_path: Path
) -> None:
    assets = release_assets("hello", "1.0.0")
    name = asset_name("hello", "1.0.0")
    assets[name + ".sha256"] = sidecar_line(b"other bytes", name).encode()
    server.publish("acme", "hello", "v1.0.0", assets)
    before = tree_snapshot(tmp_path)
    result = plugin("info", "acme/hello", "--json")
    assert result.code == 1
    assert json.loads(result.stdout)["kind"] == "checksum_mismatch"
    assert result.error_line.endswith(" [checksum_mismatch]"), result.stderr
    assert "Traceback" not in result.stderr
    # The refused tarball is not kept in the download cache, and nothing else is written
    # (the cache's empty directories and lock file aside).
    after = tree_snapshot(tmp_path)
    assert {path: after[path] for path in before} == before
    assert sorted(after.keys() - before.keys()) == [
        "home",
        "home/cache",
        "home/cache/blobs",
        "home/cache/blobs/.lock",
        "home/cache/blobs/sha256",
        "home/cache/blobs/tmp",
    ]


def test_info_real_process_text(home: Path, server: GitHubServer) -> None:
    server.publish("acme", "hello", "v1.0.0", release_assets("hello", "1.0.0"))
    done = nexo("plugin", "info", "acme/hello", timeout=60)
    assert done.code == 0, done.stderr
    assert "Plugin:     hello 1.0.0" in done.stdout
    # The verdict once: "(verified)" follows a signer's identity, and there is none here.
    assert "Signer:     unsigned" in done.stdout.splitlines()
    assert "Vendored:   - (the tarball carries no SBOM)" in done.stdout


def test_info_lists_the_vendored_packages_of_the_tarball_sbom(
    home: Path, server: GitHubServer
) -> None:
    from support.tarballs import file, plugin_members, targz

    from nexo_pkg.sbom.cyclonedx import PluginSbom, write_sbom
    from nexo_pkg.sbom.inventory import Package

    packages = (
        Package("urllib3", "2.2.1", "", ("MIT",), True),
        Package("idna", "3.20", "", ("BSD-3-Clause",), True),
    )
    sbom = write_sbom(PluginSbom("hello", "1.0.0", "noarch", packages, files_sha256="0" * 64))
    name = asset_name("hello", "1.0.0")
    data = targz([*plugin_members("hello", "1.0.0"), file("sbom.cdx.json", sbom)])
    server.publish(
        "acme", "hello", "v1.0.0", {name: data, name + ".sha256": sidecar_line(data, name).encode()}
    )
    result = plugin("info", "acme/hello", "--json")
    assert result.code == 0, result.stderr
    assert json.loads(result.stdout)["vendored"] == [
        {"name": "idna", "version": "3.20", "purl": "pkg:pypi/idna@3.20"},
        {"name": "urllib3", "version": "2.2.1", "purl": "pkg:pypi/urllib3@2.2.1"},
    ]
    text = plugin("info", "acme/hello")
    assert "Vendored:   idna 3.20, urllib3 2.2.1" in text.stdout
