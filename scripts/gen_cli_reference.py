"""Rewrite the command reference at the end of docs/cli.md from the commands
(tests/cli/test_docs_cli.py checks it is current).

Usage: python scripts/gen_cli_reference.py
"""

from __future__ import annotations

from pathlib import Path

from nexo_pkg.cli.reference import MARKER, reference_markdown

DOC = Path(__file__).resolve().parent.parent / "docs" / "cli.md"


def main() -> None:
    text = DOC.read_text(encoding="utf-8")
    kept = text.split(MARKER, 1)[0].rstrip("\n")
    DOC.write_text(f"{kept}\n\n{reference_markdown()}", encoding="utf-8")
    print(f"wrote {DOC}")


if __name__ == "__main__":
    main()
