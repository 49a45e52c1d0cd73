"""The microapp manifest model: the daemon's constants and the tolerant readers.

Constants are the daemon's: ``crates/extensions/src/manifest.rs:49-64,98-101`` (ids, limits,
reserved ids), ``runtime/stdio.rs:26-46,459-467`` (the environment blocklist),
``plugin-manifest/src/manifest.rs:288-313`` (``HttpServerCapability`` defaults).
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from nexo_pkg.manifest.microapp import (
    capability_name_problem,
    env_is_blocked,
    id_problem,
    is_extension_shape,
    read_toml_or_none,
)
from nexo_pkg.manifest.microapp_model import companion_from_data, microapp_from_data

MICROAPP = """\
[plugin]
id = "weather-app"
version = "0.1.0"
priority = -5

[capabilities]
tools = ["forecast"]
hooks = ["before_message"]

[transport]
kind = "stdio"
command = "python3"
args = ["main.py"]

[requires]
bins = ["python3"]
env = ["WEATHER_REGION"]

[context]
passthrough = true
"""

COMPANION = """\
[plugin]
id = "weather-app"
version = "0.1.0"
name = "Weather"
description = "d"
min_nexo_version = ">=0.1.0"

[plugin.capabilities.admin]
required = ["agents_crud"]
optional = ["channels_crud"]

[plugin.capabilities.http_server]
port = 8080
token_env = "WEATHER_TOKEN"
"""


def test_the_model_reads_every_part_the_host_uses() -> None:
    manifest = microapp_from_data(tomllib.loads(MICROAPP))
    assert manifest is not None
    assert (manifest.id, manifest.version, manifest.priority) == ("weather-app", "0.1.0", -5)
    assert manifest.tools == ("forecast",)
    assert manifest.hooks == ("before_message",)
    assert (manifest.transport_kind, manifest.command, manifest.args) == (
        "stdio",
        "python3",
        ("main.py",),
    )
    assert manifest.requires_bins == ("python3",)
    assert manifest.requires_env == ("WEATHER_REGION",)
    assert manifest.context_passthrough is True


def test_wrong_types_are_left_out_not_raised() -> None:
    data = {"plugin": {"id": "x", "priority": True}, "capabilities": {"tools": "a"}, "transport": 3}
    manifest = microapp_from_data(data)
    assert manifest is not None
    assert (manifest.priority, manifest.tools, manifest.command) == (0, (), None)
    assert microapp_from_data({"plugin": {"id": 5}}) is None


def test_the_companion_model_and_its_defaults() -> None:
    companion = companion_from_data(tomllib.loads(COMPANION))
    assert companion.id == "weather-app"
    assert companion.admin_declared == ("agents_crud", "channels_crud")
    assert companion.http_server is not None
    assert (companion.http_server.bind, companion.http_server.health_path) == (
        "127.0.0.1",
        "/healthz",
    )
    assert companion.http_server.token_env == "WEATHER_TOKEN"  # noqa: S105 - a variable name


def test_extension_shape_against_plugin_manifests() -> None:
    assert is_extension_shape(tomllib.loads(MICROAPP))
    assert is_extension_shape({"plugin": {"id": "x"}, "capabilities": {"tools": ["a"]}})
    assert not is_extension_shape(tomllib.loads(COMPANION))
    assert not is_extension_shape({"manifest_version": 1, "transport": {}})
    assert not is_extension_shape({"plugin": {"entrypoint": {}}, "transport": {}})


@pytest.mark.parametrize(
    ("name", "blocked"),
    [
        ("GITHUB_TOKEN", True),
        ("OPENAI_API_KEY", True),
        ("password_db", True),
        ("MY_PRIVATE_KEY_PEM", True),
        ("AWS_SESSION", True),
        ("HOME", False),
        ("RUST_LOG", False),
        ("WEATHER_REGION", False),
    ],
)
def test_env_blocklist_as_the_host(name: str, blocked: bool) -> None:
    assert env_is_blocked(name) is blocked


@pytest.mark.parametrize(
    ("name", "blocked"),
    [
        # One name per suffix of DEFAULT_ENV_BLOCKLIST (stdio.rs:26-41), none of which holds a
        # substring of the second list, so each row fails when its suffix is dropped.
        ("GITHUB_TOKEN", True),
        ("SIGNING_KEY", True),
        ("STRIPE_SECRET", True),
        ("DB_PASSWORD", True),
        ("DB_PASSWD", True),
        ("DB_PWD", True),
        ("SMTP_CREDENTIAL", True),
        ("SMTP_CREDENTIALS", True),
        ("GITLAB_PAT", True),
        ("PROXY_AUTH", True),
        ("MAPS_APIKEY", True),
        ("API_BEARER", True),
        ("AWS_SESSION", True),
        # The substrings of DEFAULT_ENV_BLOCKLIST_SUBSTRS (stdio.rs:46), anywhere in the name.
        ("PASSWORD_DB", True),
        ("AWS_SECRET_ACCESS", True),
        ("CREDENTIALS_FILE", True),
        ("SSH_PRIVATE_KEY_PATH", True),
        # `to_ascii_uppercase` (stdio.rs:460): ASCII letters in any case match...
        ("github_token", True),
        ("Db_Pwd", True),
        ("my_secret_thing", True),
        # ...but a non-ASCII letter keeps its case: the long s (U+017F), which Python's
        # upper() turns into `S`, is no `S` to the host, so this name reaches the child.
        ("AWS_\u017fECRET", False),
        ("MY_TOKEN\u017f", False),
        # A suffix matches only at the end, with its underscore.
        ("TOKEN_FILE", False),
        ("KEYBOARD_LAYOUT", False),
        ("APIKEY", False),
        ("OAUTH", False),
        ("GH_OAUTH", False),
        ("MY_PATH", False),
        ("SESSION_ID", False),
        ("PWD", False),
        ("BEARER", False),
        ("AGENT_VERSION", False),
        ("NEXO_EXTENSION_STATE_ROOT", False),
    ],
)
def test_every_row_of_the_hosts_env_blocklist(name: str, blocked: bool) -> None:
    """microapps.md §2.1 lists the host's blocklist; each suffix and substring is held here."""
    assert env_is_blocked(name) is blocked


@pytest.mark.parametrize(
    "reserved", ["agent", "browser", "core", "email", "heartbeat", "memory", "telegram", "whatsapp"]
)
def test_every_reserved_id_is_refused(reserved: str) -> None:
    """``RESERVED_IDS`` (crates/extensions/src/manifest.rs:55-64): every one of them."""
    assert id_problem(reserved) == "is reserved for the daemon's native plugins"
    # Only the exact id: a longer one that starts with it is an ordinary id.
    assert id_problem(f"{reserved}_x") is None


def test_id_and_capability_name_rules() -> None:
    assert id_problem("weather-app") is None
    assert id_problem("") == "is empty"
    assert id_problem("memory") == "is reserved for the daemon's native plugins"
    assert id_problem("Weather") is not None
    assert id_problem("a" * 65) is not None
    assert id_problem("weather\n") is not None  # Rust's `$` does not match before a newline
    assert capability_name_problem("get_weather") is None
    assert capability_name_problem("get-weather") is not None


def test_read_toml_or_none(tmp_path: Path) -> None:
    path = tmp_path / "plugin.toml"
    assert read_toml_or_none(path) is None
    path.write_text(MICROAPP, encoding="utf-8")
    data = read_toml_or_none(path)
    assert data is not None
    manifest = microapp_from_data(data)
    assert manifest is not None
    assert manifest.id == "weather-app"
    path.write_text("[plugin\n", encoding="utf-8")
    assert read_toml_or_none(path) is None


def test_a_microapp_manifest_is_read_up_to_the_limit_lint_reads_any_manifest_at(
    tmp_path: Path,
) -> None:
    """One limit for every manifest read: a 2 MiB microapp manifest (the daemon sets none)
    is read for `list`, the companion and `lint --config` as lint reads it (NX007 warns,
    NX004 refuses above 4 MiB), where a 1 MiB limit left it unread; above the limit, nothing."""
    from nexo_pkg.manifest import microapp, names

    head = '[plugin]\nid = "bigapp"\nversion = "0.1.0"\n\n[transport]\nkind = "stdio"\n'
    big = tmp_path / "plugin.toml"
    big.write_text(head + ("# " + "x" * 1000 + "\n") * 2100, encoding="utf-8")
    assert 2 * 1024 * 1024 < big.stat().st_size < names.MAX_MANIFEST_BYTES
    data = microapp.read_toml_or_none(big)
    assert data is not None
    assert data["plugin"]["id"] == "bigapp"
    with big.open("ab") as handle:
        handle.truncate(names.MAX_MANIFEST_BYTES + 1)
    assert microapp.read_toml_or_none(big) is None
