"""``oras push`` of a whole ``dist/``: one image manifest whose layers are the tarball and its
sidecar, manifest copy and SBOM, as Helm pushes a chart with its provenance file. The layer of
the nexo media type is the plugin (oras-py, the ``test`` extra, against the real registry)."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.cli import CliResult, nexo
from support.registry import Registry
from support.tarballs import manifest_text, plugin_tarball, write_plugin

from nexo_pkg.sources import artifact

from .conftest import LINUX


def _oras_push(registry: Registry, reference: str, files: list[str]) -> None:
    oras_client = pytest.importorskip("oras.client", reason="oras (oras-py) is in the test extra")
    client = oras_client.OrasClient(hostname=registry.host, insecure=True)
    client.push(
        target=f"{registry.host}/{reference}",
        files=files,
        manifest_annotations={artifact.PLUGIN_ID: "echo", artifact.PLUGIN_VERSION: "1.2.3"},
        quiet=True,
    )


def _install(registry: Registry, reference: str, dest: Path, env: dict[str, str]) -> CliResult:
    return nexo(
        "plugin", "install", registry.ref(reference), "--dest", str(dest), "--plain-http",
        "--yes", "--json", env=env, in_process=True,
    )  # fmt: skip


def test_an_oras_push_of_the_whole_dist_installs_its_plugin_layer(
    tmp_path: Path, fleet_env: dict[str, str], registry: Registry, monkeypatch: pytest.MonkeyPatch
) -> None:
    directory = tmp_path / "dist"
    tarball = write_plugin(
        directory, "echo", "1.2.3", target=LINUX, data=plugin_tarball("echo", "1.2.3")
    )
    (directory / "nexo-plugin.toml").write_text(manifest_text("echo", "1.2.3"))
    monkeypatch.chdir(directory)
    _oras_push(
        registry,
        "whole/echo:1.2.3",
        [
            "nexo-plugin.toml:application/toml",
            f"{tarball.name}:{artifact.LAYER_MEDIA_TYPE}",
            f"{tarball.name}.sha256:text/plain",
        ],
    )
    result = _install(registry, "whole/echo:1.2.3", tmp_path / "plugins", fleet_env)
    assert result.code == 0, result.stderr
    document = result.document
    assert (document["id"], document["version"], document["target"]) == ("echo", "1.2.3", LINUX)
    assert (tmp_path / "plugins" / "echo-1.2.3" / "bin" / "echo").is_file()


def test_two_plugin_layers_in_one_manifest_are_refused(
    tmp_path: Path, fleet_env: dict[str, str], registry: Registry, monkeypatch: pytest.MonkeyPatch
) -> None:
    directory = tmp_path / "dist"
    first = write_plugin(directory, "echo", "1.2.3", target=LINUX)
    second = write_plugin(directory, "echo", "1.2.3", target="noarch")
    monkeypatch.chdir(directory)
    _oras_push(
        registry,
        "two/echo:1.2.3",
        [f"{first.name}:{artifact.LAYER_MEDIA_TYPE}", f"{second.name}:{artifact.LAYER_MEDIA_TYPE}"],
    )
    result = _install(registry, "two/echo:1.2.3", tmp_path / "plugins", fleet_env)
    # Which of the two is the plugin is not for install to guess.
    assert (result.code, result.document["kind"]) == (1, "registry_invalid")
    assert not (tmp_path / "plugins").exists() or not any((tmp_path / "plugins").iterdir())
