"""The sources floor: each :class:`~nexo_pkg.sources.base.Source` against a real server (the
loopback GitHub, the real docker-registry) or a real tarball on disk, and what an install
through them leaves behind (one blob per tarball; no lock entry for an ``oci://`` install,
whose receipt and ``--json`` have the shape of a GitHub install's)."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.cli import nexo
from support.github_server import GitHubServer, github_server
from support.private_sigstore import PrivateSigstore
from support.registry import Registry
from support.tarballs import (
    manifest_text,
    plugin_tarball,
    release_assets,
    sha256_hex,
    sidecar_line,
    tree_snapshot,
    write_plugin,
)

from nexo_pkg.core.errors import NexoError
from nexo_pkg.install.manifest_check import manifest_asset_problem
from nexo_pkg.sources.base import ReleaseCandidate
from nexo_pkg.sources.context import NetworkChoices, SourceContext
from nexo_pkg.sources.local import LocalTarballSource
from nexo_pkg.sources.oci_reference import parse_reference
from nexo_pkg.sources.oci_source import OciSource
from nexo_pkg.sources.releases import GitHubReleaseSource
from nexo_pkg.sources.spec import GitHubSource, LocalSource

from .conftest import ACME_IDENTITY, LINUX, MakeDist, push_dist

__all__ = ["github_server"]

REPO = "nexo-plugin-echo"


def _store(home: Path) -> Path:
    return home / "cache" / "blobs" / "sha256"


def _publish_signed(server: GitHubServer, instance: PrivateSigstore, data: bytes) -> None:
    """Release v1.2.3 of acme's echo with one Linux tarball (``data``), its sidecar, the
    manifest asset and a Sigstore bundle signed as acme's release workflow."""
    assets = release_assets("echo", "1.2.3", target=LINUX, data=data)
    name = f"echo-1.2.3-{LINUX}.tar.gz"
    bundle = instance.sign(data, identity=ACME_IDENTITY)
    assets[name + ".sigstore.json"] = json.dumps(bundle).encode()
    server.publish("acme", REPO, "v1.2.3", assets, digests=True)


def _copies(root: Path, digest: str) -> list[Path]:
    """Every regular file under ``root`` whose bytes hash to ``digest``, one name each: a
    hard link the cache holds a blob by while it is in use is no second copy (its store
    name is the one given)."""
    found: dict[tuple[int, int], Path] = {}
    for path in sorted(root.rglob("*"), key=lambda item: "/blobs/sha256/" not in str(item)):
        regular = path.is_file() and not path.is_symlink()
        if regular and hashlib.sha256(path.read_bytes()).hexdigest() == digest:
            info = path.stat()
            found.setdefault((info.st_dev, info.st_ino), path)
    return sorted(found.values())


# -- each source, on its own ---------------------------------------------------------------


def test_the_github_source_resolves_then_fetches_into_the_blob_cache(
    tmp_path: Path, github_server: GitHubServer, private_sigstore: PrivateSigstore
) -> None:
    data = plugin_tarball("echo", "1.2.3", payload=b"github")
    _publish_signed(github_server, private_sigstore, data)
    home = tmp_path / "home"
    with SourceContext(home, NetworkChoices(github_api_url=github_server.url)) as context:
        source = GitHubReleaseSource(
            GitHubSource("acme", REPO, None),
            context,
            targets=(LINUX,),
            manifest_problem=manifest_asset_problem,
        )
        [candidate] = source.resolve()
        assert (candidate.plugin_id, candidate.version, candidate.target) == (
            "echo", "1.2.3", LINUX,
        )  # fmt: skip
        assert candidate.asset_name == f"echo-1.2.3-{LINUX}.tar.gz"
        # Before the fetch only the manifest asset is known, not the sha256 (the sidecar is
        # read by the fetch).
        assert candidate.sha256 is None
        assert candidate.manifest is not None
        assert candidate.manifest[0] == "nexo-plugin.toml"
        assert candidate.origin.type == "github-releases"
        assert (candidate.origin.owner, candidate.origin.repo, candidate.origin.tag) == (
            "acme", REPO, "v1.2.3",
        )  # fmt: skip
        assert candidate.origin.requested_tag == "latest"
        fetched = source.fetch(candidate)
        assert fetched.sha256 == sha256_hex(data)
        assert fetched.size == len(data)
        # Stored under its sha256, and held by a name of the command's own (the bytes hashed).
        assert (_store(home) / sha256_hex(data)).read_bytes() == data
        assert fetched.path.name == sha256_hex(data)
        assert fetched.path.read_bytes() == data
        assert fetched.checksums == ("sidecar", "digest")
        assert set(fetched.material) == {f"{candidate.asset_name}.sigstore.json"}
        # Without material (trust mode ignore), no signature asset is asked for.
        asked = len(github_server.requests_to(".sigstore.json"))
        bare = source.fetch(candidate, material=False)
        assert bare.material == {}
        assert len(github_server.requests_to(".sigstore.json")) == asked


def test_the_github_source_refuses_a_pinned_sha256_the_bytes_do_not_have(
    tmp_path: Path, github_server: GitHubServer, private_sigstore: PrivateSigstore
) -> None:
    data = plugin_tarball("echo", "1.2.3")
    _publish_signed(github_server, private_sigstore, data)
    home = tmp_path / "home"
    with SourceContext(home, NetworkChoices(github_api_url=github_server.url)) as context:
        source = GitHubReleaseSource(
            GitHubSource("acme", REPO, "v1.2.3"),
            context,
            targets=(LINUX,),
            manifest_problem=manifest_asset_problem,
        )
        [resolved] = source.resolve()
        pinned = ReleaseCandidate(
            plugin_id="echo",
            version="1.2.3",
            target=LINUX,
            asset_name=resolved.asset_name,
            origin=resolved.origin,
            sha256="0" * 64,
        )
        with pytest.raises(NexoError) as caught:
            source.fetch(pinned, material=False)
    assert caught.value.kind == "checksum_mismatch"
    # The bytes that hash to something else entered the store under neither name (the
    # manifest asset read by resolve is the only blob).
    stored = {path.name for path in _store(home).iterdir()}
    assert stored == {sha256_hex(manifest_text("echo", "1.2.3").encode())}
    assert "0" * 64 not in stored
    assert sha256_hex(data) not in stored


def test_the_oci_source_resolves_the_host_target_and_fetches_its_layer(
    tmp_path: Path, registry: Registry, make_dist: MakeDist
) -> None:
    dist = make_dist()
    home = tmp_path / "home"
    push_dist(dist, registry.ref("plugins/echo"), home)
    tarball = dist / f"echo-1.2.3-{LINUX}.tar.gz"
    digest = sha256_hex(tarball.read_bytes())
    network = NetworkChoices(plain_http=True)
    with SourceContext(home, network) as context:
        reference = parse_reference(registry.ref("plugins/echo"))
        source = OciSource(reference, context, targets=(LINUX,))
        [candidate] = source.resolve()
        assert (candidate.plugin_id, candidate.version, candidate.target) == (
            "echo", "1.2.3", LINUX,
        )  # fmt: skip
        # The registry vouches for the layer's sha256 before anything is downloaded.
        assert candidate.sha256 == digest
        assert candidate.manifest_digest is not None
        assert candidate.origin.type == "oci-registry"
        assert candidate.origin.registry is not None
        assert "@sha256:" in candidate.origin.registry
        layers_before = registry.blob_gets()
        fetched = source.fetch(candidate)
        assert registry.blob_gets() > layers_before
        assert (_store(home) / digest).read_bytes() == tarball.read_bytes()
        assert fetched.path.name == digest
        assert fetched.path.read_bytes() == tarball.read_bytes()
        assert fetched.checksums == ("digest",)
        assert set(fetched.material) == {tarball.name + ".sigstore.json"}
        # Every target when none is asked (what `lock` records).
        every = OciSource(reference, context, targets=None).resolve()
        assert sorted(item.target for item in every) == sorted(["noarch", LINUX])


def test_the_oci_source_refuses_a_host_it_has_no_tarball_for(
    tmp_path: Path, registry: Registry, make_dist: MakeDist
) -> None:
    home = tmp_path / "home"
    push_dist(make_dist(targets=(LINUX,)), registry.ref("plugins/echo"), home)
    with SourceContext(home, NetworkChoices(plain_http=True)) as context:
        source = OciSource(
            parse_reference(registry.ref("plugins/echo:1.2.3")),
            context,
            targets=("aarch64-apple-darwin",),
        )
        with pytest.raises(NexoError) as caught:
            source.resolve()
    assert caught.value.kind == "asset_not_found"
    assert not _store(home).exists() or list(_store(home).iterdir()) == []


def test_the_local_source_stores_the_tarball_once_and_reads_it_from_the_cache(
    tmp_path: Path,
) -> None:
    tarball = write_plugin(tmp_path / "dist", "echo", "1.2.3")
    home = tmp_path / "home"
    with SourceContext(home) as context:
        source = LocalTarballSource(LocalSource(tarball), context, targets=(LINUX,))
        [candidate] = source.resolve()
        assert (candidate.plugin_id, candidate.version, candidate.target) == (
            "echo", "1.2.3", "noarch",
        )  # fmt: skip
        assert candidate.origin.source == {"type": "local-file", "path": str(tarball)}
        fetched = source.fetch(candidate)
        digest = sha256_hex(tarball.read_bytes())
        assert fetched.path.name == digest
        assert fetched.path.read_bytes() == tarball.read_bytes()
        assert fetched.checksums == ("sidecar",)
        assert _copies(home, digest) == [_store(home) / digest]


@pytest.mark.parametrize(
    ("name", "sidecar", "kind"),
    [
        ("echo.tar.gz", True, "source_invalid"),
        ("echo-1.2.3-aarch64-apple-darwin.tar.gz", True, "asset_not_found"),
        ("echo-1.2.3-noarch.tar.gz", False, "checksum_missing"),
        ("echo-1.2.3-noarch.tar.gz", "wrong", "checksum_mismatch"),
    ],
)
def test_the_local_source_refuses_and_stores_nothing(
    tmp_path: Path, name: str, sidecar: bool | str, kind: str
) -> None:
    data = plugin_tarball("echo", "1.2.3")
    directory = tmp_path / "dist"
    directory.mkdir()
    tarball = directory / name
    tarball.write_bytes(data)
    if sidecar is True:
        (directory / f"{name}.sha256").write_text(sidecar_line(data, name))
    elif sidecar:
        (directory / f"{name}.sha256").write_text(sidecar_line(b"other", name))
    home = tmp_path / "home"
    with SourceContext(home) as context:
        source = LocalTarballSource(LocalSource(tarball), context, targets=(LINUX,))
        with pytest.raises(NexoError) as caught:
            source.fetch(source.resolve()[0])
    assert caught.value.kind == kind
    assert not _store(home).exists() or list(_store(home).iterdir()) == []


# -- what installs through the sources leave behind ----------------------------------------


def test_a_github_install_leaves_exactly_one_copy_of_the_tarball_under_the_cache(
    tmp_path: Path,
    fleet_env: dict[str, str],
    github_server: GitHubServer,
    private_sigstore: PrivateSigstore,
    policy: Path,
) -> None:
    data = plugin_tarball("echo", "1.2.3", payload=b"one copy")
    _publish_signed(github_server, private_sigstore, data)
    env = {**fleet_env, "NEXO_GITHUB_API_BASE": github_server.url}
    dest = tmp_path / "plugins"
    installed = nexo(
        "plugin",
        "install",
        f"acme/{REPO}",
        "--dest",
        str(dest),
        "--trusted-keys",
        str(policy),
        "--require-signature",
        "--yes",
        "--json",
        env=env,
        in_process=True,
    )
    assert installed.code == 0, installed.stderr
    home = Path(env["NEXO_HOME"])
    digest = sha256_hex(data)
    # The download landed in the content-addressed store and was extracted from there: no
    # second copy anywhere in NEXO_HOME, no staging directory for downloads.
    assert _copies(home, digest) == [_store(home) / digest]
    assert not (home / "state" / "plugin-install-cache").exists()
    assert installed.document["sha256"] == digest


def _signer(signature: dict[str, object]) -> dict[str, object]:
    """A signature outcome without the hash of the bundle it was read from."""
    return {key: value for key, value in signature.items() if key != "bundle_sha256"}


def _shape(document: object) -> object:
    """The keys of a JSON document, nested, without its values."""
    if isinstance(document, dict):
        return {key: _shape(value) for key, value in document.items()}
    if isinstance(document, list):
        return [_shape(item) for item in document[:1]]
    return type(document).__name__


def test_an_oci_install_writes_no_lock_entry_and_has_a_github_installs_shape(
    *,
    tmp_path: Path,
    fleet_env: dict[str, str],
    github_server: GitHubServer,
    private_sigstore: PrivateSigstore,
    registry: Registry,
    make_dist: MakeDist,
    policy: Path,
) -> None:
    dist = make_dist(targets=(LINUX,))
    tarball = dist / f"echo-1.2.3-{LINUX}.tar.gz"
    home = Path(fleet_env["NEXO_HOME"])
    push_dist(dist, registry.ref("plugins/echo"), home)
    _publish_signed(github_server, private_sigstore, tarball.read_bytes())
    env = {**fleet_env, "NEXO_GITHUB_API_BASE": github_server.url}
    common = ("--trusted-keys", str(policy), "--require-signature", "--yes", "--json")
    before = tree_snapshot(tmp_path)
    from_registry = nexo(
        "plugin",
        "install",
        registry.ref("plugins/echo:1.2.3"),
        "--dest",
        str(tmp_path / "oci"),
        "--plain-http",
        *common,
        env=env,
        in_process=True,
    )
    assert from_registry.code == 0, from_registry.stderr
    written = set(tree_snapshot(tmp_path)) - set(before)
    # Nothing that looks like a lock (or a wanted set) was written anywhere.
    assert [name for name in written if "nexo-plugins" in name] == []
    for name in written:
        path = tmp_path / name
        if path.is_file() and not path.is_symlink() and path.stat().st_size < 1 << 20:
            assert b"[plugins." not in path.read_bytes(), name
    from_github = nexo(
        "plugin",
        "install",
        f"acme/{REPO}@v1.2.3",
        "--dest",
        str(tmp_path / "gh"),
        *common,
        env=env,
        in_process=True,
    )
    assert from_github.code == 0, from_github.stderr
    oci_document, gh_document = from_registry.document, from_github.document
    source = oci_document.pop("source")
    gh_document.pop("source")
    assert source["type"] == "oci-registry"
    assert source["registry"].startswith(registry.ref("plugins/echo@sha256:"))
    assert _shape(oci_document) == _shape(gh_document)
    assert oci_document["sha256"] == gh_document["sha256"]
    assert oci_document["signature"]["identity"] == ACME_IDENTITY
    # The same signer (each side carries its own bundle of the same tarball).
    assert _signer(oci_document["signature"]) == _signer(gh_document["signature"])
    receipts = [
        json.loads((tmp_path / where / "echo-1.2.3" / ".nexo-install.json").read_text())
        for where in ("oci", "gh")
    ]
    oci_receipt, gh_receipt = receipts
    # Each source adds its one coordinate: the pinned registry reference, the release tag.
    assert oci_receipt.pop("registry") == source["registry"]
    assert gh_receipt.pop("resolved_tag") == "v1.2.3"
    for receipt in receipts:
        receipt.pop("installed_at")
    assert _shape(oci_receipt) == _shape(gh_receipt)
    assert oci_receipt["source"] == "oci-registry"
    assert gh_receipt["source"] == "github-releases"
    assert oci_receipt["files"] == gh_receipt["files"]
    assert _signer(oci_receipt["signature"]) == _signer(gh_receipt["signature"])


def test_an_oci_install_imports_no_fleet_code(
    tmp_path: Path, registry: Registry, make_dist: MakeDist
) -> None:
    """The registry install goes through the OCI source and install's pipeline only."""
    home = tmp_path / "home"
    push_dist(make_dist(identity=None), registry.ref("plugins/echo"), home)
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from nexo_pkg.install.options import InstallOptions\n"
        "from nexo_pkg.install.pipeline import install\n"
        f"home = Path({str(home)!r})\n"
        f"install({registry.ref('plugins/echo:1.2.3')!r}, InstallOptions(dest=home / 'plugins',"
        f" nexo_home=home, target={LINUX!r}, plain_http=True))\n"
        "print(sorted(name for name in sys.modules if name.startswith('nexo_pkg.fleet')))\n"
    )
    env = {**os.environ, "NO_PROXY": "127.0.0.1,localhost"}
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False, env=env
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
    assert (home / "plugins" / "echo-1.2.3").is_dir()
