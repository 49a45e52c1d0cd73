"""How many requests ``nexo plugin outdated`` sends the GitHub stand-in: every request it
receives is counted (API documents, asset downloads by either URL, GraphQL), for a cold
cache and a warm one, without and with a token, with every plugin current and with every
plugin behind a newer release."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import socket
from pathlib import Path
from typing import Any

import pytest
from support.cli import nexo
from support.github_server import GitHubServer
from support.stand_in import use_stand_in
from support.tarballs import manifest_text, release_assets

from nexo_pkg.install.manifest_check import manifest_asset_problem
from nexo_pkg.sources.cache import BlobCache
from nexo_pkg.sources.github import GitHubClient, _assets
from nexo_pkg.sources.releases import read_identity

CLEARED = ("NEXO_GITHUB_TOKEN", "GITHUB_TOKEN", "GH_TOKEN", "GITHUB_API_URL", "NEXO_INSTALL_TARGET")
IDS = ["alpha", "bravo", "charlie", "delta", "echo"]
LATEST = [f"/repos/acme/{plugin_id}/releases/latest" for plugin_id in IDS]


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, server: GitHubServer) -> Path:
    home = use_stand_in(monkeypatch, tmp_path, server, cleared=CLEARED)
    for plugin_id in IDS:
        assets = release_assets(plugin_id, "1.0.0")
        server.publish("acme", plugin_id, "v1.0.0", assets, digests=True)
        assert nexo("plugin", "install", f"acme/{plugin_id}", in_process=True)[0] == 0
    return home


def _cold(home: Path, server: GitHubServer) -> None:
    """No blob and no kept answer: what a fresh machine or a CI job starts from."""
    shutil.rmtree(home / "cache", ignore_errors=True)
    server.requests.clear()


def _outdated(server: GitHubServer) -> tuple[dict[str, object], list[tuple[str, str]]]:
    code, out, err = nexo("plugin", "outdated", "--json", in_process=True)
    assert code in (0, 1), err
    assert "Traceback" not in err
    requests = sorted((r.method, r.path) for r in server.requests)
    server.requests.clear()
    return json.loads(out), requests


def _publish_newer(server: GitHubServer) -> None:
    for plugin_id in IDS:
        assets = release_assets(plugin_id, "1.1.0")
        server.publish("acme", plugin_id, "v1.1.0", assets, digests=True)


def _statuses(document: dict[str, object]) -> dict[str, tuple[str, str | None]]:
    plugins = document["plugins"]
    assert isinstance(plugins, list)
    return {entry["id"]: (entry["status"], entry["latest"]) for entry in plugins}


def test_unauthenticated_current_plugins_take_one_request_each(
    home: Path, server: GitHubServer
) -> None:
    """Cold: one release document per plugin and nothing else (a release offering nothing
    newer is settled by its tarball names); warm: the same requests, each conditional, each
    answered 304; the same document both times."""
    _cold(home, server)
    cold, requests = _outdated(server)
    assert requests == [("GET", path) for path in LATEST]
    assert set(_statuses(cold).values()) == {("current", "1.0.0")}
    code, out, _ = nexo("plugin", "outdated", "--json", in_process=True)
    assert (code, json.loads(out)) == (0, cold)
    assert sorted(r.path for r in server.requests) == LATEST
    assert all(r.headers.get("if-none-match") for r in server.requests)


def test_unauthenticated_newer_releases_take_one_request_each(
    home: Path, server: GitHubServer
) -> None:
    """Every plugin behind a newer release whose tarball names carry one version: that
    version is the answer, read from the names alone, so a cold cache sends one request per
    plugin (the release document) and the run after the same requests, each conditional;
    no manifest asset is fetched, by either URL."""
    _publish_newer(server)
    _cold(home, server)
    cold, requests = _outdated(server)
    assert requests == [("GET", path) for path in LATEST]
    assert set(_statuses(cold).values()) == {("outdated", "1.1.0")}
    warm, requests = _outdated(server)
    assert warm == cold
    assert requests == [("GET", path) for path in LATEST]
    code, out, _ = nexo("plugin", "outdated", "--json", in_process=True)
    assert (code, json.loads(out)) == (0, cold)
    assert sorted(r.path for r in server.requests) == LATEST
    assert all(r.headers.get("if-none-match") for r in server.requests)


def test_with_a_token_one_graphql_request_whatever_the_releases(
    home: Path, server: GitHubServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With a token: one GraphQL request for every repository and nothing more, cold or
    warm, current or behind a newer release; the document is the one a run without a token
    prints."""
    monkeypatch.setenv("NEXO_GITHUB_TOKEN", "secret-token")
    _cold(home, server)
    cold, requests = _outdated(server)
    assert requests == [("POST", "/graphql")]
    assert set(_statuses(cold).values()) == {("current", "1.0.0")}
    assert _outdated(server) == (cold, [("POST", "/graphql")])
    _publish_newer(server)
    _cold(home, server)
    cold, requests = _outdated(server)
    assert requests == [("POST", "/graphql")]
    assert set(_statuses(cold).values()) == {("outdated", "1.1.0")}
    assert _outdated(server) == (cold, [("POST", "/graphql")])
    monkeypatch.delenv("NEXO_GITHUB_TOKEN")
    assert _outdated(server)[0] == cold


def test_a_manifest_the_daemon_cannot_read_is_refused_by_the_upgrade(
    home: Path, server: GitHubServer
) -> None:
    """``outdated`` reports a release from its tarball names whatever its manifest asset
    says (nothing is installed from it); ``upgrade`` reads and checks the manifest asset as
    ever and refuses the release, leaving the installed version in place."""
    broken = release_assets("alpha", "1.1.0")
    broken["nexo-plugin.toml"] = b"[plugin\nid = 'alpha'\n"
    server.publish("acme", "alpha", "v1.1.0", broken, digests=True)
    same = release_assets("bravo", "1.0.0")
    same["nexo-plugin.toml"] = manifest_text("bravo", "9.9.9").encode()
    server.publish("acme", "bravo", "v1.0.1-re", same, digests=True)
    _cold(home, server)
    for _ in range(2):
        document, requests = _outdated(server)
        statuses = _statuses(document)
        assert statuses["alpha"] == ("outdated", "1.1.0")
        assert statuses["bravo"] == ("current", "1.0.0")
        assert not [path for _, path in requests if "nexo-plugin.toml" in path]
    code, out, err = nexo("plugin", "upgrade", "alpha", "--json", in_process=True)
    assert code != 0, out
    assert json.loads(out)["kind"] == "manifest_invalid", out
    assert "Traceback" not in err
    listed = json.loads(nexo("plugin", "list", "--json", in_process=True)[1])
    assert {(p["id"], p["version"]) for p in listed["plugins"]} >= {("alpha", "1.0.0")}


def _several_versions(server: GitHubServer, plugin_id: str, manifest_version: str) -> None:
    """A release of ``plugin_id`` whose tarball names carry 1.0.0 and 1.1.0 (so only its
    manifest asset says which it is), the manifest asset listed without a digest."""
    assets = {
        **release_assets(plugin_id, "1.0.0", manifest_asset=False),
        **release_assets(plugin_id, "1.1.0", manifest_asset=False),
        "nexo-plugin.toml": manifest_text(plugin_id, manifest_version).encode(),
    }
    digests = {
        name: None if name.endswith(".toml") else _digest(data) for name, data in assets.items()
    }
    server.publish("acme", plugin_id, "v1.1.0", assets, digests=digests)


def _digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _kept_entries(home: Path, holding: bytes = b"[plugin]") -> list[Path]:
    """The kept answers whose text holds ``holding`` (a manifest asset's)."""
    answers = home / "cache" / "blobs" / "answers"
    return sorted(path for path in answers.iterdir() if holding in path.read_bytes())


MANIFEST = "/acme/alpha/releases/download/v1.1.0/nexo-plugin.toml"


def test_a_manifest_asset_without_digest_is_kept_by_what_names_it(
    home: Path, server: GitHubServer
) -> None:
    """A release whose tarball names carry several versions is judged from its manifest
    asset, which the release lists without a digest (so the blob cache cannot hold it): a
    cold run fetches it once, from its browser download URL; the run after sends only the
    conditional release documents, the manifest coming from the kept answers (mode 0600)."""
    _several_versions(server, "alpha", "1.1.0")
    _cold(home, server)
    cold, requests = _outdated(server)
    assert requests == sorted([("GET", path) for path in [*LATEST, MANIFEST]])
    assert _statuses(cold)["alpha"] == ("outdated", "1.1.0")
    (entry,) = _kept_entries(home)
    assert entry.stat().st_mode & 0o777 == 0o600
    code, out, _ = nexo("plugin", "outdated", "--json", in_process=True)
    assert (code, json.loads(out)) == (0, cold)
    assert sorted(r.path for r in server.requests) == LATEST
    assert all(r.headers.get("if-none-match") for r in server.requests)


def test_a_changed_manifest_asset_is_never_served_stale(home: Path, server: GitHubServer) -> None:
    """The kept manifest asset is used again only while the release lists the same asset
    (id, size, last change) and its bytes still hash to what was kept: an asset uploaded
    again is read again; an entry edited on disk, group-writable or another account's is
    no entry (the asset is fetched, the answer the same)."""
    _several_versions(server, "alpha", "1.1.0")
    _cold(home, server)
    first, _ = _outdated(server)
    assert _statuses(first)["alpha"] == ("outdated", "1.1.0")
    # The same bytes, the entry edited: its hash no longer matches.
    (entry,) = _kept_entries(home)
    entry.write_bytes(entry.read_bytes().replace(b"1.1.0", b"1.0.0"))
    document, requests = _outdated(server)
    assert (document, requests.count(("GET", MANIFEST))) == (first, 1)
    # Replaced, saying 1.0.0 this time: another size and time of change, as GitHub lists
    # an asset uploaded again.
    release = server.releases[("acme", "alpha")][-1]
    (asset,) = [a for a in release.assets if a.name == "nexo-plugin.toml"]
    asset.data = manifest_text("alpha", "1.0.0").encode() + b"# again\n"
    asset.updated_at = "2026-02-01T00:00:00Z"
    document, requests = _outdated(server)
    assert requests.count(("GET", MANIFEST)) == 1
    assert _statuses(document)["alpha"] == ("current", "1.0.0")
    document, requests = _outdated(server)
    assert (requests.count(("GET", MANIFEST)), _statuses(document)["alpha"]) == (
        0,
        ("current", "1.0.0"),
    )
    (entry,) = _kept_entries(home, b"# again")
    entry.chmod(0o620)
    assert _outdated(server)[1].count(("GET", MANIFEST)) == 1
    if os.geteuid() == 0:
        (entry,) = _kept_entries(home, b"# again")
        os.chown(entry, 4242, 4242)
        assert _outdated(server)[1].count(("GET", MANIFEST)) == 1


def test_conditional_requests_keep_the_connection(
    home: Path, server: GitHubServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 304 (no body) and a 404 are read to their end, so one lookup after another goes
    over the same kept-alive connection: one TCP connection for a run of ``--jobs 1``, cold
    (200 answers) and warm (304 answers) alike, and with a repository gone (404)."""
    opened: list[object] = []
    connect = socket.create_connection

    def counting(*args: Any, **kwargs: Any) -> socket.socket:
        opened.append(args[0])
        return connect(*args, **kwargs)

    monkeypatch.setattr(socket, "create_connection", counting)
    _cold(home, server)
    for _ in range(2):
        opened.clear()
        code, _, err = nexo("plugin", "outdated", "--jobs", "1", "--json", in_process=True)
        assert code == 0, err
        assert len(opened) == 1
    del server.releases[("acme", "bravo")]
    opened.clear()
    code, out, _ = nexo("plugin", "outdated", "--jobs", "1", "--json", in_process=True)
    assert code == 1
    assert _statuses(json.loads(out))["bravo"] == ("failed", None)
    assert len(opened) == 1


@pytest.mark.parametrize("jobs", [1, 2])
def test_concurrent_lookups_keep_their_connections(
    home: Path, server: GitHubServer, monkeypatch: pytest.MonkeyPatch, jobs: int
) -> None:
    """``outdated`` and ``upgrade --all``'s lookups go ``--jobs`` at a time, each over a
    kept-alive connection to the API: never a connection per plugin (five plugins here), cold
    and warm alike, one request per plugin."""
    opened: list[object] = []
    connect = socket.create_connection

    def counting(*args: Any, **kwargs: Any) -> socket.socket:
        opened.append(args[0])
        return connect(*args, **kwargs)

    monkeypatch.setattr(socket, "create_connection", counting)
    _cold(home, server)
    # The upgrade reads the manifest assets of current releases (once; cached from there on,
    # as an install leaves them): its second run is the lookups alone.
    nexo("plugin", "upgrade", "--all", "--yes", in_process=True)
    commands = (["outdated", "--json"], ["outdated", "--json"], ["upgrade", "--all", "--yes"])
    for command in commands:
        server.requests.clear()
        opened.clear()
        code, _, err = nexo("plugin", *command, "--jobs", str(jobs), in_process=True)
        assert code == 0, err
        assert 1 <= len(opened) <= jobs, command
        assert sorted(request.path for request in server.requests) == LATEST, command


# (versions the tarball names ship, installed version, manifest asset read, version found)
SETTLING = [
    (("1.0.0",), "1.0.0", False, "1.0.0"),  # the same version: settled by its names
    (("0.9.0",), "1.0.0", False, "0.9.0"),  # older (ahead): settled by its names
    (("1.1.0",), "1.0.0", False, "1.1.0"),  # newer: settled by its names as well
    (("1.0.0", "1.1.0"), "1.0.0", True, "1.1.0"),  # several versions: the manifest says
    (("1.0.0",), "2024.1", False, "1.0.0"),  # an installed version outside semver
]


@pytest.mark.parametrize("case", SETTLING)
def test_which_releases_are_settled_by_their_tarball_names(
    server: GitHubServer, tmp_path: Path, case: tuple[tuple[str, ...], str, bool, str]
) -> None:
    """``read_identity`` with the installed version fetches the manifest asset only when
    the tarball names do not settle the release (several versions or plugins), newer or
    not; the identity is the one the manifest asset gives whenever it is read."""
    shipped, installed, manifest_read, version = case
    assets: dict[str, bytes] = {}
    for each in shipped:
        assets.update(release_assets("hello", each, manifest_asset=False))
    assets["nexo-plugin.toml"] = manifest_text("hello", shipped[-1]).encode()
    server.publish("acme", "hello", "v" + shipped[-1], assets, digests=True)
    with GitHubClient(server.url, blobs=BlobCache(tmp_path / "home")) as client:
        release = client.get_release("acme", "hello", None)
        server.requests.clear()
        identity, manifest = read_identity(
            client, release, manifest_asset_problem, installed=installed
        )
    assert (identity.plugin_id, identity.version) == ("hello", version)
    assert (manifest is not None) is manifest_read
    assert bool(server.requests) is manifest_read


def test_with_a_token_the_manifest_asset_is_kept_alike(
    home: Path, server: GitHubServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With a token the latest releases come from GraphQL, whose assets carry their node id
    and time of change: the manifest asset of a release its tarball names do not settle is
    fetched once, then kept; the document is the one a run without a token prints."""
    monkeypatch.setenv("NEXO_GITHUB_TOKEN", "secret-token")
    _several_versions(server, "alpha", "1.1.0")
    _cold(home, server)
    cold, requests = _outdated(server)
    assert requests == [("GET", MANIFEST), ("POST", "/graphql")]
    assert _statuses(cold)["alpha"] == ("outdated", "1.1.0")
    assert _outdated(server) == (cold, [("POST", "/graphql")])
    monkeypatch.delenv("NEXO_GITHUB_TOKEN")
    assert _outdated(server)[0] == cold


def test_an_asset_without_id_or_time_of_change_is_not_kept() -> None:
    """What names an asset's bytes needs its id and its time of change; without either the
    asset is never kept (fetched whenever it is read), and no field runs into the next."""
    listed = [
        {"name": "a", "id": 7, "size": 3, "updated_at": "2026-01-01T00:00:00Z", "url": "u\nv"},
        {"name": "b", "id": 8, "size": 3},
        {"name": "c", "size": 3, "updated_at": "2026-01-01T00:00:00Z"},
        {"name": "d", "id": True, "size": 3, "updated_at": "2026-01-01T00:00:00Z"},
    ]
    a, b, c, d = _assets(listed, "url", "browser_download_url")
    assert json.loads(a.identity() or "null") == [
        "asset", "u\nv", "", "7", 3, "2026-01-01T00:00:00Z"
    ]  # fmt: skip
    assert (b.identity(), c.identity(), d.identity()) == (None, None, None)
