"""A noarch plugin with a native dependency, through the real command line: refused with
every offending file named beside the distribution it came from, the last line ending with
``[native_code]``, and nothing written: an earlier pack's DIST stays byte for byte, the
project is as it was, and the temporary directory is empty."""

from __future__ import annotations

import hashlib
from pathlib import Path

from support.cli import clean_env, nexo

from nexo_pkg.scaffold.generator import NewProject, create_project
from pack.pack_helpers import build_wheel

OFFENDERS = {
    ("lib/fastthing-1.0.dist-info/WHEEL", "fastthing 1.0"),
    ("lib/fastthing/_speedups.so", "fastthing 1.0"),
    ("lib/fastthing/_extra.so", "fastthing 1.0"),
    ("lib/sneaky/helper.dll", "sneaky 2.0"),
}


def _tree(root: Path) -> dict[str, str]:
    return {
        path.relative_to(root).as_posix(): (
            hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "dir"
        )
        for path in sorted(root.rglob("*"))
    }


def test_a_native_dependency_is_refused_naming_every_file_and_writes_nothing(
    tmp_path: Path, offline_pip_env: dict[str, str], host_tag: str
) -> None:
    wheels = tmp_path / "wheels"
    native = {"fastthing/_speedups.so": b"\x7fELF", "fastthing/_extra.so": b"\x7fELF"}
    build_wheel(
        wheels, "fastthing", "1.0", {"fastthing/__init__.py": b"", **native},
        purelib=False, tag=host_tag,
    )  # fmt: skip
    build_wheel(
        wheels, "sneaky", "2.0", {"sneaky/__init__.py": b"", "sneaky/helper.dll": b"MZ"},
        purelib=True, tag="py3-none-any",
    )  # fmt: skip
    project = tmp_path / "work" / "demo"
    create_project(NewProject("demo", dest=project))
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    env = clean_env(
        TMPDIR=str(temporary),
        HOME=str(tmp_path),
        **{**offline_pip_env, "PIP_FIND_LINKS": f"{wheels} {offline_pip_env['PIP_FIND_LINKS']}"},
    )
    packed = nexo("plugin", "pack", project, "--quiet", env=env, cwd=tmp_path)
    assert packed.code == 0, packed.stderr
    requirements = project / "requirements.txt"
    requirements.write_text(requirements.read_text() + "fastthing\nsneaky\n")
    before = _tree(tmp_path / "work")
    assert any(name.endswith("-noarch.tar.gz") for name in before)

    as_json = nexo("plugin", "pack", project, "--quiet", "--json", env=env, cwd=tmp_path)
    assert as_json.code == 1, as_json.stderr
    document = as_json.document
    assert (document["ok"], document["kind"]) == (False, "native_code")
    assert {(o["path"], o["distribution"]) for o in document["offenders"]} == OFFENDERS
    assert "--target TRIPLE" in document["error"]
    assert _tree(tmp_path / "work") == before
    assert list(temporary.iterdir()) == []

    as_text = nexo("plugin", "pack", project, "--quiet", env=env, cwd=tmp_path)
    assert as_text.code == 1, as_text.stderr
    assert as_text.stdout == ""
    lines = as_text.stderr.splitlines()
    assert "Traceback" not in as_text.stderr
    assert lines[0].startswith("error: a noarch tarball must be pure Python; found 5 offenders")
    assert lines[-1].endswith(" [native_code]")
    assert lines[-1].startswith("hint: ")
    assert "--target TRIPLE" in lines[-1]
    items = {line for line in lines if line.startswith("  - ")}
    assert len(items) == 5
    for path, distribution in OFFENDERS - {("lib/fastthing-1.0.dist-info/WHEEL", "fastthing 1.0")}:
        assert any(item.startswith(f"  - {path} ({distribution}): ") for item in items), items
    assert sum("fastthing-1.0.dist-info/WHEEL (fastthing 1.0)" in item for item in items) == 2
    assert _tree(tmp_path / "work") == before
    assert list(temporary.iterdir()) == []
