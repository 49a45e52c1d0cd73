"""A scaffolded microapp's whole life, offline: `new --kind microapp` → its own tests → lint →
check → pack → check the tarball → install (the local tarball) → check the installed copy."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
import tomllib
from functools import partial
from pathlib import Path
from typing import Any

import yaml
from support.cli import nexo

# `nexo plugin ...` in this process; the microapp and its own tests run as processes.
plugin = partial(nexo, "plugin", in_process=True)


def checked(document: dict[str, Any]) -> dict[str, str]:
    return {check["name"]: check["status"] for check in document["checks"]}


def test_new_lint_check_pack_install_check(tmp_path: Path) -> None:
    home = tmp_path / "home"
    config = tmp_path / "config"
    config.mkdir()
    # The launchers run `python3` from PATH: make it this interpreter.
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    env = {
        **os.environ,
        "PATH": path,
        "HOME": str(home),
        "NEXO_HOME": str(home / ".nexo"),
        "NEXO_CONFIG_DIR": str(config),
    }
    created = plugin(
        "new", "greeter", "--kind", "microapp", "--lang", "python", env=env, cwd=tmp_path
    )
    assert created.code == 0, created.stderr
    project = tmp_path / "greeter"
    manifest = tomllib.loads((project / "plugin.toml").read_text(encoding="utf-8"))
    companion = tomllib.loads((project / "nexo-plugin.toml").read_text(encoding="utf-8"))
    assert manifest["transport"] == {"kind": "stdio", "command": "./bin/greeter"}
    assert companion["plugin"]["id"] == manifest["plugin"]["id"] == "greeter"

    # The stanza holds only keys the daemon's ExtensionsConfig / ExtensionEntry know
    # (crates/config/src/types/extensions.rs:9-74).
    stanza = yaml.safe_load((project / "extensions.yaml.example").read_text(encoding="utf-8"))
    assert set(stanza) == {"extensions"}
    assert set(stanza["extensions"]) <= {"search_paths", "entries"}
    assert stanza["extensions"]["entries"] == {"greeter": {"capabilities_grant": []}}

    own_tests = subprocess.run(
        [sys.executable, "-m", "unittest", "discover", "-s", "tests"],
        capture_output=True, text=True, check=False, env=env, cwd=project, timeout=300,
    )  # fmt: skip
    assert own_tests.returncode == 0, own_tests.stderr
    assert "Traceback" not in own_tests.stderr, own_tests.stderr

    linted = plugin("lint", "greeter", "--format", "json", env=env, cwd=tmp_path)
    assert linted.code == 0, linted.stdout + linted.stderr

    project_check = plugin(
        "check", "greeter", "--strict", "--json", "--invoke", "greeter_hello",
        "--args", '{"name": "Ana"}', env=env, cwd=tmp_path,
    )  # fmt: skip
    assert project_check.code == 0, project_check.stdout + project_check.stderr
    document = json.loads(project_check.stdout)
    assert document["kind"] == "microapp"
    assert set(checked(document).values()) == {"pass"}
    assert document["invoke"]["result"] == {"greeting": "Hello, Ana!"}

    packed = plugin("pack", "greeter", "--out", "dist", "--json", env=env, cwd=tmp_path)
    assert packed.code == 0, packed.stdout + packed.stderr
    tarball = tmp_path / "dist" / "greeter-0.1.0-noarch.tar.gz"
    with tarfile.open(tarball) as archive:
        names = set(archive.getnames())
    assert {"plugin.toml", "nexo-plugin.toml", "bin/greeter", "lib/plugin/main.py"} <= names

    from_tarball = plugin("check", str(tarball), "--strict", "--json", env=env, cwd=tmp_path)
    assert from_tarball.code == 0, from_tarball.stdout + from_tarball.stderr
    assert json.loads(from_tarball.stdout)["kind"] == "microapp"

    dest = tmp_path / "extensions"
    installed = plugin(
        "install", str(tarball), "--dest", str(dest), "--yes", "--json", env=env, cwd=tmp_path
    )
    assert installed.code == 0, installed.stdout + installed.stderr
    tree = dest / "greeter-0.1.0"
    assert (tree / "plugin.toml").read_bytes() == (project / "plugin.toml").read_bytes()
    assert (tree / "nexo-plugin.toml").is_file()
    assert os.access(tree / "bin" / "greeter", os.X_OK)

    # The stanza, pasted as the daemon's extensions.yaml, is valid and its `./extensions`
    # search path (relative to the daemon's working directory) discovers the installed copy.
    (config / "extensions.yaml").write_bytes((project / "extensions.yaml.example").read_bytes())
    daemon_lint = plugin("lint", "--config", str(config), "--format", "json", env=env, cwd=tmp_path)
    assert daemon_lint.code == 0, daemon_lint.stdout + daemon_lint.stderr
    # Named relative to the working directory, as a directory search names what it finds.
    linted_paths = [entry["path"] for entry in json.loads(daemon_lint.stdout)["files"]]
    assert str((tree / "plugin.toml").relative_to(tmp_path)) in linted_paths

    by_id = plugin(
        "check", "greeter", "--dest", str(dest), "--config", str(config), "--strict", "--json",
        "--invoke", "greeter_hello", "--args", '{"name": "Bo"}', env=env, cwd=tmp_path,
    )  # fmt: skip
    assert by_id.code == 0, by_id.stdout + by_id.stderr
    installed_document = json.loads(by_id.stdout)
    assert installed_document["plugin"]["root"] == str(tree.resolve())
    assert set(checked(installed_document).values()) == {"pass"}
    assert installed_document["invoke"]["result"] == {"greeting": "Hello, Bo!"}
    assert installed_document["microapp"]["admin"]["grants_from"].endswith("extensions.yaml")
