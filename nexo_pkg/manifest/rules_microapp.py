"""Lint rules of a microapp manifest: the extension-shaped ``plugin.toml`` and its companion.

:func:`check_microapp` applies what the daemon's extension manifest parser does
(``crates/extensions/src/manifest.rs``: serde with ``deny_unknown_fields`` on every struct,
then ``validate()``), reporting every problem rather than the first; plus warnings where the
manifest is valid but the daemon does something the author likely does not expect.
:func:`check_companion` applies what the extension host does with a ``nexo-plugin.toml`` beside
it (docs/microapps.md, "The companion ``nexo-plugin.toml``").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any
from urllib.parse import unquote_to_bytes

from nexo_pkg.core.diagnostics import Diagnostic, Rule, Span
from nexo_pkg.core.toml_spans import SpanPart
from nexo_pkg.core.version import Version, VersionError
from nexo_pkg.core.versionreq import parse_version_req
from nexo_pkg.manifest import microapp, microapp_model
from nexo_pkg.manifest.core_rules import (
    INVALID_VALUE,
    MISSING_KEY,
    OUT_OF_RANGE,
    UNKNOWN_KEY,
    WRONG_TYPE,
)
from nexo_pkg.manifest.microapp_catalog import MICROAPP_RULES
from nexo_pkg.manifest.rules_context import Findings, as_table, semver_problem, strings
from nexo_pkg.manifest.rust_text import RUST_WHITESPACE, is_blank
from nexo_pkg.manifest.shape import (
    BOOL,
    I32,
    STR,
    STR_LIST,
    KeyPath,
    MapOf,
    ShapeProblem,
    Table,
    Tagged,
    check_shape,
)

__all__ = ["EXTENSION_MANIFEST", "check_companion", "check_microapp", "companion_refused"]

Locate = Callable[[KeyPath, SpanPart], Span]

_MOVE_TO_COMPANION = (
    "the extension manifest has no such key; declare it in the companion nexo-plugin.toml "
    "as `[plugin.capabilities.{key}]` (same `plugin.id`)"
)
_CAPABILITIES = Table(
    dict.fromkeys(microapp.CAPABILITY_KINDS, STR_LIST),
    hints={
        "admin": _MOVE_TO_COMPANION.format(key="admin"),
        "http_server": _MOVE_TO_COMPANION.format(key="http_server"),
        "skills": "the extension manifest has no `skills`; the microapp cannot load with it",
    },
)
_MCP_COMMON = {"log_level": STR, "context_passthrough": BOOL}
_MCP_HTTP = Table({"url": STR, "headers": MapOf(STR), **_MCP_COMMON}, frozenset({"url"}))
_MCP_SERVER = Tagged(
    "transport",
    {
        "stdio": Table(
            {"command": STR, "args": STR_LIST, "env": MapOf(STR), "cwd": STR, **_MCP_COMMON},
            frozenset({"command"}),
        ),
        "streamable_http": _MCP_HTTP,
        "sse": _MCP_HTTP,
        "auto": _MCP_HTTP,
    },
)
EXTENSION_MANIFEST = Table(
    {
        "plugin": Table(
            {
                "id": STR,
                "version": STR,
                "name": STR,
                "description": STR,
                "min_agent_version": STR,
                "priority": I32,
            },
            frozenset({"id", "version"}),
            hints={"min_nexo_version": "the extension manifest calls it `min_agent_version`"},
        ),
        "capabilities": _CAPABILITIES,
        "transport": Tagged(
            "kind",
            {
                "stdio": Table(
                    {"command": STR, "args": STR_LIST},
                    frozenset({"command"}),
                    hints={"type": "the transport's tag is `kind`, not `type`"},
                ),
                "nats": Table({"subject_prefix": STR}, frozenset({"subject_prefix"})),
                "http": Table({"url": STR}, frozenset({"url"})),
            },
        ),
        "meta": Table({"author": STR, "license": STR}),
        "mcp_servers": MapOf(_MCP_SERVER),
        "context": Table({"passthrough": BOOL}),
        "requires": Table({"bins": STR_LIST, "env": STR_LIST}),
        "outbound_bindings": MapOf(STR_LIST),
    },
    frozenset({"plugin", "transport"}),
    hints={"manifest_version": "the extension manifest has no `manifest_version`"},
)
"""``ExtensionManifest`` of the daemon's extension crate, every struct closed."""

# `HTTP_URL_RE` of `manifest.rs:103-104`; the regex crate's `\s` is Unicode White_Space, which
# Python's `\s` is not (it also takes the separators U+001C-U+001F).
_HTTP_URL = re.compile(rf"https?://[^/{re.escape(RUST_WHITESPACE)}:?#]+(?::\d+)?(?:/.*)?")
_MCP_NAME = re.compile(r"[a-z][a-z0-9_-]*")
_UNIFIED_DROPS = ("requires", "context", "mcp_servers", "outbound_bindings")
_UNIFIED_DROP_HELP = (
    "keep it while you target daemons that read the extension shape; check the unified "
    "manifest's replacement before moving to it"
)
_STRUCTURE_RULES: dict[str, Rule] = {
    "missing": MISSING_KEY,
    "unknown": UNKNOWN_KEY,
    "type": WRONG_TYPE,
    "variant": INVALID_VALUE,
    "range": OUT_OF_RANGE,
}


def _structure(report: Findings, problems: Iterable[ShapeProblem]) -> None:
    """Report shape problems under the shared structure rules (NX211 for a companion key)."""
    for problem in problems:
        rule: Rule | str = _STRUCTURE_RULES[problem.kind]
        if (
            problem.kind == "unknown"
            and problem.path[:1] == ("capabilities",)
            and problem.path[-1] in ("admin", "http_server", "skills")
        ):
            rule = "NX211"
        part: SpanPart = "key" if problem.kind in ("unknown", "missing") else "value"
        report.add(rule, problem.path, problem.message, problem.help, part)


def _older(current: Version, required: Version) -> bool:
    """Whether ``current`` < ``required`` in the daemon's order (``semver::Version``'s
    ``Ord``: a pre-release comes first, build metadata counts, so daemon 0.1.5 is older than
    ``0.1.5+build.1``)."""
    return current < required


def check_microapp(
    data: Mapping[str, Any], locate: Locate, daemon_version: str
) -> list[Diagnostic]:
    """Every finding of an extension-shaped ``plugin.toml`` (``data`` as parsed TOML).

    ``daemon_version`` stands for the host's agent version in ``min_agent_version``.
    """
    report = Findings(MICROAPP_RULES, locate)
    _structure(report, check_shape(data, EXTENSION_MANIFEST))
    plugin = as_table(data.get("plugin")) or {}
    _check_identity(report, plugin, daemon_version)
    _check_capabilities(report, data)
    _check_transport(report, as_table(data.get("transport")) or {})
    _check_mcp_servers(report, as_table(data.get("mcp_servers")) or {})
    for index, name in strings((as_table(data.get("requires")) or {}).get("env")):
        if microapp.env_is_blocked(name):
            report.add(
                "NX212",
                ("requires", "env", index),
                f"`{name}` is on the host's secret blocklist: the boot check sees it set, but "
                "the microapp's environment never has it",
                "pass the secret another way, or rename a variable that holds no secret",
            )
    for section in _UNIFIED_DROPS:
        if section in data:
            report.add(
                "NX213",
                (section,),
                f"[{section}] works with the extension parser; the unified plugin manifest of "
                "newer daemons drops it with a warning",
                _UNIFIED_DROP_HELP,
                part="key",
            )
    if "priority" in plugin:
        report.add(
            "NX213",
            ("plugin", "priority"),
            "`plugin.priority` orders hooks under the extension parser; the unified plugin "
            "manifest of newer daemons drops it with a warning",
            _UNIFIED_DROP_HELP,
            part="key",
        )
    return report.found


def _check_identity(report: Findings, plugin: Mapping[str, Any], daemon_version: str) -> None:
    plugin_id = plugin.get("id")
    if isinstance(plugin_id, str) and (problem := microapp.id_problem(plugin_id)) is not None:
        reserved = plugin_id in microapp.RESERVED_IDS
        report.add(
            "NX201" if reserved else "NX200",
            ("plugin", "id"),
            f"`plugin.id` `{plugin_id}` {problem}",
            "choose another id"
            if reserved
            else "use a lowercase letter, then lowercase letters, digits, `_` or `-`",
        )
    elif isinstance(plugin_id, str) and "-" in plugin_id:
        report.add(
            "NX217",
            ("plugin", "id"),
            f"`plugin.id` `{plugin_id}` has a `-`: the daemon accepts it, but `nexo plugin "
            "pack` and `install` name the tarball (`<id>-<version>-<target>.tar.gz`), its "
            "`bin/<id>` and the install directory by the plugin id rule, which has no `-`",
            f"use `{plugin_id.replace('-', '_')}` here and in the companion `nexo-plugin.toml`",
        )
    version = plugin.get("version")
    if isinstance(version, str) and (reason := semver_problem(version)) is not None:
        report.add(
            "NX202",
            ("plugin", "version"),
            f"`plugin.version` `{version}` is not SemVer: {reason}",
            'write e.g. `version = "0.1.0"`',
        )
    required = plugin.get("min_agent_version")
    if isinstance(required, str):
        reason = semver_problem(required)
        if reason is not None:
            report.add(
                "NX202",
                ("plugin", "min_agent_version"),
                f"`plugin.min_agent_version` `{required}` is not SemVer: {reason}",
                'write a version, not a requirement: `min_agent_version = "0.1.5"`',
            )
        elif _older(Version.parse(daemon_version), Version.parse(required)):
            report.add(
                "NX203",
                ("plugin", "min_agent_version"),
                f"the microapp needs agent >= {required}; the daemon checked against is "
                f"{daemon_version}",
                "lower `min_agent_version`, or lint with `--nexo-version` of your daemon",
            )
    description = plugin.get("description")
    if isinstance(description, str) and len(description) > microapp.MAX_DESCRIPTION_LENGTH:
        report.add(
            "NX204",
            ("plugin", "description"),
            f"`plugin.description` has {len(description)} characters; the limit is "
            f"{microapp.MAX_DESCRIPTION_LENGTH}",
        )


def _check_capabilities(report: Findings, data: Mapping[str, Any]) -> None:
    capabilities = as_table(data.get("capabilities")) or {}
    lists = {kind: capabilities.get(kind) for kind in microapp.CAPABILITY_KINDS}
    total = sum(len(value) for value in lists.values() if isinstance(value, list))
    if total == 0 and ("capabilities" not in data or isinstance(data["capabilities"], Mapping)):
        where: KeyPath = ("capabilities",) if "capabilities" in data else ("plugin",)
        report.add(
            "NX205",
            where,
            "the microapp declares no tool, hook, channel, provider or poller",
            'list what it offers, e.g. `[capabilities] tools = ["get_weather"]`',
            part="key",
        )
    for kind, value in lists.items():
        seen: set[str] = set()
        for index, name in strings(value):
            path: KeyPath = ("capabilities", kind, index)
            problem = microapp.capability_name_problem(name)
            if problem is not None:
                report.add("NX206", path, f"{kind} name `{name}` {problem}")
            elif name in seen:
                report.add("NX207", path, f"{kind} name `{name}` is listed twice")
            elif kind == "hooks" and name not in microapp.HOOK_NAMES:
                report.add(
                    "NX215",
                    path,
                    f"hook `{name}` is not one the host registers; advertised in `initialize` "
                    "it would be skipped",
                    "use one of " + ", ".join(f"`{hook}`" for hook in microapp.HOOK_NAMES),
                )
            seen.add(name)


def _check_transport(report: Findings, transport: Mapping[str, Any]) -> None:
    kind = transport.get("kind")
    if kind == "stdio":
        command = transport.get("command")
        if isinstance(command, str) and is_blank(command):
            report.add(
                "NX208",
                ("transport", "command"),
                "`transport.command` is blank",
                'name the program to run: `command = "python3"`',
            )
    elif kind == "nats":
        prefix = transport.get("subject_prefix")
        if isinstance(prefix, str) and is_blank(prefix):
            report.add("NX208", ("transport", "subject_prefix"), "`subject_prefix` is blank")
    elif kind == "http":
        url = transport.get("url")
        if isinstance(url, str) and not _HTTP_URL.fullmatch(url):
            report.add(
                "NX208",
                ("transport", "url"),
                f"`transport.url` `{url}` is not `http(s)://host[:port][/path]`",
            )
    if kind in ("nats", "http"):
        report.add(
            "NX209",
            ("transport", "kind"),
            f'`kind = "{kind}"`: the daemon spawns only stdio microapps at boot and skips this one',
            'run the microapp as a stdio child: `kind = "stdio"`',
        )


def _check_mcp_servers(report: Findings, servers: Mapping[str, Any]) -> None:
    for name, server in servers.items():
        path: KeyPath = ("mcp_servers", name)
        if len(name.encode()) > microapp.MAX_MCP_SERVER_NAME_LENGTH or not _MCP_NAME.fullmatch(
            name
        ):
            report.add(
                "NX210",
                path,
                f"MCP server name `{name}` must match `^[a-z][a-z0-9_-]*$` (at most "
                f"{microapp.MAX_MCP_SERVER_NAME_LENGTH} bytes)",
                part="key",
            )
        table = as_table(server) or {}
        transport = table.get("transport")
        command, url = table.get("command"), table.get("url")
        if transport == "stdio" and isinstance(command, str) and is_blank(command):
            report.add("NX210", (*path, "command"), f"MCP server `{name}`: `command` is blank")
        elif (
            transport in ("streamable_http", "sse", "auto")
            and isinstance(url, str)
            and not is_web_url(url)
        ):
            report.add(
                "NX210", (*path, "url"), f"MCP server `{name}`: `{url}` is not an http(s) URL"
            )


_WEB_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*):")
# What the URL Standard's domain may not hold (forbidden domain code points, ASCII part).
_FORBIDDEN_IN_DOMAIN = frozenset(
    [chr(code) for code in range(0x21)] + list("#%/:<>?@[\\]^|") + [chr(0x7F)]
)


def is_web_url(url: str) -> bool:
    """Whether ``url::Url::parse`` (the URL Standard, which the daemon's MCP server check
    uses) reads ``url`` as an ``http``/``https`` URL: leading and trailing blanks and
    controls are dropped and tabs/newlines removed, any number of slashes (or backslashes)
    may follow ``http:``, the host must be there and be a valid domain, IPv4 address (the
    standard's numbers: ``0x7f.1`` is 127.0.0.1, ``1.2.3.256`` is refused) or bracketed IPv6
    address, the port digits at most 65535. A host with non-ASCII letters is accepted
    without the IDNA mapping."""
    text = url.strip("".join(chr(code) for code in range(0x21)))
    text = text.replace("\t", "").replace("\n", "").replace("\r", "")
    scheme = _WEB_SCHEME.match(text)
    if scheme is None or scheme.group(1).lower() not in ("http", "https"):
        return False
    rest = text[scheme.end() :].replace("\\", "/").lstrip("/")
    authority = re.split(r"[/?#]", rest, maxsplit=1)[0]
    if "@" in authority:
        authority = authority.rpartition("@")[2]
    if authority.startswith("["):
        host, bracket, port = authority.partition("]")
        host += bracket
        if port and not port.startswith(":"):
            return False
        port = port[1:]
    else:
        host, _, port = authority.partition(":")
    if not host or not port.isascii() or (port and not (port.isdigit() and int(port) <= 65535)):
        return False
    if host.startswith("["):
        return _is_ipv6(host[1:-1]) if host.endswith("]") else False
    domain = unquote_to_bytes(host).decode("utf-8", "replace").lower()
    if any(char in _FORBIDDEN_IN_DOMAIN for char in domain):
        return False
    return not _ends_in_number(domain) or _is_ipv4(domain)


def _is_ipv6(text: str) -> bool:
    import ipaddress  # noqa: PLC0415  # only for a bracketed host

    if "%" in text:  # a zone id: the URL Standard has none
        return False
    try:
        ipaddress.IPv6Address(text)
    except ValueError:
        return False
    return True


def _ipv4_labels(domain: str) -> list[str]:
    labels = domain.split(".")
    if len(labels) > 1 and not labels[-1]:
        labels.pop()
    return labels


def _ends_in_number(domain: str) -> bool:
    last = _ipv4_labels(domain)[-1]
    hex_digits = last[2:] if last[:2] == "0x" else None
    if hex_digits is not None:
        return all(char in "0123456789abcdef" for char in hex_digits)
    return last.isascii() and last.isdigit()


def _ipv4_number(label: str) -> int | None:
    if label[:2] == "0x":
        digits, base = label[2:] or "0", 16
    elif len(label) > 1 and label.startswith("0"):
        digits, base = label[1:], 8
    else:
        digits, base = label, 10
    try:
        return int(digits, base) if digits.isascii() and digits.isalnum() else None
    except ValueError:
        return None


def _is_ipv4(domain: str) -> bool:
    labels = _ipv4_labels(domain)
    if len(labels) > 4 or not all(labels):
        return False
    numbers = [_ipv4_number(label) for label in labels]
    if any(number is None for number in numbers):
        return False
    values = [number for number in numbers if number is not None]
    if any(value > 255 for value in values[:-1]):
        return False
    limit: int = 256 ** (5 - len(values))
    return values[-1] < limit


def _companion_version_problems(data: Mapping[str, Any]) -> list[tuple[KeyPath, str]]:
    """Where and why the companion's ``plugin.version`` (``semver::Version``) or
    ``plugin.min_nexo_version`` (``semver::VersionReq``) does not parse."""
    plugin = as_table(data.get("plugin")) or {}
    found: list[tuple[KeyPath, str]] = []
    version = plugin.get("version")
    if isinstance(version, str) and (problem := semver_problem(version)) is not None:
        found.append(
            (("plugin", "version"), f"`plugin.version` `{version}` is not SemVer: {problem}")
        )
    required = plugin.get("min_nexo_version")
    if isinstance(required, str):
        try:
            parse_version_req(required)
        except VersionError as error:
            found.append(
                (
                    ("plugin", "min_nexo_version"),
                    f"`plugin.min_nexo_version` `{required}` is not a version requirement: {error}",
                )
            )
    return found


def companion_refused(data: Mapping[str, Any]) -> bool:
    """Whether the daemon's parse of a companion ``nexo-plugin.toml`` fails, so that it skips
    the file (NX216): the plugin manifest schema's parse-level errors or the SemVer fields."""
    from nexo_pkg.manifest.schema import (  # noqa: PLC0415 - jsonschema on use
        VALUE_CONSTRAINT_KEYWORDS,
        schema_errors,
    )

    if _companion_version_problems(data):
        return True
    return any(
        error.validator not in VALUE_CONSTRAINT_KEYWORDS or error.validator in _PARSE_LEVEL
        for error in schema_errors(dict(data))
    )


_PARSE_LEVEL = frozenset({"minimum", "maximum"})
"""Value constraints of the schema that the parse itself enforces (the u16 port)."""


def _companion_skipped(
    report: Findings,
    data: Mapping[str, Any],
    name: str | None,
    refused: Sequence[Diagnostic],
) -> None:
    """NX216 when the daemon cannot parse the companion (``refused``: the schema's findings
    of what its parse refuses; the SemVer fields checked here), naming every reason, at the
    first of them."""
    reasons = [
        (report.locate(path, "value"), text) for path, text in _companion_version_problems(data)
    ]
    reasons.extend((item.span, item.message) for item in refused if item.is_error)
    if not reasons:
        return
    reasons.sort(key=lambda reason: (reason[0].start.line, reason[0].start.column))
    whose = f"microapp `{name}`" if name else "the microapp"
    listed = "; ".join(text for _, text in reasons)
    report.at(
        "NX216",
        reasons[0][0],
        f"the daemon cannot parse this nexo-plugin.toml ({listed}) and skips it with only a "
        f"log line: {whose} loads without its admin capabilities and without its HTTP server",
        "fix the file so that it parses; `nexo plugin lint --explain NX216` lists the rules",
    )


def check_companion(
    data: Mapping[str, Any],
    locate: Locate,
    microapp_id: str | None,
    refused: Sequence[Diagnostic] = (),
) -> list[Diagnostic]:
    """The cross-file findings of a microapp's ``nexo-plugin.toml`` (``data`` as parsed TOML).

    ``microapp_id`` is the ``plugin.id`` of the ``plugin.toml`` beside it (``None`` when that
    has none); ``refused`` are the findings of what the daemon's parse of the file refuses
    (its schema), summed up with the SemVer fields in one NX216.
    """
    report = Findings(MICROAPP_RULES, locate)
    companion = microapp_model.companion_from_data(data)
    _companion_skipped(report, data, microapp_id or companion.id, refused)
    if microapp_id is not None and companion.id is not None and companion.id != microapp_id:
        report.add(
            "NX214",
            ("plugin", "id"),
            f"`plugin.id` `{companion.id}` differs from `{microapp_id}` in plugin.toml: the "
            "microapp gets no admin router",
            f'write `id = "{microapp_id}"`',
        )
    http = companion.http_server
    if http is not None and http.token_env is not None and microapp.env_is_blocked(http.token_env):
        report.add(
            "NX212",
            ("plugin", "capabilities", "http_server", "token_env"),
            f"`{http.token_env}` is on the host's secret blocklist: the microapp's environment "
            "never has it",
            "the microapp cannot read its token from this variable; pass it another way",
        )
    return report.found
