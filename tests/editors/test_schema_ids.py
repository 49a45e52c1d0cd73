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
