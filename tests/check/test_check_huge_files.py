"""A manifest far larger than lint reads (a sparse file: gigabytes of nothing on disk) is
judged by ``check`` from the first bytes past the limit, as ``lint`` judges it (NX004): it is
never read whole, so the command neither takes the memory of the file nor dies without a
report. A microapp's companion that large is one the daemon cannot use: a warning. Nor is a
huge script read whole for its ``#!`` line when its interpreter is missing."""

from __future__ import annotations

import json
import resource
import subprocess
import sys
from pathlib import Path

import pytest
from support.cli import clean_env

NEXO = str(Path(sys.executable).parent / "nexo")
# Far above what check needs, far below the file: reading it whole cannot succeed.
ADDRESS_SPACE = 768 * 1024 * 1024
HUGE = 2 * 1024 * 1024 * 1024

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="RLIMIT_AS, sparse files"
)


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))


def _tree(root: Path) -> dict[str, int]:
    return {str(path.relative_to(root)): path.lstat().st_size for path in root.rglob("*")}


def _checked(
    tmp_path: Path, kind: str, huge: str, head: bytes | None = None
) -> tuple[int, dict[str, str], Path, bool]:
    """``check --json`` of a new project of ``kind`` whose ``huge`` file is made huge (after
    ``head`` replaces its bytes, when given): exit code, each check's ``status: detail``, the
    project, whether it is unchanged."""
    env = clean_env(NEXO_HOME=str(tmp_path / "home"))
    project = tmp_path / "demo"
    made = subprocess.run(
        [NEXO, "plugin", "new", "demo", "--kind", kind, "--dest", str(project)],
        env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    if head is not None:
        (project / huge).write_bytes(head)
    with (project / huge).open("ab") as handle:
        handle.truncate(HUGE)
    before = _tree(project)
    checked = subprocess.run(
        [NEXO, "plugin", "check", str(project), "--json"],
        env=env, capture_output=True, text=True, timeout=120, check=False,
        stdin=subprocess.DEVNULL, preexec_fn=_limited,
    )  # fmt: skip
    assert "Traceback" not in checked.stderr, checked.stderr[-2000:]
    document = json.loads(checked.stdout)
    assert "checks" in document, document
    checks = {c["name"]: f"{c['status']}: {c['detail']}" for c in document["checks"]}
    return checked.returncode, checks, project, _tree(project) == before


def test_check_judges_a_huge_manifest_without_reading_it_whole(tmp_path: Path) -> None:
    code, checks, _, unchanged = _checked(tmp_path, "plugin", "plugin.toml")
    assert code == 1, checks
    assert checks["manifest"].startswith("fail: plugin.toml:1:1: NX004 file is larger than")
    assert checks["spawn"].startswith("fail: not started")
    assert unchanged


def test_check_warns_of_a_huge_microapp_companion_without_reading_it_whole(
    tmp_path: Path,
) -> None:
    code, checks, _, unchanged = _checked(tmp_path, "microapp", "nexo-plugin.toml")
    assert checks["manifest"] == (
        "warn: nexo-plugin.toml cannot be read (it is larger than 4194304 bytes); the daemon "
        "skips it, so this microapp gets no admin router"
    )
    assert checks["spawn"].startswith("pass: "), checks
    assert code == 0, checks
    assert unchanged


def test_check_names_the_missing_interpreter_of_a_huge_script_without_reading_it_whole(
    tmp_path: Path,
) -> None:
    code, checks, project, unchanged = _checked(
        tmp_path, "microapp", "bin/demo", head=b"#!/nonexistent/python3\n"
    )
    assert checks["spawn"] == (
        f"fail: cannot start {project / 'bin' / 'demo'}: No such file or directory; shebang "
        "interpreter `/nonexistent/python3` not found on this host (the daemon logs `extension "
        "spawn failed` and demo does not load)"
    ), checks
    assert code == 1
    assert unchanged
