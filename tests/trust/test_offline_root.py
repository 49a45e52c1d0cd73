"""The public-good trusted root read offline is never an unverified file from the user's cache.

sigstore-python's offline mode reads ``trusted_root.json`` from its targets cache as it finds
it. nexo-pkg reads the root shipped inside sigstore-python, or the cached one only once it
verifies against the local TUF metadata (the root history from the shipped ``root.json``,
timestamp, snapshot, targets); ``--verbose`` names the root used.

The TUF repositories here are built with python-tuf's metadata API and real keys; where a
cached root must verify, the shipped anchor is the test repository's own ``root.json``
(nobody can sign for the real one).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import threading
import tracemalloc
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import quote

import pytest
from securesystemslib.signer import CryptoSigner  # type: ignore[attr-defined]
from support.cli import nexo
from support.private_sigstore import PrivateSigstore, random_bytes, write_bundle
from support.shared_fixtures import require_shared_fixture
from tuf.api import metadata as tuf

from nexo_pkg.core.errors import NexoError
from nexo_pkg.trust.api import AuthorPolicy, TrustPolicy, verify_asset_signature
from nexo_pkg.trust.verifiers import rootkeys

from .helpers import ACME_IDENTITY, ACME_REGEXP, FIXTURES, VECTOR_ARTIFACT, cli_env

REPOSITORY = quote("https://tuf-repo-cdn.sigstore.dev", safe="")
ASSET = "echo-1.2.3-noarch.tar.gz"


def _cache_dirs(tmp_path: Path) -> tuple[Path, Path]:
    """The TUF metadata and targets-cache directories under the test's XDG directories
    (``conftest`` points XDG_DATA_HOME and XDG_CACHE_HOME there)."""
    return (
        tmp_path / "xdg-data" / "sigstore-python" / "tuf" / REPOSITORY,
        tmp_path / "xdg-cache" / "sigstore-python" / "tuf" / REPOSITORY,
    )


def _verdict(tmp_path: Path, instance: PrivateSigstore) -> str:
    """Verify a bundle of the private instance against the public-good root (no
    ``trusted_root`` in the policy): its status, or the error kind."""
    artifact = tmp_path / ASSET
    artifact.write_bytes(random_bytes())
    bundle = write_bundle(
        tmp_path / (ASSET + ".sigstore.json"),
        instance.sign(artifact.read_bytes(), identity=ACME_IDENTITY),
    )
    policy = TrustPolicy(
        default="require", authors=(AuthorPolicy(owner="acme", identity_regexp=ACME_REGEXP),)
    )
    try:
        outcome = verify_asset_signature(
            artifact,
            asset_name=ASSET,
            material={bundle.name: bundle},
            owner="acme",
            repo="nexo-plugin-echo",
            policy=policy,
            mode="require",
        )
    except NexoError as error:
        return error.kind
    return outcome.status


def test_a_root_planted_in_the_cache_is_not_trusted(
    tmp_path: Path, private_sigstore: PrivateSigstore
) -> None:
    """A restored or poisoned cache holding another instance's root: ignored."""
    _, targets = _cache_dirs(tmp_path)
    targets.mkdir(parents=True)
    private_sigstore.write_trusted_root(targets / "trusted_root.json")
    assert _verdict(tmp_path, private_sigstore) == "signature_invalid"


def _signed(role: tuf.Signed, *signers: CryptoSigner) -> bytes:  # type: ignore[name-defined]
    document = tuf.Metadata(role)
    for signer in signers:
        document.sign(signer, append=True)
    raw: bytes = document.to_bytes()
    return raw


def _meta(raw: bytes, version: int = 1) -> tuf.MetaFile:  # type: ignore[name-defined]
    return tuf.MetaFile(  # type: ignore[attr-defined]
        version=version, length=len(raw), hashes={"sha256": hashlib.sha256(raw).hexdigest()}
    )


def _tuf_repository(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cached: bytes, *, rotate_by: str
) -> None:
    """A shipped ``root.json`` (version 1), a rotation to version 2 kept in the root history
    (signed by the old key and the new one, or by ``rotate_by="stranger"`` only), and
    timestamp, snapshot and targets listing ``cached`` as ``trusted_root.json``."""
    old, new, stranger = (CryptoSigner.generate_ecdsa() for _ in range(3))
    expires = datetime.now(UTC) + timedelta(days=365)
    roles = ("root", "timestamp", "snapshot", "targets")
    first = tuf.Root(version=1, expires=expires)  # type: ignore[attr-defined]
    second = tuf.Root(version=2, expires=expires)  # type: ignore[attr-defined]
    for role in roles:
        first.add_key(old.public_key, role)
        second.add_key(new.public_key, role)
    shipped = tmp_path / "shipped"
    shipped.mkdir()
    (shipped / "root.json").write_bytes(_signed(first, old))
    shutil.copy(rootkeys.public_good_root_file(), shipped / "trusted_root.json")
    monkeypatch.setattr(rootkeys, "_embedded_dir", lambda: shipped)

    metadata, targets_dir = _cache_dirs(tmp_path)
    (metadata / "root_history").mkdir(parents=True)
    rotation = (old, new) if rotate_by == "owners" else (stranger,)
    (metadata / "root_history" / "2.root.json").write_bytes(_signed(second, *rotation))
    signer = new if rotate_by == "owners" else stranger
    targets = tuf.Targets(version=1, expires=expires)  # type: ignore[attr-defined]
    targets.targets["trusted_root.json"] = tuf.TargetFile.from_data(  # type: ignore[attr-defined]
        "trusted_root.json", cached
    )
    targets_raw = _signed(targets, signer)
    snapshot = tuf.Snapshot(version=1, expires=expires)  # type: ignore[attr-defined]
    snapshot.meta["targets.json"] = _meta(targets_raw)
    snapshot_raw = _signed(snapshot, signer)
    timestamp = tuf.Timestamp(  # type: ignore[attr-defined]
        version=1, expires=expires, snapshot_meta=_meta(snapshot_raw)
    )
    (metadata / "timestamp.json").write_bytes(_signed(timestamp, signer))
    (metadata / "snapshot.json").write_bytes(snapshot_raw)
    (metadata / "targets.json").write_bytes(targets_raw)
    targets_dir.mkdir(parents=True)
    (targets_dir / "trusted_root.json").write_bytes(cached)


def test_a_cached_root_that_verifies_against_the_tuf_metadata_is_used(
    tmp_path: Path, private_sigstore: PrivateSigstore, monkeypatch: pytest.MonkeyPatch
) -> None:
    cached = json.dumps(private_sigstore.trusted_root()).encode()
    _tuf_repository(tmp_path, monkeypatch, cached, rotate_by="owners")
    source = rootkeys.public_good_root()
    assert source.raw == cached
    assert "verified against the TUF metadata" in source.description
    assert _verdict(tmp_path, private_sigstore) == "verified"


@pytest.mark.parametrize("change", ["stranger", "cached", "timestamp", "history"])
def test_a_cached_root_that_does_not_verify_is_ignored(
    tmp_path: Path,
    private_sigstore: PrivateSigstore,
    monkeypatch: pytest.MonkeyPatch,
    change: str,
) -> None:
    cached = json.dumps(private_sigstore.trusted_root()).encode()
    _tuf_repository(
        tmp_path, monkeypatch, cached, rotate_by="stranger" if change == "stranger" else "owners"
    )
    metadata, targets = _cache_dirs(tmp_path)
    if change == "cached":  # another root put in the cache after the update
        other = PrivateSigstore.create().trusted_root()
        (targets / "trusted_root.json").write_bytes(json.dumps(other).encode())
    elif change == "timestamp":
        (metadata / "timestamp.json").write_text("{}")
    elif change == "history":  # the rotation dropped: the shipped key signed nothing else
        (metadata / "root_history" / "2.root.json").unlink()
    source = rootkeys.public_good_root()
    assert "shipped in sigstore-python" in source.description
    assert _verdict(tmp_path, private_sigstore) == "signature_invalid"


def test_verbose_names_the_root_used(tmp_path: Path) -> None:
    """In its own process, where ``--verbose`` configures logging."""
    require_shared_fixture("sigstore", VECTOR_ARTIFACT)
    artifact = FIXTURES / VECTOR_ARTIFACT
    result = nexo("plugin", "trust", "verify", str(artifact), "--bundle",
                  str(FIXTURES / f"{VECTOR_ARTIFACT}.sigstore.json"), "--repo",
                  "trailofbits/rfc8785.py", "--verbose", env=cli_env(tmp_path))  # fmt: skip
    assert result.code == 0, result.stderr
    assert "trusted root: the public-good root shipped in sigstore-python" in result.stderr


def test_verbose_names_the_policys_private_root(
    tmp_path: Path, private_sigstore: PrivateSigstore
) -> None:
    """A policy's ``trusted_root`` is the root used, and ``--verbose`` says so by its path
    (never the public-good root's name)."""
    root = private_sigstore.write_trusted_root(tmp_path / "private_trusted_root.json")
    policy = tmp_path / "trusted_keys.toml"
    policy.write_text(
        f'schema_version = "1.0"\ntrusted_root = "{root.name}"\n\n'
        f"[[authors]]\nowner = \"acme\"\nidentity_regexp = '{ACME_REGEXP}'\n",
        encoding="utf-8",
    )
    artifact = tmp_path / ASSET
    artifact.write_bytes(random_bytes())
    bundle = write_bundle(
        tmp_path / (ASSET + ".sigstore.json"),
        private_sigstore.sign(artifact.read_bytes(), identity=ACME_IDENTITY),
    )
    result = nexo("plugin", "trust", "verify", str(artifact), "--bundle", str(bundle),
                  "--trusted-keys", str(policy), "--verbose", env=cli_env(tmp_path))  # fmt: skip
    assert result.code == 0, result.stderr
    assert f"trusted root: trusted_root {root}\n" in result.stderr
    assert "public-good" not in result.stderr


@pytest.mark.parametrize("planted", ["root_history/2.root.json", "timestamp.json", "snapshot.json"])
def test_a_fifo_in_the_tuf_metadata_is_never_waited_on(
    tmp_path: Path,
    private_sigstore: PrivateSigstore,
    monkeypatch: pytest.MonkeyPatch,
    planted: str,
) -> None:
    """A FIFO where sigstore-python's updater keeps a metadata file: the cache does not
    verify (the shipped root is used), and the read never blocks on it."""
    cached = json.dumps(private_sigstore.trusted_root()).encode()
    _tuf_repository(tmp_path, monkeypatch, cached, rotate_by="owners")
    metadata, _ = _cache_dirs(tmp_path)
    fifo = metadata / planted
    fifo.unlink()
    os.mkfifo(fifo)
    found: list[rootkeys.RootSource] = []
    reader = threading.Thread(target=lambda: found.append(rootkeys.public_good_root()))
    reader.start()
    reader.join(20)
    if reader.is_alive():  # let the blocked open go, then fail
        descriptor = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        os.close(descriptor)
        reader.join(20)
        pytest.fail(f"reading the TUF metadata blocked on a FIFO at {planted}")
    assert len(found) == 1
    assert "shipped in sigstore-python" in found[0].description


@pytest.mark.parametrize(
    ("planted", "cap"),
    [("root_history/2.root.json", 512_000), ("timestamp.json", 16_384),
     ("snapshot.json", 2_000_000), ("targets.json", 5_000_000)],
)  # fmt: skip
def test_a_huge_tuf_metadata_file_is_not_read_whole(
    tmp_path: Path,
    private_sigstore: PrivateSigstore,
    monkeypatch: pytest.MonkeyPatch,
    planted: str,
    cap: int,
) -> None:
    """A metadata file past python-tuf's own limit for it (a 300 MB sparse one): the cache
    does not verify, and no more than about the limit is read."""
    cached = json.dumps(private_sigstore.trusted_root()).encode()
    _tuf_repository(tmp_path, monkeypatch, cached, rotate_by="owners")
    metadata, _ = _cache_dirs(tmp_path)
    huge = metadata / planted
    with huge.open("r+b") as handle:  # the real document, then zeros to 300 MB
        handle.truncate(300 * 1024 * 1024)
    tracemalloc.start()
    try:
        source = rootkeys.public_good_root()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert "shipped in sigstore-python" in source.description
    assert peak < cap + 64 * 1024 * 1024, peak
