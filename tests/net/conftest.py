"""Fixtures for the HTTP client's tests: an isolated environment for CLI subprocesses, a
real registry, the loopback GitHub server, and unsigned plugin builds to publish to it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from support.github_server import github_server
from support.registry import auth_registry, registry
from support.tarballs import manifest_text, plugin_tarball, write_plugin

__all__ = ["auth_registry", "github_server", "registry"]

LINUX = "x86_64-unknown-linux-gnu"


@pytest.fixture
def net_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """An isolated environment: own NEXO_HOME, no tokens, proxies or docker config."""
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in {"NEXO_GITHUB_TOKEN", "GITHUB_TOKEN", "GH_TOKEN", "GITHUB_API_URL"}
        and "proxy" not in key.lower()
        and key not in {"REGISTRY_AUTH_FILE", "DOCKER_CONFIG", "SSL_CERT_FILE", "SSL_CERT_DIR"}
    }
    env.update(
        NEXO_HOME=str(tmp_path / "home"),
        NEXO_HTTP_RETRY_BASE_MS="1",
        NO_PROXY="127.0.0.1,localhost",
        XDG_CACHE_HOME=str(tmp_path / "xdg-cache"),
        XDG_DATA_HOME=str(tmp_path / "xdg-data"),
        DOCKER_CONFIG=str(tmp_path / "no-docker-config"),
        NEXO_INSTALL_TARGET=LINUX,
    )
    for key in list(os.environ):
        if key not in env:
            monkeypatch.delenv(key, raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    return env


def unsigned_dist(directory: Path, plugin_id: str = "echo", version: str = "1.2.3") -> Path:
    """What ``pack`` writes for ``plugin_id`` ``version`` (noarch + linux), unsigned."""
    for target in ("noarch", LINUX):
        data = plugin_tarball(plugin_id, version, payload=target.encode())
        write_plugin(directory, plugin_id, version, target=target, data=data)
    (directory / "nexo-plugin.toml").write_text(manifest_text(plugin_id, version))
    return directory


def publish(dist: Path, reference: str, home: Path, config: Path | None = None) -> None:
    """Publish a dist directory straight to a loopback registry (in-process)."""
    from nexo_pkg.fleet.publish import push
    from nexo_pkg.fleet.sources import FleetOptions
    from nexo_pkg.install.options import InstallOptions

    choices = InstallOptions(
        dest=home / "plugins", nexo_home=home, plain_http=True, registry_config=config
    )
    push(dist, reference, FleetOptions(choices))


def installed(dest: Path) -> list[str]:
    """What an install left in ``dest`` (its hidden bookkeeping aside)."""
    if not dest.exists():
        return []
    return sorted(path.name for path in dest.iterdir() if not path.name.startswith("."))
