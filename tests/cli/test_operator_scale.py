"""The operator commands run over many plugins, as their users see them: ``upgrade --all``
and ``outdated`` against GitHub's rate-limit answers, their ``--jobs``, and what ``--quiet``
keeps. Every run goes through the real command line against the loopback GitHub stand-in."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from support.cli import clean_env, nexo
from support.github_server import Fault, GitHubServer
from support.stand_in import use_stand_in
from support.tarballs import release_assets

from nexo_pkg.core.threads import DEFAULT_JOBS

CLEARED = ("NEXO_GITHUB_TOKEN", "GITHUB_TOKEN", "GH_TOKEN", "GITHUB_API_URL", "NEXO_INSTALL_TARGET")
IDS = ["alpha", "bravo", "charlie", "delta"]
RESET = 1_900_000_000
RESET_AT = "2030-03-17T17:46:40Z"

# GitHub's rate-limit answers: the primary limit (a 403 or 429 with ``X-RateLimit-Remaining:
# 0`` and the reset time), one without the reset time, and a secondary limit (``Retry-After``).
ANSWERS = {
    "403-reset": (403, {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": str(RESET)}),
    "429-reset": (429, {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": str(RESET)}),
    "403-no-reset": (403, {"X-RateLimit-Remaining": "0"}),
    "429-retry-after": (429, {"Retry-After": "120"}),
}


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, server: GitHubServer) -> Path:
    """Four plugins installed at 1.0.0 from the stand-in, each with a newer 1.1.0 released."""
    home = use_stand_in(monkeypatch, tmp_path, server, cleared=CLEARED)
    for plugin_id in IDS:
        assets = release_assets(plugin_id, "1.0.0")
        server.publish("acme", plugin_id, "v1.0.0", assets, digests=True)
        assert nexo("plugin", "install", f"acme/{plugin_id}", in_process=True).code == 0
    for plugin_id in IDS:
        assets = release_assets(plugin_id, "1.1.0")
        server.publish("acme", plugin_id, "v1.1.0", assets, digests=True)
    server.requests.clear()
    return home


def _spent(server: GitHubServer, answer: str) -> None:
    status, headers = ANSWERS[answer]
    server.add_fault(Fault("rate_limit", None, None, status=status, headers=headers))


def _one_clock(document: Any, answer: str) -> Any:
    """``document`` with the reset time of a ``Retry-After`` answer written as ``<time>``:
    that answer gives seconds from now, so two runs a second apart reset a second apart."""
    if "Retry-After" not in ANSWERS[answer][1]:
        return document
    text = re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", "<time>", json.dumps(document))
    return json.loads(text)


def _installed_versions() -> dict[str, str]:
    listed = nexo("plugin", "list", "--json", in_process=True)
    return {e["id"]: e["version"] for e in listed.document["plugins"] if not e["kept"]}


def _requests_per_plugin(server: GitHubServer) -> dict[str, int]:
    counted = dict.fromkeys(IDS, 0)
    for request in server.requests:
        for plugin_id in IDS:
            if f"/acme/{plugin_id}/" in request.path:
                counted[plugin_id] += 1
    return counted


@pytest.mark.parametrize("answer", list(ANSWERS))
@pytest.mark.parametrize("jobs", [(), ("--jobs", "1")], ids=["default-jobs", "one-job"])
def test_upgrade_all_says_a_spent_rate_limit_once(
    home: Path, server: GitHubServer, answer: str, jobs: tuple[str, ...]
) -> None:
    """``upgrade --all`` behind a spent rate limit: one ``error: rate_limited`` line, with
    the reset time when GitHub gave one, for all the plugins (not one failure each), at most
    one request per plugin, exit 1, nothing installed or removed; with ``--json`` one
    document whose every entry is ``rate_limited``, the same whatever the jobs."""
    del home
    _spent(server, answer)
    result = nexo("plugin", "upgrade", "--all", "--yes", *jobs, in_process=True)
    assert result.code == 1, result.stderr
    assert "Traceback" not in result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("error")]
    assert len(errors) == 1, result.stderr
    (line,) = errors
    assert line.startswith("error: rate_limited: GitHub API rate limit exceeded")
    assert line.endswith("(4 plugin(s) not upgraded)")
    if "reset" in answer and "no-reset" not in answer:
        assert RESET_AT in line
    assert max(_requests_per_plugin(server).values()) <= 1
    if jobs:
        # One after another: the first answer stops the lookups.
        assert len(server.requests) == 1
    assert _installed_versions() == dict.fromkeys(IDS, "1.0.0")

    runs = {}
    for each in ((), ("--jobs", "1")):
        server.requests.clear()
        done = nexo("plugin", "upgrade", "--all", "--yes", "--json", *each, in_process=True)
        assert done.code == 1
        assert max(_requests_per_plugin(server).values()) <= 1
        runs[each] = _one_clock(done.document, answer)
    assert runs[()] == runs[("--jobs", "1")]
    document = runs[()]
    assert document["ok"] is False
    assert [entry["id"] for entry in document["plugins"]] == IDS
    assert {entry["kind"] for entry in document["plugins"]} == {"rate_limited"}
    assert len({entry["error"] for entry in document["plugins"]}) == 1
    assert _installed_versions() == dict.fromkeys(IDS, "1.0.0")


def test_upgrade_all_with_a_token_is_stopped_by_graphql(
    home: Path, server: GitHubServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With a token the lookups are one GraphQL request; its rate-limit answer stops the
    whole run there: no REST request follows, and the line is said once."""
    del home
    monkeypatch.setenv("NEXO_GITHUB_TOKEN", "secret-token")
    _spent(server, "403-reset")
    result = nexo("plugin", "upgrade", "--all", "--yes", in_process=True)
    assert result.code == 1
    assert [(r.method, r.path) for r in server.requests] == [("POST", "/graphql")]
    errors = [line for line in result.stderr.splitlines() if line.startswith("error")]
    assert len(errors) == 1, result.stderr
    assert RESET_AT in errors[0]


def test_upgrade_all_limited_midway_stops_asking(home: Path, server: GitHubServer) -> None:
    """The limit runs out while the lookups go (GitHub answers the first plugins, then the
    limit): nothing is upgraded after the rate-limit answer, no plugin is asked twice, and
    the answer is one line."""
    del home
    for plugin_id in ("charlie", "delta"):
        status, headers = ANSWERS["403-reset"]
        fault = Fault("rate_limit", None, f"/acme/{plugin_id}/", status=status, headers=headers)
        server.add_fault(fault)
    result = nexo("plugin", "upgrade", "--all", "--yes", "--jobs", "1", in_process=True)
    assert result.code == 1
    errors = [line for line in result.stderr.splitlines() if line.startswith("error")]
    assert len(errors) == 1, result.stderr
    assert RESET_AT in errors[0]
    assert _requests_per_plugin(server)["charlie"] == 1
    assert _requests_per_plugin(server)["delta"] == 0
    assert _installed_versions() == dict.fromkeys(IDS, "1.0.0")


def test_upgrade_all_jobs_give_the_same_upgrades(home: Path, server: GitHubServer) -> None:
    """``--jobs`` changes how many lookups run at once, not what is upgraded nor what is
    printed."""
    del home
    first = nexo("plugin", "upgrade", "--all", "--yes", "--dry-run", "--json", in_process=True)
    second = nexo(
        "plugin", "upgrade", "--all", "--yes", "--dry-run", "--json", "--jobs", "1",
        in_process=True,
    )  # fmt: skip
    assert first.code == second.code == 0, first.stderr
    assert first.document == second.document
    assert [entry["version"] for entry in first.document["plugins"]] == ["1.1.0"] * 4
    assert nexo("plugin", "upgrade", "--all", "--yes", "-j", "2", in_process=True).code == 0
    assert _installed_versions() == dict.fromkeys(IDS, "1.1.0")


@pytest.mark.parametrize("jobs", ["0", "-1", "65", "99999999999999999999"])
def test_upgrade_jobs_outside_its_range_is_a_usage_error(
    home: Path, server: GitHubServer, jobs: str
) -> None:
    del home
    result = nexo("plugin", "upgrade", "--all", "--jobs", jobs, "--json", in_process=True)
    assert result.code == 2
    assert result.document["kind"] == "usage"
    assert "--jobs takes 1 to 64" in result.document["error"]
    assert server.requests == []
    assert _installed_versions() == dict.fromkeys(IDS, "1.0.0")


@pytest.mark.parametrize("answer", list(ANSWERS))
def test_outdated_rate_limit_report_is_the_same_whatever_the_jobs(
    home: Path, server: GitHubServer, answer: str
) -> None:
    """Lookups running side by side each get their own rate-limit answer before the first
    stops the others; the document is still the one ``--jobs 1`` prints, one request per
    plugin at most."""
    del home
    _spent(server, answer)
    runs = {}
    for jobs in ("1", "8"):
        server.requests.clear()
        result = nexo("plugin", "outdated", "--json", "--jobs", jobs, in_process=True)
        assert result.code == 1
        assert max(_requests_per_plugin(server).values()) <= 1
        runs[jobs] = _one_clock(result.document, answer)
    assert runs["1"] == runs["8"]
    errors = [entry["error"] for entry in runs["8"]["plugins"]]
    assert {error["kind"] for error in errors} == {"rate_limited"}
    assert len({json.dumps(error, sort_keys=True) for error in errors}) == 1


def test_quiet_keeps_the_errors_of_outdated(home: Path, server: GitHubServer) -> None:
    """``--quiet`` drops notes, never errors: a plugin that could not be checked and a spent
    rate limit are still said on stderr."""
    del home
    server.fail(status=404, times=None, path_contains="/repos/acme/bravo/")
    result = nexo("plugin", "outdated", "-q", in_process=True)
    assert result.code == 1
    # The shape `sync` says a failed plugin in: error: ID: MESSAGE [KIND].
    [line] = [line for line in result.stderr.splitlines() if line.startswith("error: bravo: ")]
    assert line.endswith(" [release_not_found]")
    server.clear_faults()
    _spent(server, "403-reset")
    result = nexo("plugin", "outdated", "-q", in_process=True)
    assert result.code == 1
    lines = result.stderr.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("error: rate_limited: ")
    assert RESET_AT in lines[0]
    result = nexo("plugin", "upgrade", "--all", "--yes", "-q", in_process=True)
    assert result.code == 1
    assert [line[:20] for line in result.stderr.splitlines()] == ["error: rate_limited:"]


JOBS_COMMANDS = {
    "doctor": ("doctor", "--no-check"),
    "outdated": ("outdated",),
    "upgrade-all": ("upgrade", "--all"),
    "lock": ("lock",),
    "sync": ("sync", "--frozen"),
}


def _jobs_help(command: tuple[str, ...], tmp_path: Path) -> str:
    """The ``--jobs`` row of ``nexo plugin COMMAND --help``, its wrapped lines joined."""
    env = clean_env(NEXO_HOME=str(tmp_path / "home"))
    result = nexo("plugin", command[0], "--help", env=env, in_process=True)
    assert result.code == 0, result.stderr
    lines = [line.strip(" │|") for line in result.stdout.splitlines()]
    start = next(i for i, line in enumerate(lines) if line.startswith("-j, --jobs"))
    row = [lines[start]]
    for line in lines[start + 1 :]:
        if not line or line.startswith(("-", "╰")):
            break
        row.append(line)
    return " ".join(" ".join(row).split())


@pytest.mark.parametrize("command", list(JOBS_COMMANDS))
def test_every_command_s_jobs_default_is_sync_s(tmp_path: Path, command: str) -> None:
    """``doctor``, ``outdated`` and ``upgrade --all`` take ``--jobs`` as ``sync`` and ``lock``
    do: the same words, and the default they name is the one every command uses."""
    assert _jobs_help(JOBS_COMMANDS[command], tmp_path) == (
        _jobs_help(JOBS_COMMANDS["sync"], tmp_path)
    )
    assert f"(default {DEFAULT_JOBS}; 1: one after another)" in _jobs_help(
        JOBS_COMMANDS[command], tmp_path
    )


@pytest.mark.parametrize("command", list(JOBS_COMMANDS))
@pytest.mark.parametrize("jobs", ["abc", "1.5", "", "0", "-1", "65", "99999999999999999999"])
def test_jobs_that_is_no_count_of_jobs_is_one_usage_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str, jobs: str
) -> None:
    """Every ``--jobs`` that is not a number from 1 to 64, a word as much as a number out of
    range, is the same usage error: one line on stderr naming the value, exit 2, and with
    ``--json`` one document of kind ``usage``; nothing is read or written."""
    monkeypatch.setenv("NEXO_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    arguments = ("plugin", *JOBS_COMMANDS[command], "--dest", str(tmp_path / "root"))
    if command == "lock":
        arguments = ("plugin", "lock")
    text = nexo(*arguments, "--jobs", jobs, in_process=True)
    assert text.code == 2
    assert text.stdout == ""
    assert text.stderr.splitlines() == [f"error: --jobs takes 1 to 64, not {jobs!r}"] or (
        text.stderr.splitlines() == [f"error: --jobs takes 1 to 64, not {jobs}"]
    )
    document = nexo(*arguments, f"--jobs={jobs}", "--json", in_process=True).document
    assert document["kind"] == "usage"
    assert document["error"] in {f"--jobs takes 1 to 64, not {v}" for v in (jobs, repr(jobs))}
    assert sorted(path.name for path in tmp_path.iterdir()) == []


def test_the_kept_answers_belong_to_the_cache(home: Path, server: GitHubServer) -> None:
    """The answers ``outdated`` keeps for its conditional requests are part of the cache:
    ``cache size`` counts them, ``cache prune`` keeps those in use and removes those unused
    for its age, ``cache clean`` empties the cache of them too; after that the next
    ``outdated`` asks without a condition."""
    import os

    assert nexo("plugin", "outdated", in_process=True).code == 0
    answers = home / "cache" / "blobs" / "answers"
    kept = sorted(answers.iterdir())
    assert len(kept) == len(IDS)
    size = nexo("plugin", "cache", "size", "--json", in_process=True).document
    assert size["bytes"] >= sum(path.stat().st_size for path in kept)
    # Every answer left unused for years; then one asked with again (alpha's).
    for path in kept:
        os.utime(path, (1_000_000_000, 1_000_000_000))
    assert nexo("plugin", "outdated", "alpha", in_process=True).code == 0
    used = [path for path in kept if path.stat().st_mtime > 1_000_000_000]
    assert len(used) == 1
    pruned = nexo("plugin", "cache", "prune", "--json", in_process=True).document
    assert pruned["ok"] is True
    assert sorted(answers.iterdir()) == used
    assert nexo("plugin", "cache", "clean", "--json", in_process=True).code == 0
    assert list(answers.iterdir()) == []
    server.requests.clear()
    assert nexo("plugin", "outdated", in_process=True).code == 0
    assert server.requests
    assert not any("if-none-match" in request.headers for request in server.requests)


def test_quiet_keeps_the_answer_of_lock_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``lock --check -q`` on a stale lock: the verdict is an error line and its reasons
    are part of it, so ``-q`` keeps both (as ``ruff -q`` keeps its findings), exit 1."""
    monkeypatch.setenv("NEXO_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "nexo-plugins.toml").write_text('[plugins.alpha]\nsource = "acme/alpha"\n')
    (tmp_path / "nexo-plugins.lock").write_text("lock_version = 1\n")
    quiet = nexo("plugin", "lock", "--check", "-q", in_process=True)
    assert quiet.code == 1
    assert quiet.stderr.splitlines() == [
        "stale: alpha is wanted but not locked",
        "error: nexo-plugins.lock is stale; run `nexo plugin lock`",
    ]
    said = nexo("plugin", "lock", "--check", in_process=True)
    assert said.code == 1
    assert said.stderr.splitlines() == [
        "stale: alpha is wanted but not locked",
        "error: nexo-plugins.lock is stale; run `nexo plugin lock`",
    ]


@pytest.mark.parametrize("jobs", ["1", "8"])
def test_upgrade_all_of_current_plugins_asks_once_each(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, server: GitHubServer, jobs: str
) -> None:
    """Nothing newer: ``upgrade --all`` sends one request per plugin (its latest release),
    whatever the jobs, and says each is up to date."""
    use_stand_in(monkeypatch, tmp_path, server, cleared=CLEARED)
    for plugin_id in IDS:
        assets = release_assets(plugin_id, "1.0.0")
        server.publish("acme", plugin_id, "v1.0.0", assets, digests=True)
        assert nexo("plugin", "install", f"acme/{plugin_id}", in_process=True).code == 0
    server.requests.clear()
    result = nexo("plugin", "upgrade", "--all", "--jobs", jobs, in_process=True)
    assert result.code == 0, result.stderr
    assert sorted(request.path for request in server.requests) == [
        f"/repos/acme/{plugin_id}/releases/latest" for plugin_id in IDS
    ]
    assert result.stderr.splitlines() == [f"{plugin_id} 1.0.0 is up to date." for plugin_id in IDS]


def test_upgrade_all_with_a_token_looks_every_plugin_up_in_one_graphql_request(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, server: GitHubServer
) -> None:
    """With a token, ``upgrade --all``'s lookups are one GraphQL request for every
    repository, and nothing more is asked when every plugin is current; the report is the
    one the REST lookups give."""
    use_stand_in(monkeypatch, tmp_path, server, cleared=CLEARED)
    for plugin_id in IDS:
        assets = release_assets(plugin_id, "1.0.0")
        server.publish("acme", plugin_id, "v1.0.0", assets, digests=True)
        assert nexo("plugin", "install", f"acme/{plugin_id}", in_process=True).code == 0
    rest = nexo("plugin", "upgrade", "--all", in_process=True)
    monkeypatch.setenv("NEXO_GITHUB_TOKEN", "secret-token")
    server.requests.clear()
    result = nexo("plugin", "upgrade", "--all", in_process=True)
    assert result.code == 0, result.stderr
    assert [(r.method, r.path) for r in server.requests] == [("POST", "/graphql")]
    assert result == rest


@pytest.mark.parametrize("answer", ["403-reset", "429-reset"])
def test_outdated_says_a_spent_rate_limit_in_one_line_in_text_and_json(
    home: Path, server: GitHubServer, answer: str
) -> None:
    """``outdated`` behind a spent rate limit, as an operator sees it: stderr holds one
    ``error: rate_limited`` line with the reset time and the count of plugins left unchecked,
    never an error line per plugin, with text and ``--json`` alike and whatever the jobs; the
    table marks each plugin as not checked, the same whatever the jobs; one request per
    plugin at most."""
    del home
    _spent(server, answer)
    said = {}
    for output in ((), ("--json",)):
        for jobs in ("1", "8"):
            server.requests.clear()
            result = nexo("plugin", "outdated", *output, "--jobs", jobs, in_process=True)
            assert result.code == 1
            assert max(_requests_per_plugin(server).values()) <= 1
            (line,) = result.stderr.splitlines()
            assert line.startswith("error: rate_limited: GitHub API rate limit exceeded")
            assert f"it resets at {RESET_AT}" in line
            assert line.endswith(f" ({len(IDS)} plugin(s) not checked)")
            said[output, jobs] = (result.stdout, result.stderr)
    assert said[(), "1"] == said[(), "8"]
    assert said[("--json",), "1"] == said[("--json",), "8"]
    assert said[(), "1"][1] == said[("--json",), "1"][1]
    rows = said[(), "1"][0].splitlines()[1:]
    assert [row.split()[0] for row in rows] == IDS
    assert all("could not check" in row for row in rows)


def test_with_a_token_more_repositories_than_one_graphql_request_holds_take_several(
    home: Path, server: GitHubServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With a token, the latest releases of many repositories are asked in GraphQL
    requests of a batch each (two repositories a batch here, four plugins): no REST request,
    and the document is the one the REST lookups give without a token."""
    from nexo_pkg.sources import releases

    del home
    rest = nexo("plugin", "outdated", "--json", in_process=True)
    assert rest.code == 0, rest.stderr
    monkeypatch.setattr(releases, "GRAPHQL_BATCH", 2)
    monkeypatch.setenv("NEXO_GITHUB_TOKEN", "secret-token")
    for jobs in ("1", "8"):
        server.requests.clear()
        batched = nexo("plugin", "outdated", "--json", "--jobs", jobs, in_process=True)
        assert [(r.method, r.path) for r in server.requests] == [("POST", "/graphql")] * 2
        assert batched == rest
