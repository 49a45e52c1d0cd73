"""What a person at a terminal gets and a pipe does not: ``list``'s header line, ``doctor``'s
per-plugin progress, ``install``'s download bar. Each run gets a real pseudo-terminal as stdout
and stderr."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from support.cli import clean_env, nexo, on_terminal, stand_in_env
from support.github_server import GitHubServer, github_server
from support.tarballs import release_assets, write_plugin

__all__ = ["github_server"]


def _installed(tmp_path: Path) -> tuple[dict[str, str], str]:
    env = clean_env(NEXO_HOME=str(tmp_path / "home"))
    env.pop("NEXO_CONFIG_DIR", None)
    root = str(tmp_path / "root")
    for plugin in ("hello", "world"):
        tarball = write_plugin(tmp_path / "dist", plugin, "1.0.0")
        done = nexo("plugin", "install", str(tarball), "--dest", root, "--yes", env=env,
                    cwd=tmp_path, in_process=True)  # fmt: skip
        assert done.code == 0, done.stderr
    return env, root


def test_list_has_a_header_on_a_terminal_only(tmp_path: Path) -> None:
    env, root = _installed(tmp_path)
    code, shown = on_terminal("plugin", "list", "--dest", root, env=env, cwd=tmp_path)
    assert code == 0, shown
    lines = [line for line in shown.splitlines() if line.strip()]
    assert lines[0].split() == ["ID", "VERSION", "ORIGIN", "SIGNATURE", "STATE", "PATH"]
    assert [line.split()[0] for line in lines[1:]] == ["hello", "world"]
    piped = nexo("plugin", "list", "--dest", root, env=env, cwd=tmp_path, in_process=True)
    assert [line.split()[0] for line in piped.stdout.splitlines()] == ["hello", "world"]


def test_doctor_shows_progress_per_plugin_on_a_terminal(tmp_path: Path) -> None:
    env, root = _installed(tmp_path)
    _, shown = on_terminal("plugin", "doctor", "--dest", root, env=env, cwd=tmp_path)
    # Numbered as the plugins are taken up (several at a time: in either order), as sync's.
    lines = sorted(line for line in shown.splitlines() if " checking " in line)
    assert [line.split()[0] for line in lines] == ["[1/2]", "[2/2]"]
    assert sorted(line.split()[-1] for line in lines) == ["hello-1.0.0", "world-1.0.0"]
    piped = nexo("plugin", "doctor", "--dest", root, env=env, cwd=tmp_path)
    assert "checking" not in piped.stderr
    quiet = on_terminal("plugin", "doctor", "-q", "--dest", root, env=env, cwd=tmp_path)[1]
    assert "checking" not in quiet


def test_install_draws_a_download_bar_on_a_terminal_only(
    tmp_path: Path, github_server: GitHubServer
) -> None:
    """The CLI draws the download (rich's bar on stderr, erased before the plan is shown) on
    a terminal; a pipe gets none."""
    assets = release_assets("hello", "1.0.0")
    size = len(assets["hello-1.0.0-noarch.tar.gz"])
    github_server.publish("acme", "nexo-plugin-hello", "v1.0.0", assets)
    env = stand_in_env(tmp_path / "home", github_server.url)
    env.pop("NEXO_CONFIG_DIR", None)
    args = ("plugin", "install", "acme/nexo-plugin-hello@v1.0.0", "--yes", "--dest")
    code, shown = on_terminal(*args, str(tmp_path / "tty"), env=env, cwd=tmp_path)
    assert code == 0, shown
    bar, _, rest = shown.rpartition("\x1b[2K")  # the bar's line is erased, the plan follows
    assert "hello-1.0.0-noarch.tar.gz ━" in bar
    assert f" {size}/{size} bytes" in bar
    assert rest.startswith("Plugin:       hello 1.0.0")
    piped = nexo(*args, str(tmp_path / "pipe"), env=env, cwd=tmp_path)
    assert piped.code == 0, piped.stderr
    assert piped.stderr.startswith("Plugin:       hello 1.0.0")
    assert "bytes" not in piped.stderr


# Any SGR sequence that sets a colour (foreground, background, 256 or true colour).
_COLOUR = re.compile(r"\x1b\[[0-9;]*(?:3[0-9]|4[0-9]|9[0-7]|10[0-7])(?:;[0-9;]*)?m")


@pytest.mark.parametrize(
    ("setting", "env_extra"),
    [
        (["--color", "never"], {}),
        ([], {"CLICOLOR": "0"}),
        ([], {"NO_COLOR": "1"}),
        ([], {"TERM": "dumb"}),
    ],
)
def test_no_colour_setting_paints_the_download_bar_or_a_report(
    tmp_path: Path, github_server: GitHubServer, setting: list[str], env_extra: dict[str, str]
) -> None:
    """``--color never``, ``NO_COLOR``, ``CLICOLOR=0`` and a ``dumb`` terminal leave every
    output of a terminal uncoloured: the download bar as well as the reports."""
    github_server.publish("acme", "hello", "v1.0.0", release_assets("hello", "1.0.0"))
    env = stand_in_env(tmp_path / "home", github_server.url, TERM="xterm-256color")
    for name in ("NO_COLOR", "NEXO_CONFIG_DIR", "FORCE_COLOR", "CLICOLOR_FORCE"):
        env.pop(name, None)
    args = ("plugin", "install", "acme/hello@v1.0.0", "--yes", "--dest", str(tmp_path / "p"))
    code, shown = on_terminal(*args, env=env, cwd=tmp_path)
    assert code == 0, shown
    assert _COLOUR.search(shown), "a terminal gets colour by default"  # the control
    env.update(env_extra)
    args = ("plugin", "install", "acme/hello@v1.0.0", "--yes", "--dest", str(tmp_path / "q"))
    code, shown = on_terminal(*args, *setting, env=env, cwd=tmp_path)
    assert code == 0, shown
    assert "hello-1.0.0-noarch.tar.gz" in shown
    assert not _COLOUR.search(shown), repr(shown)
    project = tmp_path / "bad"
    project.mkdir()
    (project / "nexo-plugin.toml").write_text('[plugin]\nid = "Bad"\n')
    code, shown = on_terminal("plugin", "lint", str(project), *setting, env=env, cwd=tmp_path)
    assert code == 1, shown
    assert "NX010" in shown
    assert not _COLOUR.search(shown), repr(shown)
