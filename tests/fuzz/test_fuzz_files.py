"""Property: no file the command line reads, however mangled, ends in a Python traceback.

Every kind of file (:mod:`.targets`) is mutated by :mod:`.mutation` (stdlib ``random``, fixed
seeds) and fed to the commands that read it, each run in a subprocess of the real ``nexo``
script and judged by SPEC §1: exit code 0, 1 or 2, no traceback, one ``error:`` line for a
failure, exactly one JSON document on stdout under ``--json``.

The smoke run tries one mutant of each kind; the slow run (``-m slow``) fuzzes each kind for
``NEXO_FUZZ_SECONDS`` (default 120) and keeps what it finds under ``NEXO_FUZZ_FINDINGS`` when
that is set.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.github_server import GitHubServer

from .mutation import Target, fuzz, save
from .targets import publish_echo, targets

NAMES = [target.name for target in targets("http://127.0.0.1:9")]


@pytest.fixture(scope="module")
def stand_in() -> Iterator[GitHubServer]:
    """The loopback GitHub stand-in serving ``acme/nexo-plugin-echo`` (for the fleet files)."""
    with GitHubServer() as server:
        publish_echo(server)
        yield server


def _target(name: str, server: GitHubServer) -> Target:
    return next(target for target in targets(server.url) if target.name == name)


def _check(name: str, server: GitHubServer, tmp_path: Path, *, seconds: float, most: int) -> None:
    tally = fuzz(
        _target(name, server), tmp_path, seed=sum(map(ord, name)), seconds=seconds, most=most
    )
    findings = os.environ.get("NEXO_FUZZ_FINDINGS")
    if findings and tally.findings:
        save(tally.findings, Path(findings))
    assert tally.mutants > 0
    assert not tally.findings, "\n".join(finding.summary() for finding in tally.findings)


@pytest.mark.parametrize("name", NAMES)
def test_a_few_mutants_of_each_file_end_in_one_line(
    name: str, stand_in: GitHubServer, tmp_path: Path
) -> None:
    _check(name, stand_in, tmp_path, seconds=3.0, most=1)


@pytest.mark.slow
@pytest.mark.timeout(1800)
@pytest.mark.parametrize("name", NAMES)
def test_mutants_of_each_file_for_minutes_end_in_one_line(
    name: str, stand_in: GitHubServer, tmp_path: Path
) -> None:
    seconds = float(os.environ.get("NEXO_FUZZ_SECONDS", "120"))
    _check(name, stand_in, tmp_path, seconds=seconds, most=1_000_000)
