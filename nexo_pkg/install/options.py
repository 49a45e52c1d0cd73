"""What one install runs with: the user's choices (:class:`InstallOptions`), what the person
at the terminal sees and answers (:class:`InstallCallbacks`), and what a command that holds the
root already hands each install (:class:`InstallStep`, with the signer a lock recorded).

These are plain records, apart from the pipeline that runs them (:mod:`nexo_pkg.install.pipeline`),
so that a command builds them, and ``sync`` decides there is nothing to install, without
loading the pipeline.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nexo_pkg.sources.api import ArchiveLimits, NetworkChoices, TrustChoices

if TYPE_CHECKING:
    from nexo_pkg.install.compat import DaemonVersion
    from nexo_pkg.install.reach import DaemonReach
    from nexo_pkg.install.root import InstallRoot
    from nexo_pkg.install.summary import InstallPlan
    from nexo_pkg.sources.api import ProgressBar


@dataclass(frozen=True)
class InstallOptions:
    """What the user chose for ``install``, ``upgrade`` and ``info`` (and, through
    :class:`~nexo_pkg.fleet.sources.FleetOptions`, for a fleet): frozen, built by the CLI."""

    dest: Path
    nexo_home: Path
    target: str | None = None
    trusted_keys: Path | None = None
    # The daemon's policy file (<config dir>/extensions/trusted_keys.toml), used when
    # `trusted_keys` is not given; a missing one means "warn" with no authors.
    policy_path: Path | None = None
    require_signature: bool = False
    skip_signature_verify: bool = False
    github_api_url: str | None = None
    force: bool = False
    dry_run: bool = False
    limits: ArchiveLimits = field(default_factory=ArchiveLimits)
    retry_base_delay: float | None = None
    # Seconds one HTTP request may take in all (--timeout); None: NEXO_HTTP_TIMEOUT or 300.
    http_timeout: float | None = None
    # Registry credentials (--registry-config), plain HTTP for a loopback registry, and the
    # mirrors of registry hosts (sources.mirrors), for oci:// sources.
    registry_config: Path | None = None
    plain_http: bool = False
    registry_mirrors: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # Install a version older than one already installed (which it replaces).
    allow_downgrade: bool = False
    # An upgrade whose new version another identity signed (or nobody) is accepted.
    allow_signer_change: bool = False
    # The daemon the plugin is for (--nexo-version, NEXO_DAEMON_VERSION): its min_nexo_version
    # must admit it (``incompatible`` otherwise, unless ``force``). None: not compared.
    daemon: DaemonVersion | None = None
    # The daemon's configuration the install root is judged against, asked for only when a
    # plugin is about to be installed (a no-op sync never loads it): a plugin (or microapp)
    # its discovery would never meet is installed with a warning. None (or a call answering
    # None): not judged.
    reach: Callable[[], DaemonReach | None] | None = None

    @property
    def network(self) -> NetworkChoices:
        """The network part of these choices, as the sources take it."""
        return NetworkChoices(
            github_api_url=self.github_api_url,
            http_timeout=self.http_timeout,
            retry_base_delay=self.retry_base_delay,
            registry_config=self.registry_config,
            plain_http=self.plain_http,
            registry_mirrors=self.registry_mirrors,
        )

    @property
    def trust(self) -> TrustChoices:
        """The signature part of these choices, as the command's context takes it."""
        return TrustChoices(
            trusted_keys=self.trusted_keys,
            policy_path=self.policy_path,
            require_signature=self.require_signature,
            skip_signature_verify=self.skip_signature_verify,
        )


@dataclass(frozen=True)
class InstallCallbacks:
    """What the person at the terminal sees and answers (the CLI gives them; none: quiet)."""

    # Shown the plan before anything is written; False cancels (``cancelled``).
    confirm: Callable[[InstallPlan], bool] | None = None
    # Hears "still waiting" lines about slow answers (the CLI's notes on stderr).
    notice: Callable[[str], None] | None = None
    # Shows a download as it goes (the CLI draws a bar on stderr on a terminal).
    progress: ProgressBar | None = None
    # Told just before the new tree goes into place: from there the install runs to its end
    # (the CLI holds a signal back until the result is printed, never "interrupted" for a
    # plugin that is installed).
    committing: Callable[[], None] | None = None


@dataclass(frozen=True)
class LockedSigner:
    """The signer a lock recorded for an artifact (its row's ``identity`` and ``issuer``)."""

    identity: str
    issuer: str | None


@dataclass(frozen=True)
class InstallStep:
    """What one install runs with besides the user's choices and the command's context.

    ``root`` and ``installed``: the install root whose lock the caller holds, and every
    installed tree of the plugin it scanned under it (``sync`` does both once for all its
    plugins); None: the install locks and scans itself. For an upgrade: ``replaces`` are the
    versions the new one replaces, ``keep_old`` keeps them out of the daemon's sight, and
    ``previous_signature`` (the receipt's) is the signer the new version must have
    (``signer_changed`` otherwise, unless the user allows a change). For ``sync``:
    ``locked_signer`` is the signer the lock recorded, which the artifact's verified
    signature must name (``signer_untrusted`` otherwise, before anything is written). For
    ``install``: ``bind_installed`` makes every installed version of the plugin it replaces
    bind the new one to its signer, as an upgrade's ``previous_signature`` does. Holds are
    judged under the root's lock, where no other command changes them meanwhile:
    ``unless_held`` installs nothing when the plugin is held (an upgrade that names no
    version: a ``hold`` that ran since it looked wins), ``release_hold`` ends the plugin's
    hold once the new version is in place (the operator named what to install).
    """

    root: InstallRoot | None = None
    replaces: tuple[Path, ...] = ()
    keep_old: bool = False
    previous_signature: Mapping[str, Any] | None = None
    installed: tuple[Path, ...] | None = None
    locked_signer: LockedSigner | None = None
    bind_installed: bool = False
    unless_held: bool = False
    release_hold: bool = False


NO_CALLBACKS = InstallCallbacks()
ONE_INSTALL = InstallStep()
#: ``install SOURCE``: one install that replaces any other version of its plugin as an upgrade
#: would, signer continuity included, keeping the version replaced for ``rollback``.
PLAIN_INSTALL = InstallStep(bind_installed=True, keep_old=True, release_hold=True)
