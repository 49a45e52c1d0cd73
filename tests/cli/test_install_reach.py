"""`install` says when the daemon will never load what it installs, and still installs it.

The daemon's plugin discovery walks only `discovery.search_paths` of
`<config>/plugins/discovery.yaml`, two levels deep (`WalkDir::new(..).max_depth(2)`,
`crates/core/src/agent/nexo_plugin_registry/discovery.rs:48-67` at eec3f33), and with no such
file it scans nothing (`crates/config/src/lib.rs:280-284`). Its extension host finds microapps
only under `extensions.search_paths` of `<config>/extensions.yaml` (default `./extensions`,
from its working directory), at most `max_depth` (3) levels down, pruning `ignore_dirs`
(`crates/extensions/src/discovery.rs:172-221`, `src/main.rs:6530-6543`).
"""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path
from typing import Any

import pytest
import yaml
from support.cli import clean_env, nexo
from support.tarballs import directory, file, sidecar_line, targz, write_plugin

plugin = partial(nexo, "plugin", in_process=True)

_MICROAPP = """\
[plugin]
id = "greeter"
version = "0.1.0"
name = "Greeter"
description = "A microapp."

[capabilities]
tools = ["greeter_hello"]

[transport]
kind = "stdio"
command = "./bin/greeter"
"""


def _microapp_tarball(directory_path: Path) -> Path:
    """A microapp release tarball (an extension-shaped plugin.toml) and its sidecar."""
    data = targz([
        file("plugin.toml", _MICROAPP),
        directory("bin"),
        file("bin/greeter", "#!/bin/sh\nexit 0\n", mode=0o755),
    ])  # fmt: skip
    directory_path.mkdir(parents=True, exist_ok=True)
    path = directory_path / "greeter-0.1.0-noarch.tar.gz"
    path.write_bytes(data)
    path.with_name(path.name + ".sha256").write_text(sidecar_line(data, path.name))
    return path


def _install(tarball: Path, *options: str | Path, cwd: Path, env: dict[str, str]) -> dict[str, Any]:
    done = plugin("install", tarball, "--yes", "--json", *options, env=env, cwd=cwd)
    assert done.code == 0, done.stderr
    document: dict[str, Any] = json.loads(done.stdout)
    assert Path(document["path"]).is_dir()  # installed all the same: never refused
    return document


def _unloaded(document: dict[str, Any]) -> list[str]:
    return [each for each in document["warnings"] if "the daemon will not load" in each]


def test_a_plugin_in_the_fallback_root_is_one_the_daemon_never_scans(tmp_path: Path) -> None:
    # No daemon configured: the fallback root is said to be unscanned in a note on the
    # terminal, as the reference installer says it when it falls back (not with --json, nor
    # -q, and not a warning of the install).
    env = clean_env(NEXO_HOME=str(tmp_path / "home"), HOME=str(tmp_path / "user"))
    work = tmp_path / "work"
    work.mkdir()
    tarball = write_plugin(tmp_path / "dist", "hello", "1.0.0")
    document = _install(tarball, cwd=work, env=env)
    assert Path(document["path"]).parent == tmp_path / "home" / "state" / "plugins"
    assert _unloaded(document) == []
    again = plugin("install", tarball, "--yes", "--force", env=env, cwd=work)
    assert again.code == 0, again.stderr
    [note] = [line for line in again.stderr.splitlines() if "will not load" in line]
    discovery = tmp_path / "home" / "config" / "plugins" / "discovery.yaml"
    assert note.startswith("note: the daemon will not load hello from")
    assert f"{discovery} does not exist" in note
    assert "scans no directory" in note
    quiet = plugin("install", tarball, "--yes", "--force", "-q", env=env, cwd=work)
    assert quiet.code == 0, quiet.stderr
    assert "will not load" not in quiet.stderr
    # doctor: a note too (a configured daemon's unscanned root is a warning).
    done = plugin("doctor", "--no-check", "--json", env=env, cwd=work)
    found = [f for f in json.loads(done.stdout)["findings"] if f["check"] == "discovery"]
    assert [f["severity"] for f in found] == ["note"]


@pytest.mark.parametrize("how", ["./config", "--config", "NEXO_CONFIG_DIR"])
def test_a_plugin_is_judged_against_the_search_paths_of_discovery_yaml(
    tmp_path: Path, how: str
) -> None:
    work = tmp_path / "work"
    config = work / "config" if how == "./config" else tmp_path / "daemon"
    (config / "plugins").mkdir(parents=True)
    work.mkdir(exist_ok=True)
    searched = tmp_path / "searched"
    (config / "plugins" / "discovery.yaml").write_text(
        f"discovery:\n  search_paths: [{searched}]\n", encoding="utf-8"
    )
    extra = {"NEXO_CONFIG_DIR": str(config)} if how == "NEXO_CONFIG_DIR" else {}
    env = clean_env(NEXO_HOME=str(tmp_path / "home"), HOME=str(tmp_path / "user"), **extra)
    flags: tuple[str | Path, ...] = ("--config", config) if how == "--config" else ()
    tarball = write_plugin(tmp_path / "dist", "hello", "1.0.0")

    # The default root is the first search path: loaded, nothing to say.
    document = _install(tarball, *flags, cwd=work, env=env)
    assert Path(document["path"]) == searched / "hello-1.0.0"
    assert _unloaded(document) == []
    # --dest naming the search path, through another spelling: the same directory.
    document = _install(tarball, *flags, "--dest", searched / ".", "--force", cwd=work, env=env)
    assert _unloaded(document) == []
    # Outside it, or one level below it (the walk stops two levels down): never loaded.
    for dest in (tmp_path / "elsewhere", searched / "nested"):
        document = _install(tarball, *flags, "--dest", dest, cwd=work, env=env)
        [warning] = _unloaded(document)
        assert f"from {dest}: it is not one of the search paths of " in warning
        assert str(config / "plugins" / "discovery.yaml") in warning
        assert str(searched) in warning


@pytest.mark.parametrize(
    ("extensions_yaml", "dest", "loaded"),
    [
        (None, "extensions", True),
        (None, "extensions/team", True),  # extensions/team/greeter-0.1.0/plugin.toml: depth 3
        (None, "extensions/a/b", False),  # depth 4, below the default max_depth 3
        (None, "extensions/dist", False),  # `dist` is one of the default ignore_dirs
        (None, "plugins", False),  # not under ./extensions at all
        ("extensions:\n  search_paths: [./plugins]\n", "plugins", True),
        ("extensions:\n  search_paths: [./plugins]\n", "extensions", False),
        ("extensions:\n  search_paths: [./x]\n  max_depth: 5\n", "x/a/b", True),
        ("extensions:\n  search_paths: [./x]\n  ignore_dirs: []\n", "x/dist", True),
    ],
)
def test_a_microapp_is_judged_against_the_extension_host_s_walk(
    tmp_path: Path, extensions_yaml: str | None, dest: str, loaded: bool
) -> None:
    work = tmp_path / "work"
    config = work / "config"
    (config / "plugins").mkdir(parents=True)
    # The plugin discovery's search path holds the root: a microapp is not loaded from there.
    (config / "plugins" / "discovery.yaml").write_text(
        f"discovery:\n  search_paths: [{work / dest}]\n", encoding="utf-8"
    )
    if extensions_yaml is not None:
        (config / "extensions.yaml").write_text(extensions_yaml, encoding="utf-8")
    env = clean_env(NEXO_HOME=str(tmp_path / "home"), HOME=str(tmp_path / "user"))
    tarball = _microapp_tarball(tmp_path / "dist")
    document = _install(tarball, "--dest", work / dest, cwd=work, env=env)
    warnings = _unloaded(document)
    if loaded:
        assert warnings == []
    else:
        [warning] = warnings
        assert warning.startswith(f"the daemon will not load microapp greeter from {work / dest}")
        assert "`ext enable`" in warning


def test_doctor_warns_about_what_the_daemon_never_discovers(tmp_path: Path) -> None:
    work = tmp_path / "work"
    config = work / "config"
    (config / "plugins").mkdir(parents=True)
    searched = tmp_path / "searched"
    (config / "plugins" / "discovery.yaml").write_text(
        f"discovery:\n  search_paths: [{searched}]\n", encoding="utf-8"
    )
    env = clean_env(NEXO_HOME=str(tmp_path / "home"), HOME=str(tmp_path / "user"))
    hello = write_plugin(tmp_path / "dist", "hello", "1.0.0")
    # In the plugin discovery's search path: a plugin loads, a microapp does not (no
    # extensions.yaml: the extension host walks ./extensions only).
    _install(hello, cwd=work, env=env)
    _install(_microapp_tarball(tmp_path / "dist"), cwd=work, env=env)
    # Elsewhere: a plugin the daemon never scans.
    _install(hello, "--dest", tmp_path / "elsewhere", cwd=work, env=env)

    def warned(*flags: str | Path) -> dict[str | None, str]:
        done = plugin("doctor", "--no-check", "--json", *flags, env=env, cwd=work)
        assert done.code == 0, done.stderr  # a warning: nothing is refused or failed
        report = json.loads(done.stdout)
        assert report["ok"] is True
        return {
            finding["id"]: finding["message"]
            for finding in report["findings"]
            if finding["check"] == "discovery" and finding["severity"] == "warning"
        }

    found = warned()
    assert list(found) == ["greeter"]
    assert found["greeter"].startswith(f"the daemon will not load microapp greeter from {searched}")
    found = warned("--dest", tmp_path / "elsewhere")
    assert list(found) == ["hello"]
    assert "is not one of the search paths of" in found["hello"]
    # Text output names it too.
    done = plugin("doctor", "--no-check", "--dest", tmp_path / "elsewhere", env=env, cwd=work)
    assert "discovery  hello: the daemon will not load hello from" in done.stdout + done.stderr


def test_without_a_daemon_configured_a_chosen_root_is_not_judged(tmp_path: Path) -> None:
    # No discovery.yaml nor extensions.yaml where nexo-pkg looks: the daemon that will read
    # `--dest` keeps its configuration elsewhere (a scratch root, another machine), so nothing
    # is said about it, and `-q --yes` stays silent.
    env = clean_env(NEXO_HOME=str(tmp_path / "home"), HOME=str(tmp_path / "user"))
    work = tmp_path / "work"
    work.mkdir()
    tarball = write_plugin(tmp_path / "dist", "hello", "1.0.0")
    document = _install(tarball, "--dest", tmp_path / "root", cwd=work, env=env)
    assert _unloaded(document) == []
    quiet = plugin(
        "install", tarball, "--dest", tmp_path / "quiet", "-q", "--yes", "--skip-signature-verify",
        env=env, cwd=work,
    )  # fmt: skip
    assert quiet.code == 0, quiet.stderr
    assert "will not load" not in quiet.stderr


def test_an_install_that_needs_no_configuration_directory_is_not_refused_for_one(
    tmp_path: Path,
) -> None:
    # `--dest` and `--trusted-keys` name everything an install reads: a NEXO_CONFIG_DIR that
    # names nothing is not looked at (the root is then not judged), as before the daemon's
    # reach was judged. Without --trusted-keys the policy is read from there: refused.
    nowhere = tmp_path / "nowhere"
    env = clean_env(
        NEXO_HOME=str(tmp_path / "home"), HOME=str(tmp_path / "user"), NEXO_CONFIG_DIR=str(nowhere)
    )
    work = tmp_path / "work"
    work.mkdir()
    policy = tmp_path / "trusted_keys.toml"
    policy.write_text('default = "warn"\n', encoding="utf-8")
    tarball = write_plugin(tmp_path / "dist", "hello", "1.0.0")
    document = _install(
        tarball, "--dest", tmp_path / "root", "--trusted-keys", policy, cwd=work, env=env
    )
    assert Path(document["path"]).parent == tmp_path / "root"
    assert _unloaded(document) == []
    refused = plugin("install", tarball, "--yes", "--json", "--dest", tmp_path / "other",
                     env=env, cwd=work)  # fmt: skip
    assert refused.code == 2, refused.stderr
    assert json.loads(refused.stdout)["kind"] == "config"
    assert not (tmp_path / "other").exists()
    assert not nowhere.exists()


@pytest.mark.parametrize("kind", ["microapp", "plugin"])
def test_enable_and_disable_warn_as_install_does_where_the_daemon_never_looks(
    tmp_path: Path, kind: str
) -> None:
    # The edit still happens (the operator may be about to change the configuration) and the
    # exit code is unchanged, but the line install printed is printed again: the daemon
    # would not load the plugin however the lists say.
    work = tmp_path / "work"
    config = work / "config"
    (config / "plugins").mkdir(parents=True)
    searched = tmp_path / "searched"
    (config / "plugins" / "discovery.yaml").write_text(
        f"discovery:\n  search_paths: [{searched}]\n", encoding="utf-8"
    )
    # (There from the start: the sentence names the file as it stands, and disable adds it.)
    (config / "extensions.yaml").write_text("extensions:\n  max_depth: 3\n", encoding="utf-8")
    env = clean_env(NEXO_HOME=str(tmp_path / "home"), HOME=str(tmp_path / "user"))
    plugin_id = "greeter" if kind == "microapp" else "hello"
    tarball = (
        _microapp_tarball(tmp_path / "dist")
        if kind == "microapp"
        else write_plugin(tmp_path / "dist", "hello", "1.0.0")
    )
    # A plugin outside the plugin discovery's search paths, a microapp outside ./extensions.
    elsewhere = tmp_path / "elsewhere"
    [installed] = _unloaded(_install(tarball, "--dest", elsewhere, cwd=work, env=env))
    edited = config / ("extensions.yaml" if kind == "microapp" else "plugins/discovery.yaml")

    for command, state in (("disable", "disabled"), ("enable", "enabled")):
        flags = (plugin_id, "--dest", elsewhere, "--config", config)
        text = plugin(command, *flags, env=env, cwd=work)
        assert text.code == 0, text.stderr
        assert [line for line in text.stderr.splitlines() if "will not load" in line] == [
            f"warning: {installed}"
        ]
        assert f"{plugin_id} {state} in {edited}" in text.stderr
        listed = yaml_lists(edited)
        assert (plugin_id in listed) == (command == "disable")
        # --json carries it where install's does; the line is on stderr all the same.
        again = plugin(command, *flags, "--json", env=env, cwd=work)
        assert again.code == 0, again.stderr
        document = json.loads(again.stdout)
        assert (document["state"], document["changed"]) == (state, False)
        assert document["warnings"] == [installed]
        assert f"warning: {installed}" in again.stderr.splitlines()


def test_enable_and_disable_say_nothing_more_where_the_daemon_looks(tmp_path: Path) -> None:
    work = tmp_path / "work"
    config = work / "config"
    (config / "plugins").mkdir(parents=True)
    (config / "plugins" / "discovery.yaml").write_text(
        f"discovery:\n  search_paths: [{work / 'extensions'}]\n", encoding="utf-8"
    )
    env = clean_env(NEXO_HOME=str(tmp_path / "home"), HOME=str(tmp_path / "user"))
    hello = write_plugin(tmp_path / "dist", "hello", "1.0.0")
    greeter = _microapp_tarball(tmp_path / "dist")
    for tarball in (hello, greeter):  # both under the walks: ./extensions is the default
        assert _unloaded(_install(tarball, cwd=work, env=env)) == []
    for plugin_id in ("hello", "greeter"):
        for command in ("disable", "enable"):
            done = plugin(command, plugin_id, "--config", config, "--json", env=env, cwd=work)
            assert done.code == 0, done.stderr
            assert json.loads(done.stdout)["warnings"] == []
            assert "warning" not in done.stderr


def yaml_lists(path: Path) -> list[str]:
    """Every id a `disabled:` list of the daemon's configuration file names."""
    document = yaml.safe_load(path.read_text(encoding="utf-8"))
    section = document.get("extensions") or document.get("discovery") or {}
    return list(section.get("disabled") or [])


def test_a_json_install_into_the_fallback_root_carries_the_note(tmp_path: Path) -> None:
    # The terminal's note that no daemon scans the fallback root is in the --json document
    # too (`notes`, not a warning of the install): a script is told, never a silent fall back.
    env = clean_env(NEXO_HOME=str(tmp_path / "home"), HOME=str(tmp_path / "user"))
    work = tmp_path / "work"
    work.mkdir()
    tarball = write_plugin(tmp_path / "dist", "hello", "1.0.0")
    document = _install(tarball, cwd=work, env=env)
    root = tmp_path / "home" / "state" / "plugins"
    assert Path(document["path"]).parent == root
    assert _unloaded(document) == []
    [said] = document["notes"]
    assert said.startswith(f"the daemon will not load hello from {root}: ")
    assert "scans no directory" in said
    # A root the operator chose (--dest) with no daemon configured is not judged: no note.
    chosen = _install(tarball, "--dest", tmp_path / "root", cwd=work, env=env)
    assert "notes" not in chosen
