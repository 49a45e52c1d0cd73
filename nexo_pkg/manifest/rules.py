"""Semantic rules of ``nexo-plugin.toml`` (codes ``NX100`` and up).

The JSON Schema checks shape (types, required keys, unknown keys, enums); these rules check
what a schema cannot: the reference crate's ``validate::run_all`` (ids, versions, namespaces,
cross-references, JSON carried in strings, sandbox denylist, pairing, admin UI, …), the
section validators the crate defines but does not run (as warnings), and a few checks that go
beyond the daemon (normalised sandbox paths, home secrets, entrypoint command shape).

The input is plain parsed TOML whose values may have any type; a rule skips what it cannot
read, because the schema already reports the wrong type. Every finding is reported; none
stops the run.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Collection, Mapping
from functools import cache, lru_cache
from typing import TYPE_CHECKING, Any

from nexo_pkg.core.diagnostics import Diagnostic, Span
from nexo_pkg.core.errors import UsageError
from nexo_pkg.core.terminal import CONTROL_CHARACTERS, printable
from nexo_pkg.core.version import Version, VersionError, parse_version
from nexo_pkg.core.versionreq import VersionReq, parse_version_req
from nexo_pkg.manifest import rules_sandbox, rules_sections
from nexo_pkg.manifest.daemon import (
    CHANNEL_KIND_MAX_LENGTH,
    DAEMON_RELEASES,
    ID_MAX_LENGTH,
    ID_PATTERN,
    PORTABLE_ID_MAX_LENGTH,
    id_problem,
    is_valid_id,
)
from nexo_pkg.manifest.options import LintOptions
from nexo_pkg.manifest.rules_catalog import SEMANTIC_RULES
from nexo_pkg.manifest.rules_context import (
    Context,
    KeyPath,
    Locate,
    as_int,
    as_str,
    format_key_path,
    semver_problem,
    strings,
    tables,
)
from nexo_pkg.manifest.rust_text import is_blank, rust_split_whitespace, rust_trim
from nexo_pkg.manifest.serde_json import json_problem

if TYPE_CHECKING:
    from nexo_pkg.core.toml_spans import SpanMap

__all__ = [
    "SEMANTIC_RULES",
    "check_semantics",
    "detect_legacy_v1",
    "format_key_path",
]

CHANNEL_KIND = re.compile(rf"^[a-z][a-z0-9_]{{0,{CHANNEL_KIND_MAX_LENGTH - 1}}}$")
EXTENDS_LISTS = ("channels", "llm_providers", "memory_backends", "hooks", "tools")

SUPERVISOR_STDERR_TAIL_MAX = 512
SUPERVISOR_BACKOFF_MS_MIN = 100
SUPERVISOR_BACKOFF_MS_MAX = 300_000
SUPERVISOR_DEFAULT_BACKOFF_MS = 1000

# capability -> (section key, array or key that must be filled, how to fill it)
_CAPABILITY_SECTIONS: dict[str, tuple[str, str, str]] = {
    "tools": ("tools", "expose", "set `[plugin.tools] expose = [...]`"),
    "advisors": ("advisors", "register", "set `[plugin.advisors] register = [...]`"),
    "agents": ("agents", "contributes_dir", 'set `[plugin.agents] contributes_dir = "..."`'),
    "skills": ("skills", "contributes_dir", 'set `[plugin.skills] contributes_dir = "..."`'),
    "channels": (
        "channels",
        "register",
        'add `[[plugin.channels.register]]` with `kind = "..."` and `adapter = "..."`',
    ),
}

_RELATIVE_PATH_FIELDS = (
    ("agents", "contributes_dir"),
    ("skills", "contributes_dir"),
    ("config", "schema_path"),
)


def _slugify(text: str) -> str:
    return re.sub(r"[^a-z0-9_]+", "_", text.lower()).strip("_")


def _suggest_id(text: str) -> str:
    slug = _slugify(text)
    if slug and slug[0].isdigit():
        slug = f"p_{slug}"
    return slug[:PORTABLE_ID_MAX_LENGTH].rstrip("_") or "my_plugin"


def _check_identity(context: Context) -> None:
    plugin = context.plugin
    plugin_id = as_str(plugin.get("id"))
    if plugin_id is not None:
        reason = id_problem(plugin_id)
        if reason is not None:
            context.add(
                "NX100",
                ("plugin", "id"),
                f"key `plugin.id` value `{plugin_id}` is not a valid plugin id: {reason}",
                f'write `id = "{_suggest_id(plugin_id)}"` (lowercase letter first, then lowercase '
                f"letters, digits or `_`, at most {ID_MAX_LENGTH} characters; at most "
                f"{PORTABLE_ID_MAX_LENGTH} to load in older daemons too)",
            )
        else:
            _check_long_id(context, ("plugin", "id"), "key `plugin.id`", plugin_id)

    version = as_str(plugin.get("version"))
    if version is not None and (reason := semver_problem(version)) is not None:
        stripped = rust_trim(version)
        hint = (
            f'write `version = "{stripped[1:]}"` without the `v`'
            if stripped[:1] in ("v", "V") and semver_problem(stripped[1:]) is None
            else 'write `MAJOR.MINOR.PATCH`, e.g. `version = "0.1.0"`'
        )
        context.add(
            "NX101",
            ("plugin", "version"),
            f"key `plugin.version` value `{version}` is not a SemVer 2.0 version: {reason}",
            hint,
        )

    for key, code in (("name", "NX102"), ("description", "NX103")):
        value = as_str(plugin.get(key))
        if value is not None and is_blank(value):
            context.add(
                code,
                ("plugin", key),
                f"key `plugin.{key}` must not be empty or only whitespace",
                f"write a non-blank `{key}`",
            )

    _check_min_nexo_version(context)


def _check_long_id(context: Context, path: KeyPath, what: str, value: str) -> None:
    """Warn about a valid id longer than contract 1.10.0 and older daemons allow."""
    if len(value) <= PORTABLE_ID_MAX_LENGTH:
        return
    older = [r.version for r in DAEMON_RELEASES if r.id_max_length < len(value)]
    context.add(
        "NX109",
        path,
        f"{what} `{value}` has {len(value)} characters: the newest daemon allows 64, but "
        f"contract 1.10.0 and daemon {', '.join(older)} allow {PORTABLE_ID_MAX_LENGTH}",
        f"shorten it to at most {PORTABLE_ID_MAX_LENGTH} characters if the plugin must load in "
        "older daemons",
    )


@cache
def _daemon_versions() -> tuple[Version, ...]:
    """The versions of :data:`DAEMON_RELEASES`, parsed once."""
    return tuple(parse_version(release.version) for release in DAEMON_RELEASES)


# A tree of manifests repeats a few requirements and one `--nexo-version`; both parse to
# immutable values (a bad one raises again each time: exceptions are not cached).
_requirement = lru_cache(maxsize=256)(parse_version_req)
_version = lru_cache(maxsize=16)(parse_version)


def _matches_a_release(requirement: VersionReq) -> bool:
    return any(requirement.matches(version) for version in _daemon_versions())


def _check_min_nexo_version(context: Context) -> None:
    requirement_text = as_str(context.plugin.get("min_nexo_version"))
    current_text = context.options.nexo_version
    try:  # a bad --nexo-version is a usage error, whatever the manifest says
        current = None if current_text is None else _version(current_text)
    except VersionError as exc:
        raise UsageError(
            f"--nexo-version {current_text!r} is not a SemVer version ({exc}); write e.g. 0.4.2"
        ) from exc
    if requirement_text is None:
        return
    path: KeyPath = ("plugin", "min_nexo_version")
    try:
        requirement = _requirement(requirement_text)
    except VersionError as exc:
        context.add(
            "NX104",
            path,
            f"key `plugin.min_nexo_version` value `{requirement_text}` is not a version "
            f"requirement: {exc}",
            'write a Cargo requirement such as `">=0.1.0"`, `"^0.2"` or `">=0.1, <0.5"`',
        )
        return
    if current is None:
        if not _matches_a_release(requirement):
            known = ", ".join(release.version for release in DAEMON_RELEASES)
            context.add(
                "NX123",
                path,
                f"key `plugin.min_nexo_version` requirement `{requirement}` matches no daemon "
                f"release nexo-pkg knows ({known})",
                "check the requirement, or lint with `--nexo-version` set to the daemon you target",
            )
        return
    # The daemon ignores its own pre-release tag, so a 0.1.6-rc3 daemon satisfies >=0.1.0.
    if not requirement.matches(current.without_prerelease()):
        context.add(
            "NX105",
            path,
            f"key `plugin.min_nexo_version` requirement `{requirement}` does not match daemon "
            f"version `{current}`",
            f"relax the requirement so it admits {current.without_prerelease()}, or target a "
            "newer daemon",
        )


def _command_problem(command: str) -> tuple[str, str] | None:
    """(reason, fix) when ``command`` is not absolute, bare, or ``./`` inside the root."""
    if command != rust_trim(command):
        trimmed = _toml(rust_trim(command))
        return "has leading or trailing whitespace", f"write `command = {trimmed}`"
    if command.startswith("/") or re.match(r"^[A-Za-z]:[\\/]", command):
        return None
    if "/" not in command and "\\" not in command:
        if command in (".", ".."):
            return "names a directory, not a program", 'write e.g. `command = "./bin/plugin"`'
        program, *arguments = rust_split_whitespace(command)
        if arguments:
            # The daemon spawns `command` as one program name (no shell splits it): a
            # program called "python3 main.py" is looked up on PATH and not found.
            listed = ", ".join(json.dumps(argument) for argument in arguments)
            return (
                "is a command line, not a program name (the daemon does not split it)",
                f'write `command = "{program}"` and `args = [{listed}]`',
            )
        return None
    relative = command[2:] if command.startswith("./") else command
    depth = 0
    for segment in re.split(r"[\\/]", relative):
        if segment in ("", "."):
            continue
        if segment == "..":
            depth -= 1
            if depth < 0:
                return (
                    "escapes the plugin root with `..`",
                    "put the program inside the plugin and write `./<path>`",
                )
            continue
        depth += 1
    if depth == 0:
        return "names the plugin root directory, not a program", "write `./bin/<program>`"
    if "\\" in relative:
        # The daemon runs on Linux and macOS, where `\` is part of a file name: `./bin\x`
        # names one file called `bin\x` in the root, never `x` in `bin/`.
        slashed = "./" + "/".join(
            segment for segment in re.split(r"[\\/]", relative) if segment not in ("", ".")
        )
        return (
            "separates its path with `\\`, which the daemon's Linux and macOS hosts read as "
            "part of a file name",
            f"write `command = {_toml(slashed)}`",
        )
    if not command.startswith("./"):
        return (
            "is a relative path that does not start with `./`",
            f"write `command = {_toml('./' + relative)}`",
        )
    return None


def _toml(text: str) -> str:
    """``text`` as a TOML basic string a fix can offer to paste (JSON's escapes are TOML's)."""
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")


def _check_spawn_inputs(context: Context, command: str) -> None:
    """What the daemon's spawn refuses in a spawnable entrypoint: ``NEXO_`` env keys and NULs.

    The daemon checks the env keys only when it spawns the plugin, and the OS refuses a NUL
    byte in the program, an argument or the environment (``nul byte found in provided data``).
    """
    env = context.section("entrypoint", "env")
    for key in env:
        if key.startswith("NEXO_"):
            owner = (context.plugin_id or "plugin").upper()
            suggestion = f"{owner}_{key.removeprefix('NEXO_') or 'VAR'}"
            context.add(
                "NX106",
                ("plugin", "entrypoint", "env", key),
                f"key `{key}` in table [plugin.entrypoint.env] uses the reserved `NEXO_` prefix",
                f"rename it without the prefix (`{suggestion}` is already set)"
                if suggestion in env
                else f"rename it without the prefix, e.g. `{suggestion}`",
                part="key",
            )
    spawned: list[tuple[KeyPath, str, str]] = [
        (("plugin", "entrypoint", "command"), "key `command`", command)
    ]
    spawned += [
        (("plugin", "entrypoint", "args", index), f"argument #{index + 1}", value)
        for index, value in strings(context.section("entrypoint").get("args"))
    ]
    for key, value in env.items():
        spawned.append((("plugin", "entrypoint", "env", key), f"env key `{key}`", key))
        if isinstance(value, str):
            spawned.append((("plugin", "entrypoint", "env", key), f"env value of `{key}`", value))
    for path, what, value in spawned:
        if "\x00" in value:
            context.add(
                "NX124",
                path,
                f"{what} in table [plugin.entrypoint] holds a NUL byte (`\\u0000`); the "
                "daemon cannot spawn the plugin (nul byte found in provided data)",
                "remove the `\\u0000` escape",
            )


def _check_entrypoint(context: Context) -> None:
    entrypoint = context.section("entrypoint")
    command = as_str(entrypoint.get("command"))
    if command is None:
        return
    path: KeyPath = ("plugin", "entrypoint", "command")
    if is_blank(command):
        context.add(
            "NX107",
            path,
            "key `command` in table [plugin.entrypoint] is empty",
            'name the program, e.g. `command = "./bin/plugin"`, or remove the key',
        )
        return
    _check_spawn_inputs(context, command)
    problem = _command_problem(command)
    if problem is not None:
        reason, fix = problem
        context.add(
            "NX108",
            path,
            f"key `command` in table [plugin.entrypoint] value `{command}` {reason}; it must be "
            "an absolute path, a bare program name, or `./`-relative inside the plugin root",
            fix,
        )


def _namespace_fix(plugin_id: str, tool: str) -> str:
    base = tool
    for prefix in (f"ext_{plugin_id}", plugin_id):
        if base.lower().startswith(prefix):
            base = base[len(prefix) :]
            break
    base = _slugify(base)
    return f"{plugin_id}_{base}" if base else f"{plugin_id}_<name>"


def _namespace_help(
    fixed: str, tool: str, taken: Collection[str], references: Mapping[str, Collection[str]]
) -> str:
    """The help of an ``NX113`` finding: ``rename it to `<fixed>` `` (which ``--fix`` applies)
    only when that rename alone leaves no new problem behind: a name already taken (a
    duplicate, or an id in two ``[plugin.extends]`` arrays) or another array still naming the
    old tool (``deferred``, an outbound ``name``)."""
    if fixed in taken:
        return f"rename it: the namespaced name `{fixed}` is already taken"
    still_named = [array for array, names in references.items() if tool in names]
    if still_named:
        where = " and ".join(f"`{array}`" for array in still_named)
        return f"rename it, here and in {where} alike, to `{fixed}`"
    return f"rename it to `{fixed}`"


def _check_namespace(
    context: Context,
    path: KeyPath,
    array: str,
    values: Any,
    *,
    taken: Collection[str] = (),
    references: Mapping[str, Collection[str]] | None = None,
) -> None:
    """``NX113`` for each tool of ``values`` outside the plugin's namespace. ``taken``: names
    a rename may not produce; ``references``: other arrays (by name) naming these tools."""
    plugin_id = context.plugin_id
    # An invalid id is reported once (NX100); judging every tool against it would only repeat
    # that finding, and the names would need re-checking after the id is fixed anyway.
    if plugin_id is None or id_problem(plugin_id) is not None:
        return
    names = {tool for _, tool in strings(values)}
    for index, tool in strings(values):
        if tool.startswith(f"{plugin_id}_") or tool.startswith(f"ext_{plugin_id}_"):
            continue
        fixed = _namespace_fix(plugin_id, tool)
        context.add(
            "NX113",
            (*path, index),
            f"tool `{tool}` in array `{array}` does not start with `{plugin_id}_` or "
            f"`ext_{plugin_id}_`",
            _namespace_help(fixed, tool, names | set(taken), references or {}),
        )


def _check_extends(context: Context) -> None:
    extends = context.section("extends")
    seen_in: dict[str, list[tuple[str, int]]] = {}
    for section in EXTENDS_LISTS:
        seen: set[str] = set()
        for index, entry in strings(extends.get(section)):
            path: KeyPath = ("plugin", "extends", section, index)
            if not is_valid_id(entry):
                context.add(
                    "NX110",
                    path,
                    f"id `{entry}` in array `plugin.extends.{section}` is invalid: "
                    f"{id_problem(entry)}",
                    f"write `{_suggest_id(entry)}` (ids match {ID_PATTERN})",
                )
                continue
            _check_long_id(context, path, f"id in array `plugin.extends.{section}`", entry)
            if entry in seen:
                context.add(
                    "NX111",
                    path,
                    f"array `plugin.extends.{section}` contains duplicate id `{entry}`",
                    "remove the repeated entry",
                )
                continue
            seen.add(entry)
            seen_in.setdefault(entry, []).append((section, index))
    for entry, places in seen_in.items():
        if len(places) < 2:
            continue
        sections = ", ".join(section for section, _ in places)
        second_section, second_index = places[1]
        context.add(
            "NX112",
            ("plugin", "extends", second_section, second_index),
            f"id `{entry}` appears in several [plugin.extends] arrays ({sections}); each id "
            "may occupy at most one",
            f"keep `{entry}` in one array only, or rename it in the others",
        )
    _check_namespace(
        context,
        ("plugin", "extends", "tools"),
        "plugin.extends.tools",
        extends.get("tools"),
        taken=seen_in,
    )


def _check_object_schema(
    context: Context,
    path: KeyPath,
    what: str,
    text: str | None,
    *,
    code: str,
    reasons: tuple[str, str],
) -> None:
    """Report ``code`` when ``text`` is not a JSON object with ``"type": "object"``, for
    the daemon's reason (``reasons``: its words for a blank text and for one that is no object)."""
    if text is None:
        return
    span: Span | None = None  # the whole value, unless the fault is on a later line
    if is_blank(text):
        problem = reasons[0]
    else:
        error, document, offset, located = json_problem(text)
        kind = document.get("type") if isinstance(document, dict) else None
        if error:
            fault = _fault_in_file(context, path, text, offset)
            if not located and offset is not None:
                error += _where(context, text, offset, fault)
            problem = f"invalid JSON: {error}"
            span = _on_a_later_line(context, path, fault)
        elif not isinstance(document, dict):
            problem = reasons[1]
        elif kind != "object":
            shown = kind if isinstance(kind, str) else "missing"
            problem = f'root `type` must be "object", got "{shown}"'
        else:
            return
    context.add(
        code,
        path,
        f"{what} is not a JSON object schema: {problem}",
        'write a JSON object with `"type": "object"` at the root, e.g. '
        '\'{"type": "object", "properties": {}}\'',
        span=span,
    )


def _fault_in_file(context: Context, path: KeyPath, text: str, offset: int | None) -> int | None:
    """Where character ``offset`` of the string ``text`` at ``path`` is written in the file (its
    character offset there), or ``None`` when that cannot be told."""
    if offset is None or context.source is None:
        return None
    from nexo_pkg.core.toml_spans import string_offsets  # noqa: PLC0415 - rare path

    spans = context.source()
    where = spans.values.get(path)
    if where is None:
        return None
    start, end = where
    read = string_offsets(spans.text[start:end])
    if read is None or read[0] != text:
        return None
    return start + read[1][min(offset, len(read[1]) - 1)]


def _where(context: Context, text: str, offset: int, fault: int | None) -> str:
    """`` at line L, column C`` of the file, as lint reports positions; of the string when
    its place in the file cannot be told."""
    if fault is not None and context.source is not None:
        position = context.source().position(fault)
        return f" at line {position.line}, column {position.column}"
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return f" at line {line}, column {column} of the string"


def _on_a_later_line(context: Context, path: KeyPath, fault: int | None) -> Span | None:
    """The span of the faulty character when it is on a later line than the value at ``path``
    starts (a multi-line string): the finding then starts on the line of the fault. ``None``
    keeps the whole value's span."""
    if fault is None or context.source is None:
        return None
    spans = context.source()
    start, _ = spans.values[path]
    if spans.position(fault).line == spans.position(start).line:
        return None
    return spans.span_of(fault, fault + 1)


def _check_tools(context: Context) -> None:
    tools = context.section("tools")
    expose_values = tools.get("expose")
    outbound_names = {as_str(outbound.get("name")) for _, outbound in tables(tools.get("outbound"))}
    _check_namespace(
        context,
        ("plugin", "tools", "expose"),
        "plugin.tools.expose",
        expose_values,
        references={
            "plugin.tools.deferred": {tool for _, tool in strings(tools.get("deferred"))},
            "[[plugin.tools.outbound]] name": {name for name in outbound_names if name},
        },
    )
    exposed = {tool for _, tool in strings(expose_values)}
    for index, tool in strings(tools.get("deferred")):
        if tool not in exposed:
            context.add(
                "NX114",
                ("plugin", "tools", "deferred", index),
                f"tool `{tool}` is in array `plugin.tools.deferred` but not in array "
                "`plugin.tools.expose`",
                f'add "{tool}" to `plugin.tools.expose`, or remove it from `deferred`',
            )
    for index, outbound in tables(tools.get("outbound")):
        name = as_str(outbound.get("name"))
        label = f"`{name}`" if name is not None else f"#{index + 1}"
        if name is not None and name not in exposed:
            context.add(
                "NX115",
                ("plugin", "tools", "outbound", index, "name"),
                f"outbound tool `{name}` in [[plugin.tools.outbound]] is not listed in array "
                "`plugin.tools.expose`",
                f'add "{name}" to `plugin.tools.expose`',
            )
        _check_object_schema(
            context,
            ("plugin", "tools", "outbound", index, "input_schema"),
            f"key `input_schema` of outbound tool {label}",
            as_str(outbound.get("input_schema")),
            code="NX116",
            reasons=("input_schema is empty", "input_schema must be a JSON object"),
        )
    _check_object_schema(
        context,
        ("plugin", "config_schema", "schema"),
        "key `schema` in table [plugin.config_schema]",
        as_str(context.section("config_schema").get("schema")),
        code="NX117",
        reasons=("config_schema is empty", "schema must be a JSON object"),
    )


def _check_capabilities(context: Context) -> None:
    provides = context.section("capabilities").get("provides")
    for index, capability in strings(provides):
        mapping = _CAPABILITY_SECTIONS.get(capability)
        if mapping is None:
            continue
        key, field, hint = mapping
        section = context.section(key)
        # A directory counts once set, a list once it holds an item (a value of another type
        # is the schema's finding, not this rule's).
        implemented = (
            field in section if field == "contributes_dir" else section.get(field) not in (None, [])
        )
        if implemented:
            continue
        context.add(
            "NX118",
            ("plugin", "capabilities", "provides", index),
            f"capability `{capability}` is declared in array `plugin.capabilities.provides` but "
            f"`plugin.{key}.{field}` is empty or missing",
            f"{hint}, or remove `{capability}` from `provides`",
        )


def _check_gates_and_channels(context: Context) -> None:
    seen: set[str] = set()
    for index, gate in tables(context.section("capability_gates").get("gate")):
        env_var = as_str(gate.get("env_var"))
        if env_var is None:
            continue
        if env_var in seen:
            context.add(
                "NX119",
                ("plugin", "capability_gates", "gate", index, "env_var"),
                f"capability gate env_var `{env_var}` is already used by another "
                "[[plugin.capability_gates.gate]]",
                "give each gate its own environment variable",
            )
        seen.add(env_var)
    for index, channel in tables(context.section("channels").get("register")):
        kind = as_str(channel.get("kind"))
        if kind is not None and not CHANNEL_KIND.fullmatch(kind):
            context.add(
                "NX120",
                ("plugin", "channels", "register", index, "kind"),
                f"key `kind` of [[plugin.channels.register]] value `{kind}` is invalid: "
                f"{id_problem(kind, CHANNEL_KIND_MAX_LENGTH)}",
                f'write `kind = "{_suggest_id(kind)}"` (kinds match {CHANNEL_KIND.pattern})',
            )


def _check_relative_paths(context: Context) -> None:
    for section, key in _RELATIVE_PATH_FIELDS:
        value = as_str(context.section(section).get(key))
        if value is None:
            continue
        path: KeyPath = ("plugin", section, key)
        if value.startswith("/") or ":\\" in value:
            tail = re.split(r"[\\/]", value.rstrip("/\\"))[-1]
            hint = tail if tail and ":" not in tail else "dir"
            context.add(
                "NX121",
                path,
                f"key `{key}` in table [plugin.{section}] value `{value}` is absolute; it must "
                "be relative to the plugin root",
                f'use a path relative to the plugin root: `{key} = "{hint}"`',
            )
            continue
        if ".." in re.split(r"[\\/]", value):
            context.add(
                "NX122",
                path,
                f"key `{key}` in table [plugin.{section}] value `{value}` contains a `..` segment",
                "point at a path inside the plugin root without `..`",
            )


def _check_supervisor(context: Context) -> None:
    supervisor = context.section("supervisor")
    tail = as_int(supervisor.get("stderr_tail_lines"))
    if tail is not None and tail > SUPERVISOR_STDERR_TAIL_MAX:
        context.add(
            "NX130",
            ("plugin", "supervisor", "stderr_tail_lines"),
            f"key `stderr_tail_lines` in table [plugin.supervisor] is {tail}, above the cap "
            f"of {SUPERVISOR_STDERR_TAIL_MAX}",
            f"set `stderr_tail_lines = {SUPERVISOR_STDERR_TAIL_MAX}` or less",
        )
    if supervisor.get("respawn") is not True:
        return
    attempts = as_int(supervisor.get("max_attempts"))
    if attempts == 0:
        context.add(
            "NX131",
            ("plugin", "supervisor", "max_attempts"),
            "key `max_attempts` in table [plugin.supervisor] is 0 while `respawn = true`",
            "set `max_attempts = 1` or more, or `respawn = false`",
        )
    backoff = as_int(supervisor.get("backoff_ms"))
    if backoff is None:
        return
    if 0 <= backoff < SUPERVISOR_BACKOFF_MS_MIN:
        code, bound = "NX132", f"below the floor of {SUPERVISOR_BACKOFF_MS_MIN}"
    elif backoff > SUPERVISOR_BACKOFF_MS_MAX:
        code, bound = "NX133", f"above the cap of {SUPERVISOR_BACKOFF_MS_MAX}"
    else:
        return
    context.add(
        code,
        ("plugin", "supervisor", "backoff_ms"),
        f"key `backoff_ms` in table [plugin.supervisor] is {backoff}, {bound} while "
        "`respawn = true`",
        f"set `backoff_ms` between {SUPERVISOR_BACKOFF_MS_MIN} and "
        f"{SUPERVISOR_BACKOFF_MS_MAX} (default {SUPERVISOR_DEFAULT_BACKOFF_MS})",
    )


def check_semantics(
    data: Mapping[str, Any],
    locate: Locate,
    options: LintOptions,
    source: Callable[[], SpanMap] | None = None,
) -> list[Diagnostic]:
    """Run every semantic rule over ``data`` and return all findings (unsorted).

    ``locate`` maps a key path to the span of its key or value; ``source``, when given,
    gives the text's span map, for findings inside a string (the JSON of ``input_schema``).
    Values of the wrong type are skipped silently (the schema reports them). Raises
    :class:`UsageError` only when ``options.nexo_version`` is not a SemVer version (a bad
    flag, not a bad manifest).
    """
    context = Context(data, locate, options, source)
    _check_identity(context)
    _check_entrypoint(context)
    _check_extends(context)
    _check_tools(context)
    _check_relative_paths(context)
    _check_gates_and_channels(context)
    _check_capabilities(context)
    _check_supervisor(context)
    rules_sandbox.check(context)
    rules_sections.check(context)
    if context.plugin.get("admin_ui") is not None:
        # Its rules (and the ``visible_when`` parser) load for a manifest that has the table.
        from nexo_pkg.manifest import rules_admin_ui  # noqa: PLC0415

        rules_admin_ui.check(context)
    _check_control_characters(context)
    return context.found


def _check_control_characters(context: Context) -> None:
    """Warn about every key and string value holding a control character (iteratively, so a
    deeply nested document cannot exhaust the stack)."""
    pending: list[tuple[KeyPath, Any]] = [((), context.data)]
    while pending:
        path, value = pending.pop()
        if isinstance(value, str):
            if CONTROL_CHARACTERS.search(value):
                context.add(
                    "NX191",
                    path,
                    f"value of `{format_key_path(path)}` holds a control character: "
                    f"`{printable(value, lines=True)}`",
                    "remove the control character",
                )
        elif isinstance(value, Mapping):
            for key, item in reversed(list(value.items())):
                if CONTROL_CHARACTERS.search(key):
                    context.add(
                        "NX191",
                        (*path, key),
                        f"key `{printable(key, lines=True)}` holds a control character",
                        "rename the key",
                        part="key",
                    )
                pending.append(((*path, key), item))
        elif isinstance(value, list):
            pending.extend(
                ((*path, index), item) for index, item in reversed(list(enumerate(value)))
            )


def detect_legacy_v1(data: Mapping[str, Any], locate: Locate) -> Diagnostic | None:
    """One diagnostic at the ``[transport]`` header when ``data`` is a legacy v1 manifest."""
    if "transport" not in data:
        return None
    plugin = data.get("plugin")
    steps = ["move `[transport] command`/`args` to `[plugin.entrypoint] command`/`args`"]
    if isinstance(plugin, Mapping) and "min_agent_version" in plugin:
        steps.append("rename `min_agent_version` to `min_nexo_version`")
    if "capabilities" in data or "meta" in data:
        steps.append("move `[capabilities]` and `[meta]` under `[plugin]`")
    steps.append("set `manifest_version = 2`")
    return SEMANTIC_RULES["NX190"].diagnostic(
        "table [transport] marks a legacy v1 manifest; nexo-pkg expects the v2 shape "
        "(`[plugin]` with `min_nexo_version` and `[plugin.entrypoint] command`)",
        "transport",
        locate(("transport",), "key"),
        "; ".join(steps),
    )
