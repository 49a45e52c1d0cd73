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
