"""Settings of the daemon's runtime are the operator's to grant, not the installer's to demand.

The real browser plugin asks for host networking (``network = "host"``), which the daemon
allows only with ``NEXO_PLUGIN_SANDBOX_HOST_NET_ALLOW=1`` in *its* environment. The installer
installs it whatever the installing shell says, and shows what the operator must allow on the
confirmation screen and in ``--json``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support.cli import clean_env, nexo
from support.shared_fixtures import require_shared_fixture
from support.tarballs import asset_name, plugin_members, release_assets, sidecar_line, targz

from nexo_pkg.install.options import InstallCallbacks
from nexo_pkg.install.pipeline import install
from nexo_pkg.install.summary import InstallPlan, render_plan

from .conftest import InstallEnv

BROWSER = (
    "daemon-parity",
    "real-manifests",
    "nexo-plugin-browser__nexo-plugin.toml__idx0e0f3215.toml",
)
SETTING = "NEXO_PLUGIN_SANDBOX_HOST_NET_ALLOW=1"
ADMIN = ("daemon-parity", "real-manifests", "nexo-rs-plugin-admin__plugin.toml__b5f2f698.toml")


def _browser_release(env: InstallEnv) -> str:
    """Publish a release shaped like the browser plugin's (its real manifest); the version."""
    manifest = require_shared_fixture(*BROWSER).read_text(encoding="utf-8")
    version = "0.4.2"
    data = targz(plugin_members("browser", version, manifest=manifest))
    name = asset_name("browser", version, "x86_64-unknown-linux-musl")
    env.server.publish(
        "lordmacu",
        "nexo-plugin-browser",
        f"v{version}",
        {
            name: data,
            name + ".sha256": sidecar_line(data, name).encode(),
            "nexo-plugin.toml": manifest.encode(),
        },
    )
    return version


def test_host_network_plugin_installs_with_the_operator_warning(install_env: InstallEnv) -> None:
    _browser_release(install_env)
    shown: list[list[str]] = []

    def confirm(plan: InstallPlan) -> bool:
        shown.append(render_plan(plan))
        return True

    result = install(
        "lordmacu/nexo-plugin-browser",
        install_env.make_options(target="x86_64-unknown-linux-gnu"),
        InstallCallbacks(confirm=confirm),
    )
    assert result.path == install_env.dest / "browser-0.4.2"
    (screen,) = shown
    assert any(SETTING in line and "daemon needs" in line for line in screen), screen
    document = result.to_json()
    assert document["manifest"]["operator_must_allow"] == [SETTING]
    assert any(SETTING in warning for warning in document["warnings"])


def test_the_cli_shows_what_the_operator_must_allow(
    install_env: InstallEnv, monkeypatch: pytest.MonkeyPatch
) -> None:
    _browser_release(install_env)
    env = clean_env(
        NEXO_HOME=str(install_env.home),
        NEXO_GITHUB_API_BASE=install_env.server.url,
        NEXO_HTTP_RETRY_BASE_MS="1",
        NEXO_INSTALL_TARGET="x86_64-unknown-linux-gnu",
    )
    monkeypatch.delenv("NEXO_PLUGIN_SANDBOX_HOST_NET_ALLOW", raising=False)
    args = ["plugin", "install", "lordmacu/nexo-plugin-browser", "--yes"]
    dry = nexo(*args, "--dry-run", env=env, in_process=True)
    assert dry.exit_code == 0, dry.stderr
    assert SETTING in dry.stderr
    done = nexo(*args, "--json", env=env, in_process=True)
    assert done.exit_code == 0, done.stdout
    assert done.document["manifest"]["operator_must_allow"] == [SETTING]
    assert (Path(done.document["path"]) / "bin" / "browser").is_file()


def test_plugins_without_host_networking_need_nothing(install_env: InstallEnv) -> None:

    install_env.server.publish("acme", "hello", "v1.0.0", release_assets("hello", "1.0.0"))
    document = install("acme/hello", install_env.make_options()).to_json()
    assert document["manifest"]["operator_must_allow"] == []
    assert not any("HOST_NET" in warning for warning in document["warnings"])


def test_the_admin_rpcs_a_plugin_asks_for_are_on_the_screen_and_in_json(
    install_env: InstallEnv,
) -> None:
    """The real admin plugin asks the operator to grant admin RPCs (``[plugin.capabilities.
    admin]``, checked by the daemon at boot): the confirmation screen and ``--json`` show them
    (SPEC §5 step 8, "what the manifest asks for"), not "Capabilities: none declared" alone."""
    manifest = require_shared_fixture(*ADMIN).read_text(encoding="utf-8")
    data = targz(plugin_members("admin", "0.1.18", manifest=manifest))
    name = asset_name("admin", "0.1.18")
    install_env.server.publish(
        "lordmacu",
        "nexo-plugin-admin",
        "v0.1.18",
        {name: data, name + ".sha256": sidecar_line(data, name).encode()},
    )
    env = clean_env(
        NEXO_HOME=str(install_env.home),
        NEXO_GITHUB_API_BASE=install_env.server.url,
        NEXO_HTTP_RETRY_BASE_MS="1",
    )
    args: list[str | Path] = ["plugin", "install", "lordmacu/nexo-plugin-admin", "--dest"]
    args.append(install_env.dest)
    dry = nexo(*args, "--yes", "--dry-run", env=env, in_process=True)
    assert dry.exit_code == 0, dry.stderr
    (line,) = [line for line in dry.stderr.splitlines() if "admin RPCs:" in line]
    assert "agents_crud (required)" in line
    document = nexo(*args, "--yes", "--dry-run", "--json", env=env, in_process=True).document
    asked = document["manifest"]["admin_capabilities"]
    assert "agents_crud" in asked["required"]
    assert line.count("(required)") == len(asked["required"])
    assert line.count("(optional)") == len(asked["optional"])
    assert not install_env.dest.exists() or not any(install_env.dest.iterdir())


GOOGLE = (
    "daemon-parity",
    "real-manifests",
    "nexo-rs-plugin-google__nexo-plugin.toml__373c267e.toml",
)


def test_the_installing_shell_s_daemon_settings_neither_refuse_nor_grant(
    install_env: InstallEnv,
) -> None:
    """The daemon's runtime settings in the shell that installs are not the daemon's: with
    ``NEXO_PLUGIN_SANDBOX_REQUIRE=1`` there, the real google plugin (an entrypoint and no
    sandbox) still installs, and with the host-network setting there, the browser plugin's
    screen and ``--json`` still name it as the operator's to allow."""
    _browser_release(install_env)
    manifest = require_shared_fixture(*GOOGLE).read_text(encoding="utf-8")
    data = targz(plugin_members("google", "0.3.0", manifest=manifest))
    name = asset_name("google", "0.3.0", "x86_64-unknown-linux-musl")
    install_env.server.publish(
        "lordmacu",
        "nexo-rs-plugin-google",
        "v0.3.1",
        {
            name: data,
            name + ".sha256": sidecar_line(data, name).encode(),
            "nexo-plugin.toml": manifest.encode(),
        },
    )
    env = clean_env(
        NEXO_HOME=str(install_env.home),
        NEXO_GITHUB_API_BASE=install_env.server.url,
        NEXO_HTTP_RETRY_BASE_MS="1",
        NEXO_INSTALL_TARGET="x86_64-unknown-linux-gnu",
        NEXO_PLUGIN_SANDBOX_REQUIRE="1",
        NEXO_PLUGIN_SANDBOX_HOST_NET_ALLOW="1",
    )
    google = nexo("plugin", "install", "lordmacu/nexo-rs-plugin-google", "--yes", "--json",
                  env=env, in_process=True)  # fmt: skip
    assert google.exit_code == 0, google.stdout
    assert (google.document["id"], google.document["version"]) == ("google", "0.3.0")
    browser = nexo("plugin", "install", "lordmacu/nexo-plugin-browser", "--yes", "--json",
                   env=env, in_process=True)  # fmt: skip
    assert browser.exit_code == 0, browser.stdout
    assert browser.document["manifest"]["operator_must_allow"] == [SETTING]
