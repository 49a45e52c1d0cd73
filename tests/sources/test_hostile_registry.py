"""Artifacts a registry (or whoever can push to it) crafts: refused, nothing written."""

from __future__ import annotations

import datetime
import json
import tarfile
from pathlib import Path
from typing import Any

import pytest
from support.cli import nexo
from support.registry import Registry
from support.tarballs import plugin_tarball, sha256_hex

from nexo_pkg.core.errors import NexoError
from nexo_pkg.install.options import InstallOptions
from nexo_pkg.install.pipeline import install
from nexo_pkg.sources import artifact
from nexo_pkg.sources.oci_reference import parse_reference
from nexo_pkg.sources.registry import INDEX_MEDIA_TYPE, MANIFEST_MEDIA_TYPE, RegistryClient

from .conftest import LINUX


def _push_target(
    client: RegistryClient, repository: str, title: str, data: bytes, sha256: str | None = None
) -> dict[str, Any]:
    """Push one target manifest carrying ``data`` titled ``title``; its index descriptor."""
    empty_digest, empty_size = client.push_blob(repository, artifact.EMPTY_DATA)
    digest, size = client.push_blob(repository, data)
    manifest = {
        "schemaVersion": 2,
        "mediaType": MANIFEST_MEDIA_TYPE,
        "config": artifact.descriptor(artifact.EMPTY_MEDIA_TYPE, empty_digest, empty_size),
        "layers": [
            artifact.descriptor(
                artifact.LAYER_MEDIA_TYPE, digest, size, annotations={artifact.TITLE: title}
            )
        ],
        "annotations": {artifact.PLUGIN_SHA256: sha256 or digest.removeprefix("sha256:")},
    }
    raw = artifact.canonical(manifest)
    manifest_digest = "sha256:" + sha256_hex(raw)
    client.put_manifest(repository, manifest_digest, raw, MANIFEST_MEDIA_TYPE)
    return artifact.descriptor(
        MANIFEST_MEDIA_TYPE, manifest_digest, len(raw),
        annotations={artifact.PLUGIN_TARGET: LINUX},
    )  # fmt: skip


def _push_index(
    client: RegistryClient, repository: str, entries: list[dict[str, Any]], **overrides: Any
) -> None:
    index = {
        "schemaVersion": 2,
        "mediaType": INDEX_MEDIA_TYPE,
        "artifactType": artifact.ARTIFACT_TYPE,
        "manifests": entries,
        "annotations": {artifact.PLUGIN_ID: "echo", artifact.PLUGIN_VERSION: "1.2.3"},
    }
    index.update(overrides)
    client.put_manifest(repository, "1.2.3", artifact.canonical(index), INDEX_MEDIA_TYPE)


def _install(tmp_path: Path, running: Registry) -> NexoError:
    home = tmp_path / "home"
    dest = tmp_path / "plugins"
    with pytest.raises(NexoError) as caught:
        install(
            running.ref("plugins/echo:1.2.3"),
            InstallOptions(dest=dest, nexo_home=home, target=LINUX, plain_http=True),
        )
    assert not dest.exists() or not [p for p in dest.iterdir() if not p.name.startswith(".")]
    return caught.value


@pytest.mark.parametrize(
    ("title", "sha_override", "index_override"),
    [
        ("../../escape.tar.gz", None, {}),
        (f"other-1.2.3-{LINUX}.tar.gz", None, {}),
        (f"echo-1.2.3-{LINUX}.tar.gz", "0" * 64, {}),
        (f"echo-1.2.3-{LINUX}.tar.gz", None, {"artifactType": "application/vnd.other"}),
    ],
)
def test_a_crafted_artifact_is_registry_invalid(
    *,
    tmp_path: Path,
    registry: Registry,
    fleet_env: dict[str, str],
    title: str,
    sha_override: str | None,
    index_override: dict[str, Any],
) -> None:
    del fleet_env
    reference = parse_reference(registry.ref("plugins/echo"))
    with RegistryClient(reference.host, plain_http=True, loopback=True) as client:
        entry = _push_target(
            client, reference.repository, title, plugin_tarball("echo", "1.2.3"), sha_override
        )
        _push_index(client, reference.repository, [entry], **index_override)
    error = _install(tmp_path, registry)
    assert error.kind == "registry_invalid"


def test_a_plain_image_is_not_a_plugin(
    tmp_path: Path, registry: Registry, fleet_env: dict[str, str]
) -> None:
    del fleet_env
    reference = parse_reference(registry.ref("plugins/echo"))
    with RegistryClient(reference.host, plain_http=True, loopback=True) as client:
        entry = _push_target(client, reference.repository, "x", b"not a plugin")
        # A single image manifest under the tag, not an index.
        raw = client.get_manifest(reference.repository, entry["digest"]).data
        client.put_manifest(reference.repository, "1.2.3", raw, MANIFEST_MEDIA_TYPE)
    error = _install(tmp_path, registry)
    assert error.kind == "registry_invalid"


def test_signature_files_are_only_taken_under_the_asset_s_own_names(
    tmp_path: Path, registry: Registry, fleet_env: dict[str, str]
) -> None:
    del fleet_env
    from nexo_pkg.sources.oci import TargetFiles, push_version

    tarball = tmp_path / f"echo-1.2.3-{LINUX}.tar.gz"
    tarball.write_bytes(plugin_tarball("echo", "1.2.3"))
    hostile = tmp_path / "hostile.json"
    hostile.write_text("{}")
    escape_name = f"../../{tmp_path.name}-escaped.sigstore.json"
    reference = parse_reference(registry.ref("plugins/echo:1.2.3"))
    with RegistryClient(reference.host, plain_http=True, loopback=True) as client:
        push_version(
            client, reference, plugin_id="echo", version="1.2.3",
            targets=[TargetFiles(LINUX, tarball, sha256_hex(tarball.read_bytes()),
                                 {escape_name: hostile, "other.tar.gz.sigstore.json": hostile})],
            manifest_text=None, origin=None, created="2026-01-01T00:00:00Z",
        )  # fmt: skip
    home = tmp_path / "home"
    result = install(
        str(reference),
        InstallOptions(dest=tmp_path / "plugins", nexo_home=home, target=LINUX, plain_http=True),
    )
    # Neither file is signature material for this asset: it installs as unsigned (warn).
    assert result.plan.signature.status == "unsigned"
    assert not list(tmp_path.parent.parent.glob(f"{tmp_path.name}-escaped*"))
    assert not list(Path("/tmp").glob(f"{tmp_path.name}-escaped*"))


def test_a_creation_time_that_is_not_one_stays_out_of_lock_and_receipts(
    tmp_path: Path, registry: Registry, fleet_env: dict[str, str]
) -> None:
    """``org.opencontainers.image.created`` becomes the lock's ``published`` and the receipts'
    ``installed_at`` (which the reference installer prints as it is) only as an RFC 3339
    time; escape sequences there are dropped, and the version is dated by its tarball's
    entries instead, as one with no creation time is."""
    from nexo_pkg.sources.oci import TargetFiles, push_version

    tarball = tmp_path / f"echo-1.2.3-{LINUX}.tar.gz"
    tarball.write_bytes(plugin_tarball("echo", "1.2.3"))
    hostile = "2026-01-01T00:00:00Z\x1b[2J\x1b]0;owned\x07"
    reference = parse_reference(registry.ref("plugins/echo:1.2.3"))
    with RegistryClient(reference.host, plain_http=True, loopback=True) as client:
        push_version(
            client, reference, plugin_id="echo", version="1.2.3",
            targets=[TargetFiles(LINUX, tarball, sha256_hex(tarball.read_bytes()), {})],
            manifest_text=None, origin=None, created=hostile,
        )  # fmt: skip
    wanted = tmp_path / "nexo-plugins.toml"
    wanted.write_text(f'[plugins.echo]\nsource = "{registry.ref("plugins/echo")}"\n')
    locked = nexo(
        "plugin", "lock", "-f", str(wanted), "--plain-http", env=fleet_env, in_process=True
    )
    assert locked.code == 0, locked.stderr
    lock_text = (tmp_path / "nexo-plugins.lock").read_text()
    assert "owned" not in lock_text
    assert "\\u001b" not in lock_text
    with tarfile.open(tarball) as archive:
        packed = max(member.mtime for member in archive.getmembers())
    packed_at = datetime.datetime.fromtimestamp(packed, datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert f'published = "{packed_at}"' in lock_text
    dest = tmp_path / "root"
    synced = nexo(
        "plugin",
        "sync",
        "--lock",
        str(tmp_path / "nexo-plugins.lock"),
        "--dest",
        str(dest),
        "--frozen",
        "--plain-http",
        env=fleet_env,
        in_process=True,
    )
    assert synced.code == 0, synced.stderr
    receipt = (dest / "echo-1.2.3" / ".nexo-install.json").read_text()
    assert "\\u001b" not in receipt
    assert "\x1b" not in receipt
    assert json.loads(receipt)["installed_at"] == packed_at
