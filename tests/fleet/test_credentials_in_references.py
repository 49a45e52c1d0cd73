"""A user name and password written into an ``oci://`` reference (``oci://USER:PASS@HOST/…``)
are refused before anything is sent, by every command that takes one, and never printed:
the error (text and ``--json``) masks them and says where credentials go."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.cli import nexo
from support.registry import PASSWORD, USER, Registry

from .conftest import MakeDist


def _secret_free(result_text: str) -> None:
    assert PASSWORD not in result_text
    assert f"{USER}:" not in result_text


@pytest.mark.parametrize(
    "command",
    [
        ("install", "{ref}", "--dest", "{tmp}/root", "--plain-http", "--yes"),
        ("info", "{ref}", "--plain-http"),
        ("push", "{dist}", "{ref}", "--plain-http"),
        ("mirror", "{ref}", "oci://{host}/plugins/copy", "--plain-http"),
        ("mirror", "oci://{host}/plugins/echo:1.2.3", "{ref}", "--plain-http"),
    ],
    ids=["install", "info", "push", "mirror-from", "mirror-to"],
)
def test_a_reference_with_credentials_is_refused_and_masked(
    *,
    tmp_path: Path,
    fleet_env: dict[str, str],
    auth_registry: Registry,
    make_dist: MakeDist,
    command: tuple[str, ...],
) -> None:
    ref = f"oci://{USER}:{PASSWORD}@{auth_registry.host}/plugins/echo:1.2.3"
    values = {
        "ref": ref,
        "tmp": str(tmp_path),
        "dist": str(make_dist()),
        "host": auth_registry.host,
    }
    arguments = [part.format(**values) for part in command]
    asked = auth_registry.all_requests()  # the fixture's own readiness probe
    for json_flag in ((), ("--json",)):
        result = nexo("plugin", *arguments, *json_flag, env=fleet_env, in_process=True)
        assert result.code == 2, result.stderr
        _secret_free(result.stdout + result.stderr)
        line = result.stderr.strip().splitlines()[-1]
        assert f"'oci://***@{auth_registry.host}/plugins/echo:1.2.3'" in line
        assert "credentials do not go in the reference" in line
        if json_flag:
            document = json.loads(result.stdout)
            assert document["kind"] == "source_invalid"
            assert document["source"] == f"oci://***@{auth_registry.host}/plugins/echo:1.2.3"
    assert auth_registry.all_requests() == asked  # nothing sent, the credentials least of all
    assert not (tmp_path / "root").exists()


def test_a_wanted_set_or_mirror_with_credentials_is_refused_and_masked(
    tmp_path: Path, fleet_env: dict[str, str], auth_registry: Registry
) -> None:
    host = auth_registry.host
    secret = f"{USER}:{PASSWORD}@{host}"
    wanted = tmp_path / "nexo-plugins.toml"
    wanted.write_text(f'[plugins.echo]\nsource = "oci://{secret}/plugins/echo:1.2.3"\n')
    lock_file = tmp_path / "nexo-plugins.lock"
    asked = auth_registry.all_requests()  # the fixture's own readiness probe
    for command in (
        ("lock", "-f", str(wanted)),
        ("lock", "-f", str(wanted), "--check"),
        ("sync", "--lock", str(lock_file), "--dest", str(tmp_path / "root")),
    ):
        result = nexo("plugin", *command, "--plain-http", "--json", env=fleet_env, in_process=True)
        assert result.code == 2, result.stderr
        _secret_free(result.stdout + result.stderr)
        assert "oci://***@" in json.loads(result.stdout)["error"]
    # A mirror names a host, never a user: as a flag, in the environment, in the wanted set.
    wanted.write_text(f'[registries."{host}"]\nmirrors = ["{secret}"]\n')
    for flags, env in (
        (("--registry-mirror", f"{host}={secret}"), fleet_env),
        (("--registry-mirror", secret), fleet_env),
        ((), {**fleet_env, "NEXO_REGISTRY_MIRRORS": f"{host}={secret}"}),
        ((), fleet_env),
    ):
        result = nexo(
            "plugin", "sync", "--lock", str(lock_file), "--dest", str(tmp_path / "root"),
            *flags, "--json", env=env, in_process=True,
        )  # fmt: skip
        assert result.code == 2, result.stderr
        _secret_free(result.stdout + result.stderr)
        assert "***@" in json.loads(result.stdout)["error"]
    assert auth_registry.all_requests() == asked
    assert not lock_file.exists()
    assert not (tmp_path / "root").exists()
