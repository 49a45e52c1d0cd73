"""A scaffolded plugin passes `nexo plugin check` as a project, and, packed with vendored
nexoai, as a tarball and as an installed plugin id."""

from __future__ import annotations

import json
import os
import sys
import tarfile
from functools import partial
from pathlib import Path

from support.cli import nexo

# `nexo plugin ...` in this process: these runs need no process of their own.
plugin = partial(nexo, "plugin", in_process=True)


def test_new_pack_check(tmp_path: Path, offline_pip_env: dict[str, str]) -> None:
    # The packed launcher runs `python3` from PATH: make it this interpreter.
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    env = {**os.environ, **offline_pip_env, "PATH": path}
    created = plugin(
        "new", "weather", "--lang", "python", "--dest", "weather", env=env, cwd=tmp_path
    )
    assert created.code == 0, created.stderr

    # The project's development launcher runs src/main.py with this environment's nexoai.
    unpacked = plugin("check", "weather", "--timeout-ms", "30000", env=env, cwd=tmp_path)
    assert unpacked.code == 0, unpacked.stderr
    assert "check passed for weather" in unpacked.stdout

    packed = plugin("pack", "weather", "--out", "dist", env=env, cwd=tmp_path)
    assert packed.code == 0, packed.stderr
    tarball = tmp_path / "dist" / "weather-0.1.0-noarch.tar.gz"

    checked = plugin(
        "check",
        str(tarball),
        "--json",
        "--timeout-ms",
        "30000",
        "--invoke",
        "weather_hello",
        "--args",
        "{}",
        env=env,
        cwd=tmp_path,
    )
    assert checked.code == 0, checked.stdout + checked.stderr
    document = json.loads(checked.stdout)
    assert document["ok"] is True
    assert [check["status"] for check in document["checks"]].count("fail") == 0
    assert "invoke" in document

    # The same tree laid out as an install: <dest>/<id>-<version>/ with a receipt.
    dest = tmp_path / "plugins"
    installed = dest / "weather-0.1.0"
    installed.mkdir(parents=True)
    with tarfile.open(tarball) as archive:
        archive.extractall(installed, filter="data")
    (installed / ".nexo-install.json").write_text(
        json.dumps({"schema_version": 1, "id": "weather", "version": "0.1.0"}), encoding="utf-8"
    )
    by_id = plugin(
        "check", "weather", "--dest", str(dest), "--timeout-ms", "30000", env=env, cwd=dest
    )
    assert by_id.code == 0, by_id.stderr
    assert "check passed for weather" in by_id.stdout
