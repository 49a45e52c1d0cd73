"""The operator's everyday commands, failing, through the installed ``nexo`` console script:
``search`` and ``info`` behind a spent GitHub rate limit or with GitHub out of reach,
``rollback`` of a kept version that changed, ``enable``/``disable`` on a discovery file the
daemon cannot load, ``outdated``/``doctor`` with a daemon version that is none. Each prints one
``error: MESSAGE [KIND]`` line whose KIND is the ``kind`` of the ``--json`` document the same
command line prints, both runs exit alike, and nothing is written."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest
from support.cli import clean_env, console, fails_alike
from support.github_server import GitHubServer
from support.tarballs import asset_name, release_assets, tree_snapshot

RESET = 1_900_000_000
RESET_AT = "2030-03-17T17:46:40Z"


@pytest.fixture
def env(tmp_path: Path, server: GitHubServer) -> dict[str, str]:
    """No token, no gh login; NEXO_HOME under tmp_path; GitHub's API on the stand-in."""
    return clean_env(
        NEXO_HOME=str(tmp_path / "home"),
        HOME=str(tmp_path),
        NEXO_GITHUB_API_BASE=server.url,
        NEXO_HTTP_RETRY_BASE_MS="1",
        NO_PROXY="127.0.0.1",
    )


@pytest.mark.parametrize("status", [403, 429])
@pytest.mark.parametrize(
    ("args", "what"),
    [
        (("search", "weather"), "the repository search"),
        (("info", "acme/hello"), "latest release of acme/hello"),
    ],
)
def test_a_spent_rate_limit_is_rate_limited_with_its_reset_and_the_token_variables(
    env: dict[str, str],
    tmp_path: Path,
    server: GitHubServer,
    *,
    status: int,
    args: tuple[str, ...],
    what: str,
) -> None:
    """SPEC §5 step 1 for ``search`` and ``info`` (issue: "the same token and host rules as
    install"): a 403/429 rate-limit answer is ``rate_limited`` naming the reset time and the
    token variables, never a generic network failure; nothing is installed."""
    server.publish("acme", "hello", "v1.0.0", release_assets("hello", "1.0.0"))
    server.rate_limit(status=status, reset=RESET, times=None)
    line = fails_alike(env, tmp_path, "rate_limited", 1, *args)
    assert f"GitHub API rate limit exceeded ({what}); it resets at {RESET_AT}." in line
    assert "Set NEXO_GITHUB_TOKEN, " in line
    assert "GITHUB_TOKEN or GH_TOKEN" in line
    document = json.loads(console(env, tmp_path, *args, "--json").stdout)
    assert (document["status"], document["reset_at"]) == (status, RESET_AT)
    assert not (tmp_path / "home" / "state" / "plugins").exists()


@pytest.mark.parametrize(
    ("args", "what"),
    [(("search", "weather"), "the repository search"), (("info", "acme/hello"), "acme/hello")],
)
def test_github_out_of_reach_is_network_in_words(
    env: dict[str, str], tmp_path: Path, args: tuple[str, ...], what: str
) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {**env, "NEXO_GITHUB_API_BASE": f"http://127.0.0.1:{port}"}
    line = fails_alike(env, tmp_path, "network", 1, *args)
    assert what in line
    assert f"cannot connect to '127.0.0.1:{port}'" in line
    assert not (tmp_path / "home" / "state" / "plugins").exists()


@pytest.fixture
def installed(env: dict[str, str], tmp_path: Path, server: GitHubServer) -> Path:
    """hello 1.0.0 installed from the stand-in, 1.1.0 released since (each manifest asks for
    ``min_nexo_version = ">=0.1.0"``); returns the plugin root."""
    server.publish("acme", "hello", "v1.0.0", release_assets("hello", "1.0.0"))
    assert console(env, tmp_path, "install", "acme/hello", "--yes").returncode == 0
    server.publish("acme", "hello", "v1.1.0", release_assets("hello", "1.1.0"))
    return tmp_path / "home" / "state" / "plugins"


@pytest.fixture
def upgraded(env: dict[str, str], tmp_path: Path, installed: Path) -> Path:
    """:func:`installed`, then upgraded to 1.1.0 (1.0.0 kept for rollback)."""
    done = console(env, tmp_path, "upgrade", "hello", "--yes")
    assert done.returncode == 0, done.stderr
    return installed


@pytest.mark.parametrize("given", ["flag", "environment"])
def test_an_upgrade_the_daemon_cannot_load_is_incompatible_before_any_download(
    env: dict[str, str], tmp_path: Path, server: GitHubServer, installed: Path, given: str
) -> None:
    """Point 3: the daemon's version (``--nexo-version`` or ``NEXO_DAEMON_VERSION``) against
    the release's manifest asset, before any tarball is fetched: ``incompatible``, naming the
    requirement, the version and where it was read, and the command that would go ahead."""
    if given == "flag":
        args: tuple[str, ...] = ("upgrade", "hello", "--yes", "--nexo-version", "0.0.1")
        source = "--nexo-version"
    else:
        env = {**env, "NEXO_DAEMON_VERSION": "0.0.1"}
        args = ("upgrade", "hello", "--yes")
        source = "NEXO_DAEMON_VERSION"
    (newer,) = [r for r in server.releases[("acme", "hello")] if r.tag == "v1.1.0"]
    tarball = server.asset_api_url(newer, asset_name("hello", "1.1.0")).removeprefix(server.url)
    before = tree_snapshot(installed)
    server.requests.clear()
    line = fails_alike(env, tmp_path, "incompatible", 1, *args)
    assert (
        "hello 1.1.0 (acme/hello@v1.1.0) needs a daemon matching min_nexo_version `>=0.1.0`; "
        f"the daemon is 0.0.1 ({source})."
    ) in line
    assert "`nexo plugin install acme/hello@v1.1.0 --force`" in line
    document = json.loads(console(env, tmp_path, *args, "--json").stdout)
    assert (document["nexo_version"], document["nexo_version_source"]) == ("0.0.1", source)
    assert tree_snapshot(installed) == before
    asked = [request.path for request in server.requests]
    assert asked, "the release was never asked for"
    assert tarball not in asked
    # Without the daemon's version, the same upgrade fetches that tarball.
    assert (
        console(env | {"NEXO_DAEMON_VERSION": ""}, tmp_path, "upgrade", "hello", "--yes").returncode
        == 0
    )
    assert tarball in [request.path for request in server.requests]


def test_rollback_of_a_changed_kept_version_changes_nothing(
    env: dict[str, str], tmp_path: Path, server: GitHubServer, upgraded: Path
) -> None:
    """Point 5: the kept tree is re-verified against its receipt before it goes back; a
    changed one is refused (``checksum_mismatch`` naming the file), offline, and both
    versions stay where they were."""
    (kept,) = (upgraded / ".nexo" / "kept").glob("hello-1.0.0-*/tree")
    (kept / "nexo-plugin.toml").write_text("changed\n")
    before = tree_snapshot(upgraded)
    server.requests.clear()
    line = fails_alike(env, tmp_path, "checksum_mismatch", 1, "rollback", "hello", "--yes")
    assert "the kept hello 1.0.0 no longer matches its receipt (nexo-plugin.toml)" in line
    assert tree_snapshot(upgraded) == before
    assert server.requests == []


@pytest.mark.parametrize("command", ["enable", "disable"])
def test_enable_disable_on_a_file_the_daemon_cannot_load_write_nothing(
    env: dict[str, str], tmp_path: Path, upgraded: Path, command: str
) -> None:
    discovery = tmp_path / "home" / "config" / "plugins" / "discovery.yaml"
    discovery.parent.mkdir(parents=True)
    text = b"# the operator's\ndiscovery:\n  disabled: [hello\n"
    discovery.write_bytes(text)
    line = fails_alike(env, tmp_path, "config", 2, command, "hello")
    assert str(discovery) in line
    assert discovery.read_bytes() == text
    assert sorted(path.name for path in discovery.parent.iterdir()) == ["discovery.yaml"]


@pytest.mark.parametrize(
    ("args", "kind", "code"),
    [
        (("outdated", "nope"), "not_installed", 1),
        (("rollback", "nope", "--yes"), "not_installed", 1),
        (("outdated", "--nexo-version", "soon"), "usage", 2),
        (("doctor", "--nexo-version", "soon"), "usage", 2),
    ],
)
def test_refusals_of_the_operator_commands_name_their_kind(
    env: dict[str, str],
    tmp_path: Path,
    server: GitHubServer,
    upgraded: Path,
    *,
    args: tuple[str, ...],
    kind: str,
    code: int,
) -> None:
    before = tree_snapshot(upgraded)
    server.requests.clear()
    fails_alike(env, tmp_path, kind, code, *args)
    assert tree_snapshot(upgraded) == before
    assert server.requests == []
