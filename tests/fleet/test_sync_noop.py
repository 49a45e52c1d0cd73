"""A ``sync --frozen`` of a root already in line with its lock (decided from the lock and the
receipts, before the network is loaded) prints what the Typer command prints for the same
root, text and ``--json``; and a root that only looks in line (a receipt that no longer
matches the lock, a receipt or a plugin directory removed by hand) or a lock that cannot be
followed (stale, missing, not TOML) is never reported as "nothing to do"."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from support.cli import fast_path_output, nexo
from support.registry import Registry
from support.tarballs import tree_snapshot

from nexo_pkg.cli.app import run as typer_run
from nexo_pkg.cli.syncing import fast_sync
from nexo_pkg.core.output import OUTPUT

from .conftest import LINUX, MakeDist, push_dist

PLUGINS = ("alpha", "bravo")


@pytest.fixture(autouse=True)
def _output_settings() -> Iterator[None]:
    """``--quiet``, ``--verbose`` and ``--color`` set process-wide settings: put them back."""
    saved = vars(OUTPUT).copy()
    yield
    vars(OUTPUT).update(saved)


@pytest.fixture
def synced(
    tmp_path: Path,
    fleet_env: dict[str, str],
    registry: Registry,
    make_dist: MakeDist,
    monkeypatch: pytest.MonkeyPatch,
) -> tuple[Path, Path]:
    """(the lock, the root): two unsigned plugins pushed, locked and synced."""
    home = Path(fleet_env["NEXO_HOME"])
    for number, plugin_id in enumerate(PLUGINS):
        dist = make_dist(plugin_id, f"1.{number}.0", identity=None, targets=(LINUX,))
        push_dist(dist, registry.ref(f"plugins/{plugin_id}"), home)
    project = tmp_path / "project"
    project.mkdir()
    wanted = project / "nexo-plugins.toml"
    wanted.write_text(
        "".join(f'[plugins.{p}]\nsource = "{registry.ref(f"plugins/{p}")}"\n\n' for p in PLUGINS)
    )
    locked = nexo(
        "plugin", "lock", "-f", str(wanted), "--plain-http", env=fleet_env, in_process=True
    )
    assert locked.code == 0, locked.stderr
    for key, value in fleet_env.items():
        monkeypatch.setenv(key, value)
    lock, root = project / "nexo-plugins.lock", tmp_path / "root"
    first = nexo(
        "plugin", "sync", "--lock", str(lock), "--dest", str(root), "--plain-http",
        env=fleet_env, in_process=True,
    )  # fmt: skip
    assert first.code == 0, first.stderr
    return lock, root


Runner = Callable[[list[str]], "int | None"]
PATHS: dict[str, Runner] = {
    "fast": fast_sync,
    "typer": lambda arguments: typer_run(["plugin", "sync", *arguments]),
}


def _run(
    capsys: pytest.CaptureFixture[str], path: str, lock: Path, root: Path, *extra: str
) -> tuple[object, str, str]:
    arguments = ["--lock", str(lock), "--dest", str(root), "--plain-http", "--frozen", *extra]
    return fast_path_output(capsys, PATHS[path], arguments)


@pytest.mark.parametrize("extra", [(), ("--json",), ("-q",), ("--jobs", "1", "--json")])
def test_nothing_to_do_prints_what_typer_prints(
    capsys: pytest.CaptureFixture[str], synced: tuple[Path, Path], extra: tuple[str, ...]
) -> None:
    lock, root = synced
    before = tree_snapshot(root)
    fast = _run(capsys, "fast", lock, root, *extra)
    slow = _run(capsys, "typer", lock, root, *extra)
    assert fast == slow
    assert fast[0] == 0
    if "--json" in extra:
        document = json.loads(fast[1])
        assert document["changed"] is False
        assert {p["change"] for p in document["plugins"]} == {"unchanged"}
    elif "-q" not in extra:
        assert "0 change(s), 2 plugin(s) checked" in fast[2]
    assert tree_snapshot(root) == before


def _receipt_sha_changed(lock: Path, root: Path) -> None:
    del lock
    receipt = root / "alpha-1.0.0" / ".nexo-install.json"
    document = json.loads(receipt.read_text())
    receipt.write_text(json.dumps({**document, "sha256": "0" * 64}))


def _receipt_removed(lock: Path, root: Path) -> None:
    del lock
    (root / "alpha-1.0.0" / ".nexo-install.json").unlink()


def _receipt_not_json(lock: Path, root: Path) -> None:
    del lock
    (root / "alpha-1.0.0" / ".nexo-install.json").write_text("{not json")


def _directory_removed(lock: Path, root: Path) -> None:
    del lock
    shutil.rmtree(root / "alpha-1.0.0")


DAMAGES = {
    "receipt-sha256": _receipt_sha_changed,
    "receipt-removed": _receipt_removed,
    "receipt-not-json": _receipt_not_json,
    "directory-removed": _directory_removed,
}


@pytest.mark.parametrize("path", list(PATHS))
@pytest.mark.parametrize("damage", list(DAMAGES))
def test_a_root_out_of_line_is_synced_again(
    capsys: pytest.CaptureFixture[str], synced: tuple[Path, Path], damage: str, path: str
) -> None:
    """The plugin the damage touched is installed again from the lock (its receipt the
    lock's again), the other is left alone; the next run has nothing to do."""
    lock, root = synced
    before = json.loads((root / "alpha-1.0.0" / ".nexo-install.json").read_text())
    bravo = tree_snapshot(root / "bravo-1.1.0")
    DAMAGES[damage](lock, root)
    code, out, err = _run(capsys, path, lock, root, "--json")
    assert code == 0, err
    document = json.loads(out)
    changes = {p["id"]: p["change"] for p in document["plugins"]}
    assert changes["bravo"] == "unchanged"
    assert changes["alpha"] != "unchanged"
    assert document["changed"] is True
    after = json.loads((root / "alpha-1.0.0" / ".nexo-install.json").read_text())
    assert after["sha256"] == before["sha256"]
    assert tree_snapshot(root / "bravo-1.1.0") == bravo
    again = json.loads(_run(capsys, path, lock, root, "--json")[1])
    assert again["changed"] is False


def _stale(lock: Path) -> None:
    wanted = lock.parent / "nexo-plugins.toml"
    wanted.write_text(wanted.read_text() + '[plugins.charlie]\nsource = "acme/charlie"\n')


def _missing(lock: Path) -> None:
    lock.unlink()


def _not_toml(lock: Path) -> None:
    lock.write_text("lock_version = [\n")


LOCKS = {
    "stale": (_stale, "lock_stale", 1),
    "missing": (_missing, "lock_stale", 1),
    "not-toml": (_not_toml, "lock_invalid", 2),
}


@pytest.mark.parametrize("path", list(PATHS))
@pytest.mark.parametrize("problem", list(LOCKS))
def test_a_lock_that_cannot_be_followed_fails_with_its_kind(
    capsys: pytest.CaptureFixture[str], synced: tuple[Path, Path], problem: str, path: str
) -> None:
    lock, root = synced
    spoil, kind, exit_code = LOCKS[problem]
    spoil(lock)
    before = tree_snapshot(root)
    code, out, err = _run(capsys, path, lock, root, "--json")
    assert code == exit_code
    document = json.loads(out)
    assert (document["ok"], document["kind"]) == (False, kind)
    assert "Traceback" not in err
    code, out, err = _run(capsys, path, lock, root)
    assert code == exit_code
    assert out == ""
    assert [line for line in err.splitlines() if line] == [
        f"error: {document['error']} [{document['kind']}]"
    ]
    assert tree_snapshot(root) == before


@pytest.mark.parametrize("path", list(PATHS))
def test_quiet_still_says_which_plugin_failed(
    capsys: pytest.CaptureFixture[str], synced: tuple[Path, Path], path: str
) -> None:
    """``-q`` drops the notes, never an error: a plugin the lock cannot be followed for
    (its tarball's hash is not what the registry serves) is named on stderr, exit 1."""
    lock, root = synced
    shutil.rmtree(root / "alpha-1.0.0")
    text = lock.read_text()
    locked = re.search(r'sha256 = "([0-9a-f]{64})"', text)
    assert locked is not None
    lock.write_text(text.replace(locked.group(1), "0" * 64))
    code, out, err = _run(capsys, path, lock, root, "-q")
    assert code == 1
    assert out == ""
    failures = [line for line in err.splitlines() if line.startswith("error: ")]
    assert len(failures) == 1, err
    assert failures[0].startswith("error: alpha: ")
