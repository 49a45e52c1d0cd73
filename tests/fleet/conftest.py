"""Fixtures for fleet tests: a real registry, the private Sigstore instance, plugin builds
(support.registry_env, shared with the registry tests of tests/sources)."""

from __future__ import annotations

from support.registry_env import (
    ACME_IDENTITY,
    ACME_REGEXP,
    LINUX,
    MakeDist,
    auth_config,
    auth_registry,
    fleet_env,
    fleet_run,
    make_dist,
    policy,
    private_sigstore,
    push_cli,
    push_dist,
    registry,
    token_registry,
)

__all__ = [
    "ACME_IDENTITY",
    "ACME_REGEXP",
    "LINUX",
    "MakeDist",
    "auth_config",
    "auth_registry",
    "fleet_env",
    "fleet_run",
    "make_dist",
    "policy",
    "private_sigstore",
    "push_cli",
    "push_dist",
    "registry",
    "token_registry",
]
