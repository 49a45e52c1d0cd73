"""``oras push`` of a whole ``dist/``: one image manifest whose layers are the tarball and its
sidecar, manifest copy and SBOM, as Helm pushes a chart with its provenance file. The layer of
the nexo media type is the plugin (oras-py, the ``test`` extra, against the real registry).

And ``oras push`` of a lone tarball without the ``dev.nexo.plugin.*`` annotations: reading is
tolerant, so the tarball's name gives the id, version and target when the manifest says it is
a nexo plugin some other way — its layer's media type, or (an OCI 1.0-style artifact, as
oras-py and ``oras push --image-spec v1.0 --artifact-type`` write it) its config's media type,
which image-spec 1.1 takes as the artifact type when ``artifactType`` is missing. A bare push
stays refused (tests/sources/test_interop.py).

The oras CLI (oras-go) writes ``artifactType: application/vnd.unknown.artifact.v1`` when it is
given none: that says "no type", so the annotations and layer media type decide, as for a
missing one; any other foreign type stays refused."""

from __future__ import annotations

import hashlib
import json
import tomllib
import urllib.request
from pathlib import Path

import pytest
from support.cli import CliResult, nexo
from support.registry import Registry
from support.tarballs import manifest_text, plugin_tarball, write_plugin

from nexo_pkg.sources import artifact

from .conftest import LINUX, MakeDist


def _oras_push(
    registry: Registry,
    reference: str,
    files: list[str],
    *,
    annotated: bool = True,
    config: str | None = None,
) -> None:
    oras_client = pytest.importorskip("oras.client", reason="oras (oras-py) is in the test extra")
    client = oras_client.OrasClient(hostname=registry.host, insecure=True)
    annotations = {artifact.PLUGIN_ID: "echo", artifact.PLUGIN_VERSION: "1.2.3"}
    client.push(
        target=f"{registry.host}/{reference}",
        files=files,
        manifest_annotations=annotations if annotated else None,
        manifest_config=config,
        quiet=True,
    )


def _put_blob(registry: Registry, repository: str, data: bytes) -> dict[str, object]:
    """Upload ``data`` monolithically; its descriptor (media type left to the caller)."""
    digest = "sha256:" + hashlib.sha256(data).hexdigest()
    base = f"http://{registry.host}/v2/{repository}/blobs/uploads/"
    with urllib.request.urlopen(urllib.request.Request(base, method="POST")) as started:
        location = started.headers["Location"]
    if location.startswith("/"):
        location = f"http://{registry.host}{location}"
    joiner = "&" if "?" in location else "?"
    put = urllib.request.Request(f"{location}{joiner}digest={digest}", data=data, method="PUT")
    put.add_header("Content-Type", "application/octet-stream")
    urllib.request.urlopen(put).close()
    return {"digest": digest, "size": len(data)}


def _put_oras_cli_manifest(registry: Registry, reference: str, artifact_type: str) -> None:
    """What ``oras push REF --annotation … echo-….tar.gz:<layer type>`` (the oras CLI, image-spec
    1.1) writes: an empty config, the tarball layer titled by its file name, and the given
    ``artifactType`` (oras's default when none is asked for is the "unknown" type)."""
    repository, tag = reference.rsplit(":", 1)
    tarball = plugin_tarball("echo", "1.2.3")
    layer = _put_blob(registry, repository, tarball)
    config = _put_blob(registry, repository, b"{}")
    manifest = {
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "artifactType": artifact_type,
        "config": {"mediaType": "application/vnd.oci.empty.v1+json", **config},
        "layers": [
            {
                "mediaType": artifact.LAYER_MEDIA_TYPE,
                **layer,
                "annotations": {"org.opencontainers.image.title": f"echo-1.2.3-{LINUX}.tar.gz"},
            }
        ],
        "annotations": {artifact.PLUGIN_ID: "echo", artifact.PLUGIN_VERSION: "1.2.3"},
    }
    url = f"http://{registry.host}/v2/{repository}/manifests/{tag}"
    put = urllib.request.Request(url, data=json.dumps(manifest).encode(), method="PUT")
    put.add_header("Content-Type", "application/vnd.oci.image.manifest.v1+json")
    urllib.request.urlopen(put).close()


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


def test_a_plugin_layer_without_annotations_installs_and_locks_named_by_its_tarball(
    tmp_path: Path, fleet_env: dict[str, str], registry: Registry, make_dist: MakeDist,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    monkeypatch.chdir(make_dist(targets=(LINUX,), identity=None))
    tarball = f"echo-1.2.3-{LINUX}.tar.gz"
    _oras_push(
        registry, "layer/echo:1.2.3", [f"{tarball}:{artifact.LAYER_MEDIA_TYPE}"], annotated=False
    )
    dest = tmp_path / "plugins"
    installed = _install(registry, "layer/echo:1.2.3", dest, fleet_env)
    assert installed.code == 0, installed.stderr
    document = installed.document
    assert (document["id"], document["version"], document["target"]) == ("echo", "1.2.3", LINUX)
    assert (dest / "echo-1.2.3" / "bin" / "echo").is_file()

    wanted = tmp_path / "nexo-plugins.toml"
    wanted.write_text(f'[plugins.echo]\nsource = "{registry.ref("layer/echo")}"\n')
    locked = nexo(
        "plugin", "lock", "-f", str(wanted), "--plain-http", "--json", env=fleet_env,
        in_process=True,
    )  # fmt: skip
    assert locked.code == 0, locked.stderr
    entry = tomllib.loads((tmp_path / "nexo-plugins.lock").read_text())["plugins"]["echo"]
    assert entry["version"] == "1.2.3"
    assert list(entry["targets"]) == [LINUX]
    assert entry["targets"][LINUX]["asset"] == tarball

    # The tarball's name is the version: a version tag must name that version.
    _oras_push(
        registry, "moved/echo:2.0.0", [f"{tarball}:{artifact.LAYER_MEDIA_TYPE}"], annotated=False
    )
    moved = tmp_path / "moved"
    refused = _install(registry, "moved/echo:2.0.0", moved, fleet_env)
    assert (refused.code, refused.document["kind"]) == (1, "registry_invalid")
    assert not moved.exists() or not any(moved.glob("echo*"))


def test_a_config_of_the_plugin_type_types_an_oci_1_0_artifact(
    tmp_path: Path, fleet_env: dict[str, str], registry: Registry, make_dist: MakeDist,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    directory = make_dist(targets=("noarch",), identity=None)
    (directory / "config.json").write_text("{}")
    monkeypatch.chdir(directory)
    _oras_push(
        registry, "config/echo:1.2.3", ["echo-1.2.3-noarch.tar.gz"],
        annotated=False, config=f"config.json:{artifact.ARTIFACT_TYPE}",
    )  # fmt: skip
    dest = tmp_path / "plugins"
    installed = _install(registry, "config/echo:1.2.3", dest, fleet_env)
    assert installed.code == 0, installed.stderr
    document = installed.document
    assert (document["id"], document["version"], document["target"]) == ("echo", "1.2.3", "noarch")
    assert (dest / "echo-1.2.3" / "nexo-plugin.toml").is_file()


def test_an_oras_cli_push_with_its_unknown_artifact_type_installs(
    tmp_path: Path, fleet_env: dict[str, str], registry: Registry
) -> None:
    _put_oras_cli_manifest(registry, "cli/echo:1.2.3", "application/vnd.unknown.artifact.v1")
    dest = tmp_path / "plugins"
    installed = _install(registry, "cli/echo:1.2.3", dest, fleet_env)
    assert installed.code == 0, installed.stderr
    document = installed.document
    assert (document["id"], document["version"], document["target"]) == ("echo", "1.2.3", LINUX)
    assert (dest / "echo-1.2.3" / "bin" / "echo").is_file()

    _put_oras_cli_manifest(registry, "other/echo:1.2.3", "application/vnd.example.other.v1")
    elsewhere = tmp_path / "elsewhere"
    refused = _install(registry, "other/echo:1.2.3", elsewhere, fleet_env)
    assert (refused.code, refused.document["kind"]) == (1, "registry_invalid")
    assert "is not a nexo plugin" in refused.document["error"]
    assert not elsewhere.exists() or not any(elsewhere.glob("echo*"))
