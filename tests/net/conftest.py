"""Fixtures for the HTTP client's tests: an isolated environment for CLI subprocesses, a
real registry, the loopback GitHub server, and unsigned plugin builds to publish to it."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.github_server import github_server
from support.registry import auth_registry, registry
from support.registry_env import LINUX, isolated_env
from support.registry_env import push_dist as publish
from support.tarballs import manifest_text, plugin_tarball, write_plugin

__all__ = ["auth_registry", "github_server", "publish", "registry"]


@pytest.fixture
def net_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """An isolated environment: own NEXO_HOME, no tokens, proxies or docker config."""
    cleared = {"REGISTRY_AUTH_FILE", "DOCKER_CONFIG", "SSL_CERT_FILE", "SSL_CERT_DIR"}
    return isolated_env(tmp_path, monkeypatch, cleared)


def unsigned_dist(directory: Path, plugin_id: str = "echo", version: str = "1.2.3") -> Path:
    """What ``pack`` writes for ``plugin_id`` ``version`` (noarch + linux), unsigned."""
    for target in ("noarch", LINUX):
        data = plugin_tarball(plugin_id, version, payload=target.encode())
        write_plugin(directory, plugin_id, version, target=target, data=data)
    (directory / "nexo-plugin.toml").write_text(manifest_text(plugin_id, version))
    return directory


def installed(dest: Path) -> list[str]:
    """What an install left in ``dest`` (its hidden bookkeeping aside)."""
    if not dest.exists():
        return []
    return sorted(path.name for path in dest.iterdir() if not path.name.startswith("."))
