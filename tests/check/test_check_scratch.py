"""A plugin or microapp that turns check's temporary directory against it (moves it away and
leaves a link at its name) neither costs the report nor leaves anything behind, and the link's
target is never followed."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from check.check_microapps import scripted_microapp
from check.check_plugins import scripted_plugin


def scripted_tarball(tmp_path: Path, behaviour: str) -> Path:
    """A tarball of the scripted plugin doing ``behaviour`` (its manifest alone: check runs
    the fixture through it)."""
    project = scripted_plugin(tmp_path / "project", behaviour)
    tarball = tmp_path / "scripted-0.1.0-noarch.tar.gz"
    with tarfile.open(tarball, "w:gz") as archive:
        archive.add(project / "nexo-plugin.toml", arcname="nexo-plugin.toml")
    return tarball


def check_json(target: Path, env: dict[str, str]) -> subprocess.CompletedProcess[bytes]:
    """``nexo plugin check TARGET --json`` in its own process, with ``env``."""
    return subprocess.run(
        [sys.executable, "-m", "nexo_pkg", "plugin", "check", str(target), "--json",
         "--timeout-ms", "60000"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        env=env,
        timeout=120,
        check=False,
    )  # fmt: skip


def swapped_tarball(tmp_path: Path) -> Path:
    """A tarball whose plugin moves its extraction directory away, leaving a link."""
    return scripted_tarball(tmp_path, "swap_scratch")


def swapped_state(tmp_path: Path) -> Path:
    """A microapp that moves the directory holding its state root away, leaving a link."""
    return scripted_microapp(tmp_path / "microapp", "swap_state")


@pytest.mark.parametrize("target", [swapped_tarball, swapped_state], ids=["tarball", "state"])
def test_a_plugin_that_swaps_check_s_temporary_directory_for_a_link_keeps_the_report(
    tmp_path: Path, target: object
) -> None:
    assert callable(target)
    checked = target(tmp_path)
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "keep.txt").write_text("keep\n", encoding="utf-8")
    temp = tmp_path / "tmp"  # check's temporary directories go here, and only here
    temp.mkdir()
    env = {**os.environ, "TMPDIR": str(temp), "FIXTURE_VICTIM": str(victim)}
    process = check_json(checked, env)
    document = json.loads(process.stdout)
    assert "error" not in document, process.stderr  # the check's report, not an error
    assert process.returncode == 0, process.stdout
    assert document["ok"] is True
    assert {check["name"] for check in document["checks"]} >= {"initialize", "spawn"}
    assert b"rmtree" not in process.stderr
    # Neither the link nor the moved directory is left; the link's target is untouched.
    assert [entry.name for entry in temp.iterdir()] == []
    assert [entry.name for entry in victim.iterdir()] == ["keep.txt"]
    assert (victim / "keep.txt").read_text(encoding="utf-8") == "keep\n"


def _can_pin(tmp_path: Path) -> bool:
    """Whether this process may make a file immutable here (root with CAP_LINUX_IMMUTABLE on
    a file system with inode flags)."""
    probe = tmp_path / "probe"
    probe.write_text("", encoding="utf-8")
    made = subprocess.run(["chattr", "+i", str(probe)], capture_output=True, check=False)
    subprocess.run(["chattr", "-i", str(probe)], capture_output=True, check=False)
    return made.returncode == 0


@pytest.mark.skipif(
    sys.platform != "linux" or os.geteuid() != 0, reason="needs root to make a file immutable"
)
def test_a_file_the_plugin_pins_in_check_s_temporary_directory_keeps_the_report(
    tmp_path: Path,
) -> None:
    """A plugin that leaves a file in check's temporary directory that cannot be removed (an
    immutable file beside a link to a victim): the check's report stands, everything else is
    removed, the link is removed without its target being followed or changed."""
    if not _can_pin(tmp_path):
        pytest.skip("chattr +i is refused here")
    tarball = scripted_tarball(tmp_path, "pin_scratch")
    victim = tmp_path / "victim.txt"
    victim.write_text("keep\n", encoding="utf-8")
    victim.chmod(0o640)
    temp = tmp_path / "tmp"
    temp.mkdir()
    env = {
        **os.environ,
        "TMPDIR": str(temp),
        "FIXTURE_VICTIM": str(victim),
        "FIXTURE_PIN_COMMAND": "chattr +i pinned/file",
    }
    try:
        process = check_json(tarball, env)
        document = json.loads(process.stdout)
        assert "error" not in document, document  # not an `io` error naming the pinned file
        assert (process.returncode, document["ok"]) == (0, True), process.stdout
        assert b"Traceback" not in process.stderr
        left = sorted(path.relative_to(temp).as_posix() for path in temp.rglob("*"))
        assert len(left) == 4, left  # the scratch directory, plugin/, pinned/ and the file
        assert left[-1].endswith("/plugin/pinned/file")
        assert (victim.read_text(encoding="utf-8"), victim.stat().st_mode & 0o777) == (
            "keep\n",
            0o640,
        )
    finally:
        for pinned in temp.rglob("file"):
            subprocess.run(["chattr", "-i", str(pinned)], check=False)


def test_a_directory_left_at_the_scratch_name_stays_and_check_s_own_is_removed(
    tmp_path: Path,
) -> None:
    """A plugin that moves check's extraction directory away and makes a directory of its own
    at the name: check removes its own directory where it was moved (found by device and
    inode), and leaves the plugin's directory alone."""
    tarball = scripted_tarball(tmp_path, "swap_scratch_for_a_directory")
    temp = tmp_path / "tmp"
    temp.mkdir()
    process = check_json(tarball, {**os.environ, "TMPDIR": str(temp)})
    document = json.loads(process.stdout)
    assert process.returncode == 0, (process.stdout, process.stderr)
    assert document["ok"] is True
    # Only the plugin's directory is left, with its file; check's moved one is gone.
    [left] = list(temp.iterdir())
    assert not left.name.endswith(".moved"), left
    assert [entry.name for entry in left.iterdir()] == ["theirs.txt"]
    assert (left / "theirs.txt").read_text(encoding="utf-8") == "theirs\n"


def test_a_scratch_directory_moved_far_from_its_name_is_removed_where_it_is(
    tmp_path: Path,
) -> None:
    """A plugin that moves check's extraction directory into another directory altogether
    (not beside its name): check finds it by an open descriptor of it and removes it there,
    leaving nothing in either place and nothing to say."""
    tarball = scripted_tarball(tmp_path, "move_scratch_away")
    temp, away = tmp_path / "tmp", tmp_path / "away"
    temp.mkdir()
    away.mkdir()
    env = {**os.environ, "TMPDIR": str(temp), "FIXTURE_AWAY": str(away)}
    process = check_json(tarball, env)
    document = json.loads(process.stdout)
    assert (process.returncode, document["ok"]) == (0, True), (process.stdout, process.stderr)
    assert "cleanup" not in {check["name"] for check in document["checks"]}
    assert (list(temp.iterdir()), list(away.iterdir())) == ([], [])


@pytest.mark.skipif(sys.platform != "linux", reason="PATH_MAX chains as Linux bounds them")
def test_a_scratch_directory_moved_out_of_reach_is_named_in_the_report(tmp_path: Path) -> None:
    """A plugin that moves check's extraction directory where no path reaches it (below a
    chain of directories longer than PATH_MAX): check cannot remove it, and its report says
    so in a ``cleanup`` warning naming the directory and a command that finds it, in --json
    and in text; the report stands (a warning, exit 0)."""
    tarball = scripted_tarball(tmp_path, "move_scratch_out_of_reach")
    temp, away = tmp_path / "tmp", tmp_path / "away"
    temp.mkdir()
    away.mkdir()
    env = {**os.environ, "TMPDIR": str(temp), "FIXTURE_AWAY": str(away)}
    try:
        process = check_json(tarball, env)
        document = json.loads(process.stdout)
        assert (process.returncode, document["ok"]) == (0, True), process.stdout
        [cleanup] = [check for check in document["checks"] if check["name"] == "cleanup"]
        assert cleanup["status"] == "warn"
        detail = cleanup["detail"]
        assert detail.startswith(f"the plugin moved check's temporary directory {temp}/nexo-check-")
        assert detail.endswith(
            " away, and it was not found to be removed: it is left where the plugin put it "
            f"(`find {_mount_of(temp)} -xdev -inum {_inode_left(away)}` names it)"
        ), detail
        assert list(temp.iterdir()) == []
        shutil.rmtree(away)
        away.mkdir()
        text = subprocess.run(
            [sys.executable, "-m", "nexo_pkg", "plugin", "check", str(tarball)],
            stdin=subprocess.DEVNULL, capture_output=True, env=env, timeout=120, check=False,
        )  # fmt: skip
        assert text.returncode == 0, text.stderr
        assert b"it was not found to be removed" in text.stdout + text.stderr
    finally:
        shutil.rmtree(away)


def _mount_of(path: Path) -> Path:
    found = path.resolve()
    while not found.is_mount():
        found = found.parent
    return found


def _inode_left(away: Path) -> int:
    """The inode of the directory the plugin left at the end of its chain under ``away``."""
    fd = os.open(away, os.O_RDONLY)
    try:
        while True:
            [name] = os.listdir(fd)  # noqa: PTH208 (a descriptor: no path reaches it)
            deeper = os.open(name, os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = deeper
            if name.startswith("nexo-check-"):
                return os.fstat(fd).st_ino
    finally:
        os.close(fd)
