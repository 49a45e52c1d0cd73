"""The JSON Schema: well-formed, documented, shipped twice identically, accepting every
reference manifest, typed like TOML, and answered the same by the fast conformance check and
by jsonschema."""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from support.shared_fixtures import shared_files, skip_unless_present

from nexo_pkg.core.toml_spans import scan_spans
from nexo_pkg.manifest.conformance import UnsupportedKeywordError, conforms
from nexo_pkg.manifest.schema import load_schema, schema_diagnostics, schema_errors

ROOT = Path(__file__).resolve().parent.parent.parent
SHIPPED = ROOT / "schemas" / "nexo-plugin.schema.json"
PACKAGED = ROOT / "nexo_pkg" / "schemas" / "nexo-plugin.schema.json"
FIXTURES = ROOT / "tests" / "fixtures"
REFERENCE = shared_files("*.toml", "reference-manifests")
CORPUS = sorted((FIXTURES / "manifests").glob("*/*.toml"))


def test_both_copies_of_each_schema_are_identical() -> None:
    for name in ("nexo-plugin.schema.json", "lint-report.schema.json"):
        assert (ROOT / "schemas" / name).read_bytes() == (
            ROOT / "nexo_pkg" / "schemas" / name
        ).read_bytes(), name


def test_schema_is_draft_2020_12_with_id_and_title() -> None:
    schema = json.loads(SHIPPED.read_text("utf-8"))
    Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"].endswith("/schemas/nexo-plugin.schema.json")
    assert schema["title"]
    assert schema["properties"]["plugin"]["required"] == [
        "id",
        "version",
        "name",
        "description",
        "min_nexo_version",
    ]


def walk(schema: Any, path: str = "#") -> Iterator[tuple[str, dict[str, Any]]]:
    if isinstance(schema, dict):
        yield path, schema
        for key, value in schema.items():
            yield from walk(value, f"{path}/{key}")
    elif isinstance(schema, list):
        for index, item in enumerate(schema):
            yield from walk(item, f"{path}/{index}")


def test_every_property_has_a_description_and_typed_tables_are_closed() -> None:
    schema = load_schema()
    for path, node in walk(schema):
        if "/if" in path:
            continue  # conditions of tagged unions, not documented keys
        for name, sub in (
            node.get("properties", {}).items() if path.split("/")[-1] != "properties" else []
        ):
            assert isinstance(sub, dict), f"{path}/properties/{name}"
            assert sub.get("description"), f"{path}/properties/{name}"
        if node.get("type") == "object" and "properties" in node and "allOf" not in node:
            assert node.get("additionalProperties") is False, path


def test_patterns_are_ecmascript_compatible() -> None:
    for path, node in walk(load_schema()):
        pattern = node.get("pattern")
        if isinstance(pattern, str):
            # No Python-only syntax: named groups, lookbehind, inline flags, \A \Z.
            for python_only in ("(?P<", "(?<", "(?i", "\\A", "\\Z"):
                assert python_only not in pattern, path


@pytest.mark.parametrize("manifest", REFERENCE, ids=lambda p: p.name)
def test_reference_manifests_validate(manifest: Path) -> None:
    data = tomllib.loads(manifest.read_text("utf-8"))
    assert schema_errors(data) == []


def test_a_float_is_never_an_integer() -> None:
    data = tomllib.loads((FIXTURES / "manifests" / "valid" / "minimal.toml").read_text("utf-8"))
    data["plugin"]["supervisor"] = {"max_attempts": 3.0}
    [(keyword, diagnostic)] = schema_diagnostics(data, scan_spans("")[0])
    assert keyword == "type"
    assert diagnostic.code == "NX012"
    assert "found a float" in diagnostic.message


def test_a_datetime_is_not_a_string() -> None:
    data = tomllib.loads(
        '[plugin]\nid = "a"\nversion = "0.1.0"\nname = "n"\n'
        'description = 1979-05-27\nmin_nexo_version = ">=0.1.0"\n'
    )
    [(keyword, diagnostic)] = schema_diagnostics(data, scan_spans("")[0])
    assert (keyword, diagnostic.code) == ("type", "NX012")
    assert "found a date" in diagnostic.message


@pytest.mark.skipif(
    shutil.which("taplo", path=str(Path(sys.executable).parent)) is None,
    reason="taplo is not installed",
)
@skip_unless_present("reference-manifests")
def test_taplo_checks_with_the_schema(tmp_path: Path) -> None:
    taplo = str(Path(sys.executable).parent / "taplo")
    schema_url = SHIPPED.as_uri()
    good = subprocess.run(
        [taplo, "check", "--schema", schema_url, *map(str, REFERENCE)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert good.returncode == 0, good.stderr
    bad = tmp_path / "nexo-plugin.toml"
    bad.write_text(
        '[plugin]\nid = "a"\nversion = "0.1.0"\nname = "n"\ndescription = "d"\n'
        'min_nexo_version = ">=0.1.0"\nunknown = 1\n'
    )
    refused = subprocess.run(
        [taplo, "check", "--schema", schema_url, str(bad)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert refused.returncode != 0


# -- the fast conformance check agrees with jsonschema ----------------------------------


def detailed_valid(data: Any) -> bool:
    from nexo_pkg.manifest.schema import _validator

    return not any(True for _ in _validator().iter_errors(data))


@cache
def corpus_documents() -> list[dict[str, Any]]:
    documents = []
    for path in CORPUS + REFERENCE:
        try:
            documents.append(tomllib.loads(path.read_text("utf-8")))
        except tomllib.TOMLDecodeError:
            continue
    return documents


@pytest.mark.parametrize("index", range(len(corpus_documents())))
def test_conformance_matches_jsonschema_on_the_corpus(index: int) -> None:
    data = corpus_documents()[index]
    assert conforms(data, load_schema()) == detailed_valid(data)


def test_conformance_refuses_unknown_keywords() -> None:
    with pytest.raises(UnsupportedKeywordError):
        conforms({}, {"oneOf": [{"type": "object"}]})


FULL = tomllib.loads((FIXTURES / "manifests" / "valid" / "full.toml").read_text("utf-8"))
SCALARS = st.one_of(
    st.booleans(),
    st.integers(min_value=-5, max_value=70_000),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.sampled_from(
        [
            "",
            "x",
            "deny",
            "host",
            "Boolean",
            "rpc",
            "static",
            "single",
            "0.1.0",
            "nexo/admin/a/",
            "/weather",
            "workspace_walk",
            "file_presence",
            "qr",
        ]
    ),
)


def paths_of(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            found += paths_of(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += paths_of(item, (*prefix, index))
    return found


FULL_PATHS = [path for path in paths_of(FULL) if path]


@given(
    st.lists(
        st.tuples(
            st.sampled_from(FULL_PATHS),
            st.one_of(
                SCALARS,
                st.just("<delete>"),
                st.just("<extra>"),
                st.lists(SCALARS, max_size=2),
                st.dictionaries(st.just("kind"), SCALARS),
            ),
        ),
        min_size=1,
        max_size=3,
    )
)
def test_conformance_matches_jsonschema_on_mutations(
    mutations: list[tuple[tuple[Any, ...], Any]],
) -> None:
    data = copy.deepcopy(FULL)
    for path, replacement in mutations:
        parent: Any = data
        try:
            for step in path[:-1]:
                parent = parent[step]
            last = path[-1]
            if replacement == "<delete>":
                del parent[last]
            elif replacement == "<extra>" and isinstance(parent, dict):
                parent["extra_key"] = 1
            else:
                parent[last] = replacement
        except (KeyError, IndexError, TypeError):
            continue
    assert conforms(data, load_schema()) == detailed_valid(data)


def test_conformance_compiles_a_property_when_a_document_has_it() -> None:
    # An unknown keyword under a property counts once a document has the property; a failed
    # compilation leaves nothing half built for the next document (the definition below is
    # compiled again, and fails again, rather than answering from an empty placeholder).
    schema = {
        "$defs": {"odd": {"oneOf": [{"type": "object"}]}},
        "type": "object",
        "properties": {"plain": {"type": "string"}, "odd": {"$ref": "#/$defs/odd"}},
    }
    assert conforms({"plain": "x"}, schema)
    assert not conforms({"plain": 1}, schema)
    for _ in range(2):
        with pytest.raises(UnsupportedKeywordError):
            conforms({"odd": {}}, schema)
    assert conforms({"plain": "y"}, schema)


def test_conformance_handles_recursive_definitions() -> None:
    schema = {
        "$defs": {
            "node": {
                "type": "object",
                "properties": {"child": {"$ref": "#/$defs/node"}},
                "additionalProperties": False,
            }
        },
        "$ref": "#/$defs/node",
    }
    assert conforms({"child": {"child": {}}}, schema)
    assert not conforms({"child": {"x": 1}}, schema)
    assert not conforms({"child": 1.0}, schema)


def test_length_and_size_constraints_speak_toml() -> None:
    from nexo_pkg.manifest.schema import _translate

    # The manifest schema bounds no array length any more (the daemon skips the section
    # validators that would), so a schema of its shape carries the constraint here.
    schema = {"properties": {"auth_check": {"properties": {"candidates": {"minItems": 1}}}}}
    text = "auth_check = { candidates = [] }\n"
    [error] = Draft202012Validator(schema).iter_errors(tomllib.loads(text))
    [diagnostic] = _translate(error, scan_spans(text)[0])
    assert error.validator == "minItems"
    assert diagnostic.message == "array `auth_check.candidates` must have at least 1 item"


def test_alternatives_report_the_best_match_only() -> None:
    from nexo_pkg.manifest.schema import _translate

    schema = {
        "type": "object",
        "properties": {
            "layout": {
                "oneOf": [
                    {"type": "string"},
                    {
                        "type": "object",
                        "properties": {"kind": {"enum": ["single", "walk"]}},
                        "required": ["kind"],
                        "additionalProperties": False,
                    },
                ]
            }
        },
    }
    text = 'layout = { kind = "singel" }\n'
    [error] = Draft202012Validator(schema).iter_errors(tomllib.loads(text))
    [diagnostic] = _translate(error, scan_spans(text)[0])
    assert diagnostic.code == "NX013"
    assert diagnostic.key_path == "layout.kind"
    assert diagnostic.help == 'did you mean "single"?'
    assert diagnostic.span.start.column == 19


def test_alternatives_that_all_mismatch_the_type_name_every_type() -> None:
    from nexo_pkg.manifest.schema import _translate

    schema = {"properties": {"label": {"anyOf": [{"type": "string"}, {"type": "object"}]}}}
    text = "label = 3\n"
    [error] = Draft202012Validator(schema).iter_errors(tomllib.loads(text))
    [diagnostic] = _translate(error, scan_spans(text)[0])
    assert diagnostic.message == "`label` must be a string or a table, found an integer"
