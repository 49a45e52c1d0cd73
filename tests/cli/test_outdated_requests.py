"""How many requests ``nexo plugin outdated`` sends the GitHub stand-in: every request it
receives is counted (API documents, asset downloads by either URL, GraphQL), for a cold
cache and a warm one, without and with a token, with every plugin current and with every
plugin behind a newer release."""

from __future__ import annotations

import json
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
from nexo_pkg.sources.github import GitHubClient
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


def test_unauthenticated_newer_releases_are_judged_from_their_manifest(
    home: Path, server: GitHubServer
) -> None:
    """Every plugin behind a newer release: its manifest asset is the compatibility verdict
    (a manifest the daemon cannot read refuses the release), so a cold cache asks for it
    once beside the release document, from its browser download URL (outside the API's
    rate limit: one API request per plugin); from then on it comes from the blob cache by
    the digest the release lists, and the run sends one conditional request per plugin."""
    _publish_newer(server)
    _cold(home, server)
    cold, requests = _outdated(server)
    manifests = [f"/acme/{p}/releases/download/v1.1.0/nexo-plugin.toml" for p in IDS]
    assert [path for _, path in requests if path.startswith("/repos/")] == LATEST
    assert requests == sorted([("GET", path) for path in LATEST + manifests])
    assert set(_statuses(cold).values()) == {("outdated", "1.1.0")}
    warm, requests = _outdated(server)
    assert warm == cold
    assert requests == [("GET", path) for path in LATEST]
    # Where the browser download URL is refused, the API asset URL still serves it.
    server.fail(status=404, times=None, path_contains="/releases/download/")
    _cold(home, server)
    again, requests = _outdated(server)
    assert again == cold
    assert len([path for _, path in requests if "/releases/assets/" in path]) == len(IDS)


def test_with_a_token_one_graphql_request_and_the_newer_manifests(
    home: Path, server: GitHubServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With a token: one GraphQL request for every repository; current plugins need
    nothing more, cold or warm; newer releases add their manifest asset on a cold cache
    only."""
    monkeypatch.setenv("NEXO_GITHUB_TOKEN", "secret-token")
    _cold(home, server)
    cold, requests = _outdated(server)
    assert requests == [("POST", "/graphql")]
    assert set(_statuses(cold).values()) == {("current", "1.0.0")}
    assert _outdated(server) == (cold, [("POST", "/graphql")])
    _publish_newer(server)
    _cold(home, server)
    cold, requests = _outdated(server)
    manifests = [f"/acme/{p}/releases/download/v1.1.0/nexo-plugin.toml" for p in IDS]
    assert requests == sorted([("POST", "/graphql")] + [("GET", path) for path in manifests])
    assert set(_statuses(cold).values()) == {("outdated", "1.1.0")}
    assert _outdated(server) == (cold, [("POST", "/graphql")])


def test_the_verdict_on_a_newer_release_is_kept(home: Path, server: GitHubServer) -> None:
    """A newer release whose manifest asset the daemon cannot read is still refused by
    name, cold and warm; a release offering nothing newer is reported from its tarball
    names whatever its manifest asset says (nothing would be installed from it)."""
    broken = release_assets("alpha", "1.1.0")
    broken["nexo-plugin.toml"] = b"[plugin\nid = 'alpha'\n"
    server.publish("acme", "alpha", "v1.1.0", broken, digests=True)
    same = release_assets("bravo", "1.0.0")
    same["nexo-plugin.toml"] = manifest_text("bravo", "9.9.9").encode()
    server.publish("acme", "bravo", "v1.0.1-re", same, digests=True)
    _cold(home, server)
    for _ in range(2):
        document, _ = _outdated(server)
        statuses = _statuses(document)
        assert statuses["alpha"] == ("failed", None)
        assert statuses["bravo"] == ("current", "1.0.0")
        plugins = document["plugins"]
        assert isinstance(plugins, list)
        (alpha,) = [entry for entry in plugins if entry["id"] == "alpha"]
        assert alpha["error"]["kind"] == "manifest_invalid"


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


# (versions the tarball names ship, installed version, manifest asset read, version found)
SETTLING = [
    (("1.0.0",), "1.0.0", False, "1.0.0"),  # the same version: settled by its names
    (("0.9.0",), "1.0.0", False, "0.9.0"),  # older (ahead): settled by its names
    (("1.1.0",), "1.0.0", True, "1.1.0"),  # newer: the manifest is the verdict
    (("1.0.0", "1.1.0"), "1.0.0", True, "1.1.0"),  # several versions: the manifest says
    (("1.0.0",), "2024.1", True, "1.0.0"),  # an installed version outside semver
]


@pytest.mark.parametrize("case", SETTLING)
def test_which_releases_are_settled_by_their_tarball_names(
    server: GitHubServer, tmp_path: Path, case: tuple[tuple[str, ...], str, bool, str]
) -> None:
    """``read_identity`` with the installed version fetches the manifest asset only when
    the tarball names leave a newer version possible or do not settle the release; the
    identity is the one the manifest asset gives whenever it is read."""
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
