"""docs/errors.md is generated from ErrorKind, and docs/cli.md points to it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from nexo_pkg.core.kinds import ErrorKind, errors_markdown

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "errors.md"


def test_errors_doc_is_up_to_date() -> None:
    assert DOC.read_text("utf-8") == errors_markdown(), "run: python scripts/gen_errors_doc.py"


def test_errors_doc_lists_every_kind_with_its_exit_code() -> None:
    rows = [line for line in DOC.read_text("utf-8").splitlines() if line.startswith("| `")]
    assert [row.split("|")[1].strip().strip("`") for row in rows] == [k.value for k in ErrorKind]
    assert [int(row.split("|")[2]) for row in rows] == [kind.exit_code for kind in ErrorKind]


def test_generator_script_writes_the_doc(tmp_path: Path) -> None:
    completed = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "gen_errors_doc.py")],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
        timeout=60,
    )
    assert completed.returncode == 0, completed.stderr
    assert DOC.read_text("utf-8") == errors_markdown()
    assert list(tmp_path.iterdir()) == []  # it writes docs/errors.md, nothing where it runs


def test_the_exit_code_section_of_cli_md_links_the_kinds() -> None:
    cli = (ROOT / "docs" / "cli.md").read_text("utf-8")
    section = cli.split("## Exit codes", 1)[1].split("\n## ", 1)[0]
    assert "(errors.md)" in section
    assert '{"ok": false, "kind"' in section
