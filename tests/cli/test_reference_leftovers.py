"""What the reference installer can leave directly in a plugin root after a failure, where the
daemon's discovery walk (depth 2, hidden directories included, first manifest of an id by
file name: crates/core/src/agent/nexo_plugin_registry/discovery.rs:63-67,212-225) reaches it:

- ``<id>-<version>.removing-<8 hex>``: its ``remove`` renames the plugin directory aside and
  leaves it there when deleting it fails (src/plugin_admin.rs:601-617, name at :669-677);
- ``.staging-<id>-<hex>``: its install extracts there and renames to ``<id>-<version>`` last
  (crates/ext-installer/src/extract.rs:47,139-140,182); a crash in between leaves it, with the
  whole tree but no receipt once extraction is done, or empty right after it was made.

``doctor`` names each with what the daemon makes of it and the command that deletes it (a
warning: nothing was installed there), never as an installed plugin the daemon skips; an
install of the same id is not taken in by one. Real tarballs, the real console script.
"""

from __future__ import annotations

import json
import shlex
import shutil
from pathlib import Path

import pytest
from support.cli import CliResult, clean_env, nexo
from support.daemon_walk import discoverable
from support.github_server import GitHubServer
from support.stand_in import use_stand_in
from support.tarballs import release_assets, write_plugin

# What `rand::random::<u32>()` formats as `{:08x}` (plugin_admin.rs:671-675) and what
# `rand::thread_rng().gen::<u64>()` formats as `{:x}` (extract.rs:138-139).
REMOVING = ".removing-0badf00d"
STAGING_HEX = "1f2e3d4c5b6a7980"


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return clean_env(NEXO_HOME=str(tmp_path / "home"))


def _run(env: dict[str, str], *args: str | Path) -> CliResult:
    return nexo("plugin", *args, env=env)


def _install(env: dict[str, str], root: Path, plugin_id: str, version: str) -> Path:
    tarball = write_plugin(root.parent / "dist", plugin_id, version)
    result = _run(env, "install", tarball, "--dest", root, "--yes", "--skip-signature-verify")
    assert result.code == 0, result.stderr
    return root / f"{plugin_id}-{version}"


def _removal_leftover(installed: Path) -> Path:
    """The reference's `remove` of ``installed`` when its `remove_dir_all` failed: the whole
    directory, receipt included, under its aside name (plugin_admin.rs:601-617)."""
    aside = installed.with_name(installed.name + REMOVING)
    installed.rename(aside)
    return aside


def _doctor(env: dict[str, str], root: Path) -> tuple[int, dict[str, object]]:
    result = _run(env, "doctor", "--dest", root, "--no-check", "--json")
    return result.code, json.loads(result.stdout)


def _leftover_findings(document: dict[str, object]) -> dict[str, str]:
    findings = document["findings"]
    assert isinstance(findings, list)
    return {f["path"]: f["message"] for f in findings if f["check"] == "leftover"}


def test_doctor_names_a_removal_leftover_the_daemon_skips(
    tmp_path: Path, env: dict[str, str]
) -> None:
    """The reference removed ``foo`` but could not delete it, then ``foo`` was installed
    again: the daemon loads ``foo-0.1.0`` (it sorts first) and skips the leftover, which only
    takes space. ``doctor`` said the leftover was an installed plugin the daemon skips (an
    error, exit 1); it is a warning naming the exact ``rm`` that deletes it."""
    root = tmp_path / "root"
    installed = _install(env, root, "foo", "0.1.0")
    leftover = _removal_leftover(installed)
    shutil.copytree(leftover, installed)  # installed again

    assert [m.parent for m in discoverable(root)["foo"]] == [installed, leftover]
    code, document = _doctor(env, root)
    assert code == 0, document
    assert document["plugins"] == ["foo"]
    assert document["errors"] == 0
    message = _leftover_findings(document)[str(leftover)]
    assert f"the daemon skips it (it loads foo from {installed})" in message
    assert message.endswith(f"delete it: {shlex.join(['rm', '-rf', '--', str(leftover)])}")


def test_doctor_names_a_removal_leftover_the_daemon_loads(
    tmp_path: Path, env: dict[str, str]
) -> None:
    """Alone, the leftover is what the daemon loads as ``foo``: still an installed plugin for
    every command (the daemon runs it), and ``doctor`` says where it comes from and how to
    get rid of it; it said nothing before."""
    root = tmp_path / "root"
    leftover = _removal_leftover(_install(env, root, "foo", "0.1.0"))

    assert [m.parent for m in discoverable(root)["foo"]] == [leftover]
    code, document = _doctor(env, root)
    assert code == 0, document
    assert document["plugins"] == ["foo"]
    message = _leftover_findings(document)[str(leftover)]
    assert "left by a `remove` that could not delete it" in message
    assert "the daemon loads foo from it" in message
    assert message.endswith(f"delete it: {shlex.join(['rm', '-rf', '--', str(leftover)])}")
    listed = json.loads(_run(env, "list", "--dest", root, "--json").stdout)
    assert [(p["id"], p["path"]) for p in listed["plugins"]] == [("foo", str(leftover))]


def test_doctor_names_staging_leftovers(tmp_path: Path, env: dict[str, str]) -> None:
    """A crash of the reference's install after extraction leaves the whole tree in
    ``.staging-foo-<hex>``: it sorts before ``foo-0.1.0``, so the daemon loads ``foo`` from
    the unfinished tree; one right after the directory was made leaves it empty, taking only
    space. ``doctor`` said nothing of either."""
    root = tmp_path / "root"
    installed = _install(env, root, "foo", "0.1.0")
    staged = root / f".staging-foo-{STAGING_HEX}"
    shutil.copytree(installed, staged)
    (staged / ".nexo-install.json").unlink()  # extract.rs writes no receipt
    empty = root / f".staging-bar-{STAGING_HEX}"
    empty.mkdir()

    assert discoverable(root)["foo"][0].parent == staged
    code, document = _doctor(env, root)
    assert code == 0, document
    assert document["plugins"] == ["foo"]
    found = _leftover_findings(document)
    assert set(found) == {str(staged), str(empty)}
    assert "left by an install that did not finish" in found[str(staged)]
    assert "the daemon loads foo from it (first by name)" in found[str(staged)]
    assert "the daemon loads nothing from it; it only takes space" in found[str(empty)]
    for path, message in found.items():
        assert message.endswith(f"delete it: {shlex.join(['rm', '-rf', '--', path])}")
    # The next install to the root deletes both, as the reference's own install does
    # (extract.rs:246-265).
    _install(env, root, "bar", "1.0.0")
    assert not staged.exists()
    assert not empty.exists()
    assert _leftover_findings(_doctor(env, root)[1]) == {}


def test_an_install_does_not_keep_a_removal_leftover_for_rollback(
    tmp_path: Path, env: dict[str, str]
) -> None:
    """Installing ``foo`` 0.2.0 over the leftover of a removed ``foo`` 0.1.0 takes it out of
    the daemon's sight (it would load it first: ``foo-0.1.0.removing-…`` < ``foo-0.2.0``), but
    a version the operator removed is none to roll back to: it was kept under ``.nexo/kept``
    and `rollback` brought it back under its leftover name."""
    root = tmp_path / "root"
    leftover = _removal_leftover(_install(env, root, "foo", "0.1.0"))
    _install(env, root, "foo", "0.2.0")

    assert not leftover.exists()
    assert [m.parent.name for m in discoverable(root)["foo"]] == ["foo-0.2.0"]
    assert not (root / ".nexo" / "kept").exists()
    rollback = _run(env, "rollback", "foo", "--dest", root, "--yes")
    assert rollback.code == 1
    assert "no earlier version of 'foo' is kept" in rollback.stderr
    assert [m.parent.name for m in discoverable(root)["foo"]] == ["foo-0.2.0"]


def test_list_counts_a_removal_leftover_only_while_the_daemon_loads_it(
    tmp_path: Path, env: dict[str, str]
) -> None:
    """Beside a new install of the same id the leftover is skipped by the daemon: ``list``
    showed it as a second installed ``foo`` 0.1.0; it is an orphan now (``--include-orphan``)
    with a note on stderr, and the installed ``foo`` is the one row."""
    root = tmp_path / "root"
    installed = _install(env, root, "foo", "0.1.0")
    leftover = _removal_leftover(installed)
    shutil.copytree(leftover, installed)

    listed = _run(env, "list", "--dest", root, "--json", "--include-orphan")
    document = json.loads(listed.stdout)
    assert [(p["id"], p["path"], p["shadowed"]) for p in document["plugins"]] == [
        ("foo", str(installed), False)
    ]
    assert [(o["id"], o["path"]) for o in document["orphans"]] == [("foo", str(leftover))]
    rows = _run(env, "list", "--dest", root)
    assert rows.code == 0
    assert [line.split()[-1] for line in rows.stdout.splitlines()] == [str(installed)]
    assert f"note: {leftover} is no install" in rows.stderr


def test_verify_checks_a_removal_leftover_only_while_the_daemon_loads_it(
    tmp_path: Path, env: dict[str, str]
) -> None:
    """``verify`` re-hashed the skipped leftover as a second installed ``foo``; it checks the
    install the daemon loads, and the leftover only when the daemon loads that instead."""
    root = tmp_path / "root"
    installed = _install(env, root, "foo", "0.1.0")
    leftover = _removal_leftover(installed)
    alone = _run(env, "verify", "foo", "--dest", root, "--json")
    assert alone.code == 0, alone.stderr
    assert [p["path"] for p in json.loads(alone.stdout)["plugins"]] == [str(leftover)]

    shutil.copytree(leftover, installed)
    for args in (("foo",), ()):
        verified = _run(env, "verify", *args, "--dest", root, "--json")
        assert verified.code == 0, verified.stderr
        assert [p["path"] for p in json.loads(verified.stdout)["plugins"]] == [str(installed)]


def test_outdated_lists_a_removal_leftover_only_while_the_daemon_loads_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, server: GitHubServer
) -> None:
    """``outdated`` listed the skipped leftover of a removed ``foo`` as a second installed
    ``foo`` (real releases on the loopback GitHub stand-in)."""
    use_stand_in(monkeypatch, tmp_path, server)
    root = tmp_path / "root"
    server.publish("acme", "foo", "v1.0.0", release_assets("foo", "1.0.0"), digests=True)
    installed = nexo("plugin", "install", "acme/foo", "--dest", root, "--yes")
    assert installed.code == 0, installed.stderr
    leftover = _removal_leftover(root / "foo-1.0.0")
    server.publish("acme", "foo", "v1.1.0", release_assets("foo", "1.1.0"), digests=True)

    def listed() -> list[tuple[str, str]]:
        result = nexo("plugin", "outdated", "--dest", root, "--json")
        assert result.code == 0, result.stderr
        return [(entry["id"], entry["installed"]) for entry in json.loads(result.stdout)["plugins"]]

    assert listed() == [("foo", "1.0.0")]  # the daemon loads the leftover: it is foo
    shutil.copytree(leftover, root / "foo-1.0.0")
    assert listed() == [("foo", "1.0.0")]


def _signed_by(tree: Path, identity: str) -> None:
    """Rewrite the receipt of ``tree`` as that of a version whose signature was verified."""
    receipt_path = tree / ".nexo-install.json"
    receipt = json.loads(receipt_path.read_text(encoding="utf-8"))
    receipt["signature"] = {
        "status": "verified",
        "identity": identity,
        "issuer": "https://token.actions.githubusercontent.com",
        "bundle_sha256": "ab" * 32,
    }
    receipt_path.write_text(json.dumps(receipt), encoding="utf-8")


@pytest.mark.parametrize("leftover_loaded", [False, True])
def test_signer_continuity_counts_a_removal_leftover_only_while_the_daemon_loads_it(
    tmp_path: Path, env: dict[str, str], leftover_loaded: bool
) -> None:
    """A removed ``foo`` whose leftover's receipt records a signer, beside an unsigned
    ``foo-0.1.0`` the daemon loads (it sorts first): the leftover is no installed version, so
    its signer binds no install (as list, verify and doctor skip it). Alone, the daemon runs
    it: then an unsigned install over it is a signer change (refused, nothing touched)."""
    root = tmp_path / "root"
    installed = _install(env, root, "foo", "0.1.0")
    copy = tmp_path / "copy"
    shutil.copytree(installed, copy)
    leftover = _removal_leftover(installed)
    identity = "https://github.com/acme/foo/.github/workflows/release.yml@refs/tags/v0.1.0"
    _signed_by(leftover, identity)
    if not leftover_loaded:
        copy.rename(installed)
    before = sorted(str(path.relative_to(root)) for path in root.rglob("*"))
    tarball = write_plugin(tmp_path / "dist2", "foo", "0.2.0")
    result = _run(env, "install", tarball, "--dest", root, "--yes", "--json")
    document = json.loads(result.stdout)
    if leftover_loaded:
        assert result.code == 1, result.stderr
        assert document["ok"] is False
        assert document["kind"] == "signer_changed"
        assert identity in document["error"]
        assert sorted(str(path.relative_to(root)) for path in root.rglob("*")) == before
        return
    assert result.code == 0, result.stdout + result.stderr
    assert document["ok"] is True
    assert (document["id"], document["version"]) == ("foo", "0.2.0")
    assert document["signature"]["status"] == "unsigned"
    # Both older trees leave the daemon's sight; only the real install is kept for rollback.
    assert [m.parent.name for m in discoverable(root)["foo"]] == ["foo-0.2.0"]
    assert not leftover.exists()
    assert not installed.exists()
    [kept] = document["kept_paths"]
    assert Path(kept).parent.name.startswith("foo-0.1.0-")
    assert sorted(path.name for path in root.iterdir()) == [
        ".nexo",
        ".nexo-install.lock",
        "foo-0.2.0",
    ]
