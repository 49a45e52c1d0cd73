"""What a plugin asks for, taken from its manifest, and the confirmation screen built from it."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nexo_pkg.core.terminal import printable
from nexo_pkg.install.compat import HostRequirement, unmet_host_requirements
from nexo_pkg.manifest.model import ManifestModel, MicroappModel
from nexo_pkg.manifest.rules_sandbox import HOST_NET_ENV
from nexo_pkg.manifest.rust_text import is_blank
from nexo_pkg.trust.api import SignatureOutcome


@dataclass(frozen=True)
class ManifestSummary:
    """The parts of ``nexo-plugin.toml`` an operator should see before installing."""

    plugin_id: str
    version: str
    name: str = ""
    description: str = ""
    command: str | None = None
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    extends: dict[str, list[str]] = field(default_factory=dict)
    sandbox_enabled: bool = False
    network: str = "deny"
    fs_read_paths: tuple[str, ...] = ()
    fs_write_paths: tuple[str, ...] = ()
    capabilities: tuple[str, ...] = ()
    #: ``[plugin.capabilities.admin]``: the admin RPCs the plugin asks the operator to grant.
    admin_required: tuple[str, ...] = ()
    admin_optional: tuple[str, ...] = ()
    #: Host requirements the daemon would warn about at boot, as far as this machine can
    #: tell without the daemon's configuration (:func:`unmet_host_requirements`).
    host_requirements: tuple[HostRequirement, ...] = ()
    #: ``[plugin] min_nexo_version`` as the tarball's manifest says it (``info`` shows it).
    min_nexo_version: str | None = None
    #: An extension-shaped ``plugin.toml``: the daemon's extension host loads it, not its
    #: plugin discovery.
    microapp: bool = False
    #: One sentence per manifest of the archive root that the one read shadows (the daemon
    #: loads ``nexo-plugin.toml`` first): edits to it would silently have no effect.
    shadowed_manifests: tuple[str, ...] = ()

    @property
    def operator_must_allow(self) -> tuple[str, ...]:
        """Settings of the daemon's runtime this plugin needs: not the installer's to demand
        (it installs the plugin), but the daemon refuses to run it without them."""
        if self.sandbox_enabled and self.network == "host":
            return (f"{HOST_NET_ENV}=1",)
        return ()

    @property
    def operator_warnings(self) -> tuple[str, ...]:
        unmet = (
            *self.shadowed_manifests,
            *(requirement.message for requirement in self.host_requirements),
        )
        if not self.operator_must_allow:
            return unmet
        return (
            'the plugin asks for host networking (network = "host"): the daemon runs it only '
            f"where the operator allows it with {HOST_NET_ENV}=1 in the daemon's environment",
            *unmet,
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.plugin_id,
            "version": self.version,
            "name": self.name,
            "description": self.description,
            "entrypoint": {"command": self.command, "args": list(self.args)},
            "env": dict(self.env),
            "extends": {key: list(value) for key, value in self.extends.items()},
            "sandbox": {
                "enabled": self.sandbox_enabled,
                "network": self.network,
                "fs_read_paths": list(self.fs_read_paths),
                "fs_write_paths": list(self.fs_write_paths),
            },
            "operator_must_allow": list(self.operator_must_allow),
            "capabilities": list(self.capabilities),
            "admin_capabilities": {
                "required": list(self.admin_required),
                "optional": list(self.admin_optional),
            },
            "host_requirements": [item.to_json() for item in self.host_requirements],
        }


def summarise_manifest(model: ManifestModel) -> ManifestSummary:
    """The summary fields of a manifest's model (a microapp's command is its ``[transport]``
    one). Never raises."""
    if isinstance(model, MicroappModel):
        extension = model.extension
        command = extension.command
        return ManifestSummary(
            plugin_id=model.id,
            version=model.version,
            name=extension.name or "",
            description=extension.description or "",
            command=command if command is not None and not is_blank(command) else None,
            args=extension.args,
            # `[capabilities]`: what the microapp declares it provides, kind by kind.
            capabilities=tuple(
                f"{name} ({kind.removesuffix('s')})"
                for kind, names in extension.capabilities.items()
                for name in names
            ),
            microapp=True,
        )
    plugin = model.plugin
    return ManifestSummary(
        plugin_id=plugin.id,
        version=plugin.version,
        name=plugin.name,
        description=plugin.description,
        command=plugin.entrypoint.command if plugin.entrypoint.is_subprocess else None,
        args=plugin.entrypoint.args,
        env=dict(plugin.entrypoint.env),
        extends={key: list(ids) for key, ids in plugin.extends.items() if ids},
        sandbox_enabled=plugin.sandbox.enabled,
        network=plugin.sandbox.network,
        fs_read_paths=plugin.sandbox.fs_read_paths,
        fs_write_paths=plugin.sandbox.fs_write_paths,
        capabilities=plugin.capabilities.provides,
        admin_required=plugin.capabilities.admin_required,
        admin_optional=plugin.capabilities.admin_optional,
        host_requirements=unmet_host_requirements(model),
        min_nexo_version=plugin.min_nexo_version,
    )


@dataclass(frozen=True)
class InstallPlan:
    """Everything checked so far: shown to the operator, then installed as is."""

    summary: ManifestSummary
    source_display: str
    source: dict[str, Any]
    target: str
    asset_name: str
    sha256: str
    checksums: tuple[str, ...]
    signature: SignatureOutcome
    destination: str
    #: The vendored packages the tarball's SBOM lists (``None``: it carries no SBOM).
    vendored: tuple[dict[str, Any], ...] | None = None
    #: Directories of the install root without a receipt whose manifest is the same plugin:
    #: the daemon would find the id twice (no install, so nothing replaces them).
    shadowing: tuple[str, ...] = ()
    #: Why the daemon's discovery would never meet the installed directory (its root is not
    #: one it walks: :class:`~nexo_pkg.install.reach.DaemonReach`); ``None`` when it would.
    unreached: str | None = None
    #: The same for the fallback root ``$NEXO_HOME/state/plugins`` when no daemon is
    #: configured: a note on the terminal, as the reference installer's own line when it
    #: falls back (``src/plugin_install.rs:156-164``), not a warning of the install.
    fallback_note: str | None = None
    #: The installed trees of the plugin this install replaces (another version, or the same
    #: version with ``--force``): shown before the operator says yes, never a silent loss.
    replacing: tuple[str, ...] = ()
    #: The one of ``replacing`` kept out of the daemon's sight for ``nexo plugin rollback``.
    keeping: str | None = None
    #: ``keeping``'s receipt holds no file hashes (another tool installed it): kept, but
    #: ``rollback`` cannot check it, so it cannot bring it back.
    keeping_unchecked: bool = False

    @property
    def plugin_id(self) -> str:
        return self.summary.plugin_id

    @property
    def version(self) -> str:
        return self.summary.version

    @property
    def warnings(self) -> tuple[str, ...]:
        """What the operator must know before saying yes: the signature's warnings, the
        daemon settings the plugin needs, and whether the daemon would find it at all."""
        unreached = () if self.unreached is None else (self.unreached,)
        return (
            *self.signature.warnings,
            *self.summary.operator_warnings,
            *self._shadow_warnings,
            *unreached,
        )

    @property
    def _shadow_warnings(self) -> tuple[str, ...]:
        if not self.shadowing:
            return ()
        others = ", ".join(self.shadowing)
        # The daemon keeps the first directory by file name that holds an id.
        first = min((*self.shadowing, self.destination), key=lambda path: Path(path).name)
        loaded = "this install" if first == self.destination else first
        return (
            f"{others} (no install receipt) also holds plugin {self.plugin_id}: the daemon "
            f"loads one directory per id, the first by file name ({loaded}); remove or move "
            "the other one out of the plugin root",
        )


def signer_text(outcome: SignatureOutcome) -> str:
    if outcome.status == "verified":
        issuer = f" (issuer {outcome.issuer})" if outcome.issuer else ""
        return f"{outcome.identity or 'verified'}{issuer}"
    if outcome.status == "skipped":
        # Mode ignore comes from --skip-signature-verify or from the trust policy.
        return "not checked (signature mode ignore)"
    return "unsigned"


def built_in_lines(outcome: SignatureOutcome) -> list[str]:
    """Beside a verified signer (the certificate's SAN): the source repository it built and
    the workflow that started the run, which differ from the SAN when a reusable workflow
    signed for the calling repository."""
    claims = outcome.claims if outcome.status == "verified" else {}
    built_in = claims.get("source_repository")
    if not built_in:
        return []
    caller = claims.get("build_config_uri")
    started = f", run by {caller}" if caller and caller != outcome.identity else ""
    return [f"Built in:     {built_in}{started}"]


def render_plan(plan: InstallPlan) -> list[str]:
    """The confirmation screen as lines of text.

    Almost every value comes from the publisher (manifest strings, asset name, signer identity):
    each line is passed through :func:`~nexo_pkg.core.terminal.printable`, so an escape
    sequence or a line feed in a value is shown escaped and cannot redraw, hide or forge a line
    of the screen (or the NOT SIGNED warning printed after it).
    """
    summary = plan.summary
    lines = [
        f"Plugin:       {summary.plugin_id} {summary.version}"
        + (f" — {summary.name}" if summary.name else ""),
        f"Source:       {plan.source_display} ({plan.asset_name})",
        f"Target:       {plan.target}",
        f"SHA-256:      {plan.sha256} (checked against {', '.join(plan.checksums)})",
        f"Signer:       {signer_text(plan.signature)}",
        *built_in_lines(plan.signature),
        f"Install to:   {plan.destination}",
        *(
            f"Replaces:     {path}" + (_kept_mark(plan) if path == plan.keeping else "")
            for path in plan.replacing
        ),
    ]
    command = [summary.command, *summary.args] if summary.command else [f"bin/{summary.plugin_id}"]
    lines.append(f"Entrypoint:   {' '.join(command)}")
    if summary.env:
        pairs = ", ".join(f"{key}={value}" for key, value in sorted(summary.env.items()))
        lines.append(f"Environment:  {pairs}")
    for key, values in summary.extends.items():
        lines.append(f"Extends {key}: {', '.join(values)}")
    if summary.sandbox_enabled:
        lines.append(f"Sandbox:      enabled, network {summary.network}")
        for setting in summary.operator_must_allow:
            lines.append(f"  daemon needs: {setting} (the operator's permission)")
        if summary.fs_read_paths:
            lines.append(f"  reads:      {', '.join(summary.fs_read_paths)}")
        if summary.fs_write_paths:
            lines.append(f"  writes:     {', '.join(summary.fs_write_paths)}")
    else:
        lines.append("Sandbox:      disabled (the plugin runs with your user's permissions)")
    caps = ", ".join(summary.capabilities) if summary.capabilities else "none declared"
    lines.append(f"Capabilities: {caps}")
    admin = [f"{name} (required)" for name in summary.admin_required]
    admin += [f"{name} (optional)" for name in summary.admin_optional]
    if admin:
        lines.append(f"  admin RPCs: {', '.join(admin)}")
    return [printable(line) for line in lines]


def _kept_mark(plan: InstallPlan) -> str:
    """What the screen says of the replaced tree ``plan`` keeps out of the daemon's sight."""
    if plan.keeping_unchecked:
        return " (kept, but its receipt has no file hashes, so rollback cannot bring it back)"
    return " (kept for rollback)"
