"""Which parser's rules a file gets (the table of docs/microapps.md, "Lint"), and the microapp
lints the engine hands such files to.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from nexo_pkg.core.diagnostics import Diagnostic
from nexo_pkg.manifest import microapp
from nexo_pkg.manifest.daemon import NEWEST_DAEMON_VERSION
from nexo_pkg.manifest.document import ParsedManifest
from nexo_pkg.manifest.names import is_file, known_absent
from nexo_pkg.manifest.options import LintOptions

__all__ = [
    "PARSER_DESCRIPTIONS",
    "Parser",
    "companion_of",
    "lint_companion",
    "lint_microapp",
    "manifest_parser",
]

Parser = Literal[
    "plugin-manifest",
    "extension-manifest",
    "companion-manifest",
    "extensions-config",
    "agents-config",
    "trust-policy",
    "fleet-wanted-set",
    "fleet-lock",
]

PARSER_DESCRIPTIONS: dict[str, str] = {
    "plugin-manifest": "plugin manifest, checked with the rules of the daemon's plugin "
    "manifest parser",
    "extension-manifest": "microapp manifest, checked with the rules of the daemon's extension "
    "manifest parser (crates/extensions/src/manifest.rs)",
    "companion-manifest": "microapp companion manifest, parsed as the extension host reads it "
    "(plugin manifest schema, no semantic rules) and compared with plugin.toml",
    "extensions-config": "the daemon's extensions.yaml, checked against its config types and "
    "the microapps it discovers",
    "agents-config": "the daemon's agents.yaml: each agent's keys and its microapp settings",
    "trust-policy": "trust policy, checked with the rules of trusted_keys.toml",
    "fleet-wanted-set": "a fleet's wanted set (nexo-plugins.toml), checked against its JSON Schema",
    "fleet-lock": "a fleet's lock file (nexo-plugins.lock), checked against its JSON Schema",
}
"""What ``nexo plugin lint`` says about each parser's rules (text and ``--json``)."""


def companion_of(path: str) -> dict[str, Any] | None:
    """For a ``nexo-plugin.toml`` on disk beside an extension-shaped ``plugin.toml``: that
    manifest. A name that is no file here (a manifest read from an archive) has no sibling."""
    if Path(path).name != microapp.COMPANION_MANIFEST_NAME:
        return None
    sibling = Path(path).parent / microapp.MICROAPP_MANIFEST_NAME
    if known_absent(sibling) or not is_file(Path(path)):
        return None  # no plugin.toml beside it (as a directory search saw it), or no file
    data = microapp.read_toml_or_none(sibling)
    return data if data is not None and microapp.is_extension_shape(data) else None


def manifest_parser(data: dict[str, Any], path: str) -> Parser:
    """Which parser's rules a parsed TOML manifest at ``path`` gets."""
    if microapp.is_extension_shape(data) and Path(path).name != microapp.COMPANION_MANIFEST_NAME:
        return "extension-manifest"
    return "companion-manifest" if companion_of(path) is not None else "plugin-manifest"


def lint_microapp(parsed: ParsedManifest, options: LintOptions) -> list[Diagnostic]:
    """Every finding of an extension-shaped ``plugin.toml`` (unfiltered)."""
    from nexo_pkg.manifest.rules_microapp import check_microapp  # noqa: PLC0415

    return check_microapp(parsed.data, parsed.locate, options.nexo_version or NEWEST_DAEMON_VERSION)


def lint_companion(parsed: ParsedManifest, sibling: dict[str, Any]) -> list[Diagnostic]:
    """Every finding of a microapp's ``nexo-plugin.toml`` (unfiltered): the schema's type,
    required-key, unknown-key and enum findings (what a parse refuses), and the cross-file
    rules against the ``plugin.toml`` beside it."""
    from nexo_pkg.manifest.microapp_model import microapp_from_data  # noqa: PLC0415
    from nexo_pkg.manifest.rules_microapp import check_companion  # noqa: PLC0415
    from nexo_pkg.manifest.schema import (  # noqa: PLC0415
        VALUE_CONSTRAINT_KEYWORDS,
        schema_diagnostics,
    )

    parse_level = {"minimum", "maximum"}  # integer ranges are part of the parse (u16 port)
    found = [
        diagnostic
        for keyword, diagnostic in schema_diagnostics(parsed.data, lambda: parsed.spans)
        if keyword not in VALUE_CONSTRAINT_KEYWORDS or keyword in parse_level
    ]
    model = microapp_from_data(sibling)
    found.extend(check_companion(parsed.data, parsed.locate, model.id if model else None, found))
    return found


def lint_companion_syntax(parsed: ParsedManifest, sibling: dict[str, Any]) -> list[Diagnostic]:
    """The findings of a microapp's ``nexo-plugin.toml`` that is not TOML: its syntax errors,
    and NX216 at the first of them (the host's parse fails, so it skips the file)."""
    from nexo_pkg.manifest.microapp_model import microapp_from_data  # noqa: PLC0415
    from nexo_pkg.manifest.rules_microapp import check_companion  # noqa: PLC0415

    model = microapp_from_data(sibling)
    refused = parsed.syntax_errors
    return [*refused, *check_companion({}, parsed.locate, model.id if model else None, refused)]
