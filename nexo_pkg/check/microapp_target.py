"""Recognise a microapp (a stdio extension of the daemon) and read what its host needs.

A microapp's ``plugin.toml`` has the extension shape the daemon's extension manifest parser
reads (``crates/extensions/src/manifest.rs``): a ``[plugin]`` table beside ``[capabilities]``
and ``[transport]`` tables, instead of a plugin manifest's ``[plugin.entrypoint]``. Its
optional companion ``nexo-plugin.toml`` carries the admin capabilities the daemon's admin
bootstrap reads (``crates/setup/src/admin_capability_collect.rs:38-65``), keyed by the
companion's own ``plugin.id``.

This module reads only what ``check`` needs (id, version, transport, requires, context,
declared admin capabilities) and the operator's grants from ``extensions.yaml``; ``nexo
plugin lint`` judges the files in full. Every problem that leaves nothing to spawn is a
:class:`TargetError` (exit 2), the error of every target ``check`` cannot resolve.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nexo_pkg.check.refusal import lint_refusal
from nexo_pkg.core.errors import EXIT_USAGE, ConfigError, NexoError
from nexo_pkg.core.files import FileTooLargeError, read_capped_bytes, read_config_file
from nexo_pkg.lint.yaml_source import parse_yaml
from nexo_pkg.manifest.microapp import (
    COMPANION_MANIFEST_NAME,
    MICROAPP_MANIFEST_NAME,
    id_problem,
    is_extension_shape,
)
from nexo_pkg.manifest.microapp_model import companion_from_data, microapp_from_data
from nexo_pkg.manifest.names import MAX_MANIFEST_BYTES
from nexo_pkg.manifest.read import ManifestTOMLError, read_manifest
from nexo_pkg.manifest.rules_microapp import companion_refused

#: The daemon's configuration file holding ``entries.<id>.capabilities_grant``.
EXTENSIONS_CONFIG = "extensions.yaml"

_MAX_CONFIG_BYTES = MAX_MANIFEST_BYTES
"""As much of ``extensions.yaml`` as lint reads; a larger file is refused, never cut short."""


class TargetError(NexoError):
    """The target names nothing that can be checked: no manifest, nothing runnable (exit 2)."""

    kind = "target_invalid"
    exit_code = EXIT_USAGE


class ManifestRefusedError(TargetError):
    """The manifest at ``manifest`` is one the daemon refuses to load or spawn (a TOML syntax
    error, an invalid ``plugin.id``, a version it cannot parse, an entrypoint or a microapp's
    stdio command it cannot read):
    ``check`` starts nothing and reports it as the failed ``manifest`` check (exit 1) with
    :attr:`refusal`, which names the lint rule (SPEC §4, containment). ``plugin_id`` is the
    id as written (empty when there is none), ``root`` the plugin root."""

    def __init__(self, message: str, *, root: Path, plugin_id: str, refusal: str) -> None:
        super().__init__(message)
        self.root = root
        self.plugin_id = plugin_id
        self.refusal = refusal

    @classmethod
    def linted(
        cls, message: str, *, manifest: Path, root: Path, plugin_id: str
    ) -> ManifestRefusedError:
        """The refusal of ``manifest``, linted now: a tarball's temporary copy is gone once
        the error leaves the block."""
        refusal = lint_refusal(manifest, None) or (
            f"{message}; not started (the daemon refuses this manifest too)"
        )
        return cls(message, root=root, plugin_id=plugin_id, refusal=refusal)


@dataclass(frozen=True)
class AdminGrants:
    """The admin capabilities the check's mock router grants, and where they come from."""

    granted: frozenset[str]
    source: str
    #: Why the daemon's ``extensions.yaml`` keeps the microapp from loading, if it does.
    not_loaded: str | None = None


@dataclass(frozen=True)
class MicroappTarget:
    """A microapp to spawn as the daemon's extension host does."""

    root: Path
    manifest_path: Path
    extension_id: str
    transport_kind: str
    command: str
    args: tuple[str, ...]
    requires_bins: tuple[str, ...] = ()
    requires_env: tuple[str, ...] = ()
    context_passthrough: bool = False
    #: ``[plugin.capabilities.admin]`` of the companion, when its id is the microapp's.
    admin_required: tuple[str, ...] = ()
    admin_optional: tuple[str, ...] = ()
    #: Whether the daemon wires an admin router for this microapp (it declares admin
    #: capabilities in a companion of the same id).
    admin_router: bool = False
    #: Things worth a warning found while reading the files.
    notes: tuple[str, ...] = field(default=())


def _manifest_bytes(path: Path) -> bytes:
    """The bytes of the regular file ``path`` (a link followed, as the daemon reads it) of at
    most :data:`MAX_MANIFEST_BYTES`: a FIFO put there never blocks, a huge file is never read
    whole (:class:`FileTooLargeError`)."""
    return read_capped_bytes(path, MAX_MANIFEST_BYTES)


def find_microapp(root: Path, manifest_path: Path | None = None) -> MicroappTarget | None:
    """The microapp at ``root`` (or the explicit ``manifest_path``), or None for a plugin.

    Only a file named ``plugin.toml`` can be an extension manifest. Raises
    :class:`TargetError` when that file has the extension shape but names nothing the host
    could spawn (no valid id, no stdio transport with a command).
    """
    path = manifest_path if manifest_path is not None else root / MICROAPP_MANIFEST_NAME
    if path.name != MICROAPP_MANIFEST_NAME or not path.is_file():
        return None
    try:
        document = read_manifest(_manifest_bytes(path))
    except (OSError, FileTooLargeError, ManifestTOMLError):
        # Not ours to diagnose: the plugin path reports an unreadable manifest.
        return None
    if not is_extension_shape(document):
        return None
    return _read_target(path.parent.resolve(), path, document)


def _read_target(root: Path, path: Path, document: dict[str, Any]) -> MicroappTarget:
    manifest = microapp_from_data(document)
    problem = "has no string `plugin.id`" if manifest is None else id_problem(manifest.id)
    raw_id = manifest.id if manifest is not None and isinstance(manifest.id, str) else ""
    if manifest is None or problem is not None:
        raise ManifestRefusedError.linted(
            f"{path}: `plugin.id` {problem}; run `nexo plugin lint` for details",
            manifest=path,
            root=root,
            plugin_id=raw_id,
        )
    if manifest.transport_kind != "stdio":
        raise TargetError(
            f"{path}: [transport] kind is {manifest.transport_kind!r}; the daemon spawns only "
            'kind = "stdio" microapps (src/main.rs:6594-6600), so there is no child to check'
        )
    if manifest.command is None or not manifest.command.strip():
        raise ManifestRefusedError.linted(
            f"{path}: [transport] needs a non-empty string `command`",
            manifest=path,
            root=root,
            plugin_id=manifest.id,
        )
    required, optional, router, notes = _companion(root, manifest.id)
    return MicroappTarget(
        root=root,
        manifest_path=path,
        extension_id=manifest.id,
        transport_kind=manifest.transport_kind,
        command=manifest.command,
        args=manifest.args,
        requires_bins=manifest.requires_bins,
        requires_env=manifest.requires_env,
        context_passthrough=manifest.context_passthrough,
        admin_required=required,
        admin_optional=optional,
        admin_router=router,
        notes=notes,
    )


def _companion(
    root: Path, extension_id: str
) -> tuple[tuple[str, ...], tuple[str, ...], bool, tuple[str, ...]]:
    """Admin capabilities of ``nexo-plugin.toml``: (required, optional, router wired, notes)."""
    path = root / COMPANION_MANIFEST_NAME
    if not path.is_file():
        return (), (), False, ()
    try:
        document = read_manifest(_manifest_bytes(path))
    except (OSError, FileTooLargeError, ManifestTOMLError) as error:
        # The daemon warns and skips a companion it cannot parse (admin_capability_collect.rs).
        note = (
            f"{COMPANION_MANIFEST_NAME} cannot be read ({error}); the daemon skips it, so "
            "this microapp gets no admin router"
        )
        return (), (), False, (note,)
    if companion_refused(document):
        # A bad `version`, `min_nexo_version` or unknown key fails the daemon's parse: it
        # logs a warning and skips the file, its admin capabilities never collected.
        note = (
            f"the daemon cannot parse {COMPANION_MANIFEST_NAME} (`nexo plugin lint` says why: "
            "NX216) and skips it, so this microapp gets no admin router and no HTTP server"
        )
        return (), (), False, (note,)
    companion = companion_from_data(document)
    required, optional = companion.admin_required, companion.admin_optional
    if companion.id != extension_id and companion.admin_declared:
        note = (
            f"{COMPANION_MANIFEST_NAME} declares admin capabilities for plugin.id "
            f"{companion.id!r}, but plugin.toml's id is {extension_id!r}: the daemon keys "
            "admin grants by the companion's id and looks the router up by plugin.toml's, "
            "so this microapp gets no admin router (its app: requests are dropped)"
        )
        return required, optional, False, (note,)
    return required, optional, bool(companion.admin_declared), ()


def load_grants(target: MicroappTarget, config_dir: Path | None) -> AdminGrants:
    """The capabilities granted to ``target``: ``entries.<id>.capabilities_grant`` of the
    daemon's ``extensions.yaml`` in ``config_dir`` when that file exists, else what the
    companion declares (an operator granting exactly what the microapp asks for).

    Raises :class:`ConfigError` (exit 2) when ``extensions.yaml`` is unreadable, not YAML,
    or its grant is not a list of names.
    """
    declared = frozenset(target.admin_required) | frozenset(target.admin_optional)
    path = config_dir / EXTENSIONS_CONFIG if config_dir is not None else None
    if path is None or not path.is_file():
        return AdminGrants(declared, "the capabilities nexo-plugin.toml declares")
    # The daemon reads the file whole: one larger than the cap is refused, not read in part.
    raw = read_config_file(path, _MAX_CONFIG_BYTES)
    from nexo_pkg.lint.daemon_files import extension_skipped, extensions_as_read  # noqa: PLC0415

    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ConfigError(f"{path} is not UTF-8 text") from error
    # The daemon's schema migration step reads the file as written, then its loader reads it
    # with its `${VAR}` placeholders substituted: both must be YAML, and the second is used.
    for parsed in (parse_yaml(text), extensions_as_read(text)):
        if parsed.problems:
            problem = parsed.problems[0]
            raise ConfigError(
                f"{path}:{problem.span.start.line}: not valid YAML: {problem.message}; "
                "`nexo plugin lint --config` shows every problem"
            )
    # `extensions:` is the file's one top-level key (`types/extensions.rs:9-12`).
    skipped = extension_skipped(parsed, target.extension_id)
    not_loaded = f"{path} {skipped}, so the daemon never spawns this microapp" if skipped else None
    grant = parsed.data
    for key in ("extensions", "entries", target.extension_id, "capabilities_grant"):
        grant = grant.get(key) if isinstance(grant, dict) else None
    if grant is not None and (
        not isinstance(grant, list) or not all(isinstance(item, str) for item in grant)
    ):
        # serde refuses it and the daemon does not start; `nexo plugin lint` says where.
        raise ConfigError(
            f"{path}: entries.{target.extension_id}.capabilities_grant must be a list of "
            "capability names (the daemon does not start otherwise); run `nexo plugin lint "
            "--config` for details"
        )
    names = frozenset(grant or [])
    return AdminGrants(
        names, f"entries.{target.extension_id}.capabilities_grant of {path}", not_loaded
    )
