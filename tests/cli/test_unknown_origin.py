"""A receipt that names no known origin, and is no local file's, with the real command line: its
``source`` empty or a type no kind records (written by hand), a release receipt without its
``owner``/``repo``, a registry receipt without its ``registry`` reference. Nothing can be asked
again for it, and it is no error of the command's input: ``upgrade --all`` skips it with one
line naming it and how to record where it comes from (``reason`` ``unknown``; a receipt that
cannot be read at all, one without ``source``, is skipped as ``unreadable``) and upgrades the
others; ``upgrade ID`` refuses it in one line (``source_invalid``, nothing written);
``outdated`` reports it ``unknown`` with a note, ``list`` as ``origin unknown``, ``doctor``
warns. A local tarball's receipt keeps its words (``local file``) everywhere."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support.cli import TRACEBACK, nexo
from support.github_server import GitHubServer
from support.stderr import without_notes
from support.tarballs import release_assets, tree_snapshot, write_plugin


def _drop(*keys: str) -> Callable[[dict[str, Any]], None]:
    def edit(receipt: dict[str, Any]) -> None:
        for key in keys:
            receipt.pop(key, None)

    return edit


def _set(**fields: str) -> Callable[[dict[str, Any]], None]:
    return lambda receipt: receipt.update(fields)


# Receipts that name no known origin: how each is edited from a local tarball's receipt.
UNKNOWN = {
    "hand-written-type": _set(source="manual"),
    "empty-type": _set(source=""),
    "terminal-escape-type": _set(source="hand\x1b[2Jedited"),
    "release-without-repository": _set(source="github-releases", owner="", repo="", tag="v1"),
    "registry-without-reference": _set(source="oci-registry"),
}
# A receipt without `source` at all: one the reference installer cannot read either.
NO_SOURCE = _drop("source")
REINSTALL = "nexo plugin install SOURCE --force --dest"
# Every receipt above, and the one without `source`, with what `upgrade --all` says of it.
EVERY_RECEIPT = pytest.mark.parametrize(
    ("edit", "reason"),
    [*((edit, "unknown") for edit in UNKNOWN.values()), (NO_SOURCE, "unreadable")],
    ids=[*UNKNOWN, "no-source"],
)


@pytest.fixture
def root(tmp_path: Path, github_env: dict[str, str], server: GitHubServer) -> Path:
    """An install root with `hello` from a GitHub release (1.0.0; 1.1.0 published after),
    and `alpha` and `bravo` from local tarballs."""
    server.publish("acme", "hello", "v1.0.0", release_assets("hello", "1.0.0"))
    dest = tmp_path / "root"
    for source in (
        "acme/hello",
        write_plugin(tmp_path / "dist", "alpha", "1.0.0"),
        write_plugin(tmp_path / "dist", "bravo", "1.0.0"),
    ):
        done = nexo("plugin", "install", source, "--dest", dest, "--yes", env=github_env)
        assert done.code == 0, done.stderr
    server.publish("acme", "hello", "v1.1.0", release_assets("hello", "1.1.0"))
    return dest


def _edit_bravo(root: Path, edit: Callable[[dict[str, Any]], None]) -> None:
    receipt = root / "bravo-1.0.0" / ".nexo-install.json"
    document = json.loads(receipt.read_text(encoding="utf-8"))
    edit(document)
    receipt.write_text(json.dumps(document), encoding="utf-8")


def _plain(*outputs: str) -> None:
    """No traceback, and no terminal escape from a receipt reaches the output."""
    for output in outputs:
        assert TRACEBACK not in output
        assert "\x1b" not in output


@EVERY_RECEIPT
def test_upgrade_all_skips_an_unknown_origin_and_upgrades_the_others(
    edit: Callable[[dict[str, Any]], None],
    reason: str,
    root: Path,
    github_env: dict[str, str],
) -> None:
    _edit_bravo(root, edit)
    bravo = tree_snapshot(root / "bravo-1.0.0")

    done = nexo("plugin", "upgrade", "--all", "--dest", root, "--yes", env=github_env)
    assert done.code == 0, done.stderr
    _plain(done.stdout, done.stderr)
    lines = without_notes(done.stderr).splitlines()
    assert "skipped alpha: installed from a local file" in lines
    [skipped] = [line for line in lines if line.startswith("skipped bravo: ")]
    assert f"`{REINSTALL} {root}`" in skipped
    if reason == "unknown":
        assert "names no known origin" in skipped
        assert "to record where it comes from" in skipped
    else:
        assert "receipt unreadable: missing field `source`" in skipped
    assert not [line for line in lines if line.startswith("error")]
    assert "local file" not in skipped
    assert (root / "hello-1.1.0").is_dir()
    assert tree_snapshot(root / "bravo-1.0.0") == bravo

    again = nexo("plugin", "upgrade", "--all", "--dest", root, "--json", env=github_env)
    assert again.code == 0, again.stderr
    _plain(again.stdout, again.stderr)
    document = again.document
    assert document["ok"] is True
    assert [(entry["id"], entry["ok"]) for entry in document["plugins"]] == [("hello", True)]
    by_id = {entry["id"]: entry for entry in document["skipped"]}
    assert set(by_id) == {"alpha", "bravo"}
    assert by_id["alpha"]["reason"] == "local"
    assert (by_id["bravo"]["reason"], by_id["bravo"]["version"]) == (reason, "1.0.0")
    assert by_id["bravo"]["path"] == str(root / "bravo-1.0.0")
    assert tree_snapshot(root / "bravo-1.0.0") == bravo


@pytest.mark.parametrize("edit", UNKNOWN.values(), ids=UNKNOWN)
def test_upgrade_of_an_unknown_origin_is_refused_in_one_line_and_writes_nothing(
    edit: Callable[[dict[str, Any]], None],
    root: Path,
    github_env: dict[str, str],
    tmp_path: Path,
) -> None:
    _edit_bravo(root, edit)
    before = tree_snapshot(tmp_path)

    refused = nexo("plugin", "upgrade", "bravo", "--dest", root, "--yes", env=github_env)
    assert refused.code == 1
    _plain(refused.stdout, refused.stderr)
    [line] = without_notes(refused.stderr).splitlines()
    assert line.startswith("error: bravo's receipt names no known origin")
    assert line.endswith("[source_invalid]")
    assert f"`{REINSTALL} {root}` to record where it comes from" in line
    assert "local file" not in line

    as_json = nexo("plugin", "upgrade", "bravo", "--dest", root, "--json", env=github_env)
    assert as_json.code == 1
    _plain(as_json.stdout, as_json.stderr)
    document = as_json.document
    assert (document["ok"], document["kind"]) == (False, "source_invalid")
    assert (document["id"], document["path"]) == ("bravo", str(root / "bravo-1.0.0"))
    assert tree_snapshot(tmp_path) == before


def test_upgrade_of_a_local_file_keeps_its_words(root: Path, github_env: dict[str, str]) -> None:
    refused = nexo("plugin", "upgrade", "alpha", "--dest", root, "--json", env=github_env)
    assert refused.code == 1
    assert refused.document["kind"] == "source_invalid"
    assert refused.document["error"].startswith("alpha was installed from a local file")


@EVERY_RECEIPT
def test_outdated_reports_an_unknown_origin_with_a_note(
    edit: Callable[[dict[str, Any]], None], reason: str, root: Path, github_env: dict[str, str]
) -> None:
    problem = "names no known origin" if reason == "unknown" else "receipt unreadable"
    _edit_bravo(root, edit)
    before = tree_snapshot(root)

    shown = nexo("plugin", "outdated", "--dest", root, env=github_env)
    assert shown.code == 0, shown.stderr
    _plain(shown.stdout, shown.stderr)
    rows = {line.split()[0]: line for line in shown.stdout.splitlines()[1:]}
    assert rows["alpha"].split()[3:] == ["local", "file:", "not", "checked", "local", "file"]
    assert rows["bravo"].split()[1:] == ["1.0.0", "-", "unknown:", "not", "checked", "origin",
                                         "unknown"]  # fmt: skip
    assert rows["hello"].split()[1:4] == ["1.0.0", "1.1.0", "outdated"]
    [note] = [line for line in shown.stderr.splitlines() if line.startswith("  bravo: ")]
    assert problem in note
    assert f"`{REINSTALL} {root}" in note

    as_json = nexo("plugin", "outdated", "--dest", root, "--json", env=github_env)
    assert as_json.code == 0, as_json.stderr
    _plain(as_json.stdout, as_json.stderr)
    by_id = {entry["id"]: entry for entry in as_json.document["plugins"]}
    assert (by_id["alpha"]["status"], by_id["alpha"]["source"]) == ("local", "local file")
    assert "note" not in by_id["alpha"]
    bravo = by_id["bravo"]
    assert (bravo["status"], bravo["source"], bravo["outdated"]) == (
        "unknown",
        "origin unknown",
        False,
    )
    assert (bravo["installed"], bravo["latest"], bravo["path"]) == (
        "1.0.0",
        None,
        str(root / "bravo-1.0.0"),
    )
    assert problem in bravo["note"]
    assert by_id["hello"]["status"] == "outdated"

    named = nexo("plugin", "outdated", "bravo", "--dest", root, "--json", env=github_env)
    assert named.code == 0, named.stderr
    _plain(named.stdout, named.stderr)
    [entry] = named.document["plugins"]
    assert entry == bravo
    assert tree_snapshot(root) == before


@pytest.mark.parametrize("edit", UNKNOWN.values(), ids=UNKNOWN)
def test_list_and_doctor_name_an_unknown_origin(
    edit: Callable[[dict[str, Any]], None], root: Path, github_env: dict[str, str]
) -> None:
    _edit_bravo(root, edit)
    before = tree_snapshot(root)

    listed = nexo("plugin", "list", "--dest", root, env=github_env)
    assert listed.code == 0, listed.stderr
    _plain(listed.stdout, listed.stderr)
    rows = {line.split()[0]: line.split() for line in listed.stdout.splitlines()}
    assert rows["alpha"][1:4] == ["1.0.0", "local", "file"]
    assert rows["bravo"][1:4] == ["1.0.0", "origin", "unknown"]
    assert rows["hello"][1:3] == ["1.0.0", "acme/hello@v1.0.0"]

    doctor = nexo("plugin", "doctor", "--dest", root, "--no-check", "--json", env=github_env)
    _plain(doctor.stdout, doctor.stderr)
    findings = doctor.document["findings"]
    receipts = [(f["id"], f["severity"]) for f in findings if f["check"] == "receipt"]
    assert receipts == [("bravo", "warning")]
    [warning] = [f["message"] for f in findings if f["check"] == "receipt"]
    assert "names no known origin" in warning
    assert f"`{REINSTALL} {root}` to record where it comes from" in warning
    assert doctor.code == 0, doctor.stdout
    assert tree_snapshot(root) == before


def test_unhold_of_an_unknown_origin_names_how_to_record_it(
    root: Path, github_env: dict[str, str]
) -> None:
    _edit_bravo(root, UNKNOWN["hand-written-type"])
    held = nexo("plugin", "hold", "bravo", "--dest", root, env=github_env)
    assert held.code == 0, held.stderr
    released = nexo("plugin", "unhold", "bravo", "--dest", root, env=github_env)
    assert released.code == 0, released.stderr
    _plain(released.stdout, released.stderr)
    [line] = without_notes(released.stderr).splitlines()
    assert line.startswith("bravo is no longer held at 1.0.0; ")
    assert "names no known origin" in line
    assert f"`{REINSTALL} {root}` to record where it comes from" in line
    assert "follows its source again" not in line


def test_upgrade_of_a_held_unknown_origin_names_the_install_that_records_it(
    root: Path, github_env: dict[str, str]
) -> None:
    """Held, nothing is looked up; the way out it names is the one that works for such a
    receipt (an install of its source), not `upgrade ID@TAG`, which refuses it."""
    _edit_bravo(root, UNKNOWN["hand-written-type"])
    held = nexo("plugin", "hold", "bravo", "--dest", root, env=github_env)
    assert held.code == 0, held.stderr
    before = tree_snapshot(root)
    upgraded = nexo("plugin", "upgrade", "bravo", "--dest", root, env=github_env)
    assert upgraded.code == 0, upgraded.stderr
    _plain(upgraded.stdout, upgraded.stderr)
    shown = upgraded.stdout + upgraded.stderr
    assert "bravo is held at 1.0.0: " in shown
    assert f"`{REINSTALL} {root}` names a version and records where it comes from" in shown
    assert "bravo@TAG" not in shown
    assert tree_snapshot(root) == before
