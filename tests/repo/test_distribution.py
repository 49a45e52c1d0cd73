"""What PyPI users get: the sdist and wheel nexo-pkg's own release builds carry the licence the
metadata declares, its classifiers, URLs and authors; the sdist carries the tests and docs;
and two builds with one ``SOURCE_DATE_EPOCH`` give byte-identical wheels.

The distributions are built as the release workflow builds them (PEP 517 through
setuptools' backend, in a fresh environment holding the build requirement from the test
wheelhouse, offline), from a copy of the checkout's tracked files.
"""

from __future__ import annotations

import email
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_EPOCH = "1700000000"
_BUILD = """\
import sys
from setuptools import build_meta
out = sys.argv[1]
build_meta.build_sdist(out)
build_meta.build_wheel(out)
"""


@pytest.fixture(scope="module")
def backend(tmp_path_factory: pytest.TempPathFactory, wheelhouse: Path) -> Path:
    """A Python whose environment holds the build backend ``pyproject.toml`` requires."""
    wheels = sorted(wheelhouse.glob("setuptools-*.whl"))
    if not wheels:
        pytest.skip(f"no setuptools wheel in {wheelhouse}")
    venv = tmp_path_factory.mktemp("backend") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    install = [sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet"]
    subprocess.run(
        [*install, "--no-index", "--disable-pip-version-check", str(wheels[-1])], check=True
    )
    return python


def _checkout_copy(destination: Path) -> Path:
    tracked = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.split(b"\0")
    for name in filter(None, (item.decode() for item in tracked)):
        source = ROOT / name
        if source.is_file():
            (destination / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, destination / name)
    return destination


def _build(python: Path, workdir: Path) -> tuple[Path, Path]:
    source = _checkout_copy(workdir / "src")
    out = workdir / "dist"
    out.mkdir()
    subprocess.run(
        [str(python), "-c", _BUILD, str(out)],
        cwd=source,
        env={"PATH": "/usr/bin:/bin", "SOURCE_DATE_EPOCH": _EPOCH},
        capture_output=True,
        check=True,
    )
    (sdist,) = out.glob("*.tar.gz")
    (wheel,) = out.glob("*.whl")
    return sdist, wheel


@pytest.fixture(scope="module")
def built(backend: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """(sdist, wheel, wheel of a second build) of this checkout."""
    sdist, wheel = _build(backend, tmp_path_factory.mktemp("first"))
    _, again = _build(backend, tmp_path_factory.mktemp("second"))
    return sdist, wheel, again


def test_the_licence_is_in_the_repository_sdist_and_wheel(built: tuple[Path, Path, Path]) -> None:
    sdist, wheel, _ = built
    licence = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert "Apache License" in licence
    assert "Version 2.0, January 2004" in licence
    assert "END OF TERMS AND CONDITIONS" in licence
    with tarfile.open(sdist) as archive:
        top = archive.getnames()[0].split("/")[0]
        member = archive.extractfile(f"{top}/LICENSE")
        assert member is not None
        assert member.read().decode() == licence
    with zipfile.ZipFile(wheel) as archive:
        licences = [name for name in archive.namelist() if name.endswith("licenses/LICENSE")]
        assert len(licences) == 1
        assert archive.read(licences[0]).decode() == licence


def test_the_metadata_declares_licence_classifiers_urls_and_authors(
    built: tuple[Path, Path, Path],
) -> None:
    _, wheel, _ = built
    with zipfile.ZipFile(wheel) as archive:
        (name,) = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        metadata = email.message_from_bytes(archive.read(name))
    assert metadata["License-Expression"] == "Apache-2.0"
    assert metadata.get_all("License-File") == ["LICENSE"]
    classifiers = set(metadata.get_all("Classifier") or [])
    for expected in (
        "Operating System :: POSIX :: Linux",
        "Operating System :: MacOS",
        "Operating System :: Microsoft :: Windows",
        "Programming Language :: Python :: 3.11",
        "Programming Language :: Python :: 3.13",
        "Development Status :: 4 - Beta",
    ):
        assert expected in classifiers
    urls = dict(value.split(", ", 1) for value in metadata.get_all("Project-URL") or [])
    assert urls["Source"] == "https://github.com/nexo-pkg/nexo-pkg"
    assert {"Homepage", "Documentation", "Issues"} <= set(urls)
    assert metadata["Author"] == "nexo-pkg maintainers"


def test_the_sdist_carries_the_tests_and_docs(built: tuple[Path, Path, Path]) -> None:
    sdist, _, _ = built
    with tarfile.open(sdist) as archive:
        names = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    for expected in (
        "tests/conftest.py",
        "tests/support/windows_shim.py",
        "docs/pack.md",
        "scripts/test.sh",
        "schemas",
    ):
        assert any(name == expected or name.startswith(expected + "/") for name in names)
    assert not any("__pycache__" in name or name.endswith(".pyc") for name in names)


def test_two_builds_with_one_source_date_epoch_give_identical_wheels(
    built: tuple[Path, Path, Path],
) -> None:
    _, wheel, again = built
    assert wheel.name == again.name
    assert wheel.read_bytes() == again.read_bytes()


def test_the_release_workflow_builds_reproducibly_with_pinned_tooling() -> None:
    import yaml

    workflow = yaml.safe_load((ROOT / ".github/workflows/release.yml").read_text("utf-8"))
    assert workflow["concurrency"]["group"].startswith("release-")
    assert workflow["concurrency"]["cancel-in-progress"] is False
    (build,) = [
        step
        for step in workflow["jobs"]["build"]["steps"]
        if "python -m build" in step.get("run", "")
    ]
    assert build["env"]["PIP_CONSTRAINT"] == ".github/build-constraints.txt"
    assert "SOURCE_DATE_EPOCH=$(git log -1 --format=%ct)" in build["run"]
    assert "cmp dist/*.whl rebuild/*.whl" in build["run"]
    pins = [
        line
        for line in (ROOT / ".github/build-constraints.txt").read_text("utf-8").splitlines()
        if line and not line.startswith("#")
    ]
    assert {pin.split("==")[0] for pin in pins} >= {"build", "setuptools"}
    assert all("==" in pin for pin in pins)
