"""Fixtures for the sources' tests: an isolated NEXO_HOME and the loopback GitHub server
(install's, shared through support.install_env), helpers."""

from __future__ import annotations

from support.github_server import asset_host, github_server
from support.install_env import InstallEnv, assert_refused, install_env, umask

__all__ = ["InstallEnv", "assert_refused", "asset_host", "github_server", "install_env", "umask"]
