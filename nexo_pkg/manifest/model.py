"""The typed model of a manifest: what nexo-pkg's tools read from it, read in one place.

docs/architecture.md ("The manifest model") says what it builds, when it raises
:class:`ManifestModelError` and how tolerantly it reads the rest. The daemon's shapes are those
of its manifest crate (``crates/plugin-manifest/src/manifest.rs``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, TypeVar, cast

from nexo_pkg.core.errors import NexoError
from nexo_pkg.core.kinds import ErrorKind
from nexo_pkg.core.toml_text import toml_type_name
from nexo_pkg.core.version import VersionError, parse_version
from nexo_pkg.manifest.microapp import DEFAULT_HEALTH_PATH, DEFAULT_HTTP_BIND, is_extension_shape
from nexo_pkg.manifest.read import ManifestTOMLError, read_manifest_text
from nexo_pkg.manifest.rust_text import is_blank

if TYPE_CHECKING:
    from nexo_pkg.manifest.microapp_model import HttpServer, MicroappManifest

__all__ = [
    "EXTENDS_KEYS",
    "MAX_MODEL_BYTES",
    "Capabilities",
    "Contracts",
    "Entrypoint",
    "Extends",
    "ManifestModel",
    "ManifestModelError",
    "MicroappModel",
    "PluginManifest",
    "PluginSection",
    "Requires",
    "Sandbox",
    "manifest_from_data",
    "manifest_from_text",
    "plugin_manifest_from_data",
]

MAX_MODEL_BYTES = 1024 * 1024
"""Manifest text above this many UTF-8 bytes is refused unparsed (real ones are a few KiB)."""

EXTENDS_KEYS: tuple[str, ...] = ("tools", "channels", "llm_providers", "memory_backends", "hooks")
"""The lists of ``[plugin.extends]``, in the daemon's field order."""


class ManifestModelError(NexoError):
    """The document names no plugin the daemon could read: one line saying why.

    ``key`` is the dotted key at fault (``plugin``, ``plugin.id``, ``plugin.version``), or
    ``None`` when the text itself could not be read (too large, not TOML); ``plugin_id`` is
    the string ``plugin.id`` when the fault lies after it (the version)."""

    kind = ErrorKind.MANIFEST_INVALID.value
    exit_code = ErrorKind.MANIFEST_INVALID.exit_code

    def __init__(
        self, message: str, *, key: str | None = None, plugin_id: str | None = None
    ) -> None:
        super().__init__(message, details={"key": key} if key else None)
        self.key = key
        self.plugin_id = plugin_id


@dataclass(frozen=True)
class Entrypoint:
    """``[plugin.entrypoint]``: ``command`` is ``None`` for an in-tree plugin (no subprocess)."""

    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)

    @property
    def is_subprocess(self) -> bool:
        """Whether the daemon spawns ``command``: ``EntrypointSection::is_subprocess``
        (``crates/plugin-manifest/src/manifest.rs``), a command that is not blank."""
        return self.command is not None and not is_blank(self.command)


@dataclass(frozen=True)
class Extends:
    """``[plugin.extends]``: the ids a plugin adds to the daemon's registries."""

    tools: tuple[str, ...] = ()
    channels: tuple[str, ...] = ()
    llm_providers: tuple[str, ...] = ()
    memory_backends: tuple[str, ...] = ()
    hooks: tuple[str, ...] = ()

    def items(self) -> tuple[tuple[str, tuple[str, ...]], ...]:
        """``(key, ids)`` of every list, in :data:`EXTENDS_KEYS` order."""
        return tuple((key, getattr(self, key)) for key in EXTENDS_KEYS)


@dataclass(frozen=True)
class Sandbox:
    """``[plugin.sandbox]``; ``drop_user`` is ``None`` when the manifest does not say."""

    enabled: bool = False
    network: str = "deny"
    fs_read_paths: tuple[str, ...] = ()
    fs_write_paths: tuple[str, ...] = ()
    drop_user: bool | None = None


@dataclass(frozen=True)
class Capabilities:
    """``[plugin.capabilities]``: what the plugin provides and the admin RPCs it asks for."""

    provides: tuple[str, ...] = ()
    skills: tuple[str, ...] = ()
    admin_required: tuple[str, ...] = ()
    admin_optional: tuple[str, ...] = ()
    http_server: HttpServer | None = None


@dataclass(frozen=True)
class Requires:
    """``[plugin.requires]``: what the host must have for the plugin to start."""

    bins: tuple[str, ...] = ()
    env: tuple[str, ...] = ()
    features: tuple[str, ...] = ()
    nexo_capabilities: tuple[str, ...] = ()


@dataclass(frozen=True)
class Contracts:
    """``[plugin.contracts]``: contract names provided and consumed (not validated)."""

    provides: tuple[str, ...] = ()
    consumes: tuple[str, ...] = ()


@dataclass(frozen=True)
class PluginSection:
    """``[plugin]``: ``id`` and ``version`` are checked, the rest read tolerantly."""

    id: str
    version: str
    name: str = ""
    description: str = ""
    min_nexo_version: str | None = None
    enabled_by_default: bool = False
    entrypoint: Entrypoint = field(default_factory=Entrypoint)
    extends: Extends = field(default_factory=Extends)
    sandbox: Sandbox = field(default_factory=Sandbox)
    capabilities: Capabilities = field(default_factory=Capabilities)
    requires: Requires = field(default_factory=Requires)
    contracts: Contracts = field(default_factory=Contracts)
    #: ``kind`` of every ``[[plugin.channels.register]]`` entry that has a string one.
    channel_kinds: tuple[str, ...] = ()


@dataclass(frozen=True)
class PluginManifest:
    """A plugin manifest (``nexo-plugin.toml``, or a ``plugin.toml`` of the same shape)."""

    plugin: PluginSection
    #: The root ``manifest_version`` when it is an integer, else ``None``.
    manifest_version: int | None = None
    #: Dotted key paths whose values had a type the daemon would not deserialise; they were
    #: left at their defaults. Lint says why; a reader that must not guess refuses them.
    invalid: frozenset[str] = frozenset()

    @property
    def id(self) -> str:
        return self.plugin.id

    @property
    def version(self) -> str:
        return self.plugin.version


@dataclass(frozen=True)
class MicroappModel:
    """An extension-shaped ``plugin.toml`` (a microapp), with its id and version checked.

    ``extension`` is everything the daemon's extension host reads
    (:class:`~nexo_pkg.manifest.microapp_model.MicroappManifest`)."""

    extension: MicroappManifest
    version: str

    @property
    def id(self) -> str:
        return self.extension.id


ManifestModel = PluginManifest | MicroappModel
"""What :func:`manifest_from_data` builds: a plugin's manifest or a microapp's."""


_T = TypeVar("_T")


class _Reader:
    """Typed reads of one document that leave a wrongly typed value out and note its path.

    ``path`` is the dotted key path of the value read; its last part is the key in ``parent``.
    """

    def __init__(self) -> None:
        self.invalid: list[str] = []

    def _typed(self, parent: Mapping[str, Any], path: str, kind: type[_T]) -> _T | None:
        value = parent.get(path.rpartition(".")[2])
        if value is None or isinstance(value, kind):
            return value
        self.invalid.append(path)
        return None

    def table(self, parent: Mapping[str, Any], path: str) -> Mapping[str, Any]:
        # isinstance takes the abstract Mapping, which mypy refuses for type[_T].
        return self._typed(parent, path, Mapping) or {}  # type: ignore[type-abstract]

    def text(self, parent: Mapping[str, Any], path: str) -> str | None:
        return self._typed(parent, path, str)

    def flag(self, parent: Mapping[str, Any], path: str) -> bool | None:
        return self._typed(parent, path, bool)

    def strings(self, parent: Mapping[str, Any], path: str) -> tuple[str, ...]:
        """An array of strings; a non-string item is dropped, a non-array gives ``()``."""
        value: list[Any] = self._typed(parent, path, list) or []
        kept = tuple(item for item in value if isinstance(item, str))
        if len(kept) != len(value):
            self.invalid.append(path)
        return kept

    def string_table(self, parent: Mapping[str, Any], path: str) -> Mapping[str, str]:
        """A table of string values; a non-string value is dropped."""
        table = self.table(parent, path)
        kept = {name: value for name, value in table.items() if isinstance(value, str)}
        if len(kept) != len(table):
            self.invalid.append(path)
        return MappingProxyType(kept)


def _identity_text(plugin: Mapping[str, Any], key: str) -> str:
    value = plugin.get(key)
    if value is None:
        raise ManifestModelError(f"the manifest has no `plugin.{key}`", key=f"plugin.{key}")
    if not isinstance(value, str):
        raise ManifestModelError(
            f"`plugin.{key}` is {toml_type_name(value)}, not a string", key=f"plugin.{key}"
        )
    return value


def _identity(plugin: Mapping[str, Any]) -> tuple[str, str]:
    """``(id, version)`` of ``[plugin]``: a string id, then a SemVer version string."""
    plugin_id = _identity_text(plugin, "id")
    try:
        version = _identity_text(plugin, "version")
        parse_version(version)
    except ManifestModelError as error:
        raise ManifestModelError(error.message, key=error.key, plugin_id=plugin_id) from None
    except VersionError as error:
        raise ManifestModelError(
            f"`plugin.version` {_shown(version)} is not a SemVer version: {error}",
            key="plugin.version",
            plugin_id=plugin_id,
        ) from error
    return plugin_id, version


_SHOWN_CHARACTERS = 40


def _shown(value: str) -> str:
    """``value`` quoted for a one-line message: escaped by ``repr``, a long one shortened."""
    if len(value) <= _SHOWN_CHARACTERS:
        return repr(value)
    return f"{value[:_SHOWN_CHARACTERS]!r}… ({len(value)} characters)"


def _plugin_table(data: Mapping[str, Any]) -> Mapping[str, Any]:
    plugin = data.get("plugin")
    if plugin is None:
        raise ManifestModelError("the manifest has no [plugin] table", key="plugin")
    if not isinstance(plugin, Mapping):
        raise ManifestModelError(f"`plugin` is {toml_type_name(plugin)}, not a table", key="plugin")
    return plugin


def _http_server(read: _Reader, capabilities: Mapping[str, Any]) -> HttpServer | None:
    path = "plugin.capabilities.http_server"
    section = read.table(capabilities, path)
    if not section:
        return None
    port = section.get("port")
    if not isinstance(port, int) or isinstance(port, bool):
        port = None
        read.invalid.append(f"{path}.port")
    from nexo_pkg.manifest.microapp_model import HttpServer  # noqa: PLC0415 - rare section

    return HttpServer(
        port=port,
        bind=read.text(section, f"{path}.bind") or DEFAULT_HTTP_BIND,
        token_env=read.text(section, f"{path}.token_env"),
        health_path=read.text(section, f"{path}.health_path") or DEFAULT_HEALTH_PATH,
    )


def _plugin_section(read: _Reader, plugin: Mapping[str, Any]) -> PluginSection:
    plugin_id, version = _identity(plugin)

    def sub(key: str) -> Mapping[str, Any]:
        return read.table(plugin, f"plugin.{key}")

    entrypoint, extends, sandbox = sub("entrypoint"), sub("extends"), sub("sandbox")
    capabilities, requires, contracts = sub("capabilities"), sub("requires"), sub("contracts")
    admin = read.table(capabilities, "plugin.capabilities.admin")
    register = sub("channels").get("register")
    return PluginSection(
        id=plugin_id,
        version=version,
        name=read.text(plugin, "plugin.name") or "",
        description=read.text(plugin, "plugin.description") or "",
        min_nexo_version=read.text(plugin, "plugin.min_nexo_version"),
        enabled_by_default=read.flag(plugin, "plugin.enabled_by_default") is True,
        entrypoint=Entrypoint(
            command=read.text(entrypoint, "plugin.entrypoint.command"),
            args=read.strings(entrypoint, "plugin.entrypoint.args"),
            env=read.string_table(entrypoint, "plugin.entrypoint.env"),
        ),
        extends=Extends(
            **{key: read.strings(extends, f"plugin.extends.{key}") for key in EXTENDS_KEYS}
        ),
        sandbox=Sandbox(
            enabled=read.flag(sandbox, "plugin.sandbox.enabled") is True,
            network=read.text(sandbox, "plugin.sandbox.network") or "deny",
            fs_read_paths=read.strings(sandbox, "plugin.sandbox.fs_read_paths"),
            fs_write_paths=read.strings(sandbox, "plugin.sandbox.fs_write_paths"),
            drop_user=read.flag(sandbox, "plugin.sandbox.drop_user"),
        ),
        capabilities=Capabilities(
            provides=read.strings(capabilities, "plugin.capabilities.provides"),
            skills=read.strings(capabilities, "plugin.capabilities.skills"),
            admin_required=read.strings(admin, "plugin.capabilities.admin.required"),
            admin_optional=read.strings(admin, "plugin.capabilities.admin.optional"),
            http_server=_http_server(read, capabilities),
        ),
        requires=Requires(
            **{
                key: read.strings(requires, f"plugin.requires.{key}")
                for key in ("bins", "env", "features", "nexo_capabilities")
            }
        ),
        contracts=Contracts(
            provides=read.strings(contracts, "plugin.contracts.provides"),
            consumes=read.strings(contracts, "plugin.contracts.consumes"),
        ),
        channel_kinds=tuple(
            entry["kind"]
            for entry in (register if isinstance(register, list) else ())
            if isinstance(entry, Mapping) and isinstance(entry.get("kind"), str)
        ),
    )


def manifest_from_data(data: Mapping[str, Any]) -> ManifestModel:
    """The model of a parsed manifest ``data``: a :class:`MicroappModel` when it has the
    extension shape, else a :class:`PluginManifest` (:func:`plugin_manifest_from_data`).

    Raises :class:`ManifestModelError` (and nothing else) when ``[plugin]`` is missing or not a
    table, ``plugin.id`` is missing or not a string, or ``plugin.version`` is missing or not a
    SemVer string. Wrongly typed optional values are left at their defaults (see
    :attr:`PluginManifest.invalid`); unknown keys are ignored.
    """
    if not is_extension_shape(data):
        return plugin_manifest_from_data(data)
    _, version = _identity(_plugin_table(data))
    from nexo_pkg.manifest.microapp_model import microapp_from_data  # noqa: PLC0415

    # Not None: _identity refused a `plugin.id` that is not a string, its one reason for None.
    return MicroappModel(cast("MicroappManifest", microapp_from_data(data)), version)


def plugin_manifest_from_data(data: Mapping[str, Any]) -> PluginManifest:
    """``data`` read as a plugin manifest whatever its shape (for a reader that has already
    told a microapp's apart); raises as :func:`manifest_from_data` does."""
    read = _Reader()
    section = _plugin_section(read, _plugin_table(data))
    version = data.get("manifest_version")
    return PluginManifest(
        section,
        version if isinstance(version, int) and not isinstance(version, bool) else None,
        frozenset(read.invalid),
    )


def manifest_from_text(text: str, *, max_bytes: int = MAX_MODEL_BYTES) -> ManifestModel:
    """Parse manifest ``text`` and build its model.

    Raises :class:`ManifestModelError` when the text is longer than ``max_bytes`` UTF-8 bytes
    (it is not parsed), is not TOML (or nests too deeply to parse), or
    :func:`manifest_from_data` refuses it.
    """
    if len(text) > max_bytes or len(text.encode("utf-8", errors="surrogatepass")) > max_bytes:
        raise ManifestModelError(
            f"the manifest is larger than {max_bytes} bytes; nexo-pkg does not read it"
        )
    try:
        data = read_manifest_text(text)
    except ManifestTOMLError as error:
        raise ManifestModelError(f"the manifest is not TOML: {error}") from error
    return manifest_from_data(data)
