"""Links, FIFOs and oversized files planted inside a plugin root, a fleet directory or the blob
cache: never followed out of the root, never waited on, never read whole; what can be done is
done and the rest is refused with its kind."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest
from support.cli import CliResult, clean_env, nexo
from support.stderr import without_notes
from support.tarballs import write_plugin

# A read or open of a FIFO would block forever: a run that meets one is a subprocess, whose
# timeout fails the test instead.
TIMEOUT = 60


def _env(tmp_path: Path) -> dict[str, str]:
    """The test's own home, and an empty daemon configuration directory beside it."""
    (tmp_path / "no-config").mkdir(exist_ok=True)
    return clean_env(NEXO_HOME=str(tmp_path / "home"))


def _installed_root(tmp_path: Path) -> Path:
    """A plugin root holding hello 1.0.0, installed by the CLI from a local tarball."""
    tarball = write_plugin(tmp_path / "dist", "hello", "1.0.0")
    root = tmp_path / "root"
    result = nexo(
        "plugin", "install", str(tarball), "--dest", str(root), "--yes", "--json",
        "--config", str(tmp_path / "no-config"), env=_env(tmp_path), cwd=tmp_path,
        in_process=True,
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    return root


def _plant_journal(root: Path, record: dict[str, object]) -> None:
    journal = root / ".nexo" / "journal"
    journal.mkdir(parents=True, exist_ok=True)
    (journal / "0123456789abcdef.json").write_text(json.dumps(record), encoding="utf-8")


def _listed(root: Path, tmp_path: Path) -> CliResult:
    return nexo(
        "plugin", "list", "--dest", str(root), "--json", "--config", str(tmp_path / "no-config"),
        env=_env(tmp_path), cwd=tmp_path, in_process=True,
    )  # fmt: skip


# -- journal replay does not follow links -------------------------------------------------


def test_a_journal_through_a_planted_link_pulls_nothing_into_the_root(tmp_path: Path) -> None:
    """``staged`` runs through ``.nexo/staging/x``, a link to a tree outside: a plain
    ``list`` (which finishes interrupted replacements) must not rename that tree in."""
    root = _installed_root(tmp_path)
    outside = tmp_path / "outside"
    (outside / "tree" / "bin").mkdir(parents=True)
    (outside / "tree" / "bin" / "payload").write_text("outside\n")
    (root / ".nexo" / "staging").mkdir(parents=True, exist_ok=True)
    (root / ".nexo" / "staging" / "x").symlink_to(outside)
    _plant_journal(root, {"final": "pulled-1.0.0", "staged": ".nexo/staging/x/tree", "moves": []})
    listed = _listed(root, tmp_path)
    assert listed.exit_code == 0, listed.stderr
    assert not (root / "pulled-1.0.0").exists()
    assert (outside / "tree" / "bin" / "payload").read_text() == "outside\n"
    assert (root / "hello-1.0.0" / ".nexo-install.json").is_file()


def test_a_journal_through_a_planted_link_moves_no_plugin_out(tmp_path: Path) -> None:
    """The move of the installed tree goes to ``.nexo/removing/x/tree``, ``x`` a link to a
    directory outside: the installed plugin stays where it is."""
    root = _installed_root(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    staged = root / ".nexo" / "staging" / "hello-aaaa" / "tree"
    staged.mkdir(parents=True)
    (root / ".nexo" / "removing").mkdir(parents=True)
    (root / ".nexo" / "removing" / "x").symlink_to(outside)
    _plant_journal(
        root,
        {
            "final": "hello-1.0.0",
            "staged": ".nexo/staging/hello-aaaa/tree",
            "moves": [["hello-1.0.0", ".nexo/removing/x/tree"]],
        },
    )
    listed = _listed(root, tmp_path)
    assert listed.exit_code == 0, listed.stderr
    assert list(outside.iterdir()) == []
    assert (root / "hello-1.0.0" / ".nexo-install.json").is_file()
    assert [item["id"] for item in listed.document["plugins"]] == ["hello"]


@pytest.mark.parametrize(
    "record",
    [
        {"final": "a\x00b", "staged": "x", "moves": []},
        {"final": "hello-1.0.0", "staged": ".nexo/\x00", "moves": []},
        {"final": "x", "staged": "y", "moves": [["hello-1.0.0", ".nexo/\x00"]]},
    ],
    ids=["final", "staged", "moves"],
)
def test_a_journal_naming_a_path_with_a_nul_is_not_ours(
    tmp_path: Path, record: dict[str, object]
) -> None:
    """A path no file system can hold (found by tests/fuzz/test_fuzz_files.py) is a journal
    nexo-pkg never wrote: passed over and removed, as a torn one is, never an internal error."""
    root = _installed_root(tmp_path)
    _plant_journal(root, record)
    listed = _listed(root, tmp_path)
    assert listed.exit_code == 0, listed.stderr
    assert [item["id"] for item in listed.document["plugins"]] == ["hello"]
    assert listed.stderr.count("error") == 0, listed.stderr
    assert (root / "hello-1.0.0" / ".nexo-install.json").is_file()
    assert not (root / ".nexo" / "journal").exists() or not any(
        (root / ".nexo" / "journal").iterdir()
    )


# -- FIFOs, links and directories where a file is opened --------------------------------------


@pytest.mark.parametrize("planted", ["lock", "wanted"])
def test_a_fifo_as_a_fleet_file_is_refused_at_once(tmp_path: Path, planted: str) -> None:
    """A FIFO as ``nexo-plugins.lock`` or ``nexo-plugins.toml`` would hang ``lock``,
    ``lock --check`` and ``sync`` on a read no one answers: refused as unreadable."""
    wanted = tmp_path / "nexo-plugins.toml"
    lock = tmp_path / "nexo-plugins.lock"
    if planted == "lock":
        wanted.write_text('[plugins.echo]\nsource = "acme/nexo-plugin-echo"\n')
        os.mkfifo(lock)
        runs = [
            ("plugin", "lock", "--check", "-f", str(wanted), "--json"),
            ("plugin", "sync", "--lock", str(lock), "--frozen", "--dest", str(tmp_path / "root"),
             "--json"),
        ]  # fmt: skip
    else:
        os.mkfifo(wanted)
        runs = [("plugin", "lock", "-f", str(wanted), "--json")]
    for args in runs:
        result = nexo(*args, env=_env(tmp_path), cwd=tmp_path, timeout=TIMEOUT)
        assert result.exit_code == 2, (args, result.stderr)
        assert result.document["kind"].endswith("_invalid"), result.document
        assert "not a regular file" in result.document["error"]
    assert not (tmp_path / "root").exists()


def _cache_store(home: Path) -> Path:
    store = home / "cache" / "blobs" / "sha256"
    store.mkdir(parents=True)
    return store


def test_cache_prune_skips_nothing_it_can_remove_and_waits_on_no_fifo(tmp_path: Path) -> None:
    """A FIFO, a dangling link and a directory in the blob store are removed without being
    read or followed, and the stale blob beside them is pruned as well."""
    store = _cache_store(tmp_path / "home")
    data = b"a blob\n"
    blob = store / hashlib.sha256(data).hexdigest()
    blob.write_bytes(data)
    os.mkfifo(store / ("a" * 64))
    (store / ("b" * 64)).symlink_to(tmp_path / "nowhere")
    (store / ("c" * 64)).mkdir()
    outside = tmp_path / "outside.txt"
    outside.write_text("keep\n")
    (store / ("d" * 64)).symlink_to(outside)
    result = nexo(
        "plugin",
        "cache",
        "prune",
        "--all",
        "--json",
        env=_env(tmp_path),
        cwd=tmp_path,
        timeout=TIMEOUT,
    )
    assert result.exit_code == 0, result.stderr
    assert result.document["removed"] == 5
    assert list(store.iterdir()) == []
    assert outside.read_text() == "keep\n"


def test_an_install_waits_on_no_fifo_and_follows_no_link_in_the_cache_s_temp_dir(
    tmp_path: Path,
) -> None:
    """Each download first clears the temp files of killed writers from the cache: a FIFO
    planted there was opened for reading (a hang), a link followed. They are removed unopened;
    what a link points to is kept."""
    temp = tmp_path / "home" / "cache" / "blobs" / "tmp"
    temp.mkdir(parents=True)
    os.mkfifo(temp / "0123456789abcdef.fifo")
    (temp / "0123456789abcdef.dangling").symlink_to(tmp_path / "nowhere")
    outside = tmp_path / "outside.txt"
    outside.write_text("keep\n")
    (temp / "0123456789abcdef.link").symlink_to(outside)
    tarball = write_plugin(tmp_path / "dist", "hello", "1.0.0")
    root = tmp_path / "root"
    result = nexo(
        "plugin", "install", str(tarball), "--dest", str(root), "--yes", "--json",
        "--config", str(tmp_path / "no-config"), env=_env(tmp_path), cwd=tmp_path,
        timeout=TIMEOUT,
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    assert result.document["ok"] is True
    assert (root / "hello-1.0.0" / ".nexo-install.json").is_file()
    assert list(temp.iterdir()) == []
    assert outside.read_text() == "keep\n"


@pytest.mark.parametrize("lock_name", [".nexo-install.lock", ".nexo-sync.lock"])
def test_a_link_planted_as_a_lock_file_creates_nothing_outside(
    tmp_path: Path, lock_name: str
) -> None:
    """``O_CREAT`` through a dangling link would create its target wherever it points."""
    root = tmp_path / "root"
    root.mkdir()
    target = tmp_path / "elsewhere" / "created-by-nexo"
    target.parent.mkdir()
    (root / lock_name).symlink_to(target)
    tarball = write_plugin(tmp_path / "dist", "hello", "1.0.0")
    args: tuple[str, ...]
    if lock_name == ".nexo-install.lock":
        args = ("plugin", "install", str(tarball), "--dest", str(root), "--yes", "--json")
    else:
        lock = tmp_path / "nexo-plugins.lock"
        lock.write_text("lock_version = 1\n")
        args = ("plugin", "sync", "--lock", str(lock), "--frozen", "--dest", str(root), "--json")
    result = nexo(
        *args,
        "--config",
        str(tmp_path / "no-config"),
        env=_env(tmp_path),
        cwd=tmp_path,
        in_process=True,
    )
    assert result.exit_code != 0, result.stdout
    assert result.document["kind"] == "io", result.document
    assert "symbolic link" in result.document["error"]
    # The error names the planted file, not the root that holds it.
    assert f"the lock file {root / lock_name}:" in result.document["error"], result.document
    assert not target.exists()
    assert sorted(p.name for p in root.iterdir()) == [lock_name]


@pytest.mark.parametrize("planted", ["fifo", "directory"])
@pytest.mark.parametrize("lock_name", [".nexo-install.lock", ".nexo-sync.lock"])
def test_a_fifo_or_directory_planted_as_a_lock_file_is_refused_at_once(
    tmp_path: Path, lock_name: str, planted: str
) -> None:
    """Opened for writing without ``O_NONBLOCK``, a FIFO would wait for a reader forever; a
    directory is no file to lock. Each is one ``io`` line naming it, in text and ``--json``,
    and the root holds nothing new."""
    root = tmp_path / "root"
    root.mkdir()
    if planted == "fifo":
        os.mkfifo(root / lock_name)
    else:
        (root / lock_name).mkdir()
    tarball = write_plugin(tmp_path / "dist", "hello", "1.0.0")
    args: tuple[str, ...]
    if lock_name == ".nexo-install.lock":
        args = ("plugin", "install", str(tarball), "--dest", str(root), "--yes")
    else:
        lock = tmp_path / "nexo-plugins.lock"
        lock.write_text("lock_version = 1\n")
        args = ("plugin", "sync", "--lock", str(lock), "--frozen", "--dest", str(root))
    config = ("--config", str(tmp_path / "no-config"))
    text = nexo(*args, *config, env=_env(tmp_path), cwd=tmp_path, timeout=TIMEOUT)
    as_json = nexo(*args, *config, "--json", env=_env(tmp_path), cwd=tmp_path, timeout=TIMEOUT)
    assert (text.exit_code, as_json.exit_code) == (1, 1), text.stderr
    assert as_json.document["kind"] == "io", as_json.document
    assert f"the lock file {root / lock_name}:" in as_json.document["error"]
    assert without_notes(text.stderr) == f"error: {as_json.document['error']} [io]\n"
    assert sorted(p.name for p in root.iterdir()) == [lock_name]


def _operate(root: Path, tmp_path: Path, *args: str) -> CliResult:
    return nexo(
        "plugin", *args, "--dest", str(root), "--json", "--config", str(tmp_path / "no-config"),
        env=_env(tmp_path), cwd=tmp_path, in_process=True,
    )  # fmt: skip


@pytest.mark.parametrize("planted", [".nexo", ".nexo/holds"])
def test_a_hold_through_a_planted_link_is_written_inside_the_root(
    tmp_path: Path, planted: str
) -> None:
    """``hold`` through a link planted as the bookkeeping directory or its ``holds`` area
    would create a file wherever the link points; the link goes, the hold stays in the root."""
    root = _installed_root(tmp_path)
    outside = tmp_path / "elsewhere"
    (outside / "holds").mkdir(parents=True)
    link = root / planted
    if link.exists():
        shutil.rmtree(link)
    link.parent.mkdir(exist_ok=True)
    link.symlink_to(outside if planted == ".nexo" else outside / "holds")
    held = _operate(root, tmp_path, "hold", "hello")
    assert held.exit_code == 0, held.stderr
    assert sorted(outside.rglob("*")) == [outside / "holds"]
    assert not (root / planted).is_symlink()
    assert (root / ".nexo" / "holds" / "hello.json").is_file()
    listed = _listed(root, tmp_path)
    assert [plugin["held"] for plugin in listed.document["plugins"]] == [True], listed.stdout


def test_holds_and_kept_versions_behind_a_planted_link_are_not_read(tmp_path: Path) -> None:
    """A ``.nexo`` link to a tree elsewhere holding a hold and a kept version: ``list`` shows
    neither, and ``rollback`` finds nothing to pull into the root from there."""
    root = _installed_root(tmp_path)
    outside = tmp_path / "elsewhere"
    (outside / "holds").mkdir(parents=True)
    (outside / "holds" / "hello.json").write_text(
        json.dumps({"id": "hello", "version": "1.0.0", "since": "", "reason": "hold"}),
        encoding="utf-8",
    )
    shutil.copytree(root / "hello-1.0.0", outside / "kept" / "hello-1.0.0-0123456789ab" / "tree")
    shutil.rmtree(root / ".nexo", ignore_errors=True)
    (root / ".nexo").symlink_to(outside)
    listed = _listed(root, tmp_path)
    assert listed.exit_code == 0, listed.stderr
    assert [(p["version"], p["held"]) for p in listed.document["plugins"]] == [("1.0.0", False)]
    rolled = _operate(root, tmp_path, "rollback", "hello", "--yes")
    assert rolled.exit_code == 1, rolled.stdout
    assert "no earlier version" in rolled.document["error"]
    assert (outside / "kept" / "hello-1.0.0-0123456789ab" / "tree").is_dir()
    assert sorted(p.name for p in root.iterdir() if p.name != ".nexo") == [
        ".nexo-install.lock",
        "hello-1.0.0",
    ]
