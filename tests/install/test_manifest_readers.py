"""install's manifest readers (the release identity, the confirmation summary, the daemon
requirement) over the first-party manifests, read through the manifest model.

Each reader is compared with what ``tomllib`` reads from the same file, so a field the model
drops or renames shows up here: the summary is what the operator sees before saying yes.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest
from support.shared_fixtures import shared_files, skip_unless_present

from nexo_pkg.install.compat import min_nexo_version
from nexo_pkg.install.summary import summarise_manifest
from nexo_pkg.manifest.microapp import is_extension_shape
from nexo_pkg.manifest.model import manifest_from_text
from nexo_pkg.sources.select import PLUGIN_ID, identity_from_manifest

pytestmark = skip_unless_present("daemon-parity", "real-manifests")

REAL = [
    *shared_files("*.toml", "daemon-parity", "real-manifests"),
    *shared_files("*.toml", "reference-manifests"),
]


def _strings(table: dict[str, Any], key: str) -> list[str]:
    return list(table.get(key, []))


@pytest.mark.parametrize("path", REAL, ids=lambda path: path.name)
def test_the_summary_shows_what_the_manifest_says(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    data = tomllib.loads(text)
    plugin = data["plugin"]
    shown = summarise_manifest(manifest_from_text(text)).to_json()
    assert (shown["id"], shown["version"]) == (plugin["id"], plugin["version"])
    assert (shown["name"], shown["description"]) == (
        plugin.get("name", ""),
        plugin.get("description", ""),
    )
    # A microapp's command is its [transport] one; a plugin's its [plugin.entrypoint] one.
    entrypoint = data["transport"] if is_extension_shape(data) else plugin.get("entrypoint", {})
    command = entrypoint.get("command")
    assert shown["entrypoint"] == {
        "command": command if command and command.strip() else None,
        "args": _strings(entrypoint, "args"),
    }
    assert shown["env"] == entrypoint.get("env", {})
    extends = plugin.get("extends", {})
    assert shown["extends"] == {key: value for key, value in extends.items() if value}
    sandbox = plugin.get("sandbox", {})
    assert shown["sandbox"] == {
        "enabled": sandbox.get("enabled", False),
        "network": sandbox.get("network", "deny"),
        "fs_read_paths": _strings(sandbox, "fs_read_paths"),
        "fs_write_paths": _strings(sandbox, "fs_write_paths"),
    }
    if is_extension_shape(data):
        # A microapp's `[capabilities]` lists, each name with its kind, in the daemon's
        # `Capabilities` order.
        declared = data.get("capabilities", {})
        kinds = ("tools", "hooks", "channels", "providers", "pollers")
        provides = [f"{name} ({kind[:-1]})" for kind in kinds for name in declared.get(kind, [])]
    else:
        provides = _strings(plugin.get("capabilities", {}), "provides")
    assert shown["capabilities"] == provides
    # The admin RPCs a plugin asks the operator to grant (the real admin plugin asks for
    # agents_crud and more) are part of what it asks for (SPEC §5 step 8).
    admin = {} if is_extension_shape(data) else plugin.get("capabilities", {}).get("admin", {})
    assert shown["admin_capabilities"] == {
        "required": _strings(admin, "required"),
        "optional": _strings(admin, "optional"),
    }


@pytest.mark.parametrize("path", REAL, ids=lambda path: path.name)
def test_the_release_identity_and_requirement_come_from_the_manifest(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    plugin = tomllib.loads(text)["plugin"]
    expected = (plugin["id"], plugin["version"]) if PLUGIN_ID.fullmatch(plugin["id"]) else None
    assert identity_from_manifest(text) == expected
    assert min_nexo_version(text) == plugin.get("min_nexo_version")


def test_the_corpus_holds_hyphenated_microapp_ids() -> None:
    """A microapp id may hold a hyphen, which no plugin release is named by: the identity
    test above covers both outcomes."""
    ids = [tomllib.loads(path.read_text(encoding="utf-8"))["plugin"]["id"] for path in REAL]
    assert any(PLUGIN_ID.fullmatch(plugin_id) for plugin_id in ids)
    assert any(not PLUGIN_ID.fullmatch(plugin_id) for plugin_id in ids)


MINIMAL = '[plugin]\nid = "demo"\nversion = "1.2.3"\nmin_nexo_version = ">=0.1.0"\n'


@pytest.mark.parametrize(
    "text",
    [
        "[plugin\n",
        'plugin = "demo"\n',
        MINIMAL.replace('"1.2.3"', '"1.2"'),
        MINIMAL.replace('"demo"', '"Demo"'),
        MINIMAL.replace('"demo"', "7"),
        MINIMAL + "# " + "x" * (2 * 1024 * 1024) + "\n",
    ],
)
def test_a_manifest_asset_that_names_no_plugin_gives_no_identity(text: str) -> None:
    assert identity_from_manifest(text) is None


def test_a_reader_may_allow_a_larger_manifest() -> None:
    """``install --link`` reads a checkout's manifest up to its own cap."""
    text = MINIMAL + "# " + "x" * (2 * 1024 * 1024) + "\n"
    assert identity_from_manifest(text, max_bytes=16 * 1024 * 1024) == ("demo", "1.2.3")


def test_a_requirement_is_read_only_from_a_manifest_the_model_reads() -> None:
    assert min_nexo_version(MINIMAL) == ">=0.1.0"
    assert min_nexo_version(MINIMAL.replace('">=0.1.0"', "1")) is None
    assert min_nexo_version(MINIMAL.replace('"1.2.3"', '"x"')) is None
    assert min_nexo_version("[plugin\n") is None
