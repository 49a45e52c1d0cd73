"""What ``--timeout`` bounds, as each command's help says: ``info``, ``search`` and
``outdated`` hold all their requests to one deadline for the whole command, however many
requests (or plugins) there are; ``install`` and ``upgrade`` one per plugin; ``lock``,
``sync``, ``push``, ``mirror`` and ``trust add`` each request on its own. The runs answer
every request of a loopback GitHub slowly enough that the requests add up past the
deadline while each alone stays under it."""

from __future__ import annotations

import json
import re
import time
from functools import partial
from pathlib import Path

import pytest
from support.cli import nexo
from support.github_server import GitHubServer
from support.stand_in import use_stand_in
from support.tarballs import release_assets, tree_snapshot

WHOLE_COMMAND = "one deadline for the whole command"
PER_REQUEST = "Most one HTTP request may take, retries included"
PER_PLUGIN = "per plugin"
IDS = ["alpha", "bravo", "charlie", "delta"]
# A run cut off at the 2 s deadline has ended by then (a loaded machine given some leeway):
# well before what the slow answers add up to without one deadline.
SOON = 4.5

plugin = partial(nexo, "plugin", in_process=True)


@pytest.fixture
def wide(monkeypatch: pytest.MonkeyPatch) -> None:
    """No colour, and help wide enough that an option's text stays on one line."""
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("COLUMNS", "200")


def _timeout_help(*command: str) -> str:
    """The help of ``--timeout`` of ``nexo plugin COMMAND``, on one line."""
    result = plugin(*command, "--help")
    assert result.code == 0, result.stderr
    flat = re.sub(r"[\s│]+", " ", result.stdout)
    found = re.search(r"--timeout SECONDS (.*?)(?: --[a-z]|$)", flat)
    assert found, result.stdout
    return found.group(1)


@pytest.mark.usefixtures("wide")
@pytest.mark.parametrize("command", ["info", "search", "outdated"])
def test_the_help_of_a_command_with_one_deadline_says_so(command: str) -> None:
    text = _timeout_help(command)
    assert WHOLE_COMMAND in text, text
    assert PER_REQUEST not in text


@pytest.mark.usefixtures("wide")
@pytest.mark.parametrize("command", ["lock", "sync", "push", "mirror", "trust add"])
def test_the_help_of_a_command_bounding_each_request_says_so(command: str) -> None:
    text = _timeout_help(*command.split())
    assert PER_REQUEST in text, text
    assert WHOLE_COMMAND not in text


@pytest.mark.usefixtures("wide")
@pytest.mark.parametrize("command", ["install", "upgrade"])
def test_the_help_of_a_command_bounding_each_plugin_says_so(command: str) -> None:
    text = _timeout_help(command)
    assert PER_PLUGIN in text, text
    assert WHOLE_COMMAND not in text


@pytest.fixture
def stand_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, server: GitHubServer) -> Path:
    """The GitHub stand-in with a release of each of IDS; NEXO_HOME's plugin root. One
    ``info`` has run, so the time a run takes is its requests' (not first imports')."""
    home = use_stand_in(monkeypatch, tmp_path, server)
    for plugin_id in IDS:
        server.publish("acme", plugin_id, "v1.0.0", release_assets(plugin_id, "1.0.0"))
    assert plugin("info", f"acme/{IDS[-1]}@v1.0.0").code == 0
    server.requests.clear()
    return home / "state" / "plugins"


def _failed_at_the_deadline(document: dict[str, object]) -> None:
    assert document["kind"] == "network", document
    assert "2 s deadline for the whole command" in str(document["error"]), document


def test_info_ends_at_one_deadline_for_all_its_requests(
    stand_in: Path, server: GitHubServer, tmp_path: Path
) -> None:
    """info reads the release document twice (to check the asset, then for every target it
    ships); each answer takes 1.3 s, so each part alone would fit in 2 s, both together not."""
    before = tree_snapshot(tmp_path)
    server.slow(1.3, path_contains="/releases/tags/")
    started = time.monotonic()
    result = plugin("info", "acme/alpha@v1.0.0", "--timeout", "2", "--json")
    elapsed = time.monotonic() - started
    assert result.code == 1, result.stdout
    _failed_at_the_deadline(json.loads(result.stdout))
    assert 1.8 < elapsed < SOON
    assert len(server.requests_to("/releases/tags/")) == 2
    # Nothing installed, nothing cached (info is a dry run).
    assert tree_snapshot(tmp_path) == before


def test_info_in_time_shows_the_release(stand_in: Path, server: GitHubServer) -> None:
    server.slow(0.3, path_contains="/releases/tags/")
    result = plugin("info", "acme/alpha@v1.0.0", "--timeout", "2", "--json")
    assert result.code == 0, result.stderr
    assert json.loads(result.stdout)["version"] == "1.0.0"


def test_search_ends_at_the_deadline_with_its_retries(stand_in: Path, server: GitHubServer) -> None:
    """Every answer takes 0.8 s and is a 500: four attempts would take 3.2 s."""
    server.slow(0.8, path_contains="/search/")
    server.fail(500, times=None, path_contains="/search/")
    started = time.monotonic()
    result = plugin("search", "weather", "--timeout", "2", "--json")
    elapsed = time.monotonic() - started
    assert result.code == 1, result.stdout
    _failed_at_the_deadline(json.loads(result.stdout))
    assert 1.8 < elapsed < SOON
    assert len(server.requests_to("/search/")) >= 2  # retried within the deadline


def test_outdated_ends_at_one_deadline_for_every_plugin(
    stand_in: Path, server: GitHubServer
) -> None:
    """Four plugins looked up one at a time, each answer 1 s: the lookups together would take
    4 s; the command ends at the 2 s deadline and names each plugin it did not check."""
    for plugin_id in IDS:
        assert plugin("install", f"acme/{plugin_id}").code == 0
    before = tree_snapshot(stand_in)
    server.requests.clear()
    server.slow(1.0, path_contains="/releases/latest")
    started = time.monotonic()
    result = plugin("outdated", "--jobs", "1", "--timeout", "2", "--json")
    elapsed = time.monotonic() - started
    assert result.code == 1, result.stdout
    entries = json.loads(result.stdout)["plugins"]
    assert [entry["id"] for entry in entries] == IDS
    # At most two lookups of 1 s each fit in the 2 s: the others are cut off by it.
    failed = [entry for entry in entries if entry["status"] == "failed"]
    assert len(failed) >= 2, entries
    assert {entry["status"] for entry in entries} <= {"current", "failed"}, entries
    for entry in failed:
        _failed_at_the_deadline(entry["error"])
    assert 1.8 < elapsed < SOON
    assert tree_snapshot(stand_in) == before
