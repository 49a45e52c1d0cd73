"""Every manifest is read through one reader, ``nexo_pkg/manifest/read.py``, as the daemon's
``toml`` crate reads it (past a leading byte-order mark, the year 0000 and a leap second
read): no other module calls ``tomllib.load``/``tomllib.loads`` itself, except the ones named
below, which read files that are not manifests. A new bare call fails here, before a command
disagrees with the daemon over a manifest that one reader takes and the other refuses.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "nexo_pkg"
READER = PACKAGE / "manifest" / "read.py"

#: Modules that parse TOML that is no manifest, with what they read.
NOT_MANIFESTS = {
    PACKAGE / "trust" / "policy.py": "trusted_keys.toml",
    PACKAGE / "fleet" / "lockfile.py": "the fleet's lock file",
    PACKAGE / "lint" / "config.py": "lint's own configuration (pyproject.toml, nexo-lint.toml)",
    PACKAGE / "lint" / "fixes.py": "one edited line or a fix's result, judged as TOML text",
}
#: Project files `new` writes for the plugin itself (run by the plugin's tests, not nexo-pkg).
TEMPLATES = PACKAGE / "scaffold" / "templates"


def bare_reads(source: str) -> list[int]:
    """The lines of ``source`` that call ``tomllib.load``/``loads`` or import either name."""
    found: list[int] = []
    for node in ast.walk(ast.parse(source)):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "tomllib"
            and node.attr in {"load", "loads"}
        ):
            found.append(node.lineno)
        elif isinstance(node, ast.ImportFrom) and node.module == "tomllib":
            found += [node.lineno for alias in node.names if alias.name in {"load", "loads"}]
    return found


def test_the_scan_finds_every_spelling() -> None:
    source = (
        "import tomllib\nfrom tomllib import loads\n"
        "a = tomllib.loads(t)\nb = tomllib.load(f)\nc = tomllib.TOMLDecodeError\n"
    )
    assert bare_reads(source) == [2, 3, 4]


def test_only_the_reader_parses_manifest_toml() -> None:
    offenders = [
        f"{path.relative_to(PACKAGE.parent)}:{line}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if path != READER and path not in NOT_MANIFESTS and TEMPLATES not in path.parents
        for line in bare_reads(path.read_text(encoding="utf-8"))
    ]
    assert offenders == [], (
        "read manifest TOML with nexo_pkg.manifest.read.read_manifest (bytes) or "
        "read_manifest_text, as the daemon reads it"
    )
    assert bare_reads(READER.read_text(encoding="utf-8")), "the reader itself calls tomllib"


def test_the_files_allowed_by_name_still_exist_and_still_read_toml() -> None:
    for path in NOT_MANIFESTS:
        assert bare_reads(path.read_text(encoding="utf-8")), path
