"""Rules on ``[plugin.sandbox]``: the daemon's checks, then the stricter normalised ones, then
whether each path exists on the host linting (NX148, what ``bwrap`` needs to mount it).

For each allowlist entry at most one denylist finding is reported, preferring the daemon's
own verdict (NX145), then the normalised one (NX146), then the home secrets (NX147).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from nexo_pkg.manifest.rules_context import Context, KeyPath, as_list, as_str, strings
from nexo_pkg.manifest.rust_text import is_blank
from nexo_pkg.manifest.sandbox_paths import (
    STATE_DIR_TOKEN,
    daemon_denylist_hit,
    denylist_hit,
    home_secret_hit,
    host_path_exists,
    normalise,
    probe,
)

__all__ = ["check", "env_flag", "host_net_allowed", "sandbox_required"]

HOST_NET_ENV = "NEXO_PLUGIN_SANDBOX_HOST_NET_ALLOW"
REQUIRE_ENV = "NEXO_PLUGIN_SANDBOX_REQUIRE"
TRUTHY = ("1", "true", "TRUE", "yes", "YES")
"""The values the daemon's ``env_flag`` takes for "on"; any other value (or none) is off."""


def env_flag(name: str, env: Mapping[str, str] | None = None) -> bool:
    """Whether environment variable ``name`` (of ``env``, else of this process) is on, spelled
    as the daemon accepts it."""
    return (os.environ if env is None else env).get(name) in TRUTHY


def host_net_allowed(option: bool | None) -> bool:
    """The host-network permission: the option when given, else the daemon's env variable."""
    return option if option is not None else env_flag(HOST_NET_ENV)


def sandbox_required(option: bool | None) -> bool:
    """Whether the daemon refuses unsandboxed plugins: the option, else its env variable."""
    return option if option is not None else env_flag(REQUIRE_ENV)


def _check_required(context: Context, enabled: bool) -> None:
    """An unsandboxed plugin the daemon will refuse to spawn (only one it spawns at all)."""
    command = as_str(context.section("entrypoint").get("command"))
    if command is None or is_blank(command) or enabled:
        return
    if not sandbox_required(context.options.sandbox_required):
        return
    path: KeyPath = ("plugin", "sandbox", "enabled")
    if "sandbox" not in context.plugin:
        path = ("plugin", "entrypoint", "command")
    context.add(
        "NX149",
        path,
        f"the plugin runs unsandboxed, but {REQUIRE_ENV} is set: the daemon refuses to spawn "
        "a plugin without `[plugin.sandbox] enabled = true`",
        "add `[plugin.sandbox]` with `enabled = true`, or lint where the daemon does not "
        f"set {REQUIRE_ENV}",
    )


def _state_dir_misplaced(entry: str) -> bool:
    if STATE_DIR_TOKEN not in entry:
        return False
    if entry.count(STATE_DIR_TOKEN) > 1 or not entry.startswith(STATE_DIR_TOKEN):
        return True
    rest = entry[len(STATE_DIR_TOKEN) :]
    return bool(rest) and not rest.startswith("/")


def _check_entry(context: Context, array: str, index: int, entry: str) -> None:
    path: KeyPath = ("plugin", "sandbox", array, index)
    where = f"entry `{entry}` of array `plugin.sandbox.{array}`"
    if array == "fs_read_paths" and STATE_DIR_TOKEN in entry:
        context.add(
            "NX142",
            path,
            f"{where} uses `${{state_dir}}`, which is only expanded in `fs_write_paths`",
            "move the entry to `fs_write_paths`",
        )
        return
    if array == "fs_write_paths" and _state_dir_misplaced(entry):
        context.add(
            "NX143",
            path,
            f"{where} must use `${{state_dir}}` once, as the leading token",
            'write `"${state_dir}"` or `"${state_dir}/<subdir>"`',
        )
    probed = probe(entry)
    if not probed.startswith("/"):
        fix = (
            "write the absolute home path; `~` is not expanded"
            if entry.startswith("~")
            else "write an absolute path starting with `/`, or `${state_dir}/...` for state"
        )
        context.add("NX144", path, f"{where} is not an absolute path", fix)
        secret = home_secret_hit(entry) if entry.startswith("~") else None
        if secret is not None:
            _report_home_secret(context, path, where, secret)
        return
    hit = daemon_denylist_hit(probed)
    if hit is not None:
        context.add(
            "NX145",
            path,
            f"{where} equals, lies under or contains denylisted host path `{hit}`",
            f"narrow the entry to a sibling that does not include `{hit}`",
        )
        return
    normal = normalise(probed)
    hit = denylist_hit(normal)
    if hit is not None:
        context.add(
            "NX146",
            path,
            f"{where} is `{normal}` once normalised, which equals, lies under or contains "
            f"denylisted host path `{hit}`",
            f"write the path in normal form and narrow it so it does not include `{hit}`",
        )
        return
    secret = home_secret_hit(probed)
    if secret is not None:
        _report_home_secret(context, path, where, secret)
        return
    if STATE_DIR_TOKEN not in entry and not host_path_exists(entry):
        context.add(
            "NX148",
            path,
            f"{where} does not exist on this host, so bwrap cannot mount it and the daemon "
            "cannot start the plugin here",
            "list only paths every target host has (see `nexo plugin lint --explain NX148`)",
        )


def _report_home_secret(context: Context, path: KeyPath, where: str, secret: str) -> None:
    context.add(
        "NX147",
        path,
        f"{where} exposes home secret `{secret}`",
        f"allow only the directories the plugin needs, none of which may include `{secret}`",
    )


def check(context: Context) -> None:
    """Check ``[plugin.sandbox]`` when enabled; warn once when filled in but disabled.

    With ``NEXO_PLUGIN_SANDBOX_REQUIRE`` on, a spawnable plugin without an enabled sandbox is
    an error, as the daemon refuses to spawn it.
    """
    sandbox = context.section("sandbox")
    _check_required(context, sandbox.get("enabled") is True)
    if "sandbox" not in context.plugin:
        return
    if sandbox.get("enabled") is not True:
        filled = [
            key
            for key in ("network", "fs_read_paths", "fs_write_paths")
            if key in sandbox and (key == "network" or as_list(sandbox[key]))
        ]
        if filled:
            keys = ", ".join(f"`{key}`" for key in filled)
            context.add(
                "NX140",
                ("plugin", "sandbox"),
                f"table [plugin.sandbox] sets {keys} but is not enabled, so "
                f"{'they are' if len(filled) > 1 else 'it is'} ignored",
                "add `enabled = true` to apply the sandbox, or remove the unused keys",
                part="key",
            )
        return
    network = as_str(sandbox.get("network"))
    if network == "host" and not host_net_allowed(context.options.host_net_allowed):
        context.add(
            "NX141",
            ("plugin", "sandbox", "network"),
            'key `network` in table [plugin.sandbox] is "host", which needs the operator '
            f"permission {HOST_NET_ENV}=1",
            f'use `network = "deny"`, or set {HOST_NET_ENV}=1 where the daemon allows it',
        )
    for array in ("fs_read_paths", "fs_write_paths"):
        for index, entry in strings(sandbox.get(array)):
            _check_entry(context, array, index, entry)
