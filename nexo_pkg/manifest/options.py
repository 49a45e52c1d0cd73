"""Options of one lint run, shared by the engine and the rules."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LintOptions:
    """Knobs of one lint run.

    ``nexo_version``: check ``min_nexo_version`` against this daemon version.
    ``select``/``ignore``: rule codes or name prefixes to keep or drop.
    ``host_net_allowed``: whether ``network = "host"`` validates; ``None`` reads
    ``NEXO_PLUGIN_SANDBOX_HOST_NET_ALLOW`` from the environment (a truthy value allows it).
    ``sandbox_required``: whether the daemon refuses to spawn an unsandboxed plugin; ``None``
    reads ``NEXO_PLUGIN_SANDBOX_REQUIRE`` from the environment.
    """

    nexo_version: str | None = None
    select: frozenset[str] = frozenset()
    ignore: frozenset[str] = frozenset()
    host_net_allowed: bool | None = None
    sandbox_required: bool | None = None
