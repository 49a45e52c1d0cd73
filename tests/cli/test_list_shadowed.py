"""`list` says which installs the daemon skips because an earlier search path (or an earlier
name) holds the same id: the same ones `doctor` reports as `shadowed`."""

from __future__ import annotations

import json
import shutil
from functools import partial
from pathlib import Path

import pytest
from support.cli import nexo
from support.tarballs import plugin_members, targz, write_plugin

plugin = partial(nexo, "plugin", in_process=True)


@pytest.fixture
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A daemon configuration whose discovery walks ``first`` then ``second``."""
    monkeypatch.setenv("NEXO_HOME", str(tmp_path / "home"))
    for name in ("NEXO_CONFIG_DIR", "NEXO_DAEMON_VERSION"):
        monkeypatch.delenv(name, raising=False)
    directory = tmp_path / "config"
    (directory / "plugins").mkdir(parents=True)
    (directory / "plugins" / "discovery.yaml").write_text(
        f"discovery:\n  search_paths: [{tmp_path / 'first'}, {tmp_path / 'second'}]\n",
        newline="\n",
    )
    return directory


def _install(root: Path, plugin_id: str, version: str) -> Path:
    data = targz(plugin_members(plugin_id, version))
    tarball = write_plugin(root.parent / "dist", plugin_id, version, data=data)
    result = plugin("install", str(tarball), "--dest", str(root), "--yes")
    assert result.code == 0, result.stderr
    return root / f"{plugin_id}-{version}"


def test_list_marks_what_the_daemon_skips_as_doctor_does(config: Path, tmp_path: Path) -> None:
    loaded = _install(tmp_path / "first", "alpha", "1.1.0")
    skipped = _install(tmp_path / "second", "alpha", "1.0.0")
    alone = _install(tmp_path / "second", "beta", "1.0.0")
    # A copy without a receipt is loaded by the daemon as the id its manifest gives.
    copied = tmp_path / "second" / "beta-copy"
    shutil.copytree(alone, copied)
    (copied / ".nexo-install.json").unlink()

    listed = plugin("list", "--config", str(config), "--json")
    assert listed.code == 0, listed.stderr
    document = json.loads(listed.stdout)
    assert {p["path"]: p["shadowed"] for p in document["plugins"]} == {
        str(loaded): False,
        str(skipped): True,
        str(alone): False,
    }
    rows = plugin("list", "--config", str(config))
    states = {line.split()[-1]: line.split()[-2] for line in rows.stdout.splitlines()}
    # The state column is the discovery state as before; the skipped copy is a note.
    assert states == {str(loaded): "enabled", str(skipped): "enabled", str(alone): "enabled"}
    notes = [line for line in rows.stderr.splitlines() if "the daemon skips" in line]
    # The copy without a receipt is skipped too (doctor names both).
    assert notes == [
        f"note: the daemon skips {path}: an earlier search path or name holds the same id "
        "(`nexo plugin doctor` reports it as shadowed)"
        for path in sorted([skipped, copied])
    ]
    quiet = plugin("list", "--config", str(config), "-q")
    assert "the daemon skips" not in quiet.stderr

    doctor = plugin("doctor", "--config", str(config), "--no-check", "--json")
    found = json.loads(doctor.stdout)["findings"]
    shadowed = {f["path"] for f in found if f["check"] == "shadowed"}
    assert shadowed == {str(skipped), str(copied)}


@pytest.mark.parametrize("first_version", ["1.0.0", "1.2.0"])
def test_outdated_id_reports_the_copy_the_daemon_loads(
    config: Path, tmp_path: Path, first_version: str
) -> None:
    """`outdated ID` with the id installed in two search paths reports the copy in the first
    one: the one the daemon loads and `list` leaves unmarked, whichever version is higher."""
    second_version = "1.1.0"
    loaded = _install(tmp_path / "first", "alpha", first_version)
    skipped = _install(tmp_path / "second", "alpha", second_version)
    listed = json.loads(plugin("list", "--config", str(config), "--json").stdout)
    assert {p["path"]: p["shadowed"] for p in listed["plugins"]} == {
        str(loaded): False,
        str(skipped): True,
    }
    result = plugin("outdated", "alpha", "--config", str(config), "--json")
    assert result.code == 0, result.stderr
    [entry] = json.loads(result.stdout)["plugins"]
    assert (entry["id"], entry["installed"]) == ("alpha", first_version), entry
