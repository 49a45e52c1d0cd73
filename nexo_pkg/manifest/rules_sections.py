"""Rules on the daemon-integration sections.

``[plugin.pairing]`` and ``[plugin.public_tunnel]`` are checked as the daemon's validation
does (errors). ``poller``, ``dashboard``, ``metrics``, ``admin`` and ``http`` have validators
in the reference crate that its manifest validation does not run; they are warnings here, and
every failing field is reported (the crate stops at the first).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from nexo_pkg.manifest.rules_context import (
    Context,
    KeyPath,
    as_int,
    as_list,
    as_str,
    as_table,
    strings,
)
from nexo_pkg.manifest.rust_text import is_blank, rust_trim

__all__ = ["check"]

_PAIRING_KINDS = ("qr", "form", "info", "custom")
_POLLER_KIND = re.compile(r"^[a-z][a-z0-9_]+$")
_PREFIX = "broker_topic_prefix"


def _check_pairing(context: Context) -> None:
    pairing = context.section("pairing")
    kind = as_str(pairing.get("kind"))
    if kind not in _PAIRING_KINDS:
        return  # absent: nothing is checked; unknown: the schema reports it
    kind_path: KeyPath = ("plugin", "pairing", "kind")
    fields = as_list(pairing.get("fields"))
    if kind == "form" and ("fields" not in pairing or (fields is not None and not fields)):
        context.add(
            "NX150",
            kind_path,
            'table [plugin.pairing] has `kind = "form"` but no [[plugin.pairing.fields]]',
            "add at least one `[[plugin.pairing.fields]]` with `name` and `label`",
        )
    if kind == "custom":
        namespace = pairing.get("rpc_namespace")
        if namespace is None or namespace == "":
            context.add(
                "NX151",
                ("plugin", "pairing", "rpc_namespace") if namespace == "" else kind_path,
                'table [plugin.pairing] has `kind = "custom"` but no non-empty key `rpc_namespace`',
                'add `rpc_namespace = "<namespace>"` (the admin listens on '
                "`nexo/notify/<rpc_namespace>/status_changed`)",
            )
    if kind in ("custom", "info") and fields:
        context.add(
            "NX152",
            ("plugin", "pairing", "fields"),
            f'array `plugin.pairing.fields` is only valid with kind "form" or "qr" (got "{kind}")',
            'remove the fields, or use `kind = "form"`',
            part="key",
        )
    trigger = as_table(pairing.get("trigger"))
    if trigger is None:
        return
    for method in ("start_method", "cancel_method"):
        value = as_str(trigger.get(method))
        if value is not None and is_blank(value):
            context.add(
                "NX153",
                ("plugin", "pairing", "trigger", method),
                f"key `{method}` in table [plugin.pairing.trigger] must not be empty",
                "name the admin method the daemon forwards to",
            )
    if kind != "qr":
        context.add(
            "NX154",
            ("plugin", "pairing", "trigger"),
            f'table [plugin.pairing.trigger] is only valid with kind "qr" (got "{kind}")',
            'remove the trigger, or use `kind = "qr"`',
            part="key",
        )


def _check_public_tunnel(context: Context) -> None:
    subject = as_str(context.section("public_tunnel").get("close_on_event"))
    if subject is None:
        return
    path: KeyPath = ("plugin", "public_tunnel", "close_on_event")
    if is_blank(subject):
        context.add(
            "NX155",
            path,
            "key `close_on_event` in table [plugin.public_tunnel] must not be empty",
            "name the broker subject that closes the tunnel, or remove the key",
        )
        return
    if any(segment in ("*", ">") for segment in rust_trim(subject).split(".")):
        context.add(
            "NX156",
            path,
            f"key `close_on_event` in table [plugin.public_tunnel] value `{subject}` contains "
            "a wildcard segment (`*` or `>`)",
            "name one literal broker subject",
        )


def _check_prefix(
    context: Context, code: str, section: str, value: Any, *, ending_dot: bool
) -> None:
    prefix = as_str(value)
    if prefix is None:
        return
    where = f"key `broker_topic_prefix` in table [plugin.{section}]"
    if not prefix:
        problem = (f"{where} must not be empty", "write a broker subject prefix")
    elif ending_dot and prefix.endswith("."):
        fixed = prefix.rstrip(".")
        problem = (f"{where} `{prefix}` must not end with `.`", f'write `{_PREFIX} = "{fixed}"`')
    elif " " in prefix:
        fixed = prefix.replace(" ", "_")
        problem = (f"{where} `{prefix}` must not contain spaces", f'write `{_PREFIX} = "{fixed}"`')
    else:
        return
    context.add(code, ("plugin", section, _PREFIX), *problem)


def _check_poller(context: Context, poller: Mapping[str, Any]) -> None:
    kinds = as_list(poller.get("kinds"))
    if kinds is not None and not kinds:
        context.add(
            "NX180",
            ("plugin", "poller", "kinds"),
            "array `plugin.poller.kinds` must declare at least one kind",
            'add a kind, e.g. `kinds = ["weather_feed"]`',
        )
    seen: set[str] = set()
    for index, kind in strings(kinds):
        path: KeyPath = ("plugin", "poller", "kinds", index)
        if not _POLLER_KIND.fullmatch(kind):
            context.add(
                "NX180",
                path,
                f"kind `{kind}` in array `plugin.poller.kinds` must match ^[a-z][a-z0-9_]+$ "
                "(at least 2 characters)",
                "use a lowercase slug of 2 characters or more",
            )
        elif kind in seen:
            context.add(
                "NX180",
                path,
                f"array `plugin.poller.kinds` contains duplicate `{kind}`",
                "remove the repeated kind",
            )
        seen.add(kind)
    _check_prefix(context, "NX180", "poller", poller.get(_PREFIX), ending_dot=True)
    for key, low, high in (("max_concurrent_ticks", 1, 64), ("tick_timeout_secs", 1, 3600)):
        number = as_int(poller.get(key))
        if number is not None and number >= 0 and not low <= number <= high:
            context.add(
                "NX180",
                ("plugin", "poller", key),
                f"key `{key}` in table [plugin.poller] is {number}, outside [{low}, {high}]",
                f"set `{key}` between {low} and {high}",
            )


def _check_dashboard(context: Context, dashboard: Mapping[str, Any]) -> None:
    layout = as_table(dashboard.get("layout")) or {}
    subdir = as_str(layout.get("subdir")) if layout.get("kind") == "workspace_walk" else None
    where = "key `subdir` of workspace_walk layout in [plugin.dashboard]"
    problem: tuple[str, str] | None = None
    if subdir == "":
        problem = (f"{where} must not be empty", "name one directory of the workspace")
    elif subdir is not None and "/" in subdir:
        problem = (
            f"{where} value `{subdir}` must be a single path segment",
            "name one directory, without `/`",
        )
    if problem is not None:
        context.add("NX181", ("plugin", "dashboard", "layout", "subdir"), *problem)
    auth = as_table(dashboard.get("auth_check")) or {}
    file_path = as_str(auth.get("path")) if auth.get("kind") == "file_presence" else None
    where = "key `path` of file_presence auth_check in [plugin.dashboard]"
    problem = None
    if file_path == "":
        problem = (f"{where} must not be empty", "name a file relative to the secrets directory")
    elif file_path is not None and file_path.startswith("/"):
        problem = (
            f"{where} value `{file_path}` must be relative to the secrets directory",
            f'write `path = "{file_path.lstrip("/")}"`',
        )
    if problem is not None:
        context.add("NX181", ("plugin", "dashboard", "auth_check", "path"), *problem)
    candidates = as_list(auth.get("candidates"))
    if auth.get("kind") == "session_dir_files" and candidates is not None and not candidates:
        context.add(
            "NX181",
            ("plugin", "dashboard", "auth_check", "candidates"),
            "array `candidates` of session_dir_files auth_check in [plugin.dashboard] "
            "must list at least one file name",
            "add a candidate file name",
        )


def _check_metrics(context: Context, metrics: Mapping[str, Any]) -> None:
    prefix = metrics.get("broker_topic_prefix", "")
    if metrics.get("prometheus") is True and prefix == "":
        where: KeyPath = (
            ("plugin", "metrics", "broker_topic_prefix")
            if "broker_topic_prefix" in metrics
            else ("plugin", "metrics", "prometheus")
        )
        context.add(
            "NX182",
            where,
            "key `broker_topic_prefix` in table [plugin.metrics] must not be empty when "
            "`prometheus = true`",
            'add `broker_topic_prefix = "plugin.<id>.metrics"`',
        )
    elif isinstance(prefix, str) and " " in prefix:
        _check_prefix(context, "NX182", "metrics", prefix, ending_dot=False)


def _check_admin(context: Context, admin: Mapping[str, Any]) -> None:
    method_prefix = as_str(admin.get("method_prefix"))
    if method_prefix is not None:
        where = f"key `method_prefix` in table [plugin.admin] value `{method_prefix}`"
        example = 'e.g. `method_prefix = "nexo/admin/<plugin>/"`'
        problem: tuple[str, str] | None = None
        if not method_prefix.startswith("nexo/admin/"):
            problem = (f"{where} must start with `nexo/admin/`", f"write {example}")
        elif not method_prefix.endswith("/"):
            problem = (f"{where} must end with `/`", f'write `method_prefix = "{method_prefix}/"`')
        elif method_prefix == "nexo/admin/":
            problem = (f"{where} is the root admin namespace", f"declare a sub-prefix, {example}")
        if problem is not None:
            context.add("NX183", ("plugin", "admin", "method_prefix"), *problem)
    _check_prefix(context, "NX183", "admin", admin.get(_PREFIX), ending_dot=False)


def _check_http(context: Context, http: Mapping[str, Any]) -> None:
    mount = as_str(http.get("mount_prefix"))
    if mount is None:
        return
    where = f"key `mount_prefix` in table [plugin.http] value `{mount}`"
    if not mount:
        problem = (
            "key `mount_prefix` in table [plugin.http] must not be empty",
            'write e.g. `mount_prefix = "/<plugin>"`',
        )
    elif not mount.startswith("/"):
        problem = (f"{where} must start with `/`", f'write `mount_prefix = "/{mount}"`')
    elif "?" in mount or "#" in mount:
        problem = (f"{where} must not contain `?` or `#`", "keep only the path part")
    else:
        return
    context.add("NX184", ("plugin", "http", "mount_prefix"), *problem)


def check(context: Context) -> None:
    """Check pairing and public tunnel (errors) and the five section validators (warnings)."""
    _check_pairing(context)
    _check_public_tunnel(context)
    for key, checker in (
        ("poller", _check_poller),
        ("dashboard", _check_dashboard),
        ("metrics", _check_metrics),
        ("admin", _check_admin),
        ("http", _check_http),
    ):
        section = as_table(context.plugin.get(key))
        if section is not None:
            checker(context, section)
