"""Fixtures for install tests: an isolated NEXO_HOME, the loopback GitHub server, helpers."""

from __future__ import annotations

from support.github_server import asset_host, github_server
from support.install_env import InstallEnv, assert_refused, install_env, umask

__all__ = ["InstallEnv", "assert_refused", "asset_host", "github_server", "install_env", "umask"]
