"""Fleet commands fail with one line and a kind (one JSON document with --json), never a
traceback, and write nothing."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from support.stderr import without_notes

from .conftest import json_of, run_nexo


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.parametrize(
    ("args", "code", "kind"),
    [
        (["install", "oci://127.0.0.1:1/Bad/Name", "--yes"], 2, "source_invalid"),
        (["install", "oci://registry.example/a/b:1", "--plain-http", "--yes"], 2, "usage"),
        (["push", "{tmp}/no-such-dist", "oci://127.0.0.1:1/a/b"], 2, "usage"),
        (["push", "{tmp}", "oci://127.0.0.1:1/a/b@sha256:" + "a" * 64], 2, "usage"),
        (["mirror", "acme/echo", "oci://127.0.0.1:1/a/b"], 2, "usage"),
        (["lock", "-f", "{tmp}/missing.toml"], 2, "wanted_invalid"),
        (["sync", "--lock", "{tmp}/missing.lock", "--dest", "{tmp}/root"], 2, "lock_invalid"),
        (
            ["sync", "--lock", "{tmp}/missing.lock", "--dest", "{tmp}/root", "--frozen"],
            1,
            "lock_stale",
        ),
        (["lock", "-f", "{tmp}/missing.toml", "--check"], 2, "wanted_invalid"),
        (["install", "oci://127.0.0.1:{port}/a/b:1", "--plain-http", "--yes"], 1, "network"),
        (
            [
                "install",
                "oci://127.0.0.1:1/a/b:1",
                "--registry-config",
                "{tmp}/none.json",
                "--plain-http",
                "--yes",
            ],
            2,
            "registry_config",
        ),
    ],
)
def test_bad_input_is_one_line_with_its_kind(
    tmp_path: Path, fleet_env: dict[str, str], args: list[str], code: int, kind: str
) -> None:
    filled = [
        arg.replace("{tmp}", str(tmp_path)).replace("{port}", str(_closed_port())) for arg in args
    ]
    if filled[0] == "install":
        filled += ["--dest", str(tmp_path / "root")]
    result = run_nexo(fleet_env, *filled, "--json")
    assert result.returncode == code, result.stderr
    assert "Traceback" not in result.stderr
    problems = without_notes(result.stderr)
    assert problems.count("\n") == 1
    assert problems.startswith("error: ")
    assert json_of(result)["kind"] == kind
    assert not (tmp_path / "root").exists() or not any((tmp_path / "root").iterdir())
