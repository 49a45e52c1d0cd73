"""Every published JSON Schema names itself by the raw URL it is served from (one host
pattern for all), and the SchemaStore catalog entry ready to submit points at exactly those."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parents[2]
RAW = "https://raw.githubusercontent.com/nexo-pkg/nexo-pkg/main/"
SCHEMAS = sorted((ROOT / "schemas").glob("*.json"))
CATALOG = ROOT / "docs" / "schemastore-catalog.json"


def test_there_are_seven_schemas_shipped_as_published() -> None:
    assert len(SCHEMAS) == 7
    for schema in SCHEMAS:
        assert (ROOT / "nexo_pkg" / "schemas" / schema.name).read_bytes() == schema.read_bytes()


def test_every_id_is_the_raw_url_of_its_own_file() -> None:
    for schema in SCHEMAS:
        identifier = json.loads(schema.read_text("utf-8"))["$id"]
        assert identifier == RAW + f"schemas/{schema.name}", schema.name
        # Resolvable: the URL's path under the branch is the file's path in the repository.
        parts = urlsplit(identifier).path.split("/")
        assert parts[1:4] == ["nexo-pkg", "nexo-pkg", "main"]
        assert (ROOT.joinpath(*parts[4:])).is_file()


def test_the_catalog_entry_lists_every_schema_by_its_id() -> None:
    catalog = json.loads(CATALOG.read_text("utf-8"))
    assert catalog["$schema"] == "https://json.schemastore.org/schema-catalog.json"
    entries = catalog["schemas"]
    ids = {json.loads(schema.read_text("utf-8"))["$id"] for schema in SCHEMAS}
    assert {entry["url"] for entry in entries} == ids
    for entry in entries:
        assert set(entry) <= {"name", "description", "fileMatch", "url"}
        assert entry["name"].strip()
        assert entry["description"].strip()
        for pattern in entry.get("fileMatch", []):
            # Names specific to nexo only: a generic `plugin.toml` would claim other tools' files.
            assert pattern in {
                "nexo-plugin.toml",
                "trusted_keys.toml",
                "nexo-plugins.toml",
                "nexo-plugins.lock",
            }


def _undescribed(node: object, path: str) -> list[str]:
    """The properties under ``node`` (through nested objects, maps, arrays, variants and
    definitions; not the conditions of ``if``/``not``) that have no description."""
    found: list[str] = []
    if not isinstance(node, dict):
        return found
    for name, child in node.get("properties", {}).items():
        key = f"{path}.{name}" if path else name
        described = not isinstance(child, dict) or {"const", "$ref", "description"} & set(child)
        if not described or (isinstance(child, dict) and child.get("description") == ""):
            found.append(key)
        found += _undescribed(child, key)
    for keyword in ("additionalProperties", "items"):
        if isinstance(node.get(keyword), dict):
            found += _undescribed(node[keyword], f"{path}.*")
    for keyword in ("oneOf", "anyOf", "allOf"):
        for variant in node.get(keyword, []):
            if isinstance(variant, dict):
                found += _undescribed({k: v for k, v in variant.items() if k != "if"}, path)
    for name, definition in node.get("$defs", {}).items():
        found += _undescribed(definition, f"$defs.{name}")
    return found


def test_every_property_of_every_schema_is_described() -> None:
    """SPEC §7: the schemas carry descriptions, which hover (`nexo plugin lsp`) and taplo show
    for the key under the cursor; a key without one shows its type alone."""
    missing = {
        schema.name: _undescribed(json.loads(schema.read_text("utf-8")), "") for schema in SCHEMAS
    }
    assert {name: keys for name, keys in missing.items() if keys} == {}
