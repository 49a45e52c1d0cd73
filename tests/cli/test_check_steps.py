"""`pack --check` and `install --check`: the handshake checks as the last step of both."""

from __future__ import annotations

import json
import os
from functools import partial
from pathlib import Path
from typing import Any

from support.cli import nexo

MANIFEST = """[plugin]
id = "noisy"
version = "0.1.0"
name = "Noisy"
description = "Prints a banner instead of speaking JSON-RPC"
min_nexo_version = ">=0.1.0"
"""


# `nexo plugin ...` in this process: these runs need no process of their own.
plugin = partial(nexo, "plugin", in_process=True)


def tree(root: Path) -> dict[str, bytes]:
    return {
        str(path.relative_to(root)): path.read_bytes() if path.is_file() else b"<dir>"
        for path in sorted(root.rglob("*"))
    }


def verdicts(report: dict[str, Any]) -> dict[str, str]:
    """``{check name: status}`` of a check report document (its details name temporary paths
    and pids, which differ from run to run)."""
    return {check["name"]: check["status"] for check in report["checks"]}


def test_pack_and_install_with_check_pass(tmp_path: Path, offline_pip_env: dict[str, str]) -> None:
    assert plugin("new", "demo", "--lang", "python", cwd=tmp_path).code == 0
    project = tmp_path / "demo"

    packed = plugin("pack", "--check", "--json", cwd=project, env={**os.environ, **offline_pip_env})
    assert packed.code == 0, packed.stderr
    document = json.loads(packed.stdout)
    assert document["ok"] is True
    assert document["check"]["ok"] is True
    assert {check["status"] for check in document["check"]["checks"]} <= {"pass", "warn"}

    tarball = project / document["assets"][0]["path"]
    dest = tmp_path / "plugins"
    env = {"NEXO_HOME": str(tmp_path / "home")}
    installed = plugin(
        "install", str(tarball), "--dest", str(dest), "--yes", "--check", "--json",
        cwd=tmp_path, env={**os.environ, **env},
    )  # fmt: skip
    assert installed.code == 0, installed.stderr
    result = json.loads(installed.stdout)
    assert result["ok"] is True
    assert result["check"]["ok"] is True
    assert (dest / "demo-0.1.0" / ".nexo-install.json").is_file()


def test_pack_check_failure_exits_1_and_keeps_the_assets(tmp_path: Path) -> None:
    project = tmp_path / "noisy"
    (project / "src").mkdir(parents=True)
    (project / "nexo-plugin.toml").write_text(MANIFEST, encoding="utf-8")
    (project / "src" / "main.py").write_text('print("hello from noisy")\n', encoding="utf-8")

    packed = plugin("pack", "--check", "--json", "--source-date-epoch", "1700000000", cwd=project)
    assert packed.code == 1, packed.stderr
    document = json.loads(packed.stdout)
    assert document["ok"] is False
    assert document["kind"] == "check_failed"
    assert document["check"]["ok"] is False
    failed = {c["name"]: c["detail"] for c in document["check"]["checks"] if c["status"] == "fail"}
    # The banner is tolerated (a warning); the exit before any reply is the failure.
    assert failed == {
        "initialize": "no reply to initialize: the plugin exited with code 0 before replying"
    }
    assert verdicts(document["check"])["frames.json"] == "warn"
    assert "FAIL initialize" in packed.stderr
    # The tarball itself was built correctly; only the check failed.
    tarball = project / "dist" / "noisy-0.1.0-noarch.tar.gz"
    assert tarball.is_file()
    # The same checks, with the same verdicts, as `nexo plugin check` of that tarball.
    checked = plugin("check", str(tarball), "--json", cwd=tmp_path)
    assert checked.code == 1
    assert verdicts(document["check"]) == verdicts(checked.document)

    dest = tmp_path / "plugins"
    env = {"NEXO_HOME": str(tmp_path / "home")}
    installed = plugin(
        "install", str(project / "dist" / "noisy-0.1.0-noarch.tar.gz"), "--dest", str(dest),
        "--yes", "--check", "--json", cwd=tmp_path, env={**os.environ, **env},
    )  # fmt: skip
    assert installed.code == 1
    result = json.loads(installed.stdout)
    assert result["kind"] == "check_failed"
    assert result["check"]["ok"] is False
    assert verdicts(result["check"]) == verdicts(checked.document)
    assert "noisy-0.1.0" in tree(dest)
    assert "nexo plugin remove noisy" in installed.stderr


def test_a_microapp_the_extension_host_cannot_load_fails_pack_and_install_check(
    tmp_path: Path,
) -> None:
    """A scaffolded microapp changed to answer `initialize` with its tools as bare names (the
    Rust SDK's shape): the extension host's decode fails, so `pack --check` and `install
    --check` each fail with `check_failed`, naming the daemon's reason, and keep what they
    wrote (the tarball; the installed tree, with the command that removes it)."""
    env = {**os.environ, "HOME": str(tmp_path / "home"), "NEXO_HOME": str(tmp_path / "nexo")}
    assert plugin("new", "greeter", "--kind", "microapp", cwd=tmp_path, env=env).code == 0
    project = tmp_path / "greeter"
    main = project / "src" / "main.py"
    daemon_shape = '"tools": TOOLS, "hooks"'
    assert daemon_shape in main.read_text(encoding="utf-8")
    main.write_text(
        main.read_text(encoding="utf-8").replace(
            daemon_shape, '"tools": [tool["name"] for tool in TOOLS], "hooks"'
        ),
        encoding="utf-8",
    )

    def failed(document: dict[str, object]) -> dict[str, str]:
        check = document["check"]
        assert isinstance(check, dict)
        assert check["ok"] is False
        return {
            item["name"]: item["detail"] for item in check["checks"] if item["status"] == "fail"
        }

    packed = plugin("pack", "--check", "--json", cwd=project, env=env)
    assert packed.code == 1, packed.stderr
    document = json.loads(packed.stdout)
    assert (document["ok"], document["kind"]) == (False, "check_failed")
    reasons = failed(document)
    assert sorted(reasons) == ["handshake", "initialize"]
    assert "StartError::DecodeHandshake" in reasons["handshake"]
    assert packed.stderr.rstrip().splitlines()[-1].endswith(" [check_failed]")
    [tarball] = (project / "dist").glob("greeter-0.1.0-*.tar.gz")

    dest = tmp_path / "ext"
    installed = plugin(
        "install", str(tarball), "--dest", str(dest), "--yes", "--check", "--json",
        cwd=tmp_path, env=env,
    )  # fmt: skip
    assert installed.code == 1, installed.stderr
    result = json.loads(installed.stdout)
    assert (result["ok"], result["kind"]) == (False, "check_failed")
    assert sorted(failed(result)) == ["handshake", "initialize"]
    assert (dest / "greeter-0.1.0" / "plugin.toml").is_file()
    last = installed.stderr.rstrip().splitlines()[-1]
    assert last.endswith(" [check_failed]"), installed.stderr
    assert f"nexo plugin remove greeter --dest {dest}" in last
