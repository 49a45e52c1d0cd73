"""Fixtures for the sources' tests: an isolated NEXO_HOME and the loopback GitHub server
(install's, shared through support.install_env), helpers; for the registry's, a real registry,
the private Sigstore instance and plugin builds (the fleet tests', through
support.registry_env)."""

from __future__ import annotations

from support.github_server import asset_host, github_server
from support.install_env import InstallEnv, assert_refused, install_env, umask
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
    push_dist,
    registry,
    token_registry,
)

__all__ = [
    "ACME_IDENTITY",
    "ACME_REGEXP",
    "LINUX",
    "InstallEnv",
    "MakeDist",
    "assert_refused",
    "asset_host",
    "auth_config",
    "auth_registry",
    "fleet_env",
    "fleet_run",
    "github_server",
    "install_env",
    "make_dist",
    "policy",
    "private_sigstore",
    "push_dist",
    "registry",
    "token_registry",
    "umask",
]
