"""A manifest the daemon refuses is a failed check that names the lint rule, whatever the rule:
``check`` starts nothing and exits 1 ("the command ran and the answer is no"), as it does for
a tool outside the namespace or a denylisted sandbox path. Only a target that names no
manifest at all is a usage error (exit 2)."""

from __future__ import annotations

import tarfile
from pathlib import Path

import pytest
from support.cli import clean_env, nexo
from typer.testing import CliRunner

from check.check_plugins import app, cli_check, scripted_plugin
from nexo_pkg.check import run_check


@pytest.fixture
def pid_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "pids"
    monkeypatch.setenv("FIXTURE_PID_FILE", str(path))
    return path


def refused_project(root: Path, old: str, new: str) -> Path:
    """The scripted plugin (which records its pid when it starts) with one manifest edit."""
    scripted_plugin(root, "ok")
    manifest = root / "nexo-plugin.toml"
    text = manifest.read_text(encoding="utf-8")
    assert old in text
    manifest.write_text(text.replace(old, new, 1), encoding="utf-8")
    return root


EDITS = [
    pytest.param('id = "scripted"', 'id = "Bad-Id"', "NX100", id="id-uppercase"),
    pytest.param('id = "scripted"\n', "", "NX010", id="id-missing"),
    pytest.param('version = "0.1.0"', 'version = "1.0"', "NX101", id="version-not-semver"),
    pytest.param('name = "Scripted"', 'name = "Scripted', "NX001", id="toml-syntax"),
    pytest.param(
        "[plugin.entrypoint]\ncommand = ",
        "[plugin.entrypoint]\ncommand = 5\n# ",  # the command written, commented out
        "NX012",
        id="entrypoint-wrong-type",
    ),
    pytest.param(
        "[plugin.extends]",
        '[plugin.entrypoint.env]\nNEXO_X = "1"\n\n[plugin.extends]',
        "NX106",
        id="reserved-env",
    ),
]


@pytest.mark.parametrize(("old", "new", "code"), EDITS)
def test_a_manifest_the_daemon_refuses_fails_naming_the_rule_and_starts_nothing(
    tmp_path: Path, pid_file: Path, old: str, new: str, code: str
) -> None:
    root = refused_project(tmp_path / "plugin", old, new)
    exit_code, document = cli_check(root)
    assert exit_code == 1, document
    assert document["ok"] is False
    statuses = {check["name"]: (check["status"], check["detail"]) for check in document["checks"]}
    status, detail = statuses["manifest"]
    assert status == "fail"
    assert "nexo-plugin.toml:" in detail
    assert f" {code} " in detail
    assert "not started" in detail
    assert statuses["spawn"][0] == "fail"
    assert document["plugin"]["root"] == str(root.resolve())
    assert not pid_file.exists(), "the plugin was started"


@pytest.mark.parametrize(
    ("old", "new"),
    [
        pytest.param('name = "Scripted"', 'name = "Scripted', id="toml-syntax"),
        pytest.param('id = "scripted"\n', "", id="id-missing"),
    ],
)
def test_a_refused_manifest_without_an_id_names_the_plugin_directory_in_the_summary(
    tmp_path: Path, pid_file: Path, old: str, new: str
) -> None:
    root = refused_project(tmp_path / "plugin", old, new)
    result = nexo("plugin", "check", str(root), env=clean_env(NEXO_HOME=str(tmp_path / "home")))
    assert result.code == 1, result.stderr
    assert result.stdout.splitlines()[-1] == (
        f"check failed for {root.resolve()}: 0 passed, 0 warnings, 2 failed"
    )
    assert not pid_file.exists(), "the plugin was started"


def test_a_refused_id_with_control_characters_is_escaped_in_the_summary(
    tmp_path: Path, pid_file: Path
) -> None:
    root = refused_project(tmp_path / "plugin", 'id = "scripted"', 'id = "scr\\u001b[31mipted"')
    result = nexo("plugin", "check", str(root), env=clean_env(NEXO_HOME=str(tmp_path / "home")))
    assert result.code == 1, result.stderr
    assert "\x1b" not in result.stdout
    assert result.stdout.splitlines()[-1].startswith("check failed for scr\\u001b[31mipted: ")
    assert not pid_file.exists(), "the plugin was started"


def test_a_refused_manifest_inside_a_tarball_names_the_tarball(
    tmp_path: Path, pid_file: Path
) -> None:
    root = refused_project(tmp_path / "plugin", 'id = "scripted"', 'id = "Bad-Id"')
    tarball = tmp_path / "bad-0.1.0-x86_64-unknown-linux-gnu.tar.gz"
    with tarfile.open(tarball, "w:gz") as archive:
        archive.add(root / "nexo-plugin.toml", arcname="nexo-plugin.toml")
    report = run_check(tarball)
    assert not report.ok
    manifest = report.get("manifest")
    assert manifest is not None
    assert manifest.status == "fail"
    assert " NX100 " in manifest.detail
    assert report.root == str(tarball)
    assert not pid_file.exists()


def test_no_manifest_at_all_stays_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    result = CliRunner().invoke(app, ["plugin", "check", str(tmp_path / "empty"), "--json"])
    assert result.exit_code == 2


MICROAPP = """[plugin]
id = "greeter"
version = "0.1.0"

[capabilities]
tools = ["hello"]

[transport]
kind = "stdio"
command = "./run"
"""


@pytest.mark.parametrize(
    ("old", "new", "code"),
    [
        ('id = "greeter"', 'id = "Greeter"', "NX200"),
        ('command = "./run"', 'command = " "', "NX208"),
    ],
)
def test_a_microapp_manifest_the_daemon_skips_fails_naming_the_rule(
    tmp_path: Path, old: str, new: str, code: str
) -> None:
    (tmp_path / "plugin.toml").write_text(MICROAPP.replace(old, new), encoding="utf-8")
    report = run_check(tmp_path)
    assert not report.ok
    manifest = report.get("manifest")
    assert manifest is not None
    assert manifest.status == "fail"
    assert manifest.detail.startswith("plugin.toml:")
    assert f" {code} " in manifest.detail
    spawn = report.get("spawn")
    assert spawn is not None
    assert spawn.status == "fail"
