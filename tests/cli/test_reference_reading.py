"""Releases, receipts and configuration read as the reference tools read them (real CLI).

The reference is lordmacu/nexo-rs: ``crates/ext-installer/src/lib.rs`` (052ee4a2;
``resolve_release_with_contract``) and ``extract_contract.rs`` (the typed manifest parse),
``src/plugin_admin.rs`` and ``crates/config`` (eec3f33) for ``discovery.yaml``.
"""

from __future__ import annotations

import json
import os
import re
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from support import cli
from support.github_server import GitHubServer
from support.tarballs import manifest_text, release_assets, tree_snapshot

# Every run here is an in-process one: the loopback GitHub answers from its own threads.
nexo = partial(cli.nexo, in_process=True)


@pytest.fixture
def env(github_env: dict[str, str]) -> dict[str, str]:
    """An isolated NEXO_HOME pointing at the loopback GitHub."""
    return github_env


def plugins_dir(env: dict[str, str]) -> Path:
    return Path(env["NEXO_HOME"]) / "state" / "plugins"


# --- the release's manifest asset is a manifest -----------------------------------------------


@pytest.mark.parametrize(
    ("edit", "needle"),
    [
        (lambda text: "colour = 1\n" + text, "colour"),
        (lambda text: text.replace('version = "1.0.0"', 'version = "1.0"'), "version"),
        (lambda text: text.replace('version = "1.0.0"', 'version = "v1.0.0"'), "version"),
        (lambda text: text + "\n[plugin.bogus]\nx = 1\n", "bogus"),
    ],
    ids=["unknown-root-key", "two-part-version", "v-version", "unknown-table"],
)
def test_a_manifest_asset_the_reference_cannot_parse_refuses_the_release(
    env: dict[str, str], server: GitHubServer, edit: Any, needle: str
) -> None:
    """extract_contract.rs / lib.rs@052ee4a2 `resolve_release_with_contract`: the
    `nexo-plugin.toml` asset goes through `contract.parse_manifest`, a typed
    `toml::from_str::<PluginManifest>` (deny_unknown_fields, `version: semver::Version`); a
    failure is `ReleaseShape`, so the reference installs nothing from that release."""
    assets = release_assets("hello", "1.0.0")
    assets["nexo-plugin.toml"] = edit(manifest_text("hello", "1.0.0")).encode()
    server.publish("acme", "hello", "v1.0.0", assets)
    result = nexo("plugin", "install", "acme/hello", "--json", env=env)
    assert result.code == 1
    assert result.document["kind"] == "manifest_invalid"
    assert "nexo-plugin.toml" in result.document["error"]
    assert needle in result.document["error"]
    assert tree_snapshot(plugins_dir(env)) == {}


def test_a_plugin_toml_asset_is_still_accepted(env: dict[str, str], server: GitHubServer) -> None:
    """Beyond the reference (it reads only `nexo-plugin.toml`): a release whose manifest asset
    is `plugin.toml` installs, its manifest judged the same way."""
    assets = release_assets("hello", "1.0.0", manifest_asset=False)
    assets["plugin.toml"] = manifest_text("hello", "1.0.0").encode()
    server.publish("acme", "hello", "v1.0.0", assets)
    result = nexo("plugin", "install", "acme/hello", "--json", env=env)
    assert result.code == 0, result.stderr
    assert result.document["version"] == "1.0.0"


# --- discovery.yaml as the daemon loads it ----------------------------------------------------


def _config(tmp_path: Path, env: dict[str, str], text: str) -> dict[str, str]:
    """A daemon configuration directory holding ``plugins/discovery.yaml``; the env names it."""
    directory = tmp_path / "daemon-config"
    (directory / "plugins").mkdir(parents=True, exist_ok=True)
    (directory / "plugins" / "discovery.yaml").write_text(text, encoding="utf-8")
    return {**env, "NEXO_CONFIG_DIR": str(directory)}


def test_placeholders_are_substituted_in_the_raw_text(
    tmp_path: Path, env: dict[str, str], server: GitHubServer
) -> None:
    """crates/config/src/lib.rs:244-258 and env.rs:5-17 at eec3f33: `load_optional` runs
    `resolve_placeholders` on the raw file before serde_yaml, so a `${VAR}` anywhere (inside
    quotes, or building a whole list) is replaced; one in a comment is not (env.rs:40-46)."""
    root = tmp_path / "plugins-a"
    env = _config(
        tmp_path,
        {**env, "PLUGIN_ROOTS": f'["{root}"]'},
        "# ${NOT_SET_ANYWHERE} in a comment is skipped\n"
        "discovery:\n  search_paths: ${PLUGIN_ROOTS}\n",
    )
    server.publish("acme", "hello", "v1.0.0", release_assets("hello", "1.0.0"))
    result = nexo("plugin", "install", "acme/hello", "--json", env=env)
    assert result.code == 0, result.stderr
    assert result.document["path"] == str(root / "hello-1.0.0")


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("discovery:\n  search_paths: ['${NEXO_TEST_UNSET}/p']\n", "NEXO_TEST_UNSET not set"),
        ('discovery:\n  search_paths: ["${NEXO_TEST_UNSET}"]\n', "NEXO_TEST_UNSET not set"),
        ("discovery:\n  search_path: ['/x']\n", "unknown key `discovery.search_path`"),
        ("discovery: {}\nextra: 1\n", "unknown key `extra`"),
        ("search_paths: ['/x']\n", "unknown key `search_paths`"),
        ("schema_version: 1\n", "missing the `discovery` section"),
        ("", "expected a mapping"),
        ("discovery:\n  follow_symlinks: 'yes please'\n", "true or false"),
        ("discovery:\n  disabled: [1]\n", "list of plugin ids"),
        ("discovery:\n  search_paths: ['${file:../secret}']\n", "`..` not allowed"),
    ],
)
def test_a_discovery_file_the_daemon_cannot_load_is_a_config_error(
    tmp_path: Path, env: dict[str, str], text: str, needle: str
) -> None:
    """env.rs:110-112 (an unset variable fails the load), env.rs:121-128 (`..` in
    `${file:}`), types/plugins.rs:26-52 (`deny_unknown_fields` on the file and on
    `discovery`, which is required) and lib.rs:260-266 (`schema_version` at the root is
    dropped) at eec3f33. The daemon cannot start with such a file, so nexo-pkg refuses with
    a config error (exit 2) instead of falling back to $NEXO_HOME, and writes nothing."""
    env = _config(tmp_path, env, text)
    for args in (("list",), ("verify",), ("remove", "hello", "--yes"), ("upgrade", "hello")):
        result = nexo("plugin", *args, "--json", env=env)
        assert result.code == 2, (args, result.stdout)
        assert result.document["kind"] == "config"
        assert needle in result.document["error"]
    assert not (Path(env["NEXO_HOME"]) / "state").exists()


@pytest.mark.parametrize("size", [100, 1_200_000])
def test_a_file_placeholder_is_read_whole_or_refused(
    tmp_path: Path, env: dict[str, str], size: int
) -> None:
    """env.rs:121-140 at eec3f33 reads a `${file:PATH}` whole (`read_to_string`, then
    `trim`). Its text was cut short at 1 MiB: a path after a megabyte of blank lines became
    an empty search path, silently dropped. Now the file is read whole up to that cap, and
    refused as a config error (exit 2) past it, never judged by its first part."""
    root = tmp_path / "plugins-secret"
    secrets = tmp_path / "secrets"
    secrets.mkdir()
    (secrets / "root").write_text("\n" * size + str(root) + "\n", encoding="utf-8")
    env = _config(tmp_path, env, "discovery:\n  search_paths: ['${file:secrets/root}']\n")
    result = nexo("plugin", "list", "--json", env=env, cwd=tmp_path)
    if size < 1024 * 1024:
        assert result.code == 0, result.stdout
        assert result.document["roots"] == [str(root)]
        return
    assert result.code == 2, result.stdout
    assert result.document["kind"] == "config"
    assert "cannot read file" in result.document["error"]
    assert "is larger than 1048576 bytes" in result.document["error"]


def test_schema_version_at_the_root_is_ignored(tmp_path: Path, env: dict[str, str]) -> None:
    """lib.rs:260-266 at eec3f33 removes a root `schema_version` before deserialising."""
    env = _config(
        tmp_path, env, f"schema_version: 2\ndiscovery:\n  search_paths: ['{tmp_path / 'r'}']\n"
    )
    result = nexo("plugin", "list", "--json", env=env)
    assert result.code == 0
    assert result.document["roots"] == [str(tmp_path / "r")]


def test_a_tilde_path_is_relative_and_warned_about(tmp_path: Path, env: dict[str, str]) -> None:
    """nexo_plugin_registry/config.rs:44-69 at eec3f33 expands `$VAR` only: `~/plugins` is the
    directory `~/plugins` under the daemon's working directory. nexo-pkg resolves it the same
    way and warns."""
    env = _config(tmp_path, env, "discovery:\n  search_paths: ['~/plugins']\n")
    work = tmp_path / "work"
    work.mkdir()
    result = nexo("plugin", "list", "--json", env=env, cwd=work)
    assert result.code == 0
    assert result.document["roots"] == [str(work / "~" / "plugins")]
    assert "does not expand" in result.stderr


def test_a_path_naming_an_unset_variable_is_skipped(tmp_path: Path, env: dict[str, str]) -> None:
    """nexo_plugin_registry/config.rs:21-42 at eec3f33: a search path whose `$VAR` is unset is
    dropped with a warning diagnostic; the other paths still count."""
    env = _config(
        tmp_path,
        {**env, "SET_ROOT": str(tmp_path / "set")},
        "discovery:\n  search_paths: ['$NEXO_TEST_UNSET/a', '$SET_ROOT/b']\n",
    )
    result = nexo("plugin", "list", "--json", env=env)
    assert result.code == 0
    assert result.document["roots"] == [str(tmp_path / "set" / "b")]
    assert "NEXO_TEST_UNSET" in result.stderr


@pytest.mark.parametrize(
    ("placeholder", "roots"),
    [
        ("${\x1cNEXO_T_ROOT}", None),
        ("${NEXO_T_ROOT\x1f}", None),
        ("${\x1dNEXO_T_ROOT:-/fallback}", ["/fallback"]),
        ("${\x1eNEXO_T_ROOT-/fallback}", ["/fallback"]),
        ("${ NEXO_T_ROOT\u3000}", ["/set"]),
        ("${\x85NEXO_T_ROOT:-/fallback}", ["/set"]),
    ],
    ids=["fs", "us-after", "gs-colon-default", "rs-default", "ideographic-space", "nel"],
)
def test_a_placeholder_name_is_trimmed_as_rust_trims(
    tmp_path: Path, env: dict[str, str], placeholder: str, roots: list[str] | None
) -> None:
    """crates/config/src/env.rs at eec3f33: `resolve_one` looks the variable up as
    `inner.trim()` (`name.trim()` after `split_default`), and Rust's `str::trim` takes only
    Unicode White_Space: the information separators U+001C-U+001F stay part of the name, so
    the daemon looks up a variable that is not set (failing the load, or taking the default),
    where Python's `str.strip()` dropped them and read NEXO_T_ROOT."""
    env = _config(
        tmp_path,
        {**env, "NEXO_T_ROOT": "/set"},
        f'discovery:\n  search_paths: ["{placeholder}"]\n',
    )
    result = nexo("plugin", "list", "--json", env=env)
    if roots is None:
        assert result.code == 2, result.stdout
        assert result.document["kind"] == "config"
        assert "not set" in result.document["error"]
        assert not (Path(env["NEXO_HOME"]) / "state").exists()
        return
    assert result.code == 0, result.stdout
    assert result.document["roots"] == roots


NOT_UTF8 = "/srv/plugins-\udce9"  # the byte 0xE9 as Python keeps a non-UTF-8 value (POSIX)


@pytest.mark.skipif(os.name != "posix", reason="environment values are bytes on POSIX only")
@pytest.mark.parametrize(
    ("search_paths", "roots"),
    [
        ('["${NEXO_T_ROOT:-/fallback}"]', ["/fallback"]),
        ('["${NEXO_T_ROOT-/fallback}", "/b"]', ["/fallback", "/b"]),
        ('["$NEXO_T_ROOT/x", "/b"]', ["/b"]),
        ('["${NEXO_T_ROOT}", "/b"]', None),
    ],
    ids=["colon-default", "default", "dollar-variable", "no-default"],
)
def test_a_variable_that_is_not_utf8_is_not_set_to_the_daemon(
    tmp_path: Path, env: dict[str, str], search_paths: str, roots: list[str] | None
) -> None:
    """The daemon reads variables with `std::env::var`, which fails for a value that is not
    Unicode (`VarError::NotUnicode`) as for an unset one: crates/config/src/env.rs
    `resolve_one` at eec3f33 then takes a `${VAR:-d}`/`${VAR-d}` default or fails the load,
    and nexo_plugin_registry/config.rs `expand` (:44-69) skips a `$VAR` search path. Python
    keeps such a value (as lone surrogates) and used it as the path."""
    env = _config(
        tmp_path,
        {**env, "NEXO_T_ROOT": NOT_UTF8},
        f"discovery:\n  search_paths: {search_paths}\n",
    )
    result = nexo("plugin", "list", "--json", env=env)
    if roots is None:
        assert result.code == 2, result.stdout
        assert result.document["kind"] == "config"
        assert "NEXO_T_ROOT is not valid UTF-8" in result.document["error"]
        assert not (Path(env["NEXO_HOME"]) / "state").exists()
        return
    assert result.code == 0, result.stdout
    assert result.document["roots"] == roots
    assert result.document["dest"] == roots[0]
    if "$NEXO_T_ROOT/x" in search_paths:
        assert "names the non-UTF-8 variable $NEXO_T_ROOT" in result.stderr


def test_every_search_path_is_seen_install_writes_to_the_first(
    tmp_path: Path, env: dict[str, str], server: GitHubServer
) -> None:
    """plugin_admin.rs:201-232 at eec3f33 (`discover_installed_plugins` walks every search
    path) and lib.rs `install` into `search_paths[0]`: a plugin in the second root is listed,
    verified, upgraded in place and removed; a new install goes to the first."""
    first, second = tmp_path / "first", tmp_path / "second"
    env = _config(tmp_path, env, f"discovery:\n  search_paths: ['{first}', '{second}']\n")
    server.publish("acme", "hello", "v1.0.0", release_assets("hello", "1.0.0"))
    result = nexo("plugin", "install", "acme/hello", "--dest", str(second), "--json", env=env)
    assert result.code == 0, result.stderr
    listing = nexo("plugin", "list", "--json", env=env)
    assert [Path(p["path"]).parent for p in listing.document["plugins"]] == [second]
    assert nexo("plugin", "verify", "hello", "--json", env=env).code == 0
    server.publish("acme", "hello", "v1.1.0", release_assets("hello", "1.1.0"))
    upgraded = nexo("plugin", "upgrade", "hello", "--yes", "--json", env=env)
    assert upgraded.code == 0, upgraded.stderr
    assert upgraded.document["path"] == str(second / "hello-1.1.0")
    server.publish("acme", "other", "v0.1.0", release_assets("other", "0.1.0"))
    installed = nexo("plugin", "install", "acme/other", "--json", env=env)
    assert installed.document["path"] == str(first / "other-0.1.0")
    # The version replaced is kept beside it, out of sight, for rollback; remove takes both.
    (kept,) = upgraded.document["kept_paths"]
    assert Path(kept).is_relative_to(second / ".nexo" / "kept")
    removed = nexo("plugin", "remove", "hello", "--yes", "--json", env=env)
    assert removed.document["removed"] == [str(second / "hello-1.1.0"), kept]
    assert not (second / "hello-1.1.0").exists()


# --- receipts the reference cannot read -------------------------------------------------------


def _spoil_receipt(path: Path, raw: str) -> None:
    (path / ".nexo-install.json").write_text(raw, encoding="utf-8")


@pytest.mark.parametrize(
    ("spoil", "problem"),
    [
        (lambda text: text.replace("{", '{"id": "hello", ', 1), "duplicate field `id`"),
        (lambda text: text.replace('"tag": "latest"', '"tag": null'), "invalid type: null"),
        (lambda text: text.replace('"owner": "acme"', '"owner": 7'), "integer `7`"),
        (lambda text: re.sub(r'"target": "[^"]*", ', "", text), "missing field `target`"),
    ],
    ids=["duplicate-key", "null", "number", "missing"],
)
def test_a_receipt_the_reference_cannot_read_is_an_orphan(
    env: dict[str, str], server: GitHubServer, spoil: Any, problem: str
) -> None:
    """plugin_admin.rs:149-165 at eec3f33: `read_install_metadata` deserialises the ten-field
    `InstallMetadata` (plugin_admin.rs:48-66) with serde_json, which refuses a duplicate
    field, a `null` or non-string value and a missing field; the reference then treats the
    plugin as an orphan. nexo-pkg lists it as `receipt unreadable: …`, verify fails naming
    it, and remove removes it."""
    server.publish("acme", "hello", "v1.0.0", release_assets("hello", "1.0.0"))
    installed = nexo("plugin", "install", "acme/hello", "--json", env=env)
    assert installed.code == 0, installed.stderr
    path = Path(installed.document["path"])
    receipt = (path / ".nexo-install.json").read_text(encoding="utf-8")
    spoilt = spoil(json.dumps(json.loads(receipt)))
    assert spoilt != json.dumps(json.loads(receipt))
    _spoil_receipt(path, spoilt)
    listing = nexo("plugin", "list", "--json", env=env)
    assert listing.document["plugins"] == []
    [entry] = listing.document["unreadable"]
    assert entry["path"] == str(path)
    assert entry["problem"].startswith("receipt unreadable: ")
    assert problem in entry["problem"]
    human = nexo("plugin", "list", env=env)
    assert "receipt unreadable" in human.stdout
    verified = nexo("plugin", "verify", "--json", env=env)
    assert verified.code == 1
    assert [report["path"] for report in verified.document["plugins"] if not report["ok"]] == [
        str(path)
    ]
    refused = nexo("plugin", "upgrade", "hello", "--json", env=env)
    assert refused.code == 1
    assert "receipt unreadable" in refused.document["error"]
    removed = nexo("plugin", "remove", "hello", "--yes", "--json", env=env)
    assert removed.code == 0
    assert removed.document["removed"] == [str(path)]
    assert not path.exists()


@pytest.mark.parametrize(
    ("spoil", "problem"),
    [
        (
            lambda text: text.replace("{", '{"extra": NaN, ', 1),
            "expected value at line 1 column 11",
        ),
        (
            lambda text: text.replace("{", '{"x": [-Infinity], ', 1),
            "invalid number at line 1 column 9",
        ),
        (
            lambda text: text.replace("{", '{"x": Infinity, ', 1),
            "expected value at line 1 column 7",
        ),
        (
            lambda text: text.replace('"source": "', '"source": "\\ud800', 1),
            "field `source` holds a lone UTF-16 surrogate escape",
        ),
        (
            lambda text: text.replace("{", '{"\\udc00": 1, ', 1),
            "holds a lone UTF-16 surrogate escape",
        ),
    ],
    ids=["nan", "negative-infinity", "infinity", "surrogate-in-a-field", "surrogate-in-a-key"],
)
def test_json_serde_json_refuses_makes_the_receipt_unreadable(
    env: dict[str, str], server: GitHubServer, spoil: Any, problem: str
) -> None:
    """plugin_admin.rs:158 at eec3f33 reads the receipt with `serde_json::from_slice`
    (serde_json 1.0.149, Cargo.lock), which Python's `json` outreads: `NaN`, `Infinity` and
    `-Infinity` are no JSON tokens even in a value it ignores (serde_json `src/de.rs:1149`,
    `ignore_value` -> `ExpectedSomeValue`; `src/de.rs:1217`, `ignore_integer` ->
    `InvalidNumber` on the `I`), and a lone `\\uD800`-`\\uDFFF` escape is refused in every
    string it reads as one, each key and each of the ten fields (`src/read.rs:900-961`,
    `parse_unicode_escape` with `validate`). The reference then treats the plugin as an
    orphan; so does nexo-pkg, with serde_json's words and position for the tokens."""
    server.publish("acme", "hello", "v1.0.0", release_assets("hello", "1.0.0"))
    installed = nexo("plugin", "install", "acme/hello", "--json", env=env)
    assert installed.code == 0, installed.stderr
    path = Path(installed.document["path"])
    receipt = (path / ".nexo-install.json").read_text(encoding="utf-8")
    spoilt = spoil(json.dumps(json.loads(receipt)))
    json.loads(spoilt)  # Python's json reads every one of them
    _spoil_receipt(path, spoilt)
    listing = nexo("plugin", "list", "--json", env=env)
    assert listing.document["plugins"] == []
    [entry] = listing.document["unreadable"]
    assert entry["path"] == str(path)
    assert entry["problem"].startswith("receipt unreadable: ")
    assert problem in entry["problem"]
    verified = nexo("plugin", "verify", "--json", env=env)
    assert verified.code == 1
    assert [report["path"] for report in verified.document["plugins"] if not report["ok"]] == [
        str(path)
    ]
    removed = nexo("plugin", "remove", "hello", "--yes", "--json", env=env)
    assert removed.code == 0
    assert removed.document["removed"] == [str(path)]
    assert not path.exists()


@pytest.mark.parametrize(
    "extra",
    [
        '"\\ud800"',
        "1e400",
        "[" * 200 + "]" * 200,
        '{"a": 1, "a": 2}',
        "[" * 5000 + "]" * 5000,
        '[{"a": ' * 3000 + "1" + "}]" * 3000,
        "1" * 5000,
        "[-" + "9" * 5000 + ", 1]",
    ],
    ids=[
        "lone-surrogate",
        "out-of-range-number",
        "deep-nesting",
        "repeated-key",
        "nesting-past-python-s-recursion-limit",
        "objects-past-python-s-recursion-limit",
        "integer-past-python-s-digit-limit",
        "negative-integer-past-python-s-digit-limit",
    ],
)
def test_what_serde_json_ignores_in_an_unknown_key_keeps_the_receipt(
    env: dict[str, str], server: GitHubServer, extra: str
) -> None:
    """A key the reference's `InstallMetadata` does not name is skipped with serde_json's
    `ignore_value` (1.0.149 `src/de.rs:1102-1215`): without a recursion limit (a stack of its
    own), without checking a number's range (`ignore_integer`, `ignore_exponent`), a string's
    escapes (`src/read.rs:1025`, `ignore_escape`: "we don't care if the codepoint is valid")
    or a repeated key. Such a receipt stays readable, also where Python's `json` gives up:
    nesting past its recursion limit, an integer of more than 4,300 digits."""
    server.publish("acme", "hello", "v1.0.0", release_assets("hello", "1.0.0"))
    installed = nexo("plugin", "install", "acme/hello", "--json", env=env)
    assert installed.code == 0, installed.stderr
    path = Path(installed.document["path"])
    receipt = (path / ".nexo-install.json").read_text(encoding="utf-8")
    _spoil_receipt(path, receipt.replace("{", '{"x": ' + extra + ", ", 1))
    listing = nexo("plugin", "list", "--json", env=env)
    assert listing.document["unreadable"] == []
    assert [plugin["path"] for plugin in listing.document["plugins"]] == [str(path)]


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("[" * 5000 + "]" * 5000, "invalid type: sequence, expected a string (field `tag`)"),
        ("9" * 5000, "invalid type: an integer of 5000 digits, expected a string (field `tag`)"),
    ],
    ids=["nesting-past-python-s-recursion-limit", "integer-past-python-s-digit-limit"],
)
def test_a_field_the_reference_reads_is_judged_however_deep_or_long(
    env: dict[str, str], server: GitHubServer, value: str, problem: str
) -> None:
    """plugin_admin.rs:48-66 at eec3f33: `tag` is a `String`; serde_json refuses a sequence
    or a number there (`invalid type`) without reading it further. Python's `json` stops
    earlier (recursion limit, 4,300 digits): the receipt is still unreadable for the
    reference's reason, named for its field, and `remove` still removes the plugin."""
    server.publish("acme", "hello", "v1.0.0", release_assets("hello", "1.0.0"))
    installed = nexo("plugin", "install", "acme/hello", "--json", env=env)
    assert installed.code == 0, installed.stderr
    path = Path(installed.document["path"])
    receipt = json.dumps(json.loads((path / ".nexo-install.json").read_text("utf-8")))
    assert '"tag": "latest"' in receipt
    _spoil_receipt(path, receipt.replace('"tag": "latest"', '"tag": ' + value, 1))
    listing = nexo("plugin", "list", "--json", env=env)
    assert listing.document["plugins"] == []
    [entry] = listing.document["unreadable"]
    assert entry["problem"] == f"receipt unreadable: {problem}"
    removed = nexo("plugin", "remove", "hello", "--yes", "--json", env=env)
    assert removed.code == 0
    assert not path.exists()


# --- upgrade keeps what the receipt pinned ----------------------------------------------------


def _receipt(path: Path) -> dict[str, Any]:
    document: dict[str, Any] = json.loads((path / ".nexo-install.json").read_text("utf-8"))
    return document


def test_an_install_from_an_explicit_tag_is_pinned(
    env: dict[str, str], server: GitHubServer
) -> None:
    """plugin_admin.rs:55-59 at eec3f33: `tag` is what the operator asked for; `upgrade`
    re-resolves the receipt's tag (plugin_admin.rs:458-462), so an explicit tag pins it to
    that release and `latest` follows the newest. nexo-pkg records
    the same (the release it resolved goes in its own `resolved_tag`), and `upgrade` of a
    pinned plugin is a no-op that says so, until `--tag`/`ID@TAG` moves it."""
    server.publish("acme", "hello", "v1.0.0", release_assets("hello", "1.0.0"))
    installed = nexo("plugin", "install", "acme/hello@v1.0.0", "--json", env=env)
    assert installed.code == 0, installed.stderr
    path = Path(installed.document["path"])
    assert (_receipt(path)["tag"], _receipt(path)["resolved_tag"]) == ("v1.0.0", "v1.0.0")
    server.publish("acme", "hello", "v1.1.0", release_assets("hello", "1.1.0"))
    pinned = nexo("plugin", "upgrade", "hello", "--json", env=env)
    assert pinned.code == 0
    assert (
        pinned.document["upgraded"],
        pinned.document["pinned_tag"],
        pinned.document["version"],
    ) == (
        False,
        "v1.0.0",
        "1.0.0",
    )
    result = nexo("plugin", "upgrade", "hello", env=env)
    assert "pinned to tag v1.0.0" in result.stderr
    assert path.exists()
    moved = nexo("plugin", "upgrade", "hello@v1.1.0", "--yes", "--json", env=env)
    assert moved.code == 0, moved.stderr
    assert moved.document["version"] == "1.1.0"
    assert _receipt(Path(moved.document["path"]))["tag"] == "v1.1.0"


def test_an_install_of_the_latest_release_follows_it(
    env: dict[str, str], server: GitHubServer
) -> None:
    """plugin_admin.rs:55-59 at eec3f33: `"latest"` is kept literally so upgrade keeps
    tracking the newest release."""
    server.publish("acme", "hello", "v1.0.0", release_assets("hello", "1.0.0"))
    installed = nexo("plugin", "install", "acme/hello", "--json", env=env)
    assert installed.code == 0, installed.stderr
    receipt = _receipt(Path(installed.document["path"]))
    assert (receipt["tag"], receipt["resolved_tag"]) == ("latest", "v1.0.0")
    server.publish("acme", "hello", "v1.1.0", release_assets("hello", "1.1.0"))
    upgraded = nexo("plugin", "upgrade", "hello", "--yes", "--json", env=env)
    assert upgraded.code == 0, upgraded.stderr
    assert upgraded.document["version"] == "1.1.0"
    receipt = _receipt(Path(upgraded.document["path"]))
    assert (receipt["tag"], receipt["resolved_tag"]) == ("latest", "v1.1.0")


def test_upgrade_keeps_the_receipts_target(env: dict[str, str], server: GitHubServer) -> None:
    """plugin_admin.rs:457 at eec3f33: `upgrade` resolves with `target_override` else the
    receipt's `target`, so a musl install on a gnu host stays musl though the newer release
    also offers gnu."""
    musl, gnu = "x86_64-unknown-linux-musl", "x86_64-unknown-linux-gnu"
    server.publish("acme", "hello", "v1.0.0", release_assets("hello", "1.0.0", target=musl))
    result = nexo("plugin", "install", "acme/hello", "--target", musl, "--json", env=env)
    assert result.code == 0, result.stderr
    newer = release_assets("hello", "1.1.0", target=gnu)
    newer.update(release_assets("hello", "1.1.0", target=musl, manifest_asset=False))
    server.publish("acme", "hello", "v1.1.0", newer)
    upgraded = nexo(
        "plugin", "upgrade", "hello", "--yes", "--json", env={**env, "NEXO_INSTALL_TARGET": gnu}
    )
    assert upgraded.code == 0, upgraded.stderr
    assert upgraded.document["target"] == musl
    assert _receipt(Path(upgraded.document["path"]))["target"] == musl


def test_a_reference_receipt_with_a_tag_is_pinned_and_one_with_latest_is_not(
    env: dict[str, str], server: GitHubServer
) -> None:
    """A receipt the reference wrote (no `files`, no `resolved_tag`) means what it means to
    the reference: `tag = "v1.0.0"` pins."""
    server.publish("acme", "hello", "v1.0.0", release_assets("hello", "1.0.0"))
    installed = nexo("plugin", "install", "acme/hello@v1.0.0", "--json", env=env)
    path = Path(installed.document["path"])
    document = _receipt(path)
    reference = {key: document[key] for key in (
        "schema_version", "id", "version", "owner", "repo", "tag", "target", "sha256",
        "installed_at", "source",
    )}  # fmt: skip
    (path / ".nexo-install.json").write_text(json.dumps(reference), encoding="utf-8")
    server.publish("acme", "hello", "v1.1.0", release_assets("hello", "1.1.0"))
    pinned = nexo("plugin", "upgrade", "hello", "--json", env=env)
    assert pinned.document["pinned_tag"] == "v1.0.0"
    (path / ".nexo-install.json").write_text(
        json.dumps({**reference, "tag": "latest"}), encoding="utf-8"
    )
    upgraded = nexo("plugin", "upgrade", "hello", "--yes", "--json", env=env)
    assert upgraded.code == 0, upgraded.stderr
    assert upgraded.document["version"] == "1.1.0"
