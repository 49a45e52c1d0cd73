"""The daemon's configuration directory decides the install root and the trust policy.

``./config/plugins/discovery.yaml`` (``discovery.search_paths[0]``) and
``./config/extensions/trusted_keys.toml`` in the working directory are used by ``install``,
``upgrade``, ``list``, ``remove`` and ``verify`` without any flag; ``--config`` and
``NEXO_CONFIG_DIR`` choose another directory and ``--dest`` still wins.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from support.cli import CliResult, clean_env, nexo
from support.github_server import GitHubServer
from support.tarballs import release_assets, tree_snapshot

from nexo_pkg.core.errors import ConfigError
from nexo_pkg.install.config import config_dir, load_daemon_config


@pytest.fixture
def server() -> Iterator[GitHubServer]:
    with GitHubServer() as running:
        running.publish("acme", "hello", "v1.0.0", release_assets("hello", "1.0.0"))
        yield running


def _project(tmp_path: Path, discovery: str | None, policy: str | None = None) -> Path:
    """A working directory holding the daemon's ``config/``."""
    project = tmp_path / "project"
    (project / "config" / "plugins").mkdir(parents=True)
    (project / "config" / "extensions").mkdir()
    if discovery is not None:
        (project / "config" / "plugins" / "discovery.yaml").write_text(discovery)
    if policy is not None:
        (project / "config" / "extensions" / "trusted_keys.toml").write_text(policy)
    return project


def _in_project(project: Path, server: GitHubServer, *args: str) -> CliResult:
    """``nexo plugin ARGS --json`` run in ``project`` against ``server``, in-process."""
    return nexo("plugin", *args, "--json", env=_env(project, server), cwd=project, in_process=True)


def _env(project: Path, server: GitHubServer, **env: str) -> dict[str, str]:
    """The environment of a command line run in ``project`` against ``server``."""
    return clean_env(
        NEXO_HOME=str(project.parent / "home"),
        NEXO_GITHUB_API_BASE=server.url,
        NEXO_HTTP_RETRY_BASE_MS="1",
        NO_PROXY="127.0.0.1",
        **env,
    )


DISCOVERY = """\
# the daemon's plugins/discovery.yaml
schema_version: 1
discovery:
  search_paths:
    - ./daemon-plugins
    - $NEXO_HOME/state/plugins
  disabled: []
"""


def test_working_directory_config_sets_root_and_policy(
    tmp_path: Path, server: GitHubServer
) -> None:
    project = _project(tmp_path, DISCOVERY, 'schema_version = "1.0"\ndefault = "require"\n')
    root = project / "daemon-plugins"
    result = _in_project(project, server, "install", "acme/hello", "--yes")
    code, refused = result.code, result.document
    # The operator's policy requires signatures: the unsigned release is refused.
    assert (code, refused["kind"]) == (1, "signature_missing")
    assert tree_snapshot(root) == {}
    (project / "config" / "extensions" / "trusted_keys.toml").write_text(
        'schema_version = "1.0"\ndefault = "warn"\n'
    )
    result = _in_project(project, server, "install", "acme/hello", "--yes")
    code, installed = result.code, result.document
    assert code == 0
    assert installed["path"] == str(root / "hello-1.0.0")
    assert not (project.parent / "home" / "state" / "plugins").exists()
    result = _in_project(project, server, "list")
    code, listing = result.code, result.document
    assert [p["path"] for p in listing["plugins"]] == [str(root / "hello-1.0.0")]
    assert listing["dest"] == str(root)
    assert _in_project(project, server, "verify").code == 0
    server.publish("acme", "hello", "v1.1.0", release_assets("hello", "1.1.0"))
    result = _in_project(project, server, "upgrade", "hello", "--yes")
    code, upgraded = result.code, result.document
    assert (code, upgraded["path"]) == (0, str(root / "hello-1.1.0"))
    result = _in_project(project, server, "remove", "hello", "--yes")
    code, removed = result.code, result.document
    assert (code, removed["removed"]) == (0, [str(root / "hello-1.1.0"), *upgraded["kept_paths"]])


def test_dest_wins_and_config_flag_and_variable_choose_the_directory(
    tmp_path: Path, server: GitHubServer
) -> None:
    project = _project(tmp_path, DISCOVERY)
    other = tmp_path / "elsewhere"
    (other / "plugins").mkdir(parents=True)
    (other / "plugins" / "discovery.yaml").write_text(
        "discovery:\n  search_paths: ['${PLUGIN_ROOT:-/nonexistent}/x']\n"
    )
    explicit = tmp_path / "explicit"
    result = _in_project(project, server, "install", "acme/hello", "--yes", "--dest", str(explicit))
    code, document = result.code, result.document
    assert (code, document["path"]) == (0, str(explicit / "hello-1.0.0"))
    target = tmp_path / "from-variable"
    result = nexo(
        "plugin",
        "list",
        "--config",
        str(other),
        "--json",
        env=_env(project, server, PLUGIN_ROOT=str(target)),
        cwd=project,
        in_process=True,
    )
    code, listing = result.code, result.document
    assert listing["dest"] == str(target / "x")
    result = nexo(
        "plugin",
        "list",
        "--json",
        env=_env(project, server, NEXO_CONFIG_DIR=str(other), PLUGIN_ROOT=str(target)),
        cwd=project,
        in_process=True,
    )
    code, listing = result.code, result.document
    assert listing["dest"] == str(target / "x")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("discovery: [unclosed\n", "is not valid YAML"),
        ("discovery: 3\n", "`discovery` must be a mapping"),
        ("discovery:\n  search_paths: ./one\n", "must be a list of paths"),
        ("discovery:\n  search_paths: ['${NEXO_TEST_UNSET_VARIABLE}/p']\n", "not set"),
    ],
)
def test_a_broken_daemon_config_is_a_configuration_error(
    tmp_path: Path, server: GitHubServer, text: str, message: str
) -> None:
    project = _project(tmp_path, text)
    result = _in_project(project, server, "install", "acme/hello", "--yes")
    code, document = result.code, result.document
    assert (code, document["kind"]) == (2, "config")
    assert message in str(document["error"])
    assert not (project.parent / "home").exists()


def test_config_directory_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NEXO_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("NEXO_CONFIG_DIR", raising=False)
    assert config_dir(None, cwd=tmp_path) == tmp_path / "home" / "config"
    (tmp_path / "config").mkdir()
    assert config_dir(None, cwd=tmp_path) == tmp_path / "config"
    (tmp_path / "env").mkdir()
    monkeypatch.setenv("NEXO_CONFIG_DIR", str(tmp_path / "env"))
    assert config_dir(None, cwd=tmp_path) == tmp_path / "env"
    (tmp_path / "flag").mkdir()
    assert config_dir(tmp_path / "flag", cwd=tmp_path) == tmp_path / "flag"


@pytest.mark.parametrize("planted", ["missing", "a file"])
def test_a_config_variable_naming_no_directory_is_a_usage_error(
    tmp_path: Path, server: GitHubServer, planted: str
) -> None:
    """``NEXO_CONFIG_DIR`` naming no directory is refused as ``--config`` is: never a silent
    fall back to ``./config`` or ``$NEXO_HOME/config``, nothing installed anywhere."""
    project = _project(tmp_path, DISCOVERY)
    typo = tmp_path / "etc-nexo"
    if planted == "a file":
        typo.write_text("")
    env = _env(project, server, NEXO_CONFIG_DIR=str(typo))
    for args in (("install", "acme/hello", "--yes"), ("list",), ("rollback", "hello")):
        result = nexo("plugin", *args, "--json", env=env, cwd=project, in_process=True)
        assert (result.code, result.document["kind"]) == (2, "config"), args
        assert f"NEXO_CONFIG_DIR={typo}" in result.document["error"]
        reason = "does not exist" if planted == "missing" else "is not a directory"
        assert reason in result.document["error"]
    text = nexo("plugin", "list", env=env, cwd=project, in_process=True)
    assert text.error_line.startswith(f"error: NEXO_CONFIG_DIR={typo} ")
    assert not (project.parent / "home").exists()
    # Nothing fell back to ./config (whose search path is ./daemon-plugins) either.
    assert not (project / "daemon-plugins").exists()


def test_search_paths_expand_like_the_daemon(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NEXO_HOME", str(tmp_path / "nexo"))
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    monkeypatch.setenv("SET", "value")
    monkeypatch.delenv("UNSET", raising=False)
    (tmp_path / "plugins").mkdir()
    (tmp_path / "plugins" / "discovery.yaml").write_text(
        "discovery:\n  search_paths:\n"
        "    - $NEXO_HOME/a\n    - ~/b\n    - $HOME/c\n    - rel/d\n"
        "    - /x/${SET}\n    - /x/${UNSET-fallback}\n    - /x/${UNSET:-other}\n"
    )
    config = load_daemon_config(tmp_path, cwd=tmp_path / "cwd")
    assert config.search_paths == (
        tmp_path / "nexo" / "a",
        tmp_path / "cwd" / "~" / "b",
        tmp_path / "user" / "c",
        tmp_path / "cwd" / "rel" / "d",
        Path("/x/value"),
        Path("/x/fallback"),
        Path("/x/other"),
    )
    assert config.install_root() == tmp_path / "nexo" / "a"
    assert config.policy_path == tmp_path / "extensions" / "trusted_keys.toml"
    empty = tmp_path / "empty"
    (empty / "plugins").mkdir(parents=True)
    (empty / "plugins" / "discovery.yaml").write_text("discovery: {}\n")
    assert load_daemon_config(empty).install_root() == tmp_path / "nexo" / "state" / "plugins"
    (empty / "plugins" / "discovery.yaml").write_text("discovery: {search_paths: [\n")
    with pytest.raises(ConfigError):
        load_daemon_config(empty)
