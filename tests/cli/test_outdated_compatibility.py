"""``nexo plugin outdated`` with the daemon's version known (``--nexo-version``,
``NEXO_DAEMON_VERSION``): a newer release whose manifest asset's ``min_nexo_version``
excludes the daemon is not "outdated" — ``upgrade`` would not install it — but "needs nexo
REQ", read from that manifest asset alone (counted in the stand-in's request log); without
a daemon version the lookup stays one request per plugin."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from support.cli import nexo
from support.github_server import GitHubServer
from support.stand_in import use_stand_in
from support.tarballs import manifest_text, plugin_tarball, release_assets

FUTURE = manifest_text("hello", "2.0.0").replace(">=0.1.0", ">=9.0")


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, server: GitHubServer) -> Path:
    home = use_stand_in(monkeypatch, tmp_path, server)
    for plugin_id in ("hello", "world"):
        server.publish("acme", plugin_id, "v1.0.0", release_assets(plugin_id, "1.0.0"))
        assert nexo("plugin", "install", f"acme/{plugin_id}", in_process=True)[0] == 0
    # hello 2.0.0 needs a daemon >= 9.0; world 1.1.0 keeps >=0.1.0.
    data = plugin_tarball("hello", "2.0.0", manifest=FUTURE)
    assets = release_assets("hello", "2.0.0", data=data)
    assets["nexo-plugin.toml"] = FUTURE.encode()
    server.publish("acme", "hello", "v2.0.0", assets)
    server.publish("acme", "world", "v1.1.0", release_assets("world", "1.1.0"))
    server.requests.clear()
    return home


HEADER = f"{'ID':<24} {'INSTALLED':<12} {'LATEST':<12} {'STATUS':<23} SOURCE\n"
LATEST = [
    ("GET", "/repos/acme/hello/releases/latest"),
    ("GET", "/repos/acme/world/releases/latest"),
]
MANIFESTS = [
    ("GET", "/acme/hello/releases/download/v2.0.0/nexo-plugin.toml"),
    ("GET", "/acme/world/releases/download/v1.1.0/nexo-plugin.toml"),
]


def _requests(server: GitHubServer) -> list[tuple[str, str]]:
    found = sorted((r.method, r.path) for r in server.requests)
    server.requests.clear()
    return found


def test_a_newest_release_that_excludes_the_daemon_needs_nexo(
    home: Path, server: GitHubServer
) -> None:
    code, out, err = nexo("plugin", "outdated", "--nexo-version", "0.2.1", "--exit-code")
    assert (code, out) == (
        1,
        HEADER
        + f"{'hello':<24} {'1.0.0':<12} {'2.0.0':<12} {'needs nexo >=9.0':<23} acme/hello\n"
        + f"{'world':<24} {'1.0.0':<12} {'1.1.0':<12} {'outdated':<23} acme/world\n",
    )
    assert err == (
        "  hello: 2.0.0 needs a daemon matching min_nexo_version `>=9.0`; the daemon is 0.2.1 "
        "(--nexo-version): upgrade installs the newest older version that admits it if one is "
        "newer than 1.0.0, else refuses (incompatible)\n"
    )
    # Each newer release's manifest asset is read beside its release document: no tarball.
    assert _requests(server) == sorted(LATEST + MANIFESTS)
    # The run after: the release documents asked with their ETag, the manifests kept.
    code, again, _ = nexo("plugin", "outdated", "--nexo-version", "0.2.1")
    assert (code, again) == (0, out)
    assert all("if-none-match" in r.headers for r in server.requests)
    assert _requests(server) == LATEST

    # hello alone has nothing upgrade would install: --exit-code does not count it.
    code, out, _ = nexo("plugin", "outdated", "hello", "--nexo-version", "0.2.1", "--exit-code")
    assert (code, out.splitlines()[1].split()[3:6]) == (0, ["needs", "nexo", ">=9.0"])
    # What the line says upgrade does, it does.
    code, out, _ = nexo("plugin", "upgrade", "hello", "--nexo-version", "0.2.1", "--json")
    assert (code, json.loads(out)["kind"]) == (1, "incompatible")


def test_the_environment_names_the_daemon_and_the_json_is_the_same_whatever_the_jobs(
    home: Path, server: GitHubServer
) -> None:
    env = dict(os.environ, NEXO_DAEMON_VERSION="0.2.1")
    code, out, err = nexo("plugin", "outdated", "--json", "--jobs", "1", env=env)
    assert code == 0, err
    document = json.loads(out)
    assert document == {
        "ok": True,
        "outdated": True,
        "plugins": [
            {
                "id": "hello",
                "installed": "1.0.0",
                "latest": "2.0.0",
                "latest_tag": "v2.0.0",
                "source": "acme/hello",
                "status": "incompatible",
                "outdated": False,
                "path": str(home / "state" / "plugins" / "hello-1.0.0"),
                "min_nexo_version": ">=9.0",
                "nexo_version": "0.2.1",
                "nexo_version_source": "NEXO_DAEMON_VERSION",
            },
            {
                "id": "world",
                "installed": "1.0.0",
                "latest": "1.1.0",
                "latest_tag": "v1.1.0",
                "source": "acme/world",
                "status": "outdated",
                "outdated": True,
                "path": str(home / "state" / "plugins" / "world-1.0.0"),
            },
        ],
    }
    assert _requests(server) == sorted(LATEST + MANIFESTS)
    code, out, _ = nexo("plugin", "outdated", "--json", "--jobs", "4", env=env)
    assert (code, json.loads(out)) == (0, document)

    # A daemon the requirement admits: both are outdated.
    env["NEXO_DAEMON_VERSION"] = "9.1.0"
    code, out, _ = nexo("plugin", "outdated", "--json", env=env)
    statuses = [(p["id"], p["status"]) for p in json.loads(out)["plugins"]]
    assert (code, statuses) == (0, [("hello", "outdated"), ("world", "outdated")])

    # No daemon version: nothing compared, no manifest asked for, one request per plugin.
    del env["NEXO_DAEMON_VERSION"]
    server.requests.clear()
    code, out, _ = nexo("plugin", "outdated", "--json", env=env)
    statuses = [(p["id"], p["status"]) for p in json.loads(out)["plugins"]]
    assert (code, statuses) == (0, [("hello", "outdated"), ("world", "outdated")])
    assert _requests(server) == LATEST


def test_a_held_plugin_stays_held_and_a_bad_version_is_a_usage_error(
    home: Path, server: GitHubServer
) -> None:
    code, out, err = nexo("plugin", "outdated", "--nexo-version", "soon", "--json")
    document = json.loads(out)
    assert (code, document["ok"], document["kind"]) == (2, False, "usage"), err
    assert "--nexo-version 'soon' is not a version" in document["error"]
    assert _requests(server) == []

    assert nexo("plugin", "hold", "hello", in_process=True)[0] == 0
    code, out, err = nexo("plugin", "outdated", "hello", "--nexo-version", "0.2.1", "--json")
    (entry,) = json.loads(out)["plugins"]
    assert (code, entry["status"], "min_nexo_version" in entry) == (0, "held", False), err
