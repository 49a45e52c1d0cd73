"""A registry that answers slowly is explained on stderr, as a slow GitHub answer is (gh and pip
say that they are waiting): after 3 s the host, the attempt and the time left. ``push``,
``mirror`` and ``install`` say so on their ``--help``. The real ``docker-registry`` behind a
loopback proxy that holds one answer back."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.cli import nexo
from support.registry import Registry
from support.registry_proxy import RegistryProxy

from .conftest import installed, publish, unsigned_dist


def _notes(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("waiting for")]


@pytest.mark.parametrize("json_output", [False, True])
def test_a_slow_registry_answer_is_explained_on_stderr(
    tmp_path: Path, net_env: dict[str, str], registry: Registry, json_output: bool
) -> None:
    publish(unsigned_dist(tmp_path / "dist"), registry.ref("plugins/echo:1.2.3"), tmp_path / "h")
    proxy = RegistryProxy(registry.host).start()
    proxy.slow("GET", "/manifests/1.2.3", 4.0, times=1)
    dest = tmp_path / "plugins"
    flags = ["--json"] if json_output else []
    try:
        result = nexo(
            "plugin", "install", proxy.ref("plugins/echo:1.2.3"), "--dest", str(dest),
            "--plain-http", "--yes", "--timeout", "60", *flags, env=net_env, in_process=True,
        )  # fmt: skip
    finally:
        proxy.stop()
    assert result.code == 0, result.stdout + result.stderr
    assert installed(dest) == ["echo-1.2.3"]
    if json_output:
        # --json keeps stderr for the error line alone.
        assert _notes(result.stderr) == []
        return
    [line] = _notes(result.stderr)
    assert line.startswith(f"waiting for {proxy.host}: no answer after 3 s (attempt 1 of "), line
    assert "giving up in " in line


def test_a_slow_registry_is_explained_to_push(
    tmp_path: Path, net_env: dict[str, str], registry: Registry
) -> None:
    proxy = RegistryProxy(registry.host).start()
    proxy.slow("PUT", "/manifests/", 4.0, times=1)
    try:
        result = nexo(
            "plugin", "push", str(unsigned_dist(tmp_path / "dist")),
            proxy.ref("plugins/echo:1.2.3"), "--plain-http", "--timeout", "60",
            env=net_env, in_process=True,
        )  # fmt: skip
    finally:
        proxy.stop()
    assert result.code == 0, result.stdout + result.stderr
    # A manifest PUT is not sent twice: its one attempt is said as one.
    [line] = _notes(result.stderr)
    assert line.startswith(f"waiting for {proxy.host}: no answer after 3 s (attempt 1 of 1; "), line
