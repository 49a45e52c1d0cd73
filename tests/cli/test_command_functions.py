"""Every ``plugin`` command is a module-level function of its CLI module, the very object its
``register()`` attaches to the Typer app: a test imports it and calls it like any function."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest
import typer

from nexo_pkg.cli.app import COMMANDS
from nexo_pkg.cli.fleet import cache_dir_command
from nexo_pkg.cli.install import list_command, verify_command
from nexo_pkg.cli.trust import list_command as trust_list_command

# ``lint``'s module keeps its Typer declarations inside register(): its fast path (a cold
# ``nexo plugin lint``) must not import Typer at all.
LIFTED = sorted({spec.module for spec in COMMANDS.values()} - {"lint"})


def _registered(module_name: str) -> typer.Typer:
    module = importlib.import_module(f"nexo_pkg.cli.{module_name}")
    holder = typer.Typer()
    module.register(holder)
    return holder


@pytest.mark.parametrize("module_name", LIFTED)
def test_register_attaches_the_module_level_functions(module_name: str) -> None:
    module = importlib.import_module(f"nexo_pkg.cli.{module_name}")
    holder = _registered(module_name)
    groups = [group.typer_instance for group in holder.registered_groups]
    infos = [
        *holder.registered_commands,
        *(info for group in groups if group is not None for info in group.registered_commands),
    ]
    assert infos
    module_level = {id(value) for value in vars(module).values() if callable(value)}
    for info in infos:
        assert info.callback is not None
        assert id(info.callback) in module_level, (module_name, info.name)


def test_every_plugin_command_is_registered_by_its_module() -> None:
    names: set[str | None] = set()
    for module_name in {spec.module for spec in COMMANDS.values()}:
        holder = _registered(module_name)
        names.update(info.name for info in holder.registered_commands)
        names.update(info.name for info in holder.registered_groups)
    assert names == set(COMMANDS)


def test_list_called_as_a_function_prints_its_document(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "plugins"
    list_command(dest=root, config=None, include_orphan=False, json_output=True)
    document = json.loads(capsys.readouterr().out)
    assert document == {
        "ok": True,
        "dest": str(root),
        "roots": [str(root)],
        "unreadable": [],
        "plugins": [],
    }


def test_verify_called_as_a_function_exits_with_its_verdict(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "plugins"
    (root / "stray").mkdir(parents=True)
    with pytest.raises(typer.Exit) as verdict:
        verify_command(plugin_id=None, dest=root, config=None, lock_file=None, json_output=True)
    assert verdict.value.exit_code == 1
    document = json.loads(capsys.readouterr().out)
    assert document["ok"] is False
    assert [plugin["problem"] for plugin in document["plugins"]] == ["no install receipt"]


def test_trust_list_and_cache_dir_called_as_functions(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NEXO_HOME", str(tmp_path / "home"))
    cache_dir_command()
    assert capsys.readouterr().out == f"{tmp_path / 'home' / 'cache' / 'blobs'}\n"
    policy = tmp_path / "trusted_keys.toml"
    policy.write_text('default = "require"\n')
    trust_list_command(trusted_keys=policy, config=None, json_output=True)
    document = json.loads(capsys.readouterr().out)
    assert (document["policy"], document["default"], document["authors"]) == (
        str(policy),
        "require",
        [],
    )
