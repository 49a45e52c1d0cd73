"""GitHub's rate limits as ``outdated`` and ``upgrade --all`` meet them with a token: GraphQL's
own answer to a spent limit (HTTP 200, ``errors[].type`` ``RATE_LIMITED``: github/docs#22607),
the REST API asked instead, and the one line said when REST's limit is spent as well, which
names the token's limit rather than asking for a token. Every run goes through the real
command line against the loopback GitHub stand-in."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.cli import nexo
from support.github_server import GitHubServer
from support.stand_in import use_stand_in
from support.tarballs import release_assets

CLEARED = (
    "NEXO_GITHUB_TOKEN",
    "GITHUB_TOKEN",
    "GH_TOKEN",
    "GH_ENTERPRISE_TOKEN",
    "GITHUB_ENTERPRISE_TOKEN",
    "GITHUB_API_URL",
    "NEXO_INSTALL_TARGET",
)
IDS = ["alpha", "bravo"]
RESET = 1_900_000_000
RESET_AT = "2030-03-17T17:46:40Z"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, server: GitHubServer) -> Path:
    """Two plugins installed at 1.0.0 from the stand-in, each with a newer 1.1.0 released."""
    home = use_stand_in(monkeypatch, tmp_path, server, cleared=CLEARED)
    for plugin_id in IDS:
        server.publish("acme", plugin_id, "v1.0.0", release_assets(plugin_id, "1.0.0"))
        assert nexo("plugin", "install", f"acme/{plugin_id}", in_process=True).code == 0
    for plugin_id in IDS:
        server.publish("acme", plugin_id, "v1.1.0", release_assets(plugin_id, "1.1.0"))
    server.requests.clear()
    return home


def _asked(server: GitHubServer) -> list[tuple[str, str]]:
    # In the order asked: GraphQL first, then the lookups (side by side: sorted).
    asked = [(r.method, r.path) for r in server.requests if "/download/" not in r.path]
    asked = [each for each in asked if each[0] == "POST"] + sorted(
        each for each in asked if each[0] != "POST"
    )
    server.requests.clear()
    return asked


@pytest.mark.parametrize("error_type", ["RATE_LIMITED", "RATE_LIMIT"])
def test_outdated_asks_rest_when_graphql_says_its_limit_is_spent(
    home: Path, server: GitHubServer, monkeypatch: pytest.MonkeyPatch, error_type: str
) -> None:
    """GraphQL's spent limit is no failure: the REST API, whose limit is separate, answers
    each plugin, the report is the one GraphQL would have given, and ``--verbose`` says why
    REST was asked, with when GraphQL's limit resets (nothing is said without it)."""
    del home
    monkeypatch.setenv("NEXO_GITHUB_TOKEN", "secret-token")
    answered = nexo("plugin", "outdated", "--json", in_process=True)
    assert answered.code == 0, answered.stderr
    assert _asked(server) == [("POST", "/graphql")]

    server.graphql_rate_limit(error_type=error_type, reset=RESET, times=None)
    limited = nexo("plugin", "outdated", "--json", in_process=True)
    assert (limited.code, limited.document) == (0, answered.document)
    assert _asked(server) == [
        ("POST", "/graphql"),
        *(("GET", f"/repos/acme/{plugin_id}/releases/latest") for plugin_id in IDS),
    ]
    assert "GraphQL" not in limited.stderr

    # --verbose logging belongs to a process of its own.
    verbose = nexo("plugin", "outdated", "-v")
    assert verbose.code == 0, verbose.stderr
    (said,) = [line for line in verbose.stderr.splitlines() if "GraphQL" in line]
    assert "rate limit is spent" in said
    assert f"it resets at {RESET_AT}" in said
    assert "asking the REST API for each repository instead" in said
    quiet = nexo("plugin", "outdated")
    assert quiet.code == 0
    assert "GraphQL" not in quiet.stderr


@pytest.mark.parametrize("command", [("outdated",), ("upgrade", "--all", "--yes")])
@pytest.mark.parametrize("variable", ["NEXO_GITHUB_TOKEN", "GH_ENTERPRISE_TOKEN"])
def test_a_spent_token_limit_says_whose_limit_and_when(
    home: Path,
    server: GitHubServer,
    monkeypatch: pytest.MonkeyPatch,
    command: tuple[str, ...],
    variable: str,
) -> None:
    """GraphQL and then REST say the limit is spent: one ``rate_limited`` line with the reset
    time, saying that the limit of the token (and the variable it came from) is spent; it
    does not ask for a token to be set, one is. Nothing is installed."""
    del home
    monkeypatch.setenv(variable, "secret-token")
    server.graphql_rate_limit(reset=RESET, times=None)
    server.rate_limit(status=403, reset=RESET, times=None, path_contains="/repos/")
    result = nexo("plugin", *command, in_process=True)
    assert result.code == 1, result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("error")]
    assert len(errors) == 1, result.stderr
    (line,) = errors
    assert line.startswith("error: GitHub API rate limit exceeded (")
    assert line.endswith(" [rate_limited]")
    assert f"the limit of the token from {variable} is spent; it resets at {RESET_AT}" in line
    assert "Set " not in line
    assert "higher limit" not in line
    document = nexo("plugin", *command, "--json", in_process=True).document
    assert document["ok"] is False
    # outdated's entries carry their error as an object, upgrade's as the failure's fields.
    kinds = {entry.get("kind") or entry["error"]["kind"] for entry in document["plugins"]}
    assert kinds == {"rate_limited"}
    listed = nexo("plugin", "list", "--json", in_process=True).document
    assert {entry["version"] for entry in listed["plugins"]} == {"1.0.0"}


def test_without_a_token_the_message_names_the_variables(home: Path, server: GitHubServer) -> None:
    """No token: the rate-limit line names the reset time and the variables a token would go
    in (SPEC §5, step 1)."""
    del home
    server.rate_limit(status=403, reset=RESET, times=None)
    result = nexo("plugin", "outdated", in_process=True)
    assert result.code == 1
    (line,) = [line for line in result.stderr.splitlines() if line.startswith("error")]
    assert f"it resets at {RESET_AT}. Set NEXO_GITHUB_TOKEN, " in line
    assert "to a token for a higher limit" in line
