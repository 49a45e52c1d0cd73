"""What a registry answers that does not hold: a layer named in a digest nothing checks, a
manifest or a blob whose bytes are not those of the digest asked for, challenges too large or
too many. Through the real CLI against the real registry behind a loopback proxy that answers
for it; each run is one line with its kind, in text and in ``--json``, and nothing is
installed or cached."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from support.cli import CliResult, clean_env, nexo
from support.registry import Registry
from support.registry_proxy import RegistryProxy
from support.stderr import without_notes
from support.tarballs import plugin_tarball

from nexo_pkg.sources import artifact
from nexo_pkg.sources.oci_reference import parse_reference
from nexo_pkg.sources.registry import INDEX_MEDIA_TYPE, MANIFEST_MEDIA_TYPE, RegistryClient

from .conftest import LINUX
from .test_hostile_registry import _push_target


def _index(entry: dict[str, Any]) -> bytes:
    return artifact.canonical(
        {
            "schemaVersion": 2,
            "mediaType": INDEX_MEDIA_TYPE,
            "artifactType": artifact.ARTIFACT_TYPE,
            "manifests": [entry],
            "annotations": {artifact.PLUGIN_ID: "echo", artifact.PLUGIN_VERSION: "1.2.3"},
        }
    )


def _digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _push_echo(registry: Registry) -> tuple[dict[str, Any], bytes]:
    """echo 1.2.3 pushed as one target: its index descriptor and its target manifest."""
    reference = parse_reference(registry.ref("plugins/echo"))
    with RegistryClient(reference.host, plain_http=True, loopback=True) as client:
        entry = _push_target(
            client, reference.repository, f"echo-1.2.3-{LINUX}.tar.gz",
            plugin_tarball("echo", "1.2.3"),
        )  # fmt: skip
        raw = client.get_manifest(reference.repository, entry["digest"]).data
    return entry, raw


def _both(reference: str, home: Path, dest: Path, cwd: Path) -> list[CliResult]:
    """``install REFERENCE`` in text and in ``--json``, each in a process of its own."""
    env = clean_env(NEXO_HOME=str(home), DOCKER_CONFIG=str(cwd / "no-docker"))
    args = ("plugin", "install", reference, "--dest", str(dest), "--plain-http", "--yes",
            "--config", str(cwd / "no-config"))  # fmt: skip
    return [nexo(*args, *extra, env=env, cwd=cwd, in_process=False) for extra in ((), ("--json",))]


def _refused(runs: list[CliResult], kind: str, home: Path, dest: Path) -> None:
    text, as_json = runs
    for result in runs:
        assert result.code == 1, result.stderr
        assert "Traceback" not in result.stderr, result.stderr[-2000:]
    assert as_json.document["kind"] == kind, as_json.document
    assert (
        without_notes(text.stderr)
        == f"error: {as_json.document['error']} [{as_json.document['kind']}]\n"
    ), text.stderr
    assert text.stdout == ""
    assert not dest.exists() or not [p for p in dest.iterdir() if not p.name.startswith(".")]
    store = home / "cache" / "blobs" / "sha256"
    assert not store.exists() or list(store.iterdir()) == [], list(store.iterdir())


@pytest.fixture
def workspace(tmp_path: Path, fleet_env: dict[str, str]) -> Path:
    del fleet_env
    (tmp_path / "no-config").mkdir()
    return tmp_path


def test_a_layer_named_by_an_algorithm_nothing_checks_is_registry_invalid(
    workspace: Path, registry: Registry
) -> None:
    """A digest-pinned index whose target manifest (itself a good sha256) names its tarball
    layer ``sha512:…``: whatever the registry answers for that blob would go unchecked."""
    entry, raw = _push_echo(registry)
    target = json.loads(raw)
    target["layers"][0]["digest"] = "sha512:" + "ab" * 64
    # Without the tarball's sha256 beside it, nothing else ties the layer to its bytes.
    del target["annotations"][artifact.PLUGIN_SHA256]
    forged = artifact.canonical(target)
    entry = {**entry, "digest": _digest(forged), "size": len(forged)}
    index = _index(entry)
    proxy = RegistryProxy(registry.host).start()
    proxy.plant("plugins/echo", entry["digest"], forged, MANIFEST_MEDIA_TYPE)
    proxy.plant("plugins/echo", _digest(index), index, INDEX_MEDIA_TYPE)
    home, dest = workspace / "home", workspace / "plugins"
    try:
        runs = _both(proxy.ref(f"plugins/echo@{_digest(index)}"), home, dest, workspace)
    finally:
        proxy.stop()
    _refused(runs, "registry_invalid", home, dest)
    assert "which is not a sha256 digest" in runs[1].document["error"]
    assert not any("/blobs/sha512" in path for _, path, _ in proxy.log)


def test_a_target_manifest_answered_with_other_bytes_is_a_checksum_mismatch(
    workspace: Path, registry: Registry
) -> None:
    """The index names its target by digest; the registry answers another (valid) manifest
    for it."""
    entry, raw = _push_echo(registry)
    other = json.loads(raw)
    other["annotations"] = {**other.get("annotations", {}), "x": "swapped"}
    index = _index(entry)
    proxy = RegistryProxy(registry.host).start()
    proxy.plant("plugins/echo", _digest(index), index, INDEX_MEDIA_TYPE)
    proxy.plant("plugins/echo", entry["digest"], artifact.canonical(other), MANIFEST_MEDIA_TYPE)
    home, dest = workspace / "home", workspace / "plugins"
    try:
        runs = _both(proxy.ref(f"plugins/echo@{_digest(index)}"), home, dest, workspace)
    finally:
        proxy.stop()
    _refused(runs, "checksum_mismatch", home, dest)


def test_a_blob_answered_with_other_bytes_is_refused_and_not_cached(
    workspace: Path, registry: Registry
) -> None:
    """The tarball layer answered with another valid tarball of the same plugin."""
    entry, raw = _push_echo(registry)
    layer = json.loads(raw)["layers"][0]["digest"]
    index = _index(entry)
    proxy = RegistryProxy(registry.host).start()
    proxy.plant("plugins/echo", _digest(index), index, INDEX_MEDIA_TYPE)
    other = plugin_tarball("echo", "1.2.3", payload=b"not what was pushed\n")
    proxy.planted[f"/v2/plugins/echo/blobs/{layer}"] = (other, "application/octet-stream")
    home, dest = workspace / "home", workspace / "plugins"
    try:
        runs = _both(proxy.ref(f"plugins/echo@{_digest(index)}"), home, dest, workspace)
    finally:
        proxy.stop()
    _refused(runs, "checksum_mismatch", home, dest)
    assert any(path.endswith(layer) for _, path, _ in proxy.log)


def test_a_blob_answered_longer_than_its_descriptor_is_cut_off_there(
    workspace: Path, registry: Registry
) -> None:
    """The tarball layer's descriptor names its size; the registry answers 2 MiB for it. The
    download stops past the named size (``checksum_mismatch``), rather than reading on to the
    download limit and blaming the limit (``archive_unsafe`` with "raise it with
    --max-download-size", which would only fetch more of the wrong bytes)."""
    entry, raw = _push_echo(registry)
    layer = json.loads(raw)["layers"][0]
    index = _index(entry)
    proxy = RegistryProxy(registry.host).start()
    proxy.plant("plugins/echo", _digest(index), index, INDEX_MEDIA_TYPE)
    longer = b"\0" * (2 << 20)
    proxy.planted[f"/v2/plugins/echo/blobs/{layer['digest']}"] = (longer, "application/gzip")
    home, dest = workspace / "home", workspace / "plugins"
    env = clean_env(NEXO_HOME=str(home), DOCKER_CONFIG=str(workspace / "no-docker"))
    args = ("plugin", "install", proxy.ref(f"plugins/echo@{_digest(index)}"), "--dest",
            str(dest), "--plain-http", "--yes", "--config", str(workspace / "no-config"),
            "--max-download-size", "1M")  # fmt: skip
    try:
        runs = [
            nexo(*args, *extra, env=env, cwd=workspace, in_process=False)
            for extra in ((), ("--json",))
        ]
    finally:
        proxy.stop()
    _refused(runs, "checksum_mismatch", home, dest)
    assert f"runs past the {layer['size']} bytes its descriptor names" in runs[1].document["error"]


@pytest.mark.parametrize(
    "challenge",
    [
        'Bearer realm="https://127.0.0.1:1/' + "a" * 60_000 + '"',
        ", ".join(f'Bearer realm="https://127.0.0.1:1/{n}"' for n in range(1_200)),
        "Basic " + ", ".join(f"p{n}=v" for n in range(5_000)),
    ],
    ids=["huge-realm", "thousands-of-challenges", "thousands-of-parameters"],
)
def test_an_oversized_challenge_is_one_line(
    workspace: Path, registry: Registry, challenge: str
) -> None:
    _push_echo(registry)
    proxy = RegistryProxy(registry.host, challenge=challenge).start()
    home, dest = workspace / "home", workspace / "plugins"
    try:
        runs = _both(proxy.ref("plugins/echo:1.2.3"), home, dest, workspace)
    finally:
        proxy.stop()
    text, as_json = runs
    for result in runs:
        assert result.code == 1, result.stderr
        assert "Traceback" not in result.stderr, result.stderr[-2000:]
    assert as_json.document["kind"] in {"registry_auth", "network"}, as_json.document
    assert (
        without_notes(text.stderr)
        == f"error: {as_json.document['error']} [{as_json.document['kind']}]\n"
    ), text.stderr
    assert len(text.stderr) < 2_000

    assert not dest.exists() or not [p for p in dest.iterdir() if not p.name.startswith(".")]
