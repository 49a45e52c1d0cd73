"""A credential helper that cannot be run, or that does not end, is one ``registry_config``
line in words (exit 2), naming the program; not Python's ``[Errno 8] …: '/path'`` or a
``Command '[…]' timed out`` with its argument list; nothing is installed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.cli import CliResult, clean_env, nexo

HOST = "127.0.0.1:9"


def _install(
    tmp_path: Path, helper_text: bytes, *, in_process: bool = False
) -> tuple[Path, list[CliResult]]:
    helpers = tmp_path / "helpers"
    helpers.mkdir()
    helper = helpers / "docker-credential-nexo-test"
    helper.write_bytes(helper_text)
    helper.chmod(0o755)
    docker = tmp_path / "docker"
    docker.mkdir()
    (docker / "config.json").write_text(json.dumps({"credHelpers": {HOST: "nexo-test"}}))
    (tmp_path / "no-config").mkdir()
    env = clean_env(NEXO_HOME=str(tmp_path / "home"), DOCKER_CONFIG=str(docker))
    env["PATH"] = f"{helpers}:{env.get('PATH', '/usr/bin:/bin')}"
    args = ("plugin", "install", f"oci://{HOST}/plugins/hello:1.0.0", "--plain-http", "--yes",
            "--config", str(tmp_path / "no-config"), "--dest", str(tmp_path / "root"))  # fmt: skip
    runs = [
        nexo(*args, *extra, env=env, cwd=tmp_path, in_process=in_process)
        for extra in ((), ("--json",))
    ]
    return helper, runs


def _one_line(tmp_path: Path, runs: list[CliResult], expected: str) -> None:
    text, as_json = runs
    for result in runs:
        assert result.code == 2, result.stderr
        assert "Traceback" not in result.stderr
    assert as_json.document["kind"] == "registry_config", as_json.document
    assert as_json.document["error"] == expected
    assert text.stderr.splitlines()[-1] == f"error: {expected} [registry_config]"
    assert not (tmp_path / "root").exists()


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"\x00\x01\x02 not a program", "Exec format error"),
        (b"#!/nonexistent/interpreter\n", "the interpreter its #! line names does not exist"),
    ],
    ids=["not-a-program", "missing-interpreter"],
)
def test_a_credential_helper_that_cannot_run_is_named_in_words(
    tmp_path: Path, content: bytes, reason: str
) -> None:
    helper, runs = _install(tmp_path, content)
    _one_line(
        tmp_path,
        runs,
        f"credential helper docker-credential-nexo-test failed: cannot run {helper}: {reason}",
    )


def test_a_credential_helper_that_does_not_end_is_named_with_its_timeout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In process, to hold the helper to a one-second timeout."""
    from nexo_pkg.sources import oci_auth

    monkeypatch.setattr(oci_auth, "HELPER_TIMEOUT", 1.0)
    _, runs = _install(tmp_path, b"#!/bin/sh\nexec sleep 20\n", in_process=True)
    _one_line(
        tmp_path,
        runs,
        "credential helper docker-credential-nexo-test failed: it did not end within 1 seconds",
    )
