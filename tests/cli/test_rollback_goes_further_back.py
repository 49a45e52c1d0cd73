"""A second ``rollback`` goes further back, never forward: with three versions kept
(``upgrade --keep-old``), each rollback puts back the version before the one installed and
the hold follows it, until nothing older is kept, which is said, with nothing changed."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.cli import nexo
from support.github_server import GitHubServer
from support.stand_in import use_stand_in
from support.tarballs import release_assets, tree_snapshot

CLEARED = ("NEXO_GITHUB_TOKEN", "GITHUB_TOKEN", "GH_TOKEN", "GITHUB_API_URL", "NEXO_INSTALL_TARGET")


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, server: GitHubServer) -> Path:
    return use_stand_in(monkeypatch, tmp_path, server, cleared=CLEARED)


def _current(home: Path) -> tuple[str, bool]:
    listing = nexo("plugin", "list", "--json", in_process=True).document["plugins"]
    (current,) = [entry for entry in listing if not entry["kept"]]
    return current["version"], current["held"]


def test_each_rollback_goes_one_version_further_back(home: Path, server: GitHubServer) -> None:
    server.publish("acme", "hello", "v1.0.0", release_assets("hello", "1.0.0"))
    assert nexo("plugin", "install", "acme/hello", "--yes", in_process=True).code == 0
    for version in ("2.0.0", "3.0.0"):
        server.publish("acme", "hello", f"v{version}", release_assets("hello", version))
        upgraded = nexo("plugin", "upgrade", "hello", "--keep-old", "--yes", in_process=True)
        assert upgraded.code == 0, upgraded.stderr
    assert _current(home) == ("3.0.0", False)

    first = nexo("plugin", "rollback", "hello", "--yes", "--json", in_process=True)
    assert first.code == 0, first.stderr
    assert (first.document["from_version"], first.document["version"]) == ("3.0.0", "2.0.0")
    assert _current(home) == ("2.0.0", True)
    second = nexo("plugin", "rollback", "hello", "--yes", "--json", in_process=True)
    assert second.code == 0, second.stderr
    assert (second.document["from_version"], second.document["version"]) == ("2.0.0", "1.0.0")
    assert second.document["held"] is True
    assert _current(home) == ("1.0.0", True)

    # Nothing older than 1.0.0 is kept: said, and nothing moves (never forward to 2 or 3).
    before = tree_snapshot(home / "state/plugins")
    third = nexo("plugin", "rollback", "hello", "--yes", "--json", in_process=True)
    assert (third.code, third.document["kind"]) == (1, "not_installed")
    assert "no earlier version of 'hello' is kept" in third.document["error"]
    assert tree_snapshot(home / "state/plugins") == before
    # upgrade --all leaves the hold where the last rollback put it.
    assert nexo("plugin", "upgrade", "--all", "--yes", in_process=True).code == 0
    assert _current(home) == ("1.0.0", True)


def test_the_docs_state_both_caveats_of_a_hold() -> None:
    """docs/install.md says what a hold does not survive: ``unhold`` forgets the versions
    rolled back from, and a rollback killed after its swap is left unheld."""
    docs = Path(__file__).parents[2] / "docs" / "install.md"
    text = " ".join(docs.read_text(encoding="utf-8").split())
    assert "(`unhold`) forgets those versions too" in text
    assert "leaves the plugin rolled back (the next command finishes the swap) but not held" in text
    assert "run `nexo plugin hold ID` then" in text
