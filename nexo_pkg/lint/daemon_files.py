"""Lint the daemon's config files that decide whether a microapp loads.

``extensions.yaml`` is checked against ``ExtensionsConfigFile`` of the daemon's config crate
(``crates/config/src/types/extensions.rs``, every struct ``deny_unknown_fields``; the loader
drops a top-level ``schema_version`` and propagates any other error, so the daemon does not
start). ``agents.yaml`` (and ``agents.d/*.yaml``) for its top, each agent's keys
(``AgentConfig``, ``crates/config/src/types/agents.rs``) and its microapp keys. ``${...}``
placeholders are found and resolved as the loader does (``crates/config/src/env.rs``).

Cross-file checks compare the files with the microapps the daemon discovers and their
``nexo-plugin.toml`` companions, as docs/microapps.md ("Lint") describes. Nothing here raises
on bad input; every problem is a :class:`Diagnostic`.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from nexo_pkg.core.diagnostics import Diagnostic, Position, Span
from nexo_pkg.core.errors import UsageError
from nexo_pkg.core.files import FileTooLargeError, read_capped_bytes, read_config_file
from nexo_pkg.core.terminal import printable
from nexo_pkg.core.toml_spans import SpanPart
from nexo_pkg.core.toml_text import format_key_path
from nexo_pkg.lint.yaml_source import (
    Edit,
    KeyPath,
    YamlDocument,
    YamlProblem,
    moved_back,
    parse_yaml,
    spans_in,
)
from nexo_pkg.manifest import microapp, microapp_model
from nexo_pkg.manifest.daemon import NEWEST_DAEMON_VERSION
from nexo_pkg.manifest.daemon_config import (
    EXTENSIONS_DEFAULT_IGNORE_DIRS,
    EXTENSIONS_DEFAULT_MAX_DEPTH,
    EXTENSIONS_DEFAULT_SEARCH_PATHS,
    PLACEHOLDER_SCHEMA_PATTERN,
    find_placeholders,
    placeholder_name,
    resolve_placeholder,
    unterminated_placeholder,
)
from nexo_pkg.manifest.humantime import DurationError, parse_duration
from nexo_pkg.manifest.microapp_catalog import MICROAPP_RULES
from nexo_pkg.manifest.names import MAX_MANIFEST_BYTES
from nexo_pkg.manifest.read import ManifestTOMLError, read_manifest
from nexo_pkg.manifest.rules_context import Findings, as_int, as_table, tables
from nexo_pkg.manifest.shape import (
    BOOL,
    DURATION,
    STR,
    STR_LIST,
    U32,
    U64,
    USIZE,
    ListOf,
    MapOf,
    Spec,
    Table,
    check_shape,
    type_name,
)

__all__ = [
    "EXTENSIONS_FILE",
    "ConfigKind",
    "DiscoveredMicroapp",
    "config_kind",
    "daemon_config_files",
    "extension_skipped",
    "extension_walk",
    "extensions_as_read",
    "extensions_lists",
    "lint_config_text",
    "microapp_schemas",
    "skipped_drop_ins",
    "unreadable_config_files",
]

EXTENSIONS_FILE = "extensions.yaml"
AGENTS_FILE = "agents.yaml"
AGENTS_DROP_IN_DIR = "agents.d"
ConfigKind = Literal["extensions", "agents"]
PARSER_NAMES: dict[ConfigKind, str] = {"extensions": "extensions-config", "agents": "agents-config"}

DEFAULT_SEARCH_PATHS = EXTENSIONS_DEFAULT_SEARCH_PATHS
DEFAULT_IGNORE_DIRS = EXTENSIONS_DEFAULT_IGNORE_DIRS
DEFAULT_MAX_DEPTH = EXTENSIONS_DEFAULT_MAX_DEPTH
MAX_CONFIG_BYTES = MAX_MANIFEST_BYTES
"""The most of ``extensions.yaml`` read for the checks that depend on it: as much as lint reads
of the file itself (NX004 above it), so a file lint judges is never taken for absent there."""
SECRET_ROOTS = (Path("/run/secrets"), Path("/var/run/secrets"))

_NO_SUCH_ENTRY_KEY = (
    "`entries.<id>` holds only `capabilities_grant` and `allow_external_bind`; {advice}"
)
_ENTRY_HINTS = {
    "enabled": "a microapp is enabled by being discovered and not listed in `disabled`",
    "path": "the daemon finds microapps under `search_paths`; put the directory there",
    "command": "the command comes from the microapp's plugin.toml `[transport]`",
    "args": "arguments come from the microapp's plugin.toml `[transport] args`",
    "env": "the child inherits the daemon's environment (secret-named variables removed)",
    "config": "per-agent settings go to agents.yaml `extensions_config.<id>` (not delivered "
    "to the microapp either)",
    "timeout_secs": "timeouts of a microapp cannot be set per entry",
}
_NATS_DEFAULTS = Table(
    {
        "subject_prefix": STR,
        "call_timeout": DURATION,
        "handshake_timeout": DURATION,
        "heartbeat_interval": DURATION,
        "heartbeat_grace_factor": U32,
        "shutdown_grace": DURATION,
    }
)
EXTENSIONS_CONFIG = Table(
    {
        "enabled": BOOL,
        "search_paths": STR_LIST,
        "disabled": STR_LIST,
        "allowlist": STR_LIST,
        "ignore_dirs": STR_LIST,
        "max_depth": USIZE,
        "transport_defaults": Table({"nats": _NATS_DEFAULTS}),
        "watch": Table({"enabled": BOOL, "debounce_ms": U64}),
        "doctor": Table(
            {
                "stdio_timeout_ms": U64,
                "nats_timeout_ms": U64,
                "http_timeout_ms": U64,
                "concurrency": U32,
            }
        ),
        "follow_links": BOOL,
        "entries": MapOf(
            Table(
                {"capabilities_grant": STR_LIST, "allow_external_bind": BOOL},
                hints={
                    key: _NO_SUCH_ENTRY_KEY.format(advice=advice)
                    for key, advice in _ENTRY_HINTS.items()
                },
            )
        ),
    }
)
EXTENSIONS_FILE_SPEC = Table({"extensions": EXTENSIONS_CONFIG}, frozenset({"extensions"}))
"""``ExtensionsConfigFile``: ``extensions:`` at the top (``schema_version`` is dropped first)."""
AGENTS_FILE_SPEC = Table({"agents": ListOf(MapOf(None))}, frozenset({"agents"}))
"""``AgentsConfig`` (``crates/config/src/types/agents.rs:4-8``, ``deny_unknown_fields``):
``agents:`` required, a list of agents, each checked by :func:`_check_agent_keys`."""
AGENT_FIELDS = frozenset(
    {
        "id",
        "tenant_id",
        "model",
        "plugins",
        "heartbeat",
        "config",
        "system_prompt",
        "language",
        "link_understanding",
        "web_search",
        "pairing_policy",
        "workspace",
        "skills",
        "skills_dir",
        "skill_overrides",
        "transcripts_dir",
        "dreaming",
        "workspace_git",
        "tool_rate_limits",
        "tool_args_validation",
        "extra_docs",
        "inbound_bindings",
        "allowed_tools",
        "sender_rate_limit",
        "allowed_delegates",
        "accept_delegates_from",
        "description",
        "google_auth",
        "outbound_allowlist",
        "credentials",
        "context_optimization",
        "dispatch_policy",
        "plan_mode",
        "remote_triggers",
        "lsp",
        "config_tool",
        "team",
        "proactive",
        "repl",
        "auto_dream",
        "assistant_mode",
        "away_summary",
        "channels",
        "brief",
        "auto_approve",
        "extract_memories",
        "event_subscribers",
        "extensions_config",
    }
)
"""The keys of ``AgentConfig`` (``crates/config/src/types/agents.rs:28-367``:
``deny_unknown_fields``, no alias, rename or flatten)."""
AGENT_REQUIRED = ("id", "model")
"""The fields of ``AgentConfig`` without ``#[serde(default)]``: ``id`` (``agents.rs:31``) and
``model`` (``agents.rs:38``, a ``ModelConfig {provider, model}``)."""
_AGENT_REQUIRED_HELP = {
    "id": "give the agent its `id:`",
    "model": "give the agent its `model: {provider: ..., model: ...}` (both strings)",
}
_AGENT_KEY_HINTS = {
    "extensions": "delete it: every agent gets the tools of every loaded microapp; per-agent "
    "settings go to `extensions_config`",
}


def config_kind(path: str, text: str | None = None) -> ConfigKind | None:
    """Which daemon config file ``path`` is, by its name (or, for another ``.yaml`` name,
    by its top-level key); ``None`` for anything else."""
    name = Path(path).name
    if name == EXTENSIONS_FILE:
        return "extensions"
    # A YAML file is known by its suffix in any case (`x.YAML`, `x.Yml`): it is YAML either
    # way, even where the daemon, matching `yaml` exactly, skips it (NX235 then says so). In
    # agents.d a `.yml` is a drop-in by where it is, whatever it holds yet.
    suffix = name.lower()
    if name == AGENTS_FILE or (
        Path(path).absolute().parent.name == AGENTS_DROP_IN_DIR
        and suffix.endswith((".yaml", ".yml"))
    ):
        return "agents"
    if text is not None and suffix.endswith((".yaml", ".yml")):
        for line in text.splitlines():
            if line.startswith("extensions:"):
                return "extensions"
            if line.startswith("agents:"):
                return "agents"
    return None


def daemon_config_files(directory: Path, *, cwd: Path | None = None) -> list[Path]:
    """What ``lint --config DIR`` lints: the daemon's config files about microapps that exist in
    ``DIR`` and every ``plugin.toml`` the daemon's discovery meets under the search paths of
    ``DIR/extensions.yaml`` (with its ``nexo-plugin.toml`` companion when present)."""
    found = [directory / EXTENSIONS_FILE, directory / AGENTS_FILE]
    if (directory / AGENTS_DROP_IN_DIR).is_dir():
        # The daemon loads each entry whose extension is `yaml` (Rust's `Path::extension`,
        # as Python's `suffix`: a file named `.yaml` has none), dot files included.
        drop_ins = (directory / AGENTS_DROP_IN_DIR).iterdir()
        found.extend(sorted(path for path in drop_ins if path.suffix == ".yaml"))
    found = [path for path in found if path.is_file()]
    for _, manifest in _search(
        _extensions_settings(_extensions_data(directory)), cwd or Path.cwd()
    ):
        companion = manifest.parent / microapp.COMPANION_MANIFEST_NAME
        found.extend(path for path in (manifest, companion) if path.is_file())
    return found


def skipped_drop_ins(directory: Path) -> list[Path]:
    """The regular files of ``DIR/agents.d`` named as YAML that the daemon skips without a
    word, sorted: ``x.yml``, ``x.YAML`` (``crates/config/src/lib.rs``
    ``merge_agents_drop_in`` keeps an extension of exactly ``yaml``). Other files it skips too
    (a README, an editor's ``.x.yaml.swp`` or ``x.yaml~``) are no drop-in anyone meant: they
    are not listed."""
    drop_dir = directory / AGENTS_DROP_IN_DIR
    try:
        entries = sorted(drop_dir.iterdir()) if drop_dir.is_dir() else []
    except OSError:
        return []
    return [
        path
        for path in entries
        if path.suffix != ".yaml" and path.suffix.lower() in (".yaml", ".yml") and path.is_file()
    ]


def unreadable_config_files(directory: Path) -> list[tuple[Path, str]]:
    """The entries of ``DIR`` the daemon's loader tries to read and cannot, each with why; any
    one stops its boot. ``extensions.yaml`` and ``agents.yaml`` that exist (``Path::exists``
    follows links) but are no regular file; an ``agents.d`` that is no directory (its
    ``read_dir`` fails); and each entry of ``agents.d`` with the extension ``yaml`` that is no
    regular file (a directory, a dangling link), which ``merge_agents_drop_in`` reads all the
    same (``crates/config/src/lib.rs``: ``load_required``, ``load_optional``,
    ``merge_agents_drop_in``)."""
    stops = "the daemon cannot read it and does not start"
    found: list[tuple[Path, str]] = []
    for path in (directory / EXTENSIONS_FILE, directory / AGENTS_FILE):
        if path.exists() and not path.is_file():
            found.append((path, f"{_what_it_is(path)}: {stops}"))
    drop_dir = directory / AGENTS_DROP_IN_DIR
    if drop_dir.exists() and not drop_dir.is_dir():
        found.append((drop_dir, "not a directory: the daemon cannot list it and does not start"))
    elif drop_dir.is_dir():
        for path in sorted(drop_dir.iterdir()):
            if path.suffix == ".yaml" and not path.is_file():
                found.append((path, f"{_what_it_is(path)}: {stops}"))
    return found


def _what_it_is(path: Path) -> str:
    if path.is_symlink() and not path.exists():
        return "a dangling symlink (its target does not exist)"
    return "a directory" if path.is_dir() else "not a regular file"


def _file_reference_problem(reference: str, cwd: Path) -> str | None:
    path = Path(reference)
    if ".." in path.parts:
        return "`..` is not allowed in a file reference"
    if path.is_absolute():
        roots = [*SECRET_ROOTS, cwd / "secrets"]
        custom = os.environ.get("CONFIG_SECRETS_DIR")
        if custom:
            roots.append(Path(custom))
        if not any(path == root or root in path.parents for root in roots):
            shown = ", ".join(str(root) for root in roots)
            return f"an absolute path must be under {shown} or CONFIG_SECRETS_DIR"
    return None


@dataclass(frozen=True)
class DiscoveredMicroapp:
    """A ``plugin.toml`` the daemon's extension discovery meets, and its companion."""

    root: Path
    manifest: microapp_model.MicroappManifest
    companion: microapp_model.Companion | None


def _discover(
    settings: _Extensions, base: Path, daemon_version: str = NEWEST_DAEMON_VERSION
) -> list[DiscoveredMicroapp]:
    """The microapps under the search paths of ``settings`` (relative ones taken from ``base``)
    as the daemon's boot discovery finds them (``crates/extensions/src/discovery.rs:160-375``;
    docs/microapps.md says which of them it keeps). Only manifests the extension parser accepts
    are candidates: lint reports the others when it lints those files."""
    from nexo_pkg.manifest.rules_microapp import companion_refused  # noqa: PLC0415

    candidates = [
        (index, path.parent, manifest)
        for index, path in _search(settings, base)
        if (manifest := _loadable(path, daemon_version)) is not None
    ]
    roots = {root for _, root, _ in candidates}
    candidates = [
        candidate
        for candidate in candidates
        if not any(parent in roots for parent in candidate[1].parents)
    ]
    found: list[DiscoveredMicroapp] = []
    seen: set[str] = set()
    # Rust orders paths by component (`/x/b/c` before `/x/b-c`), not as strings.
    for _, root, manifest in sorted(candidates, key=lambda item: (item[0], item[1].parts)):
        if manifest.id in seen:
            continue
        seen.add(manifest.id)
        companion_data = microapp.read_toml_or_none(root / microapp.COMPANION_MANIFEST_NAME)
        # A companion the daemon cannot parse is skipped (NX216 on the file): no admin
        # capabilities, no HTTP server to check across files.
        companion = (
            None
            if companion_data is None or companion_refused(companion_data)
            else microapp_model.companion_from_data(companion_data)
        )
        found.append(DiscoveredMicroapp(root, manifest, companion))
    return found


def _search(settings: _Extensions, base: Path) -> Iterator[tuple[int, Path]]:
    """``(index of the search path, plugin.toml)`` of every manifest the discovery walk meets;
    an absolute search path replaces ``base``, and ``~`` is a directory name like any other
    (the daemon passes the path to ``std::fs::canonicalize`` as written)."""
    for index, entry in enumerate(settings.search_paths):
        if not entry:
            continue  # `canonicalize("")` fails: the daemon skips it (not the working directory)
        for manifest in _walk(base / entry, settings.ignore_dirs, settings.max_depth):
            yield index, manifest


def _loadable(path: Path, daemon_version: str) -> microapp_model.MicroappManifest | None:
    """The model of the microapp manifest at ``path`` if the extension parser of daemon
    ``daemon_version`` accepts it (its ``min_agent_version`` gate included)."""
    from nexo_pkg.manifest.rules_microapp import check_microapp  # noqa: PLC0415

    try:
        raw = read_config_file(path, MAX_MANIFEST_BYTES, error=UsageError)
    except UsageError:
        return None
    import hashlib  # noqa: PLC0415 (a config directory with microapps only)

    # Keyed by a digest, not the bytes: a long-lived LSP keeps 256 keys, not 256 manifests.
    key = (hashlib.sha256(raw).digest(), daemon_version)
    if key in _loaded:
        return _loaded[key]
    try:
        data: dict[str, Any] | None = read_manifest(raw)
    except ManifestTOMLError:
        data = None
    model = None
    if data is not None and microapp.is_extension_shape(data):
        here = Span(Position(1, 1), Position(1, 1))
        problems = check_microapp(data, lambda _path, _part: here, daemon_version)
        if not any(problem.is_error for problem in problems):
            model = microapp_model.microapp_from_data(data)
    if len(_loaded) >= _MAX_LOADED:
        _loaded.clear()
    _loaded[key] = model
    return model


_MAX_LOADED = 256
_loaded: dict[tuple[bytes, str], microapp_model.MicroappManifest | None] = {}
"""What :func:`_loadable` made of each manifest's bytes: every file of a config directory
(each ``agents.d`` drop-in) runs the same discovery over the same manifests."""


def _walk(root: Path, ignore_dirs: tuple[str, ...], max_depth: int) -> Iterator[Path]:
    """``plugin.toml`` files at most ``max_depth`` levels below ``root``, in file-name order,
    as the daemon's ``walkdir`` walk yields them (``crates/extensions/src/discovery.rs``):
    ``max_depth`` raised to at least 1 (``max_depth.max(1)``), and the ignored directory
    names filter every directory entry, the (canonical) root itself included (walkdir's
    ``filter_entry`` sees the root at depth 0: ``search_paths: [./dist]`` finds nothing), and
    a ``plugin.toml`` that is a symbolic link is skipped (``entry.file_type().is_file()`` is
    false for a link walkdir does not follow)."""
    max_depth = max(max_depth, 1)
    try:
        # `std::fs::canonicalize` resolves the path in the kernel (`stat`: `file/..` is
        # ENOTDIR, an empty path ENOENT); `resolve` alone takes `..` lexically.
        root.stat()
        canonical = root.resolve(strict=True)
    except (OSError, RuntimeError, ValueError):  # ValueError: a NUL byte in the path
        return
    if canonical.is_file():
        # walkdir yields a root that is a file as its one entry (depth 0): a search path
        # naming a plugin.toml itself finds it.
        if canonical.name == microapp.MICROAPP_MANIFEST_NAME:
            yield canonical
        return
    if not canonical.is_dir() or canonical.name in ignore_dirs:
        return
    root = canonical
    start = len(root.parts)
    for current, directories, files in os.walk(root):
        here = Path(current)
        depth = len(here.parts) - start
        directories[:] = sorted(name for name in directories if name not in ignore_dirs)
        if depth + 1 >= max_depth:
            directories[:] = []
        manifest = here / microapp.MICROAPP_MANIFEST_NAME
        # A symbolic link is no file to walkdir when it does not follow links (its
        # `file_type()` is the link's): the daemon skips a linked plugin.toml.
        if (
            depth + 1 <= max_depth
            and microapp.MICROAPP_MANIFEST_NAME in files
            and not manifest.is_symlink()
        ):
            yield manifest


# nexo-pkg's bookkeeping directory in a plugin root (``nexo_pkg/install/root.py``, which the
# lint path does not import): the versions ``upgrade`` keeps are ``.nexo/kept/<name>/tree/``,
# its staging and removing trees as deep, so a manifest there is four levels below the root.
BOOKKEEPING_DIR = ".nexo"
_TREE_AREAS = ("kept", "staging", "removing")
_BELOW_BOOKKEEPING = 3  # <area>/<holder>/tree, then the manifest


@dataclass(frozen=True)
class ReachedBookkeeping:
    """A plugin root's bookkeeping directory (``path``) whose trees the daemon's extension
    walk of ``search_path`` reaches with ``max_depth``: ``deepest`` is the largest
    ``max_depth`` that stays above them, ``manifests`` the ``plugin.toml`` files it finds
    there now."""

    search_path: str
    path: Path
    max_depth: int
    deepest: int
    manifests: tuple[Path, ...]

    def message(self) -> str:
        found = (
            f"; it finds {', '.join(str(each) for each in self.manifests[:3])} there now"
            if self.manifests
            else ""
        )
        return (
            f"with `max_depth: {self.max_depth}` the daemon's extension walk of "
            f"{self.search_path} reaches {self.path}/kept (the versions `nexo plugin upgrade` "
            "keeps for rollback) and its staging trees: a kept microapp is discovered there, "
            "and of two microapps with one id the daemon keeps the first by path, the kept "
            f"one (`.nexo` sorts before every id){found}"
        )

    def remedy(self) -> str:
        return (
            f"set `max_depth` to {self.deepest} or less, or add `.nexo` to `ignore_dirs` "
            "(with the defaults it replaces: `[target, .git, node_modules, dist, .build, .nexo]`)"
        )


def _reached_bookkeeping(settings: _Extensions, base: Path) -> list[ReachedBookkeeping]:
    """Every ``.nexo`` directory of a plugin root under the search paths of ``settings`` whose
    kept, staging and removing trees the daemon's walk reaches (the walk of :func:`_walk`:
    ``ignore_dirs`` pruned by name, hidden directories walked, ``max_depth`` at least 1)."""
    max_depth = max(settings.max_depth, 1)
    ignored = set(settings.ignore_dirs)
    if BOOKKEEPING_DIR in ignored or "tree" in ignored:
        return []
    found: list[ReachedBookkeeping] = []
    for entry in settings.search_paths:
        if not entry:
            continue
        try:
            (base / entry).stat()
            root = (base / entry).resolve(strict=True)
        except (OSError, RuntimeError, ValueError):
            continue
        if not root.is_dir() or root.name in ignored:
            continue
        start = len(root.parts)
        for current, directories, _ in os.walk(root):
            here = Path(current)
            depth = len(here.parts) - start
            directories[:] = sorted(name for name in directories if name not in ignored)
            if BOOKKEEPING_DIR in directories:
                directories.remove(BOOKKEEPING_DIR)
                # `.nexo` is at depth + 1, a manifest in one of its trees 3 levels further.
                deepest = depth + 1 + _BELOW_BOOKKEEPING
                if deepest < max_depth:
                    bookkeeping = here / BOOKKEEPING_DIR
                    manifests = tuple(
                        manifest
                        for area in _TREE_AREAS
                        if area not in ignored
                        for manifest in sorted(bookkeeping.glob(f"{area}/*/tree/plugin.toml"))
                        if manifest.parent.parent.name not in ignored
                    )
                    found.append(
                        ReachedBookkeeping(entry, bookkeeping, max_depth, deepest, manifests)
                    )
            # Below this depth a `.nexo`'s trees are out of the walk's reach.
            if depth + 2 + _BELOW_BOOKKEEPING >= max_depth:
                directories[:] = []
    return found


def reached_bookkeeping(directory: Path, *, cwd: Path | None = None) -> list[ReachedBookkeeping]:
    """:func:`_reached_bookkeeping` of ``<directory>/extensions.yaml`` as the daemon reads it
    (relative search paths from ``cwd``); none without the file or with the extension host
    off."""
    data = _extensions_data(directory)
    if data is None:
        return []
    settings = _extensions_settings(data)
    if not settings.enabled:
        return []
    return _reached_bookkeeping(settings, cwd or Path.cwd())


def _check_placeholders(findings: Findings, text: str, cwd: Path) -> None:
    span_of = spans_in(text)
    hang = unterminated_placeholder(text)
    if hang is not None:
        findings.at(
            "NX231",
            span_of(hang, hang + 2),
            "this `${` never closes: the daemon's config loader scans for its `}` forever and "
            "the daemon never starts",
            "close the placeholder (`${VAR}`), or write a literal `$` followed by something "
            "other than `{`",
        )
    for start, end, inner in find_placeholders(text):
        span = span_of(start, end)
        name, default = placeholder_name(inner)
        if not inner.startswith("file:") and default is not None and "${" in default:
            findings.at(
                "NX233",
                span,
                f"the default of `${{{inner}}}` holds a placeholder, which the daemon's loader "
                f"does not resolve: when `{name}` is unset the value is the text `{default}`",
                "give a plain default, or set the variable where the daemon runs",
            )
        if inner.startswith("file:"):
            reference = inner.removeprefix("file:")
            problem = _file_reference_problem(reference, cwd)
            if problem is not None:
                findings.at(
                    "NX224", span, f"`${{{inner}}}`: {problem}", "keep secrets under /run/secrets"
                )
            elif not (cwd / reference).is_file():
                findings.at(
                    "NX223",
                    span,
                    f"`${{{inner}}}`: the file is not readable here; the daemon refuses to start "
                    "if it cannot read it",
                )
        elif resolve_placeholder(inner) is None:
            findings.at(
                "NX223",
                span,
                f"`${{{name}}}` is not set here and has no default; the daemon refuses "
                "to start if it is unset in its environment",
                f"set it where the daemon runs, or give a default: `${{{name}:-...}}`",
            )


def _has_placeholder(value: Any) -> bool:
    """Whether ``value`` is a string holding a placeholder that cannot be resolved here (its
    type is known only where the daemon runs). One that can is the text the daemon reads:
    what a substitution left, as the default of ``${A:-${B}}`` (the loader does not resolve
    a placeholder inside a default)."""
    return isinstance(value, str) and any(
        inner.startswith("file:") or resolve_placeholder(inner) is None
        for _, _, inner in find_placeholders(value)
    )


def _structure(findings: Findings, data: Any, spec: Table) -> None:
    for problem in check_shape(data, spec, skip=_has_placeholder):
        code = "NX220" if problem.kind == "unknown" else "NX221"
        part: SpanPart = "key" if problem.kind in ("unknown", "missing") else "value"
        findings.add(code, problem.path, problem.message, problem.help, part)


def _substituted(document: YamlDocument, *, stand_ins: bool = False) -> YamlDocument:
    """The file as the daemon reads it: every ``${...}`` it can resolve here substituted in
    the raw text *before* parsing (``crates/config/src/lib.rs`` ``load_required``: the loader
    resolves placeholders, then serde_yaml parses), so the substituted text is what gets
    type-checked (``max_depth: ${X}`` with ``X=four`` is a string). Placeholders that cannot
    be resolved here (unset, ``${file:...}``) stay as they are and their values are not
    judged; with ``stand_ins``, they are parsed as a plain word standing in for their value
    (``[${DIR}]`` is no flow sequence as written, but is once substituted) and put back in
    the data afterwards. ``document`` itself when there is nothing to substitute."""
    text = document.text
    parts: list[str] = []
    last = 0
    kept: dict[str, str] = {}
    edits: list[Edit] = []
    length = 0  # of the substituted text so far
    for start, end, inner in find_placeholders(text):
        resolved = None if inner.startswith("file:") else resolve_placeholder(inner)
        if resolved is None and stand_ins:
            resolved = f"nexoplaceholder{len(kept)}x"
            kept[resolved] = text[start:end]
        if resolved is not None:
            parts.extend((text[last:start], resolved))
            length += start - last
            edits.append((start, end, length, length + len(resolved)))
            length += len(resolved)
            last = end
    if not parts:
        return document
    parts.append(text[last:])
    read = moved_back(parse_yaml("".join(parts)), text, edits)
    if kept:
        read.data = _put_back(read.data, kept)
    return read


def _put_back(value: Any, kept: Mapping[str, str]) -> Any:
    """``value`` with each stand-in word of :func:`_substituted` replaced by its placeholder."""
    if isinstance(value, str):
        for word, placeholder in kept.items():
            value = value.replace(word, placeholder)
        return value
    if isinstance(value, list):
        return [_put_back(item, kept) for item in value]
    if isinstance(value, dict):
        return {_put_back(key, kept): _put_back(item, kept) for key, item in value.items()}
    return value


def _serde_defaults(
    value: Any, spec: Spec, path: KeyPath, read: YamlDocument, *, direct: bool
) -> Any:
    """``value`` with each null that serde_yaml reads as an empty list, map or struct made
    one. Through a ``Value`` (how ``extensions.yaml`` and ``agents.yaml`` are read) every
    null does (serde_yaml 0.9.34 ``src/value/de.rs``: ``Value::Null =>
    visit_sequence(Sequence::new())`` / ``visit_mapping(Mapping::new())``, and a struct is
    read as a mapping), so ``disabled:`` or ``allowlist: ~`` is an empty list, ``entries:
    {x: }`` an entry with its defaults; read straight into the struct (``direct``: an
    ``agents.d/`` drop-in) only an empty plain scalar does (``src/de.rs``
    ``deserialize_map``, which looks at the value and the style, not the tag: ``!!null`` and
    ``!!str`` with nothing after them too), ``~`` is refused."""
    if isinstance(spec, (ListOf, MapOf, Table)) and (
        path in read.empty if direct else value is None
    ):
        return [] if isinstance(spec, ListOf) else {}
    if value is None:
        return value
    if isinstance(spec, ListOf) and isinstance(value, list):
        return [
            _serde_defaults(item, spec.item, (*path, index), read, direct=direct)
            for index, item in enumerate(value)
        ]
    if isinstance(value, Mapping) and isinstance(spec, (MapOf, Table)):
        result: dict[str, Any] = {}
        for key, item in value.items():
            child = spec.value if isinstance(spec, MapOf) else spec.fields.get(str(key))
            result[key] = (
                item
                if child is None
                else _serde_defaults(item, child, (*path, str(key)), read, direct=direct)
            )
        return result
    return value


_DURATIONS = ("call_timeout", "handshake_timeout", "heartbeat_interval", "shutdown_grace")


def _check_durations(findings: Findings, data: Any) -> None:
    """``transport_defaults.nats`` durations as ``humantime_serde`` reads them: a string
    ``humantime::parse_duration`` takes, so a number needs its unit (``"30"`` is refused,
    ``30s`` is not)."""
    nats = (
        as_table(
            (
                as_table(
                    (as_table((as_table(data) or {}).get("extensions")) or {}).get(
                        "transport_defaults"
                    )
                )
                or {}
            ).get("nats")
        )
        or {}
    )
    for key in _DURATIONS:
        value = nats.get(key)
        if not isinstance(value, str) or _has_placeholder(value):
            continue
        try:
            parse_duration(value)
        except DurationError as error:
            findings.add(
                "NX221",
                ("extensions", "transport_defaults", "nats", key),
                f"`extensions.transport_defaults.nats.{key}` = `{value}` is not a duration the "
                f"daemon reads: {error}",
                "write a number with its unit: `30s`, `500ms`, `1m 30s`",
            )


def _expanded(value: str) -> str | None:
    """``value`` with its placeholders resolved, or ``None`` if one cannot be."""
    parts: list[str] = []
    last = 0
    for start, end, inner in find_placeholders(value):
        resolved = None if inner.startswith("file:") else resolve_placeholder(inner)
        if resolved is None:
            return None
        parts.extend((value[last:start], resolved))
        last = end
    parts.append(value[last:])
    return "".join(parts)


@dataclass(frozen=True)
class _Extensions:
    """What the cross-file checks take from ``extensions:`` (defaults as the daemon's)."""

    enabled: bool
    search_paths: tuple[str, ...]
    unresolved: bool
    """Whether a search path holds a placeholder that cannot be resolved here."""
    ignore_dirs: tuple[str, ...]
    max_depth: int
    disabled: tuple[str, ...]
    allowlist: tuple[str, ...]
    entries: Mapping[str, Any]

    def skips(self, extension_id: str) -> str | None:
        """Why the daemon never spawns ``extension_id``: the extension system is off
        (``src/main.rs:6531-6534``), or discovery drops the id as ``disabled`` or for not
        being on a non-empty ``allowlist`` (``discovery.rs:329-360``); None when it loads."""
        if not self.enabled:
            return "sets `enabled: false`: the extension system is off"
        if extension_id in self.disabled:
            return f"lists {extension_id!r} under `disabled`"
        if self.allowlist and extension_id not in self.allowlist:
            return f"has an `allowlist` without {extension_id!r}"
        return None


def extensions_as_read(text: str) -> YamlDocument:
    """``extensions.yaml``'s ``text`` as the daemon's loader reads it: its placeholders
    substituted before it is parsed (:func:`_substituted`; one that cannot be resolved here
    is kept as written), its problems where ``text`` holds them."""
    return _substituted(parse_yaml(text), stand_ins=True)


def extension_skipped(document: YamlDocument, extension_id: str) -> str | None:
    """Why the daemon configured by ``document`` (:func:`extensions_as_read`) never spawns
    ``extension_id`` (:meth:`_Extensions.skips`, nulls read as defaults); None when it
    loads it."""
    return _extensions_settings(_read_extensions(document)).skips(extension_id)


def extension_walk(directory: Path) -> tuple[bool, tuple[str, ...], tuple[str, ...], int] | None:
    """``enabled``, ``search_paths``, ``ignore_dirs`` and ``max_depth`` of
    ``<directory>/extensions.yaml`` as the daemon's loader reads them (placeholders
    substituted, a missing key its default); ``None`` when a search path holds a placeholder
    that cannot be resolved here (where the daemon walks is then not known)."""
    settings = _extensions_settings(_extensions_data(directory))
    if settings.unresolved:
        return None
    return settings.enabled, settings.search_paths, settings.ignore_dirs, settings.max_depth


def extensions_lists(text: str) -> tuple[bool, tuple[str, ...], tuple[str, ...]]:
    """``enabled``, ``disabled`` and ``allowlist`` of ``extensions.yaml``'s ``text`` as the
    daemon's loader reads them (placeholders substituted, nulls as the defaults)."""
    settings = _extensions_settings(_read_extensions(extensions_as_read(text)))
    return settings.enabled, settings.disabled, settings.allowlist


def _strings(value: Any, default: tuple[str, ...]) -> tuple[str, ...]:
    if not isinstance(value, list):
        return default
    return tuple(item for item in value if isinstance(item, str))


def _extensions_settings(data: Any) -> _Extensions:
    """What the cross-file checks take from ``data`` (substituted, nulls made defaults)."""
    section = as_table((as_table(data) or {}).get("extensions")) or {}
    paths = _strings(section.get("search_paths"), DEFAULT_SEARCH_PATHS)
    depth = as_int(section.get("max_depth"))
    return _Extensions(
        enabled=section.get("enabled") is not False,
        search_paths=tuple(path for item in paths if (path := _expanded(item)) is not None),
        unresolved=any(_expanded(item) is None for item in paths),
        ignore_dirs=_strings(section.get("ignore_dirs"), DEFAULT_IGNORE_DIRS),
        max_depth=depth if depth is not None and depth >= 0 else DEFAULT_MAX_DEPTH,
        disabled=_strings(section.get("disabled"), ()),
        allowlist=_strings(section.get("allowlist"), ()),
        entries=as_table(section.get("entries")) or {},
    )


_last_extensions_read: list[tuple[bytes, tuple[tuple[str, str], ...], Any]] = []
"""The last ``extensions.yaml`` :func:`_extensions_data` read: its bytes, the environment its
placeholders were substituted from, and the data (read, never changed, by its callers)."""


def _extensions_data(directory: Path) -> Any:
    """``<directory>/extensions.yaml`` as the daemon reads it (:func:`_read_extensions`), or
    ``None``. The same bytes under the same environment are parsed once: every file of a
    config directory (each ``agents.d`` drop-in) asks for its ``extensions.yaml``."""
    try:
        raw = read_capped_bytes(directory / EXTENSIONS_FILE, MAX_CONFIG_BYTES)
    except (OSError, FileTooLargeError):
        return None
    environment = tuple(os.environ.items())
    for seen, seen_environment, data in _last_extensions_read:
        if seen == raw and seen_environment == environment:
            return data
    data = _read_extensions(extensions_as_read(raw.decode("utf-8", errors="replace")))
    _last_extensions_read[:] = [(raw, environment, data)]
    return data


def _read_extensions(read: YamlDocument) -> Any:
    """The data of ``extensions.yaml`` as the loader hands it to serde: the top-level
    ``schema_version`` removed, nulls read as the defaults serde_yaml gives them."""
    data = _without_schema_version(read)
    return _serde_defaults(data, EXTENSIONS_FILE_SPEC, (), read, direct=False)


def _without_schema_version(read: YamlDocument) -> Any:
    """``read``'s data with its top-level ``schema_version`` removed as the loader removes
    it (``crates/config/src/lib.rs`` ``deserialize_yaml_with_schema_version``:
    ``map.remove(Value::String("schema_version"))``): a key written with a local tag
    (``!x schema_version``) is a ``Value::Tagged``, which that removal does not find, so the
    struct then reads it as an unknown field."""
    data = read.data
    if isinstance(data, Mapping) and ("schema_version",) not in read.tagged_keys:
        data = {key: value for key, value in data.items() if key != "schema_version"}
    return data


def _read_agents(read: YamlDocument, *, drop_in: bool) -> Any:
    """The top of ``agents.yaml`` or a drop-in as serde reads it into ``AgentsConfig``: an
    empty file is an empty mapping (serde_yaml 0.9.34: ``Value::Null`` through a ``Value``, an
    empty document straight from the text; either way ``missing field `agents` ``), and
    ``schema_version`` is not judged here (agents.yaml's is removed by the loader, a
    drop-in's is reported on its own)."""
    data = {} if read.data is None else read.data
    if isinstance(data, Mapping):
        if drop_in:
            data = {key: value for key, value in data.items() if key != "schema_version"}
        else:
            data = _without_schema_version(read)
        return _serde_defaults(data, AGENTS_FILE_SPEC, (), read, direct=drop_in)
    return data


def lint_config_text(
    text: str,
    *,
    path: str,
    kind: ConfigKind,
    cwd: Path | None = None,
    nexo_version: str | None = None,
    bom: bool = False,
) -> list[Diagnostic]:
    """Every finding of one daemon config file (``text`` read from ``path``); ``nexo_version``
    is the daemon whose discovery decides which microapps load (default the newest known).
    ``bom``: the file starts with a byte-order mark the caller dropped from ``text``; the
    daemon's YAML reader keeps it, as one column of the first line (:mod:`yaml_source`)."""
    base = cwd or Path.cwd()
    # By where the file is, however it was named (`bob.yaml` from inside agents.d/).
    parent = (base / path).parent
    drop_in = kind == "agents" and parent.name == AGENTS_DROP_IN_DIR
    document = parse_yaml("\ufeff" + text if bom else text)
    named = Path(path)
    if drop_in and named.suffix != ".yaml":
        # `merge_agents_drop_in` keeps the entries whose extension is exactly `yaml` (Rust's
        # `Path::extension`, as Python's `suffix`). The daemon never reads this file: what it
        # would say of the content (refused, does not start) is not true of it.
        findings = Findings(MICROAPP_RULES, document.locate)
        stem = named.stem if named.suffix else "NAME"
        findings.at(
            "NX235",
            Span(Position(1, 1), Position(1, 1)),
            f"the daemon skips the files of {AGENTS_DROP_IN_DIR}/ not named *.yaml: it never "
            f"loads {named.name}, so the agents defined here do not exist for it",
            f"rename it to end in .yaml ({AGENTS_DROP_IN_DIR}/{stem}.yaml)",
        )
        return findings.found
    problems = [
        problem for problem in document.problems if _refused(problem, drop_in=drop_in, kind=kind)
    ]
    overridden = [problem for problem in problems if _overridden(problem, drop_in=drop_in)]
    problems = [problem for problem in problems if problem not in overridden]
    problems += _read_over(document.problems, drop_in=drop_in, kind=kind)
    as_written = "fix the YAML at this position"
    if any(problem.kind in _UNREADABLE for problem in problems):
        if drop_in:
            # A drop-in is parsed only once substituted: `[${DIR}]` is a flow sequence there.
            read = _substituted(document, stand_ins=True)
            fixed = [
                problem
                for problem in read.problems
                if _refused(problem, drop_in=drop_in, kind=kind)
            ]
            if read is not document and not any(item.kind in _UNREADABLE for item in fixed):
                document, problems = read, fixed
        elif next(find_placeholders(text), None) is not None:
            # agents.yaml and extensions.yaml are also parsed as written, placeholders and
            # all, by the schema migration step that starts every load
            # (`crates/config/src/migrations.rs` `migrate_config_dir`).
            as_written += (
                "; the daemon also reads this file as written, before substituting `${...}` "
                "(its schema migration step), so a placeholder must be valid YAML where it "
                'stands: quote it (`["${DIR}"]`)'
            )
    findings = Findings(MICROAPP_RULES, document.locate)
    for problem in problems:
        findings.at("NX222", problem.span, problem.message, as_written)
    for problem in overridden:
        findings.at(
            "NX232",
            problem.span,
            f"{problem.message}: the daemon reads a drop-in's `extensions_config` as a map and "
            "keeps the last definition",
            "keep one definition of each id",
        )
    if any(problem.kind in _UNREADABLE for problem in problems):
        return findings.found
    _check_placeholders(findings, text, base)
    if not drop_in and isinstance(document.data, str):
        # `migrate_config_dir` (crates/config/src/migrations.rs `ensure_mapping`) reads the
        # file as written: a top that is one scalar (`${CONFIG}`) is refused before any
        # substitution.
        findings.add(
            "NX221",
            (),
            "the file as written is one scalar, not a mapping: the daemon's schema migration "
            "step reads it before substituting `${...}` and refuses it ('top-level YAML "
            "document must be a mapping')",
            "write the keys in the file; substitute values, not the whole document",
        )
        return findings.found
    read = _substituted(document)
    if read is not document:
        read.problems = [
            problem
            for problem in read.problems
            if _refused(problem, drop_in=drop_in, kind=kind)
            and not _overridden(problem, drop_in=drop_in)
        ] + _read_over(read.problems, drop_in=drop_in, kind=kind)
        for problem in read.problems:
            findings.at(
                "NX222",
                problem.span,
                f"once its `${{...}}` placeholders are substituted: {problem.message}",
                "the daemon substitutes them before parsing: quote the placeholder, or fix "
                "the value it stands for",
            )
        if read.problems:
            return findings.found
    if kind == "extensions":
        data = _read_extensions(read)
        _structure(findings, data, EXTENSIONS_FILE_SPEC)  # an empty file is null: refused
        _check_durations(findings, data)
        settings = _extensions_settings(data)
    else:  # the extensions.yaml of the config directory holding this file
        data = read.data
        directory = parent.parent if drop_in else parent
        settings = _extensions_settings(_extensions_data(directory))
        if drop_in and isinstance(data, Mapping) and "schema_version" in data:
            findings.add(
                "NX220",
                ("schema_version",),
                "unknown key `schema_version` in an agents.d drop-in: the daemon reads a "
                "drop-in straight into its agents type (only agents.yaml's own "
                "`schema_version` is removed first), refuses it and does not start",
                "delete it; `schema_version` belongs to agents.yaml",
                part="key",
            )
        agents = _read_agents(read, drop_in=drop_in)
        _structure(findings, agents, AGENTS_FILE_SPEC)
        _check_agent_keys(findings, agents, drop_in=drop_in)
    # `enabled: false`: the daemon discovers nothing (`run_extension_discovery` returns early).
    microapps = (
        _discover(settings, base, nexo_version or NEWEST_DAEMON_VERSION) if settings.enabled else []
    )
    if any(finding.is_error for finding in findings.found):
        return findings.found  # the daemon does not start: nothing across files matters yet
    known = None if settings.unresolved else {app.manifest.id for app in microapps}
    if kind == "extensions":
        if settings.enabled:
            _check_extensions(findings, settings, microapps, known)
            for reached in _reached_bookkeeping(settings, base):
                findings.add(
                    "NX234",
                    ("extensions", "max_depth"),
                    reached.message(),
                    reached.remedy(),
                    part="value",
                )
    else:
        _check_agents(findings, data, known, read, direct=drop_in)
        if not drop_in and not (parent / EXTENSIONS_FILE).exists():
            _check_no_extensions_file(findings, microapps)
    return findings.found


def _check_no_extensions_file(findings: Findings, microapps: list[DiscoveredMicroapp]) -> None:
    """Without ``extensions.yaml`` the daemon still discovers and spawns the microapps under
    the default search path (``run_extension_discovery`` takes ``ExtensionsConfig::default()``,
    ``src/main.rs:6530``), but builds no admin RPC at all: its bootstrap needs the file
    (``cfg.extensions`` is ``None``, ``src/main.rs:1488-1494``). A microapp that declares admin
    capabilities then gets no admin router and its ``app:`` requests are dropped
    (``runtime/stdio.rs:858-872``). Reported here, on ``agents.yaml``: the file the daemon
    always reads, the one that is missing has no line to point at."""
    for app in microapps:
        companion = app.companion
        if companion is None or not companion.admin_declared:
            continue
        entry_id = companion.id or app.manifest.id
        stanza = (
            f"extensions: {{entries: {{{entry_id}: "
            f"{{capabilities_grant: [{', '.join(companion.admin_declared)}]}}}}}}"
        )
        findings.add(
            "NX225" if companion.admin_required else "NX226",
            (),
            f"microapp `{entry_id}` declares admin capabilities "
            f"{', '.join(companion.admin_declared)} (nexo-plugin.toml), but this config "
            "directory has no extensions.yaml: the daemon loads the microapp and builds no "
            "admin RPC, so none is granted and its `app:` requests are dropped unanswered",
            f"create extensions.yaml beside agents.yaml granting them: `{stanza}`",
        )


_UNREADABLE = ("syntax", "tag", "empty-tag", "wide-int", "depth")
"""Problems that stop the daemon's YAML reader before any type is checked."""


def _overridden(problem: YamlProblem, *, drop_in: bool) -> bool:
    """Whether ``problem`` is a key written twice that the daemon takes, the last definition
    winning: a microapp id of an agent's ``extensions_config`` in a drop-in, read straight
    into a ``BTreeMap`` (serde's map visitor inserts each entry; only serde_yaml's ``Value``
    refuses a duplicate, ``src/mapping.rs`` ``DuplicateKeyError``)."""
    path = problem.key_path
    return (
        drop_in
        and problem.kind in ("duplicate", "duplicate-text")
        and len(path) == 4
        and path[0] == "agents"
        and path[2] == "extensions_config"
    )


def _read_over(
    problems: tuple[YamlProblem, ...] | list[YamlProblem], *, drop_in: bool, kind: ConfigKind
) -> list[YamlProblem]:
    """What the daemon refuses in the values written after keys written again, where it takes
    the key again (an id of a drop-in's `extensions_config`, whose map visitor reads each value
    before it keeps the last; two keys a `Value` holds apart, `!x id` and `id`): it reads those
    values too."""
    found: list[YamlProblem] = []
    for duplicate in problems:
        if duplicate.within and (
            _overridden(duplicate, drop_in=drop_in)
            or not _refused(duplicate, drop_in=drop_in, kind=kind)
        ):
            found += [
                problem
                for problem in duplicate.within
                if _refused(problem, drop_in=drop_in, kind=kind)
            ]
            found += _read_over(duplicate.within, drop_in=drop_in, kind=kind)
    return found


def _struct_field(path: KeyPath, kind: ConfigKind) -> bool:
    """Whether the key at ``path`` (of a file read through a ``Value``) names a field of a
    struct: serde's derived ``visit_map`` refuses a field given twice (``duplicate_field``)
    even when serde_yaml's ``Value`` held the two keys apart (``!x max_depth`` and
    ``max_depth`` are two keys of a ``Mapping``, one field once untagged: serde_yaml 0.9.34
    ``src/value/de.rs`` ``deserialize_identifier`` -> ``deserialize_string`` -> ``untag``),
    where a map (``entries``) keeps the last. An agent is a struct (``AgentConfig``,
    ``crates/config/src/types/agents.rs:29-30``) though modelled here as an open map."""
    parent = path[:-1]
    if kind == "agents" and len(parent) == 2 and parent[0] == "agents":
        return isinstance(parent[1], int)
    spec: Spec | None = EXTENSIONS_FILE_SPEC if kind == "extensions" else AGENTS_FILE_SPEC
    for key in parent:
        if isinstance(spec, Table):
            spec = spec.fields.get(str(key))
        elif isinstance(spec, ListOf) and isinstance(key, int):
            spec = spec.item
        elif isinstance(spec, MapOf):
            spec = spec.value
        else:
            return False
    return isinstance(spec, Table)


def _read_as_text(problem: YamlProblem) -> bool:
    """Whether a drop-in, read straight from the text, takes the scalar of ``problem`` as its
    text whatever its tag: the keys of the file, of an agent and of its `model` (struct field
    names: `deserialize_identifier` is `deserialize_str`), a microapp id of its
    `extensions_config` (a `String` key), and the string fields `id`, `model.provider` and
    `model.model` (serde_yaml 0.9.34 ``src/de.rs`` ``deserialize_str`` reads the scalar's
    value and never its tag). Elsewhere the type is not known here, or is a `Value`."""
    path = problem.key_path
    agent = len(path) >= 3 and path[0] == "agents" and isinstance(path[1], int)
    if problem.at_key:
        return len(path) == 1 or (
            agent and (len(path) == 3 or (len(path) == 4 and path[2] in AGENT_TEXT_KEYED))
        )
    return agent and (
        path[2:] == ("id",) or path[2:] in (("model", "provider"), ("model", "model"))
    )


AGENT_TEXT_KEYED = ("model", "extensions_config")
"""An agent's fields whose keys a drop-in reads as text: `ModelConfig`'s field names and the
`String` ids of `extensions_config` (``crates/config/src/types/agents.rs:366,938``)."""


def _refused(problem: YamlProblem, *, drop_in: bool, kind: ConfigKind) -> bool:
    """Whether the daemon refuses the file for ``problem``. A key that is not a string is
    refused only where a struct or a string-keyed map reads it: an agent's
    ``extensions_config.<id>`` is an opaque ``serde_yaml::Value`` (``crates/config/src/types/
    agents.rs:366``), whose mappings take any key; and a drop-in is read straight from the
    text, where a string-keyed map takes a scalar key's text as it is (serde_yaml 0.9.34
    ``src/de.rs`` ``deserialize_str``), so ``extensions_config: {1: ...}`` is the id ``"1"``."""
    path = problem.key_path
    if drop_in and problem.kind in ("tag", "empty-tag") and _read_as_text(problem):
        return False
    if problem.kind == "empty-tag":
        # `agents: !!null` or `extensions_config: !!null` in a drop-in: `deserialize_seq` /
        # `deserialize_map` (serde_yaml 0.9.34 src/de.rs) take an empty plain scalar as empty
        # before its tag is read; through a `Value` the tag is read and refuses the file.
        return not drop_in or not (
            path == ("agents",)
            or (len(path) == 3 and path[0] == "agents" and path[2] == "extensions_config")
        )
    if problem.kind == "wide-int":
        # A drop-in reads its typed fields straight from the text (a string field takes the
        # digits as text, a microapp id too): only its opaque settings, the value of each id
        # and all below it, go through a `Value`.
        return not drop_in or (
            len(path) >= 4
            and path[0] == "agents"
            and path[2] == "extensions_config"
            and (len(path) > 4 or not problem.at_key)
        )
    in_settings = len(path) >= 4 and path[0] == "agents" and path[2] == "extensions_config"
    if problem.kind in ("duplicate-value", "duplicate-text"):
        # Inside a microapp's settings (an opaque `Value`, in a drop-in too) keys are YAML
        # values: `1` and `0x1` are one key, `1` and `"1"` two. Elsewhere keys are read as
        # text, where `1` and `"1"` are one key; a key that is no string is refused there
        # already (`key-type`), except the ids of a drop-in's `extensions_config`, read as
        # their text (`1` and `0x1` are two ids). Through a `Value`, two keys the `Value`
        # holds apart (`!x max_depth`, `max_depth`) are one field of a struct, given twice.
        value_keys = len(path) >= 5 and in_settings
        if problem.kind == "duplicate-value":
            return value_keys
        return (drop_in and not value_keys) or (not drop_in and _struct_field(path, kind))
    if problem.kind != "key-type":
        return True
    if not in_settings:
        return True
    scalar_key = not str(path[-1]).startswith("<")
    return len(path) == 4 and not (drop_in and scalar_key)


def _no_microapp(
    findings: Findings, path: KeyPath, name: str, known: set[str] | None, what: str
) -> None:
    """NX229 unless ``name`` is a discovered microapp (``known`` ``None``: discovery unknown;
    a placeholder unresolved here names what the daemon's environment says)."""
    if known is not None and name not in known and not _has_placeholder(name):
        listed = ", ".join(f"`{item}`" for item in sorted(known)) or "none"
        findings.add(
            "NX229",
            path,
            f"{what} `{name}` names no microapp the daemon loads from the search paths "
            f"(found: {listed})",
            "use the microapp's plugin.toml `plugin.id`, or remove the entry",
            part="key" if what in {"entry", "extensions_config"} else "value",
        )


def _check_extensions(
    findings: Findings,
    settings: _Extensions,
    microapps: list[DiscoveredMicroapp],
    known: set[str] | None,
) -> None:
    base: KeyPath = ("extensions",)
    for name in settings.entries:
        _no_microapp(findings, (*base, "entries", str(name)), str(name), known, "entry")
    for index, name in enumerate(settings.disabled):
        _no_microapp(findings, (*base, "disabled", index), name, known, "`disabled` id")
    # The daemon checks the allowlist against what discovery kept after `disabled`
    # (`discovery.rs:341-356`: "allowlist contains `{id}` but no extension with that id was
    # discovered"): an id also listed as disabled is one it warns about.
    disabled = set(settings.disabled)
    undisabled = None if known is None else known - disabled
    for index, name in enumerate(settings.allowlist):
        path: KeyPath = (*base, "allowlist", index)
        if known is not None and name in known & disabled:
            findings.add(
                "NX229",
                path,
                f"`allowlist` id `{name}` is also listed under `disabled`: the daemon drops it "
                "before it reads the allowlist, and warns that no extension with that id was "
                "discovered",
                "remove it from `disabled` to load it, or from `allowlist`",
                part="value",
            )
        else:
            _no_microapp(findings, path, name, undisabled, "`allowlist` id")
    loaded = [app for app in microapps if settings.skips(app.manifest.id) is None]
    declaring = [
        (_grant_id(app), app.companion)
        for app in loaded
        if app.companion is not None and app.companion.admin_declared
    ]
    for app in loaded:
        if app.companion is None or not app.companion.admin_declared:
            _grants_to_undeclaring(findings, settings, _grant_id(app))
    if not declaring:
        return  # the admin bootstrap checks nothing when no microapp declares admin capabilities
    for entry_id, companion in declaring:
        _check_grants(findings, settings, entry_id, companion)
    for app in loaded:
        http = app.companion.http_server if app.companion is not None else None
        if http is None or microapp.is_loopback_bind(http.bind):
            continue
        entry_id = _grant_id(app)
        entry = settings.entries.get(entry_id)
        if isinstance(entry, Mapping) and entry.get("allow_external_bind") is True:
            continue
        findings.add(
            "NX228",
            _entry_path(settings, entry_id, "allow_external_bind"),
            f"microapp `{entry_id}` binds its HTTP server to `{http.bind}` (nexo-plugin.toml) "
            "without `allow_external_bind: true`: the admin bootstrap fails and no microapp "
            "gets admin RPC",
            f"bind to 127.0.0.1, or set `entries.{entry_id}.allow_external_bind: true`",
            part="key",
        )


def _grant_id(app: DiscoveredMicroapp) -> str:
    """The id under ``entries`` that the daemon's admin bootstrap reads for ``app``: its
    companion ``nexo-plugin.toml``'s ``plugin.id`` when there is one (the capability maps are
    keyed by it, ``crates/setup/src/admin_capability_collect.rs`` ``m.id()``), else its
    ``plugin.toml`` id."""
    return app.companion.id if app.companion is not None and app.companion.id else app.manifest.id


def _grants_to_undeclaring(findings: Findings, settings: _Extensions, entry_id: str) -> None:
    """NX227 for grants to a microapp that declares no admin capabilities: the daemon skips it
    at the admin bootstrap without a word, so the grant gives it nothing (a forgotten
    ``[plugin.capabilities.admin]`` or companion manifest, most often)."""
    entry = settings.entries.get(entry_id)
    grants = _strings(entry.get("capabilities_grant"), ()) if isinstance(entry, Mapping) else ()
    for index, grant in enumerate(grants):
        findings.add(
            "NX227",
            ("extensions", "entries", entry_id, "capabilities_grant", index),
            f"`{grant}` is granted to `{entry_id}`, which declares no admin capabilities "
            "(nexo-plugin.toml [plugin.capabilities.admin]): the daemon ignores the grant and "
            "the microapp gets no admin RPC",
            "declare what it needs in nexo-plugin.toml's [plugin.capabilities.admin], or "
            "remove the grant",
        )


def _entry_path(settings: _Extensions, entry_id: str, key: str) -> KeyPath:
    """Where to report about ``entries.<entry_id>.<key>``: the deepest part that exists."""
    entry = settings.entries.get(entry_id)
    if isinstance(entry, Mapping) and key in entry:
        return ("extensions", "entries", entry_id, key)
    if entry_id in settings.entries:
        return ("extensions", "entries", entry_id)
    return ("extensions", "entries") if settings.entries else ("extensions",)


def _check_grants(
    findings: Findings, settings: _Extensions, entry_id: str, companion: microapp_model.Companion
) -> None:
    entry = settings.entries.get(entry_id)
    grants = _strings(entry.get("capabilities_grant"), ()) if isinstance(entry, Mapping) else ()
    where = _entry_path(settings, entry_id, "capabilities_grant")
    missing = sorted(set(companion.admin_required) - set(grants))
    if missing:
        findings.add(
            "NX225",
            where,
            f"microapp `{entry_id}` requires admin capabilities {', '.join(missing)} that "
            "`capabilities_grant` does not grant: the admin bootstrap fails and the daemon "
            "runs with admin RPC off for every microapp",
            f"grant them: `entries.{entry_id}.capabilities_grant: [{', '.join(missing)}]`",
            part="key",
        )
    optional = sorted(set(companion.admin_optional) - set(grants))
    if optional:
        findings.add(
            "NX226",
            where,
            f"microapp `{entry_id}`'s optional admin capabilities {', '.join(optional)} are not "
            "granted: its calls needing them get -32004",
            part="key",
        )
    for index, grant in enumerate(grants):
        if grant not in companion.admin_declared:
            findings.add(
                "NX227",
                ("extensions", "entries", entry_id, "capabilities_grant", index),
                f"`{grant}` is granted to `{entry_id}`, whose nexo-plugin.toml does not declare it",
                "fix the spelling or remove the grant",
            )


def _check_agent_keys(findings: Findings, data: Any, *, drop_in: bool) -> None:
    """Each agent's keys as ``AgentConfig`` takes them: an unknown key or a missing required
    field fails ``serde_yaml`` and the loader's error stops the daemon's boot
    (``crates/config/src/lib.rs`` ``load_required``, ``merge_agents_drop_in``)."""
    refused = "the daemon refuses " + ("this agents.d drop-in" if drop_in else "agents.yaml")
    for index, agent in tables(data.get("agents") if isinstance(data, Mapping) else None):
        path: KeyPath = ("agents", index)
        for key in agent:
            if not isinstance(key, str) or key in AGENT_FIELDS or _has_placeholder(key):
                continue  # a key that is no string is reported as such (NX222)
            hint = _AGENT_KEY_HINTS.get(key)
            if hint is None:
                close = difflib.get_close_matches(key, sorted(AGENT_FIELDS), n=1, cutoff=0.75)
                hint = f"did you mean `{close[0]}`?" if close else "delete it"
            findings.add(
                "NX220",
                (*path, key),
                f"unknown key `{printable(key, lines=True)}` in an agent: {refused} and "
                "does not start",
                hint,
                part="key",
            )
        for key in AGENT_REQUIRED:
            if key not in agent:
                findings.add(
                    "NX221",
                    path,
                    f"`{format_key_path((*path, key))}` is missing: {refused} and does not start",
                    _AGENT_REQUIRED_HELP[key],
                    part="key",
                )
        _check_agent_types(findings, agent, path, refused, drop_in=drop_in)


def _check_agent_types(
    findings: Findings, agent: Mapping[str, Any], path: KeyPath, refused: str, *, drop_in: bool
) -> None:
    """The required fields' types: `id` a `String`, `model` a `ModelConfig` of two `String`s
    (``crates/config/src/types/agents.rs:31,38,936-941``, ``deny_unknown_fields``). Through a
    `Value` (agents.yaml) a string is a YAML string (serde_yaml 0.9.34 ``src/value/de.rs``
    ``deserialize_string``); a drop-in takes any scalar's text (``src/de.rs``
    ``deserialize_str``). A `model` that is null or empty misses both fields either way."""

    def text(value: Any) -> bool:
        return not isinstance(value, list | Mapping) if drop_in else isinstance(value, str)

    def wrong(where: KeyPath, value: Any, hint: str) -> None:
        findings.add(
            "NX221",
            where,
            f"`{format_key_path(where)}` must be a string, not {type_name(value)}: {refused} "
            "and does not start",
            hint,
        )

    if "id" in agent and not text(agent["id"]):
        wrong((*path, "id"), agent["id"], 'quote the id: `id: "..."`')
    if "model" not in agent:
        return
    model = agent["model"]
    where: KeyPath = (*path, "model")
    if not isinstance(model, Mapping):
        findings.add(
            "NX221",
            where,
            f"`{format_key_path(where)}` must be a mapping, not {type_name(model)}: {refused} "
            "and does not start",
            _AGENT_REQUIRED_HELP["model"],
        )
        return
    for key in model:
        if key not in ("provider", "model") and not _has_placeholder(str(key)):
            findings.add(
                "NX220",
                (*where, key),
                f"unknown key `{printable(str(key), lines=True)}` in an agent's `model`: "
                f"{refused} and does not start",
                "a model has `provider` and `model` only",
                part="key",
            )
    for key in ("provider", "model"):
        if key not in model:
            findings.add(
                "NX221",
                where,
                f"`{format_key_path((*where, key))}` is missing: {refused} and does not start",
                _AGENT_REQUIRED_HELP["model"],
                part="key",
            )
        elif not text(model[key]):
            wrong((*where, key), model[key], "quote it")


def _check_agents(
    findings: Findings, data: Any, known: set[str] | None, read: YamlDocument, *, direct: bool
) -> None:
    for index, agent in tables(data.get("agents") if isinstance(data, Mapping) else None):
        path: KeyPath = ("agents", index)
        settings = _serde_defaults(
            agent.get("extensions_config"),
            MapOf(None),
            (*path, "extensions_config"),
            read,
            direct=direct,
        )
        if "extensions_config" not in agent:
            continue
        findings.add(
            "NX230",
            (*path, "extensions_config"),
            "`extensions_config` is accepted but never sent to a microapp",
            part="key",
        )
        if isinstance(settings, Mapping):
            for name in settings:
                _no_microapp(
                    findings,
                    (*path, "extensions_config", str(name)),
                    str(name),
                    known,
                    "extensions_config",
                )
        elif direct and settings is None:
            findings.add(
                "NX221",
                (*path, "extensions_config"),
                "`extensions_config` is null: a drop-in is read straight into the agents type, "
                "where only an empty value stands for an empty mapping (`~` and `null` do not)",
                "leave the value empty, write `{}`, or delete the key",
            )
        elif not _has_placeholder(settings):
            findings.add(
                "NX221",
                (*path, "extensions_config"),
                "`extensions_config` must be a mapping of microapp id to settings",
            )


_SCHEMA_BASE = "https://raw.githubusercontent.com/nexo-pkg/nexo-pkg/main/schemas/"


def _as_the_loader_reads(schema: dict[str, Any]) -> None:
    """Widen ``schema`` (in place, every level) to what the daemon's loader accepts before
    its types apply: a null list, map or struct is an empty one (serde_yaml 0.9.34
    ``src/value/de.rs``: ``Value::Null => visit_sequence/visit_mapping``, as
    :func:`_serde_defaults` reads it), and a value of another type than a string may be
    written as a ``${VAR}`` placeholder, which ``resolve_placeholders`` substitutes in the
    text before the YAML is parsed (lint judges the substituted value)."""
    kind = schema.get("type")
    if isinstance(kind, str) and kind != "string":
        widened = [kind, "null"] if kind in ("array", "object") else [kind]
        schema["type"] = [*widened, "string"]
        schema["pattern"] = PLACEHOLDER_SCHEMA_PATTERN
    for child in schema.get("properties", {}).values():
        _as_the_loader_reads(child)
    for key in ("items", "additionalProperties"):
        if isinstance(schema.get(key), dict) and schema[key]:
            _as_the_loader_reads(schema[key])


def microapp_schemas() -> dict[str, dict[str, Any]]:
    """The published JSON Schemas (file name -> schema) of the microapp manifest and of
    ``extensions.yaml``, built from the models the linter checks with."""
    from nexo_pkg.lint.microapp_descriptions import (  # noqa: PLC0415
        EXTENSIONS_HELP,
        MANIFEST_HELP,
        describe,
    )
    from nexo_pkg.manifest.rules_microapp import EXTENSION_MANIFEST  # noqa: PLC0415
    from nexo_pkg.manifest.shape import to_json_schema  # noqa: PLC0415

    manifest = to_json_schema(EXTENSION_MANIFEST)
    plugin = manifest["properties"]["plugin"]["properties"]
    plugin["id"].update(
        pattern=microapp.ID_PATTERN,
        maxLength=microapp.MAX_ID_LENGTH,
        **{"not": {"enum": sorted(microapp.RESERVED_IDS)}},
    )
    plugin["description"]["maxLength"] = microapp.MAX_DESCRIPTION_LENGTH
    capabilities = manifest["properties"]["capabilities"]["properties"]
    for kind in microapp.CAPABILITY_KINDS:
        capabilities[kind]["items"].update(
            pattern=microapp.CAPABILITY_NAME_PATTERN, maxLength=microapp.MAX_CAPABILITY_NAME_LENGTH
        )
        capabilities[kind]["uniqueItems"] = True
    extensions = to_json_schema(EXTENSIONS_FILE_SPEC)
    _as_the_loader_reads(extensions["properties"]["extensions"])
    extensions["properties"]["schema_version"] = {
        "description": "Dropped by the daemon's loader before the file is read."
    }
    describe(manifest, MANIFEST_HELP)
    describe(extensions, EXTENSIONS_HELP)
    return {
        "microapp-manifest.schema.json": {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "$id": _SCHEMA_BASE + "microapp-manifest.schema.json",
            "title": "microapp plugin.toml",
            "description": "A microapp's plugin.toml, as the daemon's extension manifest parser "
            "reads it (every table closed). SemVer and the rules across keys are checked by "
            "`nexo plugin lint`.",
            **manifest,
        },
        "extensions.schema.json": {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "$id": _SCHEMA_BASE + "extensions.schema.json",
            "title": "the daemon's extensions.yaml",
            "description": "extensions.yaml as the daemon's config loader reads it: one "
            "unknown key at any level stops the daemon from starting.",
            **extensions,
        },
    }
