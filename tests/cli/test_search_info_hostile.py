"""``nexo plugin search`` and ``info`` against malformed and hostile GitHub answers, from the
outside: every answer is one document or one line, never a traceback."""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from support.cli import TRACEBACK, nexo
from support.github_server import GitHubServer
from support.tarballs import asset_name, plugin_tarball, release_assets, sidecar_line

# `nexo plugin ...` in this process: these runs need no process of their own.
plugin = partial(nexo, "plugin", in_process=True)


def _repository(**fields: Any) -> dict[str, Any]:
    return {"topics": ["nexo-plugin"], "description": "weather", **fields}


@pytest.mark.parametrize("name", [None, 7, ["acme/weather"], {"x": 1}])
def test_search_leaves_out_an_entry_without_a_repository_name(
    home: Path, server: GitHubServer, name: object
) -> None:
    server.repositories.append(_repository(full_name=name, stargazers_count=3))
    server.repositories.append(_repository(full_name="acme/weather", stargazers_count=3))
    for args in ((), ("--json",)):
        result = plugin("search", "weather", *args)
        assert result.code == 0, result.stderr
        assert TRACEBACK not in result.stderr
        assert "unexpected" not in result.stderr
    assert result.document["repositories"] == [
        _repository(full_name="acme/weather", stargazers_count=3)
    ]
    text = plugin("search", "weather")
    assert text.stdout.splitlines() == [f"{'acme/weather':<40} {'3':>6}  weather"]


def test_search_shows_only_fields_of_the_type_github_gives(
    home: Path, server: GitHubServer
) -> None:
    server.repositories.append(
        _repository(full_name="acme/weather", stargazers_count="\x1b[2J", description={"a": 1})
    )
    result = plugin("search", "weather")
    assert result.code == 0, result.stderr
    assert result.stdout == f"{'acme/weather':<40} {'-':>6}  \n"


def test_search_escapes_terminal_sequences_in_names_and_descriptions(
    home: Path, server: GitHubServer
) -> None:
    server.repositories.append(
        _repository(
            full_name="acme/\x1b[31mred\u202e",
            description="weather \x1b]0;title\x07 \u009b31m \u2066x",
            stargazers_count=1,
        )
    )
    result = plugin("search", "weather")
    assert result.code == 0, result.stderr
    for raw in ("\x1b", "\x07", "\u009b", "\u202e", "\u2066"):
        assert raw not in result.stdout
    assert "\\u001b[31mred\\u202e" in result.stdout
    document = plugin("search", "weather", "--json")
    assert not any(raw in document.stdout for raw in ("\x1b", "\u009b", "\u202e"))
    assert json.loads(document.stdout)["repositories"][0]["full_name"] == "acme/\x1b[31mred\u202e"


def test_info_on_an_unsigned_release_says_an_install_would_take_it_unverified(
    home: Path, server: GitHubServer
) -> None:
    """``info`` installs nothing: its warning says what an install would do, and the
    signature is ``unsigned``, never verified."""
    server.publish("acme", "hello", "v1.0.0", release_assets("hello", "1.0.0"))
    result = plugin("info", "acme/hello", "--json")
    assert result.code == 0, result.stderr
    assert result.document["signature"]["status"] == "unsigned"
    (warning,) = result.document["warnings"]
    assert "NOT SIGNED; an install would take it unverified" in warning
    assert "installing" not in warning
    text = plugin("info", "acme/hello")
    assert "Signer:     unsigned" in text.stdout
    assert "verified" not in text.stdout
    assert "an install would take it unverified" in text.stderr
    assert not (home / "state" / "plugins").exists()


def test_info_on_a_release_with_no_assets_is_asset_not_found(
    home: Path, server: GitHubServer
) -> None:
    server.publish("acme", "empty", "v1.0.0", {})
    result = plugin("info", "acme/empty", "--json")
    assert result.code == 1
    assert result.document["kind"] == "asset_not_found"
    assert result.document["available"] == []
    assert TRACEBACK not in result.stderr


@pytest.mark.parametrize("status", [400, 403, 422])
def test_a_refusal_says_what_github_said(home: Path, server: GitHubServer, status: int) -> None:
    """GitHub explains a refused search (``Validation Failed`` for a query it cannot run):
    the error line carries its message."""
    server.fail(status=status, times=None)
    result = plugin("search", "weather", "--json")
    assert result.code == 1
    document = result.document
    assert document["kind"] == "network"
    assert document["http_status"] == status
    assert document["error"] == f"the repository search: HTTP {status}: Server Error"
    info = plugin("info", "acme/hello", "--json")
    assert info.code == 1
    assert info.document["error"].endswith(f"HTTP {status}: Server Error")


def test_a_search_on_an_api_base_without_search_says_so(home: Path, server: GitHubServer) -> None:
    base = server.url + "/not-an-api"
    result = plugin("search", "weather", "--github-api-url", base, "--json")
    assert result.code == 1
    assert result.document["kind"] == "network"
    assert result.document["http_status"] == 404
    assert f"the API at {base} has no repository search" in result.document["error"]


@pytest.mark.parametrize(
    ("variables", "sent"),
    [
        ({"NEXO_GITHUB_TOKEN": "ghp_nexo", "GH_ENTERPRISE_TOKEN": "ghp_ent"}, "ghp_nexo"),
        ({"GH_ENTERPRISE_TOKEN": "ghp_ent", "GITHUB_ENTERPRISE_TOKEN": "ghp_ent2"}, "ghp_ent"),
        ({"GITHUB_ENTERPRISE_TOKEN": "ghp_ent2"}, "ghp_ent2"),
        # GITHUB_TOKEN, then GH_TOKEN, for the chosen API base; gh's enterprise ones first.
        ({"GITHUB_TOKEN": "ghp_dotcom", "GH_TOKEN": "ghp_dotcom2"}, "ghp_dotcom"),
        ({"GH_TOKEN": "ghp_dotcom2", "GITHUB_ENTERPRISE_TOKEN": "ghp_ent2"}, "ghp_ent2"),
        ({}, None),
    ],
)
def test_search_sends_the_token_install_would_send(
    home: Path,
    server: GitHubServer,
    monkeypatch: pytest.MonkeyPatch,
    variables: dict[str, str],
    sent: str | None,
) -> None:
    monkeypatch.setenv("GH_CONFIG_DIR", str(home.parent / "no-gh-login"))
    for name in ("GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    assert plugin("search", "weather").code == 0
    (request,) = server.requests_to("/search/repositories")
    assert request.headers.get("authorization") == (None if sent is None else f"Bearer {sent}")


def test_info_shows_min_nexo_version_from_the_tarball_when_no_manifest_asset_says_it(
    home: Path, server: GitHubServer, tmp_path: Path
) -> None:
    """A local tarball, or a release shipping no manifest asset, still has the manifest the
    daemon reads: its ``min_nexo_version`` is shown, not ``null``."""
    name = asset_name("hello", "1.0.0")
    data = plugin_tarball("hello", "1.0.0")
    sidecar = sidecar_line(data, name).encode()
    server.publish("acme", "hello", "v1.0.0", {name: data, name + ".sha256": sidecar})
    local = tmp_path / "dist" / name
    local.parent.mkdir()
    local.write_bytes(data)
    (tmp_path / "dist" / (name + ".sha256")).write_bytes(sidecar)
    for source in ("acme/hello", str(local)):
        result = plugin("info", source, "--json")
        assert result.code == 0, result.stderr
        assert result.document["min_nexo_version"] == ">=0.1.0"
        text = plugin("info", source)
        assert "min_nexo:   >=0.1.0" in text.stdout
