"""`pack` of a microapp project: the extension manifest and its companion both lint and both
go into the tarball."""

from __future__ import annotations

import json
import re
import tarfile
from pathlib import Path

import pytest
from support.cli import clean_env, nexo

from nexo_pkg.pack.build import PackOptions, pack
from nexo_pkg.pack.errors import PackError
from nexo_pkg.scaffold.generator import NewProject, create_project


def microapp(tmp_path: Path) -> Path:
    return create_project(NewProject("greeter", dest=tmp_path / "greeter", kind="microapp")).path


def test_both_manifests_are_packed(tmp_path: Path) -> None:
    project = microapp(tmp_path)
    result = pack(PackOptions(project=project, out=tmp_path / "dist"))
    assert (result.plugin_id, result.version) == ("greeter", "0.1.0")
    with tarfile.open(result.tarball.path) as archive:
        names = archive.getnames()
        extension = archive.extractfile("plugin.toml")
        assert extension is not None
        assert extension.read() == (project / "plugin.toml").read_bytes()
    assert {"plugin.toml", "nexo-plugin.toml", "bin/greeter", "lib/plugin/main.py"} <= set(names)
    assert (tmp_path / "dist" / "plugin.toml").read_bytes() == (
        project / "plugin.toml"
    ).read_bytes()
    assert result.notes == ()


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("plugin.toml", '\n[context]\npassthrough = "yes"\n'),
        ("nexo-plugin.toml", "\n[plugin.unknown]\nkey = 1\n"),
    ],
)
def test_a_manifest_that_does_not_lint_writes_nothing(tmp_path: Path, name: str, text: str) -> None:
    project = microapp(tmp_path)
    with (project / name).open("a", encoding="utf-8") as handle:
        handle.write(text)
    out = tmp_path / "dist"
    with pytest.raises(PackError) as caught:
        pack(PackOptions(project=project, out=out))
    assert caught.value.kind == "manifest_invalid"
    assert not out.exists()


def test_a_hyphenated_microapp_id_is_refused_with_the_reason(tmp_path: Path) -> None:
    project = microapp(tmp_path)
    for name in ("plugin.toml", "nexo-plugin.toml"):
        path = project / name
        path.write_text(
            path.read_text("utf-8").replace('id = "greeter"', 'id = "greeter-bot"'), "utf-8"
        )
    out = tmp_path / "dist"
    with pytest.raises(PackError) as caught:
        pack(PackOptions(project=project, out=out))
    assert caught.value.kind == "manifest_invalid"
    assert "microapp id may hold `-`" in str(caught.value)
    assert "'greeter_bot'" in str(caught.value)
    assert not out.exists()


def test_the_rule_a_hyphenated_id_is_refused_by_is_the_one_its_fix_passes(tmp_path: Path) -> None:
    """A 40-character microapp id with a `-`: the one line states the id rule pack applies
    (ids up to the daemon's 64 characters), which the suggested id meets, and that id packs."""
    project = microapp(tmp_path)
    hyphenated = "greeter" + "-x" * 16 + "y"
    assert len(hyphenated) == 40
    fixed = hyphenated.replace("-", "_")

    def rename(old: str, new: str) -> None:
        for name in ("plugin.toml", "nexo-plugin.toml"):
            path = project / name
            path.write_text(path.read_text("utf-8").replace(f'id = "{old}"', f'id = "{new}"'))

    rename("greeter", hyphenated)
    refused = nexo("plugin", "pack", "--json", cwd=project, env=clean_env())
    assert refused.code == 1, refused.stderr
    document = json.loads(refused.stdout)
    assert document["kind"] == "manifest_invalid"
    rule = re.search(r"it must match (\S+)", document["error"])
    assert rule is not None
    assert f"{fixed!r}" in document["error"]
    assert re.fullmatch(rule.group(1), fixed)
    assert not (project / "dist").exists()

    rename(hyphenated, fixed)
    packed = nexo("plugin", "pack", "--json", cwd=project, env=clean_env())
    assert packed.code == 0, packed.stderr
    assert json.loads(packed.stdout)["id"] == fixed


def _with_transport_command(project: Path, command: str) -> Path:
    manifest = project / "plugin.toml"
    text = manifest.read_text(encoding="utf-8")
    assert 'command = "./bin/greeter"' in text
    manifest.write_text(
        text.replace('command = "./bin/greeter"', f'command = "{command}"'), encoding="utf-8"
    )
    return project


@pytest.mark.parametrize(
    ("command", "state"),
    [("./run.sh", "is not in"), ("./lib/plugin/main.py", "is not executable in")],
)
def test_a_transport_command_the_tarball_lacks_is_warned(
    tmp_path: Path, command: str, state: str
) -> None:
    """The daemon spawns `[transport] command` in the directory of plugin.toml (stdio.rs:676-688,
    src/main.rs:6623-6626 in lordmacu/nexo-rs): the tarball's root once installed."""
    project = _with_transport_command(microapp(tmp_path), command)
    result = pack(PackOptions(project=project, out=tmp_path / "dist"))
    assert result.notes == (
        f"plugin.toml's [transport] command `{command}` {state} the tarball, which ships "
        "bin/greeter to run the microapp: the daemon runs it in the directory of plugin.toml, "
        "the tarball's root, so the installed microapp would not start; set [transport] "
        'command = "./bin/greeter"',
    )
    completed = nexo(
        "plugin", "pack", project, "--out", tmp_path / "dist2", "--json", env=clean_env()
    )
    assert completed.code == 0, completed.stderr
    assert json.loads(completed.stdout)["warnings"] == list(result.notes)


@pytest.mark.parametrize("command", ["./bin/greeter", "bin/greeter", "/usr/bin/python3", "python3"])
def test_a_transport_command_the_tarball_holds_or_the_host_finds_is_not_warned(
    tmp_path: Path, command: str
) -> None:
    project = _with_transport_command(microapp(tmp_path), command)
    assert pack(PackOptions(project=project, out=tmp_path / "dist")).notes == ()
