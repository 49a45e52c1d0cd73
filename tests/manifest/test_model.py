"""The typed manifest model over real manifests, the daemon's own corpus, and broken input.

Real manifests: the first-party repositories' ``nexo-plugin.toml`` / ``plugin.toml`` files
(``daemon-parity/real-manifests``) and the daemon repository's own
(``reference-manifests``). The daemon's corpus: ``daemon-parity/cases.json``, manifests from
the unit tests of ``crates/plugin-manifest`` (lordmacu/nexo-rs 17fc8cdf), each with the daemon's
verdict; every one it accepts deserialises as ``PluginManifest`` (``manifest.rs``), so every one
builds a model.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import pytest
from support.shared_fixtures import shared_files, shared_fixture, skip_unless_present

from nexo_pkg.core.errors import NexoError
from nexo_pkg.manifest.microapp import is_extension_shape
from nexo_pkg.manifest.model import (
    EXTENDS_KEYS,
    MAX_MODEL_BYTES,
    Entrypoint,
    ManifestModelError,
    MicroappModel,
    PluginManifest,
    manifest_from_data,
    manifest_from_text,
)

MINIMAL = """\
[plugin]
id = "my_plugin"
version = "0.1.0"
name = "My Plugin"
description = "Does things"
min_nexo_version = ">=0.1.0"
"""


def _real_manifests() -> list[Path]:
    return [
        *shared_files("*.toml", "daemon-parity", "real-manifests"),
        *shared_files("*.toml", "reference-manifests"),
    ]


def _accepted_cases() -> list[Path]:
    index = shared_fixture("daemon-parity", "cases.json")
    if not index.is_file():
        return []
    cases = json.loads(index.read_text(encoding="utf-8"))["cases"]
    directory = index.parent / "cases"
    return [directory / case["file"] for case in cases if case["daemon"] == "accepts"]


def _strings(table: dict[str, Any], key: str) -> tuple[str, ...]:
    return tuple(table.get(key, ()))


def _assert_mirrors(model: PluginManifest, data: dict[str, Any]) -> None:
    """Every field of ``model`` is what the well-typed document ``data`` says (or the
    daemon's default where it says nothing)."""
    plugin = data["plugin"]
    section = model.plugin
    assert (model.id, model.version) == (plugin["id"], plugin["version"])
    assert (section.name, section.description) == (plugin["name"], plugin["description"])
    assert section.min_nexo_version == plugin["min_nexo_version"]
    entrypoint = plugin.get("entrypoint", {})
    assert section.entrypoint.command == entrypoint.get("command")
    assert section.entrypoint.args == _strings(entrypoint, "args")
    assert dict(section.entrypoint.env) == entrypoint.get("env", {})
    extends = plugin.get("extends", {})
    assert section.extends.items() == tuple((k, _strings(extends, k)) for k in EXTENDS_KEYS)
    sandbox = plugin.get("sandbox", {})
    assert section.sandbox.enabled is sandbox.get("enabled", False)
    assert section.sandbox.network == sandbox.get("network", "deny")
    assert section.sandbox.fs_read_paths == _strings(sandbox, "fs_read_paths")
    assert section.sandbox.fs_write_paths == _strings(sandbox, "fs_write_paths")
    assert section.sandbox.drop_user is sandbox.get("drop_user")
    capabilities = plugin.get("capabilities", {})
    assert section.capabilities.provides == _strings(capabilities, "provides")
    admin = capabilities.get("admin", {})
    assert section.capabilities.admin_required == _strings(admin, "required")
    assert section.capabilities.admin_optional == _strings(admin, "optional")
    http = capabilities.get("http_server")
    assert (section.capabilities.http_server is None) is (http is None)
    if http is not None:
        assert section.capabilities.http_server is not None
        assert section.capabilities.http_server.port == http["port"]
    requires = plugin.get("requires", {})
    assert section.requires.bins == _strings(requires, "bins")
    assert section.requires.env == _strings(requires, "env")
    contracts = plugin.get("contracts", {})
    assert section.contracts.provides == _strings(contracts, "provides")
    assert section.contracts.consumes == _strings(contracts, "consumes")
    register = plugin.get("channels", {}).get("register", [])
    assert section.channel_kinds == tuple(entry["kind"] for entry in register)
    assert model.invalid == frozenset()


@skip_unless_present("daemon-parity", "real-manifests")
@pytest.mark.parametrize("path", _real_manifests(), ids=lambda path: path.name)
def test_every_real_manifest_builds_a_model_of_what_it_says(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    data = tomllib.loads(text)
    model = manifest_from_text(text)
    assert (model.id, model.version) == (data["plugin"]["id"], data["plugin"]["version"])
    if is_extension_shape(data):
        assert isinstance(model, MicroappModel)
        transport = data["transport"]
        assert model.extension.transport_kind == transport["kind"]
        assert model.extension.command == transport.get("command")
        assert model.extension.args == _strings(transport, "args")
    else:
        assert isinstance(model, PluginManifest)
        _assert_mirrors(model, data)


def test_the_real_corpus_is_there_and_holds_both_shapes() -> None:
    """Guards the parametrised test above against running over nothing."""
    paths = _real_manifests()
    if not paths:
        pytest.skip("shared fixtures absent")
    shapes = {is_extension_shape(tomllib.loads(p.read_text(encoding="utf-8"))) for p in paths}
    assert shapes == {True, False}
    assert len(paths) > 100


@skip_unless_present("daemon-parity", "cases.json")
@pytest.mark.parametrize("path", _accepted_cases(), ids=lambda path: path.name)
def test_every_manifest_the_daemon_accepts_builds_a_model(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    data = tomllib.loads(text)
    model = manifest_from_text(text)
    assert isinstance(model, PluginManifest)
    _assert_mirrors(model, data)
    version = data.get("manifest_version")
    assert model.manifest_version == version


def test_the_daemon_corpus_has_accepted_cases() -> None:
    cases = _accepted_cases()
    if not cases:
        pytest.skip("shared fixtures absent")
    assert len(cases) > 80


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (MINIMAL.replace('id = "my_plugin"', "id = 7"), "`plugin.id` is an integer, not a string"),
        (MINIMAL.replace('id = "my_plugin"', "id = true"), "`plugin.id` is a boolean"),
        (MINIMAL.replace('id = "my_plugin"\n', ""), "the manifest has no `plugin.id`"),
        (MINIMAL.replace('"0.1.0"', '"1.0"'), "`plugin.version` '1.0' is not a SemVer version"),
        (MINIMAL.replace('"0.1.0"', '"v1.0.0"'), "is not a SemVer version"),
        (MINIMAL.replace('"0.1.0"', '"01.0.0"'), "is not a SemVer version"),
        (MINIMAL.replace('"0.1.0"', '" 1.0.0"'), "is not a SemVer version"),
        (MINIMAL.replace('"0.1.0"', '"1.0.0\\n\\u001b[2J"'), r"'1.0.0\n\x1b[2J' is not"),
        (MINIMAL.replace('"0.1.0"', '"' + "9" * 5000 + '"'), "… (5000 characters) is not"),
        (MINIMAL.replace('"0.1.0"', "1.0"), "`plugin.version` is a float, not a string"),
        (MINIMAL.replace('"0.1.0"', "1979-05-27"), "`plugin.version` is a date"),
        (MINIMAL.replace('version = "0.1.0"\n', ""), "the manifest has no `plugin.version`"),
        ('plugin = "my_plugin"\n', "`plugin` is a string, not a table"),
        ("plugin = [1, 2]\n", "`plugin` is an array, not a table"),
        ('[[plugin]]\nid = "a"\n', "`plugin` is an array, not a table"),
        ('manifest_version = 2\n[meta]\nauthor = "x"\n', "the manifest has no [plugin] table"),
        ("", "the manifest has no [plugin] table"),
        ("[plugin\nid = 1\n", "the manifest is not TOML: "),
        ('[plugin]\nid = "a"\nid = "b"\n', "the manifest is not TOML: "),
        ("x = " + "[" * 5000 + "]" * 5000 + "\n", "the manifest is not TOML: "),
        # A microapp's extension-shaped plugin.toml: the same identity rules.
        ('[plugin]\nid = "a"\nversion = "x"\n[transport]\nkind = "stdio"\n', "SemVer"),
        ("[plugin]\nid = 3\n[transport]\nkind = 'stdio'\n", "`plugin.id` is an integer"),
    ],
)
def test_malformed_manifests_raise_the_one_error_in_one_line(text: str, message: str) -> None:
    with pytest.raises(ManifestModelError) as raised:
        manifest_from_text(text)
    error = raised.value
    assert message in error.message
    assert "\n" not in error.message
    assert isinstance(error, NexoError)
    assert error.kind == "manifest_invalid"
    assert error.exit_code == 1
    assert error.to_json()["kind"] == "manifest_invalid"


def test_a_2_mib_text_is_refused_before_it_is_parsed() -> None:
    padding = "# " + "x" * 1022 + "\n"
    text = MINIMAL + padding * 2048
    assert len(text.encode("utf-8")) > 2 * 1024 * 1024
    with pytest.raises(ManifestModelError, match=f"larger than {MAX_MODEL_BYTES} bytes"):
        manifest_from_text(text)
    # The cap counts UTF-8 bytes, not characters, and a reader may set its own.
    wide = MINIMAL + "# " + "é" * 600_000 + "\n"
    assert len(wide) < MAX_MODEL_BYTES < len(wide.encode("utf-8"))
    with pytest.raises(ManifestModelError, match="larger than"):
        manifest_from_text(wide)
    assert manifest_from_text(wide, max_bytes=4 * MAX_MODEL_BYTES).id == "my_plugin"
    with pytest.raises(ManifestModelError, match="larger than 100 bytes"):
        manifest_from_text(MINIMAL, max_bytes=100)


def test_unknown_keys_are_ignored_and_wrong_types_left_at_their_defaults() -> None:
    """Unknown keys and wrongly typed optional values are lint's to report; the model reads
    around them and names every path it could not use."""
    text = (
        MINIMAL
        + "surprise = 1\n"
        + "[plugin.entrypoint]\ncommand = 5\nargs = ['a', 1]\nenv = { A = 'x', B = 2 }\n"
        + "[plugin.extends]\ntools = 'my_plugin_x'\nchannels = ['c']\nfuture = ['x']\n"
        + "[plugin.sandbox]\nenabled = 'yes'\nnetwork = 1\n"
        + "[plugin.capabilities]\nprovides = ['tools']\nhttp_server = { port = 'x' }\n"
        + "[unknown_section]\nkey = 1\n"
    )
    model = manifest_from_text(text)
    assert isinstance(model, PluginManifest)
    entrypoint = model.plugin.entrypoint
    assert (entrypoint.command, entrypoint.args, dict(entrypoint.env)) == (None, ("a",), {"A": "x"})
    assert model.plugin.extends.tools == ()
    assert model.plugin.extends.channels == ("c",)
    assert (model.plugin.sandbox.enabled, model.plugin.sandbox.network) == (False, "deny")
    assert model.plugin.capabilities.provides == ("tools",)
    assert model.plugin.capabilities.http_server is not None
    assert model.plugin.capabilities.http_server.port is None
    assert model.invalid == {
        "plugin.entrypoint.command",
        "plugin.entrypoint.args",
        "plugin.entrypoint.env",
        "plugin.extends.tools",
        "plugin.sandbox.enabled",
        "plugin.sandbox.network",
        "plugin.capabilities.http_server.port",
    }


def test_a_section_that_is_not_a_table_is_read_as_empty() -> None:
    model = manifest_from_text(MINIMAL.replace("[plugin]\n", "[plugin]\nentrypoint = 'x'\n"))
    assert isinstance(model, PluginManifest)
    assert model.plugin.entrypoint.command is None
    assert model.invalid == {"plugin.entrypoint"}


def test_a_parsed_document_and_its_text_give_the_same_model() -> None:
    text = MINIMAL + "[plugin.entrypoint]\ncommand = './bin/x'\nargs = ['--serve']\n"
    assert manifest_from_data(tomllib.loads(text)) == manifest_from_text(text)


def test_the_model_is_frozen() -> None:
    model = manifest_from_text(MINIMAL)
    assert isinstance(model, PluginManifest)
    with pytest.raises(AttributeError):
        model.plugin.id = "other"  # type: ignore[misc]
    with pytest.raises(TypeError):
        model.plugin.entrypoint.env["A"] = "b"  # type: ignore[index]


def test_a_microapp_manifest_builds_a_microapp_model() -> None:
    text = (
        '[plugin]\nid = "hello-app"\nversion = "0.2.0"\n'
        '[capabilities]\ntools = ["hello_greet"]\n'
        '[transport]\nkind = "stdio"\ncommand = "python3"\nargs = ["main.py"]\n'
    )
    model = manifest_from_text(text)
    assert isinstance(model, MicroappModel)
    assert (model.id, model.version) == ("hello-app", "0.2.0")
    assert (model.extension.command, model.extension.args) == ("python3", ("main.py",))
    assert model.extension.tools == ("hello_greet",)


@pytest.mark.parametrize(
    ("text", "key", "plugin_id"),
    [
        ("plugin = 1\n", "plugin", None),
        ("[plugin]\nid = 1\nversion = '1.0.0'\n", "plugin.id", None),
        ("[plugin]\nid = 'a'\n", "plugin.version", "a"),
        ("[plugin]\nid = 'a'\nversion = '1'\n", "plugin.version", "a"),
        ("[plugin]\nid = 'a'\nversion = '1'\n[transport]\nkind = 'stdio'\n", "plugin.version", "a"),
        ("[plugin\n", None, None),
    ],
)
def test_the_error_names_the_key_at_fault(
    text: str, key: str | None, plugin_id: str | None
) -> None:
    """A reader that words its own refusal (``check`` judges the id first) learns from the
    error which key failed and, for the version, the id read before it."""
    with pytest.raises(ManifestModelError) as raised:
        manifest_from_text(text)
    assert (raised.value.key, raised.value.plugin_id) == (key, plugin_id)
    assert raised.value.to_json().get("key") == key


@pytest.mark.parametrize(
    ("command", "spawned"),
    [
        (None, False),
        ("", False),
        (" \t", False),
        ("\u3000", False),
        ("./bin/p", True),
        ("\x1c", True),
    ],
)
def test_an_entrypoint_is_a_subprocess_as_the_daemon_decides(
    command: str | None, *, spawned: bool
) -> None:
    """``EntrypointSection::is_subprocess`` (lordmacu/nexo-rs eec3f33,
    crates/plugin-manifest/src/manifest.rs:143-150): a command whose Rust ``trim()`` leaves
    something; U+001C is blank to Python's ``strip()`` but not to Rust."""
    assert Entrypoint(command=command).is_subprocess is spawned
