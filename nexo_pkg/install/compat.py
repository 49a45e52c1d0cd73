"""Compatibility with the daemon a plugin is installed for: ``min_nexo_version``.

The daemon refuses at boot a plugin whose ``[plugin] min_nexo_version`` requirement (Cargo
semantics) its own version does not satisfy, ignoring its own pre-release tag (a 0.1.6-rc3
daemon satisfies ``>=0.1.0``); ``lint`` reports the same as NX105. ``install`` and ``upgrade``
compare before downloading, from a release's manifest asset, and again from the archive's own
manifest, so an incompatible plugin is ``incompatible`` (exit 1) unless ``--force``. Without
a tag, the newest older release or registry version that admits the daemon is installed
instead, chosen by the source without downloading any tarball (``Source.compatible`` asked
with :class:`Admitting`).

The daemon's version comes from ``--nexo-version`` or ``NEXO_DAEMON_VERSION`` only: the daemon
records its version in no file of its configuration (its ``CARGO_PKG_VERSION`` is compiled in
and printed by ``nexo --version``).

Host requirements (``[plugin.requires]``, ``[plugin.contracts]``) are compared the way the
daemon compares them at boot, which is only ``requires.nexo_capabilities``: each name not in
the set of capabilities the daemon wired is a ``Warn`` diagnostic
(``RequiredCapabilityNotGranted``) and the plugin is still loaded
(``crates/core/src/agent/nexo_plugin_registry/capability_aggregator.rs:148-163``; its doctor
exits 0 on warnings, ``doctor_render.rs:36-55``). So an unmet capability is a warning of
``install`` and ``doctor`` (:func:`unmet_host_requirements`), never a refusal. The set is
``broker``, ``memory`` and ``sessions`` always, and ``long_term_memory`` when the daemon's
``memory.yaml`` sets ``long_term.backend`` (``src/main.rs:6903-6916``). ``requires.bins``,
``requires.env`` and ``requires.features`` of a plugin manifest, and ``[plugin.contracts]``,
are read by no code of the daemon's plugin registry (only the legacy extension runtime checks
its own ``[requires] bins/env``), so nothing is compared for them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nexo_pkg.core.errors import NexoError, UsageError
from nexo_pkg.core.version import VersionError, parse_version
from nexo_pkg.core.versionreq import parse_version_req

if TYPE_CHECKING:
    from collections.abc import Callable

    from nexo_pkg.manifest.model import PluginManifest

DAEMON_VERSION_ENV = "NEXO_DAEMON_VERSION"

ALWAYS_WIRED_CAPABILITIES = frozenset({"broker", "memory", "sessions"})
"""What every daemon wires (``build_available_capabilities``, ``src/main.rs:6903-6916``)."""

LONG_TERM_MEMORY = "long_term_memory"
"""Wired only when ``memory.yaml`` sets a non-empty ``long_term.backend``."""

DEFAULT_LONG_TERM_BACKEND = "sqlite"
"""``long_term.backend`` when ``memory.yaml`` leaves it out (``memory.rs:216-224``)."""

MEMORY_FILE = "memory.yaml"
MAX_MEMORY_CONFIG_BYTES = 1024 * 1024


@dataclass(frozen=True)
class HostRequirement:
    """One host requirement of a manifest the daemon would find unmet: the key, its value and
    why (the daemon warns at boot and loads the plugin anyway)."""

    requirement: str
    value: str
    why: str

    @property
    def message(self) -> str:
        return (
            f"[plugin.requires] {self.requirement.removeprefix('requires.')} `{self.value}`: "
            f"{self.why}; the daemon warns at boot (RequiredCapabilityNotGranted) and loads "
            "the plugin without it"
        )

    def to_json(self) -> dict[str, Any]:
        return {"requirement": self.requirement, "value": self.value, "why": self.why}


def unmet_host_requirements(
    model: PluginManifest, *, wired: frozenset[str] | None = None
) -> tuple[HostRequirement, ...]:
    """The ``requires.nexo_capabilities`` entries of ``model`` the daemon would not find wired,
    as ``aggregate_plugin_gates`` decides (``capability_aggregator.rs:148-163``, see above).
    ``wired`` is what it wires (:func:`wired_capabilities`); ``None`` when unknown: then only
    names no daemon wires are unmet, and ``long_term_memory`` is undecided. Never raises."""
    unmet: list[HostRequirement] = []
    for name in dict.fromkeys(model.plugin.requires.nexo_capabilities):
        if name in ALWAYS_WIRED_CAPABILITIES or (wired is not None and name in wired):
            continue
        if name == LONG_TERM_MEMORY:
            if wired is None:
                continue
            why = f"the daemon's {MEMORY_FILE} sets no long_term.backend, so it is not wired"
        else:
            why = (
                "no daemon wires a capability of that name (it wires broker, memory, sessions, "
                f"and long_term_memory when {MEMORY_FILE} sets long_term.backend)"
            )
        unmet.append(HostRequirement("requires.nexo_capabilities", name, why))
    return tuple(unmet)


def wired_capabilities(config_dir: Path) -> frozenset[str] | None:
    """The capabilities the daemon configured in ``config_dir`` wires
    (``build_available_capabilities``, ``src/main.rs:6903-6916``): the always-wired ones, and
    ``long_term_memory`` when ``memory.yaml``'s ``long_term.backend`` is a non-empty string
    (absent, it is ``sqlite``: ``crates/config/src/types/memory.rs:215-224``). ``None`` when
    ``memory.yaml`` is absent, has no ``long_term`` mapping or cannot be read as the daemon
    reads it (the daemon does not boot then, so nothing can be decided). Never raises."""
    from nexo_pkg.core.files import read_config_file  # noqa: PLC0415
    from nexo_pkg.install.config import read_yaml_config  # noqa: PLC0415

    path = config_dir / MEMORY_FILE
    if not path.is_file():
        return None
    try:
        document = read_yaml_config(path, read_config_file(path, MAX_MEMORY_CONFIG_BYTES))
    except (NexoError, OSError):
        return None
    long_term = document.get("long_term") if isinstance(document, dict) else None
    if not isinstance(long_term, dict):
        return None  # `long_term` is required: the daemon does not boot
    backend = long_term.get("backend", DEFAULT_LONG_TERM_BACKEND)
    if not isinstance(backend, str):
        return None
    if backend:
        return ALWAYS_WIRED_CAPABILITIES | {LONG_TERM_MEMORY}
    return ALWAYS_WIRED_CAPABILITIES


@dataclass(frozen=True)
class DaemonVersion:
    """The version of the daemon plugins are installed for, and where it was read."""

    version: str
    source: str


def daemon_version(flag: str | None) -> DaemonVersion | None:
    """``--nexo-version``, else ``NEXO_DAEMON_VERSION``, else ``None`` (not compared).

    Raises ``usage`` for a value that is not a version as ``semver::Version`` parses the
    daemon's own (no ``v`` prefix, no surrounding whitespace, no leading zeros), as ``lint``
    and ``check`` refuse it."""
    if flag:
        found = DaemonVersion(flag, "--nexo-version")
    elif value := os.environ.get(DAEMON_VERSION_ENV, ""):
        found = DaemonVersion(value, DAEMON_VERSION_ENV)
    else:
        return None
    try:
        parse_version(found.version)
    except VersionError as exc:
        raise UsageError(f"{found.source} {found.version!r} is not a version: {exc}") from exc
    return found


def min_nexo_version(manifest_text: str) -> str | None:
    """The ``[plugin] min_nexo_version`` string of a manifest, or ``None`` when it has none or
    is no manifest the model reads (a microapp's has none). Never raises."""
    # The manifest model is loaded for a manifest's text only: `--nexo-version` alone (sync's
    # options) never needs it.
    from nexo_pkg.manifest.model import (  # noqa: PLC0415
        ManifestModelError,
        PluginManifest,
        manifest_from_text,
    )
    from nexo_pkg.manifest.names import MAX_MANIFEST_BYTES  # noqa: PLC0415

    try:
        model = manifest_from_text(manifest_text, max_bytes=MAX_MANIFEST_BYTES)
    except ManifestModelError:
        return None
    return model.plugin.min_nexo_version if isinstance(model, PluginManifest) else None


def _requirement(manifest_text: str, daemon: DaemonVersion) -> tuple[str, bool] | None:
    """The manifest's ``min_nexo_version`` and whether it admits the daemon; ``None`` when it
    has none, is no manifest the model reads (:func:`min_nexo_version`) or the requirement
    does not parse (left to the manifest checks)."""
    requirement_text = min_nexo_version(manifest_text)
    if requirement_text is None:
        return None
    try:
        requirement = parse_version_req(requirement_text)
        current = parse_version(daemon.version).without_prerelease()
    except VersionError:
        return None
    return requirement_text, requirement.matches(current)


def excluding_requirement(manifest_text: str, daemon: DaemonVersion) -> str | None:
    """The manifest's ``min_nexo_version`` when it does not admit the daemon (as
    :func:`check_compatible` refuses it); ``None`` when it admits it or is left to the
    manifest checks. Never raises."""
    found = _requirement(manifest_text, daemon)
    return found[0] if found is not None and not found[1] else None


def check_compatible(
    manifest_text: str,
    daemon: DaemonVersion,
    *,
    where: str,
    remedy: str | Callable[[], str] = "install it anyway with `nexo plugin install … --force`",
) -> None:
    """Raise ``incompatible`` when the manifest's ``min_nexo_version`` does not admit the
    daemon's version (the message ends with ``remedy``, what else the user can do; a
    callable is asked for it only then). A
    manifest without the key, or one the model does not read (:func:`min_nexo_version`) or
    whose requirement does not parse, is left to the manifest checks (nothing is raised)."""
    found = _requirement(manifest_text, daemon)
    if found is None or found[1]:
        return
    requirement_text = found[0]
    if callable(remedy):
        remedy = remedy()
    raise NexoError(
        f"{where} needs a daemon matching min_nexo_version `{requirement_text}`; the daemon is "
        f"{daemon.version} ({daemon.source}). Upgrade the daemon, or {remedy} (the daemon "
        "will refuse to load it)",
        kind="incompatible",
        details={
            "min_nexo_version": requirement_text,
            "nexo_version": daemon.version,
            "nexo_version_source": daemon.source,
        },
    )


@dataclass(frozen=True)
class Admitting:
    """Whether a manifest's ``min_nexo_version`` admits ``daemon``: the
    :class:`~nexo_pkg.sources.base.Admits` a source is asked to choose a version with (a
    manifest that does not say, or is not read by the model, admits it: its archive decides)."""

    version: DaemonVersion

    @property
    def daemon(self) -> str:
        return f"{self.version.version} ({self.version.source})"

    def __call__(self, manifest_text: str) -> bool:
        return excluding_requirement(manifest_text, self.version) is None
