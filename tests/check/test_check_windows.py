"""``check`` of a packed plugin where no ``#!`` script runs (Windows): the packed Python entry
the launcher runs is started directly, with a warning saying so; a script launcher with no
such entry is refused in one sentence naming what to do.

These tests make ``nexo_pkg.core.posix.POSIX`` false, as Windows's CPython has it (and as the
Windows shim of ``--windows-shim`` shows it), so they hold on any host.
"""

from __future__ import annotations

import shutil
import sys
import tarfile
from pathlib import Path

import pytest

from check.check_plugins import cli_check, sdk_packed
from nexo_pkg.check import run_check
from nexo_pkg.check.microapp_target import TargetError
from nexo_pkg.check.target import resolve_target
from nexo_pkg.core import posix


@pytest.fixture
def windows(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(posix, "POSIX", False)
    # No python3 on PATH, as on a Windows machine: the launcher could not have run anyway.
    monkeypatch.setenv("PATH", str(Path(sys.executable).parent.parent / "no-such-dir"))


def _tarball(source: Path, tarball: Path) -> Path:
    with tarfile.open(tarball, "w:gz") as archive:
        for path in sorted(source.rglob("*")):
            archive.add(path, arcname=str(path.relative_to(source)), recursive=False)
    return tarball


@pytest.mark.usefixtures("windows")
def test_a_packed_python_plugin_is_checked_through_its_entry(tmp_path: Path) -> None:
    root = sdk_packed(tmp_path / "packed")
    with resolve_target(root) as plugin:
        assert plugin.argv == [sys.executable, str(root / "lib" / "plugin" / "main.py")]
        assert plugin.env["PYTHONPATH"] == str(root / "lib")
        (note,) = plugin.notes
        assert "bin/sdkdemo is a shell script, which Windows cannot run" in note
    report = run_check(root, timeout_ms=10_000)
    assert report.ok, report.checks


@pytest.mark.usefixtures("windows")
def test_a_packed_tarball_is_checked_on_windows_with_the_warning(tmp_path: Path) -> None:
    tarball = _tarball(sdk_packed(tmp_path / "packed"), tmp_path / "sdkdemo-0.3.1-noarch.tar.gz")
    code, document = cli_check(tarball)
    assert code == 0, document
    assert document["ok"] is True
    warnings = [c for c in document["checks"] if c["status"] == "warn"]
    assert any("Windows cannot run" in check["detail"] for check in warnings), warnings


@pytest.mark.usefixtures("windows")
def test_a_script_launcher_without_a_python_entry_is_refused_in_one_sentence(
    tmp_path: Path,
) -> None:
    root = sdk_packed(tmp_path / "packed")
    (root / "lib" / "plugin" / "main.py").unlink()
    with pytest.raises(TargetError) as caught, resolve_target(root):
        pass
    message = caught.value.message
    assert "bin/sdkdemo is a script Windows cannot run" in message
    assert "no lib/plugin/main.py or src/main.py to run with Python instead" in message
    assert "check this plugin on Linux or macOS" in message
    assert "\n" not in message
    code, document = cli_check(root)
    assert code == 2
    assert document["ok"] is False


@pytest.mark.usefixtures("windows")
def test_a_project_is_checked_through_the_source_its_development_launcher_runs(
    tmp_path: Path,
) -> None:
    project = sdk_packed(tmp_path / "project")
    (project / "src").mkdir()
    (project / "lib" / "plugin" / "main.py").rename(project / "src" / "main.py")
    shutil.rmtree(project / "lib")
    (project / "bin" / "sdkdemo").write_text(
        '#!/usr/bin/env bash\nexec python3 "$(dirname "$0")/../src/main.py" "$@"\n'
    )
    with resolve_target(project) as plugin:
        assert plugin.argv == [sys.executable, str(project / "src" / "main.py")]
        assert "PYTHONPATH" not in plugin.env
        (note,) = plugin.notes
        assert "checking src/main.py run by" in note
    report = run_check(project, timeout_ms=10_000)
    assert report.ok, report.checks


@pytest.mark.usefixtures("windows")
def test_a_native_launcher_is_run_as_it_is(tmp_path: Path) -> None:
    root = sdk_packed(tmp_path / "packed")
    launcher = root / "bin" / "sdkdemo"
    launcher.write_bytes(b"MZ\x90\x00 not a script")
    launcher.chmod(0o755)
    with resolve_target(root) as plugin:
        assert plugin.argv == [str(launcher)]
        assert plugin.notes == ()


def test_on_posix_the_launcher_runs(tmp_path: Path) -> None:
    if not posix.POSIX:
        pytest.skip("the POSIX behaviour")
    root = sdk_packed(tmp_path / "packed")
    with resolve_target(root) as plugin:
        assert plugin.argv == [str(root / "bin" / "sdkdemo")]
