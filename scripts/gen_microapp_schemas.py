"""Write the JSON Schemas of the microapp manifest and of extensions.yaml from the models the
linter checks with (tests/lint/test_microapp_schemas.py checks they are current).

Usage: python scripts/gen_microapp_schemas.py
"""

from __future__ import annotations

import json
from pathlib import Path

from nexo_pkg.lint.daemon_files import microapp_schemas

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    for name, schema in microapp_schemas().items():
        text = json.dumps(schema, indent=2, ensure_ascii=False) + "\n"
        for directory in (ROOT / "schemas", ROOT / "nexo_pkg" / "schemas"):
            (directory / name).write_text(text, encoding="utf-8")
            print(f"wrote {directory / name}")


if __name__ == "__main__":
    main()
