"""Schema walking by TOML key path: $ref, items, additionalProperties, anyOf/oneOf."""

from __future__ import annotations

from typing import Any

from nexo_pkg.lsp.schema_nav import SchemaNavigator, packaged_navigator

SCHEMA: dict[str, Any] = {
    "$defs": {
        "Sandbox": {
            "type": "object",
            "description": "Process sandbox.",
            "properties": {
                "enabled": {"type": "boolean", "default": False, "description": "Turn it on."},
                "network": {"enum": ["deny", "host"], "default": "deny", "description": "Net."},
            },
        },
        "Channel": {
            "type": "object",
            "properties": {"kind": {"type": "string", "description": "Channel kind."}},
        },
    },
    "type": "object",
    "properties": {
        "plugin": {
            "type": "object",
            "description": "The plugin.",
            "properties": {
                "sandbox": {"$ref": "#/$defs/Sandbox"},
                "channels": {
                    "type": "object",
                    "properties": {
                        "register": {"type": "array", "items": {"$ref": "#/$defs/Channel"}}
                    },
                },
                "entrypoint": {
                    "anyOf": [
                        {"type": "string", "description": "A command line."},
                        {
                            "type": "object",
                            "properties": {
                                "env": {
                                    "type": "object",
                                    "additionalProperties": {
                                        "type": "string",
                                        "description": "Value of the variable.",
                                    },
                                }
                            },
                        },
                    ]
                },
                "mode": {"oneOf": [{"const": "a"}, {"const": "b"}], "description": "Mode."},
            },
        }
    },
}


def test_ref_is_followed_and_siblings_override() -> None:
    navigator = SchemaNavigator(SCHEMA)
    info = navigator.key_info(("plugin", "sandbox", "network"))
    assert info is not None
    assert info.enum == ("deny", "host")
    assert info.types == ("string",)
    assert info.default == "deny"
    assert navigator.key_info(("plugin", "sandbox"))
    assert navigator.key_info(("plugin", "sandbox", "nope")) is None


def test_array_of_tables_descends_into_items() -> None:
    navigator = SchemaNavigator(SCHEMA)
    info = navigator.key_info(("plugin", "channels", "register", "kind"))
    assert info is not None
    assert info.description == "Channel kind."


def test_any_of_branches_merge_and_additional_properties_match_any_name() -> None:
    navigator = SchemaNavigator(SCHEMA)
    entry = navigator.key_info(("plugin", "entrypoint"))
    assert entry is not None
    assert entry.types == ("string", "object")
    assert entry.description == "A command line."
    variable = navigator.key_info(("plugin", "entrypoint", "env", "ANY_NAME"))
    assert variable is not None
    assert variable.description == "Value of the variable."


def test_one_of_consts_are_allowed_values() -> None:
    info = SchemaNavigator(SCHEMA).key_info(("plugin", "mode"))
    assert info is not None
    assert info.enum == ("a", "b")
    assert 'Allowed values: `"a"`, `"b"`' in info.markdown()


def test_table_paths() -> None:
    tables = {
        (".".join(table.path), table.is_array) for table in SchemaNavigator(SCHEMA).table_paths()
    }
    assert tables == {
        ("plugin", False),
        ("plugin.sandbox", False),
        ("plugin.channels", False),
        ("plugin.channels.register", True),
        ("plugin.entrypoint", False),
        ("plugin.entrypoint.env", False),
    }


def test_ref_cycles_and_dangling_refs_terminate() -> None:
    schema: dict[str, Any] = {
        "$defs": {
            "Loop": {"$ref": "#/$defs/Loop"},
            "Node": {"properties": {"next": {"$ref": "#/$defs/Node"}}},
        },
        "properties": {
            "a": {"$ref": "#/$defs/Loop"},
            "b": {"$ref": "#/$defs/Missing"},
            "n": {"$ref": "#/$defs/Node"},
        },
    }
    navigator = SchemaNavigator(schema)
    assert navigator.key_info(("a",)) is not None
    assert navigator.key_info(("b",)) is not None
    assert navigator.key_info(("n", "next", "next", "next")) is not None
    assert navigator.table_paths()


def test_packaged_manifest_schema_describes_the_sandbox() -> None:
    navigator = packaged_navigator("nexo-plugin.schema.json")
    assert navigator is not None, "nexo_pkg/schemas/nexo-plugin.schema.json must ship"
    info = navigator.key_info(("plugin", "sandbox", "network"))
    assert info is not None
    assert set(info.enum) == {"deny", "host"}
    assert info.description
    assert {"enabled", "network", "fs_read_paths"} <= set(
        navigator.properties(navigator.resolve(("plugin", "sandbox")) or {})
    )


def test_missing_packaged_schema_is_none() -> None:
    assert packaged_navigator("no-such.schema.json") is None


def test_keys_of_a_conditional_branch_are_known() -> None:
    """`plugin.dashboard.layout.subdir` and `auth_check.path`/`candidates` are described in the
    `then` of an `if kind = …` (the keys each kind adds): hover and completion know them, as
    they know the branches of `anyOf`/`oneOf`/`allOf` (they used to know nothing of them)."""
    navigator = packaged_navigator("nexo-plugin.schema.json")
    assert navigator is not None
    subdir = navigator.key_info(("plugin", "dashboard", "layout", "subdir"))
    assert subdir is not None
    assert subdir.description.startswith("Workspace subdirectory")
    candidates = navigator.key_info(("plugin", "dashboard", "auth_check", "candidates"))
    assert candidates is not None
    assert candidates.types == ("array",)
    assert candidates.has_default
    auth_check = navigator.resolve(("plugin", "dashboard", "auth_check"))
    assert auth_check is not None
    assert {"kind", "path", "candidates"} <= set(navigator.properties(auth_check))
    # The `if` itself is a condition, not a branch: it adds no key of its own.
    layout = navigator.resolve(("plugin", "dashboard", "layout"))
    assert layout is not None
    assert set(navigator.properties(layout)) == {"kind", "subdir"}
