"""Tolerant readers of a microapp's two manifests: an extension-shaped ``plugin.toml``
(:class:`MicroappManifest`) and its companion ``nexo-plugin.toml`` (:class:`Companion`).

The readers never raise on a wrong type (they leave the value out), so lint, ``check`` and the
scaffold can share them; :mod:`nexo_pkg.manifest.microapp` has the daemon's constants.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from nexo_pkg.manifest.microapp import CAPABILITY_KINDS, DEFAULT_HEALTH_PATH, DEFAULT_HTTP_BIND

__all__ = [
    "Companion",
    "HttpServer",
    "MicroappManifest",
    "companion_from_data",
    "microapp_from_data",
]


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _names(value: Any) -> tuple[str, ...]:
    return tuple(item for item in value if isinstance(item, str)) if isinstance(value, list) else ()


def _table(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


@dataclass(frozen=True)
class MicroappManifest:
    """What the daemon reads from an extension-shaped ``plugin.toml``.

    Values of the wrong type are left at their defaults; ``transport_kind`` is ``None`` when
    ``[transport]`` or its ``kind`` is missing, ``command`` when the transport has none.
    """

    id: str
    version: str | None = None
    name: str | None = None
    description: str | None = None
    min_agent_version: str | None = None
    priority: int = 0
    capabilities: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    transport_kind: str | None = None
    command: str | None = None
    args: tuple[str, ...] = ()
    requires_bins: tuple[str, ...] = ()
    requires_env: tuple[str, ...] = ()
    context_passthrough: bool = False

    @property
    def tools(self) -> tuple[str, ...]:
        """``[capabilities] tools`` (informational: the daemon registers the handshake's)."""
        return self.capabilities.get("tools", ())

    @property
    def hooks(self) -> tuple[str, ...]:
        """``[capabilities] hooks``."""
        return self.capabilities.get("hooks", ())


def microapp_from_data(data: Mapping[str, Any]) -> MicroappManifest | None:
    """The model of parsed ``plugin.toml`` data, or ``None`` when it has no string ``plugin.id``."""
    plugin = _table(data.get("plugin"))
    plugin_id = _text(plugin.get("id"))
    if plugin_id is None:
        return None
    capabilities = _table(data.get("capabilities"))
    transport = _table(data.get("transport"))
    requires = _table(data.get("requires"))
    priority = plugin.get("priority")
    return MicroappManifest(
        id=plugin_id,
        version=_text(plugin.get("version")),
        name=_text(plugin.get("name")),
        description=_text(plugin.get("description")),
        min_agent_version=_text(plugin.get("min_agent_version")),
        priority=priority if isinstance(priority, int) and not isinstance(priority, bool) else 0,
        capabilities={kind: _names(capabilities.get(kind)) for kind in CAPABILITY_KINDS},
        transport_kind=_text(transport.get("kind")),
        command=_text(transport.get("command")),
        args=_names(transport.get("args")),
        requires_bins=_names(requires.get("bins")),
        requires_env=_names(requires.get("env")),
        context_passthrough=_table(data.get("context")).get("passthrough") is True,
    )


@dataclass(frozen=True)
class HttpServer:
    """``[plugin.capabilities.http_server]`` of the companion (defaults as the daemon's)."""

    port: int | None
    bind: str = DEFAULT_HTTP_BIND
    token_env: str | None = None
    health_path: str = DEFAULT_HEALTH_PATH


@dataclass(frozen=True)
class Companion:
    """What the daemon reads from a microapp's ``nexo-plugin.toml``."""

    id: str | None
    admin_required: tuple[str, ...] = ()
    admin_optional: tuple[str, ...] = ()
    http_server: HttpServer | None = None

    @property
    def admin_declared(self) -> tuple[str, ...]:
        """Required then optional admin capabilities."""
        return self.admin_required + self.admin_optional


def companion_from_data(data: Mapping[str, Any]) -> Companion:
    """The model of parsed ``nexo-plugin.toml`` data (only the parts the extension host uses)."""
    plugin = _table(data.get("plugin"))
    capabilities = _table(plugin.get("capabilities"))
    admin = _table(capabilities.get("admin"))
    http: HttpServer | None = None
    section = capabilities.get("http_server")
    if isinstance(section, Mapping):
        port = section.get("port")
        http = HttpServer(
            port=port if isinstance(port, int) and not isinstance(port, bool) else None,
            bind=_text(section.get("bind")) or DEFAULT_HTTP_BIND,
            token_env=_text(section.get("token_env")),
            health_path=_text(section.get("health_path")) or DEFAULT_HEALTH_PATH,
        )
    return Companion(
        id=_text(plugin.get("id")),
        admin_required=_names(admin.get("required")),
        admin_optional=_names(admin.get("optional")),
        http_server=http,
    )
