"""Write docs/rules.md from the rule registry (tests/lint/test_registry.py checks it is current).

Usage: python scripts/gen_rules_doc.py
"""

from __future__ import annotations

from pathlib import Path

from nexo_pkg.lint.explain import rules_markdown
from nexo_pkg.lint.registry import all_rules

DOC = Path(__file__).resolve().parent.parent / "docs" / "rules.md"


def main() -> None:
    DOC.write_text(rules_markdown(all_rules().values()), encoding="utf-8")
    print(f"wrote {DOC}")


if __name__ == "__main__":
    main()
