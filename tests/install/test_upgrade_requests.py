"""What ``upgrade`` asks the GitHub stand-in: every request and every connection it
receives is counted on the server's side. A plugin whose newest release is the installed
version costs one request (its latest release, settled by the tarball names); a release of
any other version is judged whole, as ``install`` judges it (its manifest asset read by the
API asset URL and checked, compatibility, downgrade refusal, the payload check)."""

from __future__ import annotations

import json
import shutil
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
from support.cli import nexo
from support.github_server import GitHubServer
from support.stand_in import use_stand_in
from support.tarballs import manifest_text, release_assets, tree_snapshot

CLEARED = (
    "NEXO_GITHUB_TOKEN",
    "GITHUB_TOKEN",
    "GH_TOKEN",
    "GITHUB_API_URL",
    "NEXO_INSTALL_TARGET",
    "NEXO_DAEMON_VERSION",
)
IDS = ["alpha", "bravo", "charlie", "delta", "echo"]
LATEST = [f"/repos/acme/{plugin_id}/releases/latest" for plugin_id in IDS]


class Peers:
    """The client ends (address, port) of the connections the stand-in answered on."""

    def __init__(self, server: GitHubServer) -> None:
        self.seen: set[tuple[str, int]] = set()
        answer = server.handle

        def handle(handler: BaseHTTPRequestHandler) -> None:
            self.seen.add(handler.client_address[:2])
            answer(handler)

        server.handle = handle  # type: ignore[method-assign]


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, github_server: GitHubServer) -> Path:
    home = use_stand_in(monkeypatch, tmp_path, github_server, cleared=CLEARED)
    monkeypatch.setenv("GH_CONFIG_DIR", str(tmp_path / "gh-config"))
    for plugin_id in IDS:
        assets = release_assets(plugin_id, "1.0.0")
        github_server.publish("acme", plugin_id, "v1.0.0", assets, digests=True)
        assert nexo("plugin", "install", f"acme/{plugin_id}", "--yes", in_process=True)[0] == 0
    return home


def _cold(home: Path, server: GitHubServer) -> Peers:
    """No blob and no kept answer (a fresh machine, a CI job, `cache clean`); the requests
    and connections counted from here."""
    shutil.rmtree(home / "cache", ignore_errors=True)
    server.requests.clear()
    return Peers(server)


def _requests(server: GitHubServer) -> list[tuple[str, str]]:
    return sorted((r.method, r.path) for r in server.requests)


def _asset_path(server: GitHubServer, plugin_id: str, tag: str, name: str) -> str:
    release = next(r for r in server.releases[("acme", plugin_id)] if r.tag == tag)
    (asset,) = [a for a in release.assets if a.name == name]
    return f"/repos/acme/{plugin_id}/releases/assets/{asset.id}"


def _up_to_date(document: dict[str, object], plugin_id: str) -> None:
    assert document["ok"] is True
    assert (document["id"], document["version"], document["from_version"]) == (
        plugin_id,
        "1.0.0",
        "1.0.0",
    )
    assert (document["upgraded"], document["was_already_present"]) == (False, True)


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_upgrade_all_of_current_plugins_is_one_request_each(
    home: Path, github_server: GitHubServer, jobs: str
) -> None:
    """Unauthenticated, cold: five current plugins are five requests (their latest
    releases), over at most ``--jobs`` connections (the lookups'; an upgrade with nothing
    newer asks nothing more), and the same five the run after."""
    for _ in range(2):
        peers = _cold(home, github_server)
        code, out, err = nexo(
            "plugin", "upgrade", "--all", "--yes", "--jobs", jobs, "--json", in_process=True
        )
        assert code == 0, err
        documents = json.loads(out)["plugins"]
        for plugin_id, document in zip(IDS, documents, strict=True):
            _up_to_date(document, plugin_id)
        assert _requests(github_server) == [("GET", path) for path in LATEST]
        assert 1 <= len(peers.seen) <= int(jobs)


def test_upgrade_of_one_current_plugin_is_one_request(
    home: Path, github_server: GitHubServer
) -> None:
    """``upgrade ID`` of a plugin up to date: its latest release, nothing else, and the
    line it has always said."""
    peers = _cold(home, github_server)
    code, out, err = nexo("plugin", "upgrade", "bravo", in_process=True)
    assert (code, out, err) == (0, "", "bravo 1.0.0 is up to date.\n")
    assert _requests(github_server) == [("GET", "/repos/acme/bravo/releases/latest")]
    assert len(peers.seen) == 1
    _cold(home, github_server)
    code, out, _ = nexo("plugin", "upgrade", "bravo@v1.0.0", "--json", in_process=True)
    assert code == 0
    _up_to_date(json.loads(out), "bravo")
    assert _requests(github_server) == [("GET", "/repos/acme/bravo/releases/tags/v1.0.0")]


def test_with_a_token_current_plugins_are_the_graphql_request_alone(
    home: Path, github_server: GitHubServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With a token the lookups are one GraphQL request, and a current plugin's upgrade asks
    nothing more; the document is the one a run without a token prints."""
    _cold(home, github_server)
    code, out, _ = nexo("plugin", "upgrade", "--all", "--yes", "--json", in_process=True)
    assert code == 0
    without = json.loads(out)
    monkeypatch.setenv("NEXO_GITHUB_TOKEN", "secret-token")
    _cold(home, github_server)
    code, out, err = nexo("plugin", "upgrade", "--all", "--yes", "--json", in_process=True)
    assert code == 0, err
    assert json.loads(out) == without
    assert _requests(github_server) == [("POST", "/graphql")]
    _cold(home, github_server)
    code, out, _ = nexo("plugin", "upgrade", "alpha", "--json", in_process=True)
    assert code == 0
    _up_to_date(json.loads(out), "alpha")
    assert _requests(github_server) == [("GET", "/repos/acme/alpha/releases/latest")]


def test_a_newer_release_is_judged_by_its_manifest_asset(
    home: Path, github_server: GitHubServer
) -> None:
    """A plugin with a newer release is upgraded after its manifest asset is read by the API
    asset URL (the request log shows it); the current ones beside it cost one request
    each."""
    assets = release_assets("charlie", "1.1.0")
    github_server.publish("acme", "charlie", "v1.1.0", assets, digests=True)
    _cold(home, github_server)
    code, out, err = nexo("plugin", "upgrade", "--all", "--yes", "--jobs", "1", "--json",
                          in_process=True)  # fmt: skip
    assert code == 0, err
    documents = {d["id"]: d for d in json.loads(out)["plugins"]}
    assert (documents["charlie"]["upgraded"], documents["charlie"]["version"]) == (True, "1.1.0")
    manifest = _asset_path(github_server, "charlie", "v1.1.0", "nexo-plugin.toml")
    requests = _requests(github_server)
    assert ("GET", manifest) in requests
    assert requests.count(("GET", "/repos/acme/charlie/releases/latest")) == 1
    others = [r for r in requests if "/charlie/" not in r[1]]
    assert others == [("GET", path) for path in LATEST if "/charlie/" not in path]


# (version of the newer or other release, its manifest asset, extra flags, kind refused)
REFUSED = [
    ("1.1.0", "manifest_version = [\n", (), "manifest_invalid"),
    ("1.1.0", manifest_text("delta", "1.2.0"), (), "asset_not_found"),
    ("0.9.0", "manifest_version = [\n", (), "manifest_invalid"),
    ("0.9.0", manifest_text("delta", "0.9.0"), (), "downgrade_refused"),
    (
        "1.1.0",
        manifest_text("delta", "1.1.0").replace('">=0.1.0"', '">=9.0.0"'),
        ("--nexo-version", "1.0.0"),
        "incompatible",
    ),
]


@pytest.mark.parametrize("case", REFUSED, ids=[f"{c[0]}-{c[3]}" for c in REFUSED])
def test_another_version_is_refused_as_ever(
    home: Path, github_server: GitHubServer, case: tuple[str, str, tuple[str, ...], str]
) -> None:
    """A release of another version whose manifest asset is broken, names a version no
    tarball ships, is older, or excludes the daemon, is refused with the kind it always was
    (its manifest asset read first), and nothing under the plugins root changes."""
    version, manifest, flags, kind = case
    assets = release_assets("delta", version)
    assets["nexo-plugin.toml"] = manifest.encode()
    github_server.publish("acme", "delta", f"v{version}", assets, digests=True)
    dest = home / "state" / "plugins"
    before = tree_snapshot(dest)
    _cold(home, github_server)
    code, out, err = nexo("plugin", "upgrade", "delta", "--yes", "--json", *flags,
                          in_process=True)  # fmt: skip
    assert code == 1, err
    document = json.loads(out)
    assert (document["ok"], document["kind"]) == (False, kind)
    assert ("GET", _asset_path(github_server, "delta", f"v{version}", "nexo-plugin.toml")) in (
        _requests(github_server)
    )
    assert tree_snapshot(dest) == before


@pytest.mark.parametrize(
    "manifest", ["manifest_version = [\n", manifest_text("echo", "9.9.9")], ids=["broken", "lying"]
)
def test_a_current_release_is_up_to_date_whatever_its_manifest_asset_says(
    home: Path, github_server: GitHubServer, manifest: str
) -> None:
    """The latest release is the installed version by its tarball names, its manifest asset
    broken or naming a version no tarball ships: ``upgrade`` says up to date (nothing is
    installed), as ``outdated`` says it is current, without reading the asset."""
    assets = release_assets("echo", "1.0.0")
    assets["nexo-plugin.toml"] = manifest.encode()
    github_server.publish("acme", "echo", "v1.0.0-again", assets, digests=True)
    dest = home / "state" / "plugins"
    before = tree_snapshot(dest)
    _cold(home, github_server)
    code, out, err = nexo("plugin", "upgrade", "echo", "--json", in_process=True)
    assert code == 0, err
    _up_to_date(json.loads(out), "echo")
    assert _requests(github_server) == [("GET", "/repos/acme/echo/releases/latest")]
    assert tree_snapshot(dest) == before
    document = json.loads(nexo("plugin", "outdated", "echo", "--json", in_process=True)[1])
    assert document["plugins"][0]["status"] == "current"


# What the latest release's tarball names say, for echo 1.0.0 installed: (assets, kind).
LYING_NAMES = {
    # Another plugin at the installed version: never "up to date", whatever the names.
    "another-plugin": (release_assets("zulu", "1.0.0", manifest_asset=False), "asset_not_found"),
    "another-plugin-with-its-manifest": (release_assets("zulu", "1.0.0"), "asset_not_found"),
    # The installed version and a pre-release of it: not settled by the names, and the
    # manifest asset names a version (1.0.0-rc.1) older than the one installed.
    "two-versions": (
        {
            **release_assets("echo", "1.0.0", manifest_asset=False),
            **release_assets("echo", "1.0.0-rc.1"),
        },
        "downgrade_refused",
    ),
}


@pytest.mark.parametrize("case", list(LYING_NAMES))
def test_tarball_names_settle_nothing_but_the_installed_plugin_at_its_version(
    home: Path, github_server: GitHubServer, case: str
) -> None:
    """The names settle a release as current only when every tarball is the installed
    plugin at the installed version: names of another plugin are refused as a release of
    another plugin (as its manifest would be), names of several versions are judged by the
    manifest asset; ``outdated`` says the same; nothing under the plugins root changes."""
    assets, kind = LYING_NAMES[case]
    github_server.publish("acme", "echo", "v1.0.1", assets, digests=True)
    dest = home / "state" / "plugins"
    before = tree_snapshot(dest)
    _cold(home, github_server)
    code, out, err = nexo("plugin", "upgrade", "echo", "--yes", "--json", in_process=True)
    assert code == 1, (out, err)
    document = json.loads(out)
    assert (document["ok"], document["kind"]) == (False, kind), document
    assert tree_snapshot(dest) == before
    if kind == "asset_not_found":
        assert "is plugin 'zulu', not 'echo'" in document["error"]
        outdated = json.loads(nexo("plugin", "outdated", "echo", "--json", in_process=True)[1])
        assert outdated["plugins"][0]["status"] != "current", outdated
