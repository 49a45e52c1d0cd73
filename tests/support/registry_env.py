"""Fixtures for the tests against a real registry (``tests/fleet`` and the registry tests of
``tests/sources``): the registry, the private Sigstore instance, plugin builds signed by it,
an isolated environment, and helpers that publish and run fleet commands. A directory's
``conftest.py`` imports the fixtures it uses from here."""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest

from support.cli import CliResult, nexo
from support.github_server import GitHubServer
from support.private_sigstore import PrivateSigstore
from support.registry import PASSWORD, USER, Registry, auth_registry, registry, token_registry
from support.tarballs import manifest_text, release_assets, write_plugin

__all__ = [
    "ACME_IDENTITY",
    "ACME_REGEXP",
    "LINUX",
    "MakeDist",
    "auth_config",
    "auth_registry",
    "fleet_env",
    "fleet_run",
    "isolated_env",
    "make_dist",
    "policy",
    "private_sigstore",
    "publish_signed_release",
    "push_dist",
    "registry",
    "token_registry",
    "write_wanted",
]

ACME_IDENTITY = (
    "https://github.com/acme/nexo-plugin-echo/.github/workflows/release.yml@refs/tags/v1.2.3"
)
ACME_REGEXP = r"https://github\.com/acme/[^/]+/\.github/workflows/release\.yml@refs/tags/v.*"
LINUX = "x86_64-unknown-linux-gnu"


@pytest.fixture(scope="session")
def private_sigstore() -> PrivateSigstore:
    """One private instance for the session (key generation is the slow part)."""
    return PrivateSigstore.create()


@pytest.fixture
def fleet_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """An isolated environment: own NEXO_HOME, no tokens or proxies, no docker config."""
    cleared = {"REGISTRY_AUTH_FILE", "DOCKER_CONFIG", "SOURCE_DATE_EPOCH"}
    return isolated_env(tmp_path, monkeypatch, cleared)


def isolated_env(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cleared: set[str]
) -> dict[str, str]:
    """Make this process's environment (and return it) an isolated one: NEXO_HOME and the XDG
    directories under ``tmp_path``, the linux target, no GitHub token, no proxy, none of
    ``cleared``."""
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in {"NEXO_GITHUB_TOKEN", "GITHUB_TOKEN", "GH_TOKEN", "GITHUB_API_URL"}
        and "proxy" not in key.lower()
        and key not in cleared
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


@pytest.fixture
def policy(tmp_path: Path, private_sigstore: PrivateSigstore) -> Path:
    """A trust policy for the private instance that trusts acme's release workflow."""
    root = private_sigstore.write_trusted_root(tmp_path / "private_trusted_root.json")
    path = tmp_path / "trusted_keys.toml"
    path.write_text(
        'schema_version = "1.0"\ndefault = "warn"\n'
        f'trusted_root = "{root.name}"\n\n'
        f"[[authors]]\nowner = \"acme\"\nidentity_regexp = '{ACME_REGEXP}'\n",
        encoding="utf-8",
    )
    return path


def auth_config(tmp_path: Path, running: Registry) -> Path:
    """A docker config.json holding the test registry's credentials."""
    pair = base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
    path = tmp_path / "registry-auth.json"
    path.write_text(json.dumps({"auths": {running.host: {"auth": pair}}}), encoding="utf-8")
    return path


MakeDist = Callable[..., Path]


@pytest.fixture
def make_dist(tmp_path: Path, private_sigstore: PrivateSigstore) -> MakeDist:
    """Write what ``pack`` writes for ``plugin_id`` ``version`` (noarch + linux tarballs),
    signed as ``identity`` unless it is ``None``."""

    def make(
        plugin_id: str = "echo",
        version: str = "1.2.3",
        *,
        identity: str | None = ACME_IDENTITY,
        targets: tuple[str, ...] = ("noarch", LINUX),
        payload: bytes = b"",
    ) -> Path:
        from support.tarballs import plugin_tarball

        directory = tmp_path / f"dist-{plugin_id}-{version}"
        for target in targets:
            data = plugin_tarball(plugin_id, version, payload=payload + target.encode())
            path = write_plugin(directory, plugin_id, version, target=target, data=data)
            if identity is not None:
                bundle = private_sigstore.sign(path.read_bytes(), identity=identity)
                path.with_name(path.name + ".sigstore.json").write_text(json.dumps(bundle))
        (directory / "nexo-plugin.toml").write_text(manifest_text(plugin_id, version))
        return directory

    return make


def push_dist(dist: Path, reference: str, home: Path, config: Path | None = None) -> None:
    """Publish a dist directory in-process (the CLI path has its own test)."""
    from nexo_pkg.fleet.publish import push
    from nexo_pkg.fleet.sources import FleetOptions
    from nexo_pkg.install.options import InstallOptions

    choices = InstallOptions(
        dest=home / "plugins", nexo_home=home, plain_http=True, registry_config=config
    )
    push(dist, reference, FleetOptions(choices))


def publish_signed_release(
    server: GitHubServer, instance: PrivateSigstore, version: str, plugin: str = "echo"
) -> None:
    """Publish acme/nexo-plugin-``plugin`` ``v{version}`` on the GitHub stand-in: the plugin's
    linux release, its tarball signed by ``instance`` as acme's release run of that tag."""
    assets = release_assets(plugin, version, target=LINUX)
    name = f"{plugin}-{version}-{LINUX}.tar.gz"
    identity = ACME_IDENTITY.replace("nexo-plugin-echo", f"nexo-plugin-{plugin}").replace(
        "v1.2.3", f"v{version}"
    )
    bundle = instance.sign(assets[name], identity=identity)
    assets[name + ".sigstore.json"] = json.dumps(bundle).encode()
    server.publish("acme", f"nexo-plugin-{plugin}", f"v{version}", assets)


def write_wanted(path: Path, entries: Mapping[str, str]) -> Path:
    """Write the wanted file ``path`` (a ``nexo-plugins.toml``): one ``[plugins.ID]`` table
    with its ``source`` for each entry, in order."""
    lines = [
        f'[plugins.{plugin_id}]\nsource = "{source}"\n' for plugin_id, source in entries.items()
    ]
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def push_cli(dist: Path, registry: Registry, env: Mapping[str, str]) -> CliResult:
    """``nexo plugin push DIST oci://…/plugins/echo --plain-http --json`` in-process."""
    return nexo(
        "plugin", "push", str(dist), registry.ref("plugins/echo"), "--plain-http", "--json",
        env=env, in_process=True,
    )  # fmt: skip


def fleet_run(
    command: str, flag: str, path: Path | str, *args: str, env: Mapping[str, str]
) -> CliResult:
    """``nexo plugin COMMAND FLAG PATH ARGS --json`` in-process (``sync --lock LOCK``,
    ``lock -f WANTED``), with its ``--json`` document."""
    return nexo("plugin", command, flag, str(path), *args, "--json", env=env, in_process=True)
