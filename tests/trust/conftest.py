"""Fixtures for the trust tests: the real public-good vector and a private Sigstore instance."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from support.private_sigstore import PrivateSigstore
from support.shared_fixtures import require_shared_fixture

from nexo_pkg.trust import identity_pattern
from nexo_pkg.trust.api import TrustPolicy, load_policy

from .helpers import FIXTURES, VECTOR_ARTIFACT


@pytest.fixture(autouse=True)
def _isolated_sigstore_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """sigstore-python's offline trust root is copied into the user cache: keep it per test."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))


def _forget_the_engine() -> None:
    identity_pattern._re2.cache_clear()
    identity_pattern.compile_identity_pattern.cache_clear()


@pytest.fixture
def without_re2(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """google-re2 made unimportable, as on musllinux: patterns run on the pure-Python engine."""
    monkeypatch.setitem(sys.modules, "re2", None)
    _forget_the_engine()
    yield
    _forget_the_engine()


@pytest.fixture(params=["google-re2", "pure-python"])
def each_pattern_engine(request: pytest.FixtureRequest) -> Iterator[str]:
    """Runs a test once with google-re2 (when installed) and once without it."""
    engine: str = request.param
    if engine == "google-re2":
        pytest.importorskip("re2", reason="google-re2 (the nexo-pkg[re2] extra) is not installed")
        _forget_the_engine()
        yield engine
        _forget_the_engine()
        return
    request.getfixturevalue("without_re2")
    assert identity_pattern.engine() == "pure-python"
    yield engine


@pytest.fixture
def vector(tmp_path: Path) -> tuple[Path, Path]:
    """A writable copy of the public-good artifact and its bundle (skips when the shared
    fixtures are absent)."""
    require_shared_fixture("sigstore", VECTOR_ARTIFACT)
    artifact = shutil.copy(FIXTURES / VECTOR_ARTIFACT, tmp_path / VECTOR_ARTIFACT)
    bundle = shutil.copy(
        FIXTURES / f"{VECTOR_ARTIFACT}.sigstore.json", tmp_path / f"{VECTOR_ARTIFACT}.sigstore.json"
    )
    return Path(artifact), Path(bundle)


@pytest.fixture(scope="session")
def private_sigstore() -> PrivateSigstore:
    """One private instance for the session (key generation is the slow part)."""
    return PrivateSigstore.create()


@pytest.fixture
def private_root(private_sigstore: PrivateSigstore, tmp_path: Path) -> Path:
    """The private instance's ``trusted_root.json``."""
    return private_sigstore.write_trusted_root(tmp_path / "private_trusted_root.json")


WritePolicy = Callable[[str], TrustPolicy]


@pytest.fixture
def write_policy(tmp_path: Path) -> WritePolicy:
    """Write ``trusted_keys.toml`` text next to the private trusted root and load it."""

    def write(text: str) -> TrustPolicy:
        path = tmp_path / "trusted_keys.toml"
        path.write_text(text, encoding="utf-8")
        return load_policy(path, explicit=True)

    return write
