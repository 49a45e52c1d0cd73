"""Write docs/errors.md from the ErrorKind enum (tests/core/test_errors_doc.py checks it).

Usage: python scripts/gen_errors_doc.py
"""

from __future__ import annotations

from pathlib import Path

from nexo_pkg.core.kinds import errors_markdown

DOC = Path(__file__).resolve().parent.parent / "docs" / "errors.md"


def main() -> None:
    DOC.write_text(errors_markdown(), encoding="utf-8")
    print(f"wrote {DOC}")


if __name__ == "__main__":
    main()
