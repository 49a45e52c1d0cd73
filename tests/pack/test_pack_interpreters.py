"""The vendored tree follows the Python the tarball declares, not the one packing (SPEC, pack:
"the same project packed from Python 3.11 or 3.13 ... gives the same bytes").

Each pack runs pip with a real second interpreter (pyenv's, in a fresh virtual environment
holding the same pip as this one), offline against the test wheelhouse.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import tarfile
from collections.abc import Callable
from pathlib import Path

import pytest

from nexo_pkg.core.errors import NexoError
from nexo_pkg.pack.build import VENDOR_RECORD, PackOptions, pack
from pack.pack_helpers import ProjectFactory, build_wheel

_PYENV = Path("/root/.pyenv/versions")
_EPOCH = 1_700_000_000
# typing_extensions is a backport needed before 3.13 only: the marker decides what is vendored.
_REQUIREMENTS = 'typing_extensions; python_version < "3.13"\n'


@pytest.fixture(scope="module")
def interpreter(
    tmp_path_factory: pytest.TempPathFactory, wheelhouse: Path
) -> Callable[[str], Path]:
    """``interpreter("3.13")``: a virtual environment of pyenv's Python 3.13 with the
    wheelhouse's pip (the same pip for every version), made once per module."""
    made: dict[str, Path] = {}

    def get(version: str) -> Path:
        if version not in made:
            made[version] = _interpreter(version, tmp_path_factory.mktemp("venvs"), wheelhouse)
        return made[version]

    return get


def _interpreter(version: str, tmp_path: Path, wheelhouse: Path) -> Path:
    found = sorted(_PYENV.glob(f"{version}.*/bin/python3"))
    if not found:
        pytest.skip(f"no Python {version} under {_PYENV}")
    venv = tmp_path / f"venv-{version}"
    subprocess.run([str(found[-1]), "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    pip = sorted(wheelhouse.glob("pip-*.whl"))
    if not pip:
        pytest.skip(f"no pip wheel in {wheelhouse}")
    subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--no-index", str(pip[-1])],
        check=True,
    )
    return python


def _pack_with(
    python: Path, project: Path, out: Path, monkeypatch: pytest.MonkeyPatch, **options: str
) -> Path:
    with monkeypatch.context() as patch:
        patch.setattr(sys, "executable", str(python))
        result = pack(PackOptions(project=project, out=out, source_date_epoch=_EPOCH, **options))  # type: ignore[arg-type]
    return (
        result.tarball.path if result.tarball.path.is_absolute() else project / result.tarball.path
    )


def _members(tarball: Path) -> list[str]:
    with tarfile.open(tarball) as archive:
        return archive.getnames()


@pytest.mark.usefixtures("offline_pip_env")
def test_the_same_project_packs_the_same_bytes_from_311_and_313(
    tmp_path: Path,
    make_project: ProjectFactory,
    interpreter: Callable[[str], Path],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    project = make_project(requirements=_REQUIREMENTS)
    digests = {}
    for version in ("3.11", "3.13"):
        python = interpreter(version)
        tarball = _pack_with(python, project, tmp_path / f"dist-{version}", monkeypatch)
        digests[version] = hashlib.sha256(tarball.read_bytes()).hexdigest()
        members = _members(tarball)
        assert "lib/typing_extensions.py" in members, (version, members)
        with tarfile.open(tarball) as archive:
            record = archive.extractfile(VENDOR_RECORD)
            assert record is not None
            recorded = json.loads(record.read())
        assert recorded["python_version"] == "3.11"
        assert recorded["markers"]["python_version"] == "3.11"
        assert recorded["markers"]["sys_platform"] == "linux"
    assert digests["3.11"] == digests["3.13"]


@pytest.mark.usefixtures("offline_pip_env")
def test_a_tarball_for_313_leaves_the_backport_out_whoever_packs(
    tmp_path: Path,
    make_project: ProjectFactory,
    interpreter: Callable[[str], Path],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    project = make_project(requirements=_REQUIREMENTS + "nexoai>=0.4\n")
    python = interpreter("3.11")
    tarball = _pack_with(python, project, tmp_path / "dist", monkeypatch, python_version="3.13")
    members = _members(tarball)
    assert "lib/typing_extensions.py" not in members
    assert any(name.startswith("lib/nexoai") for name in members), members


@pytest.mark.parametrize("version", ["3", "3.x", "2.7", "3.11.4", ""])
def test_a_malformed_python_version_is_a_usage_error(
    make_project: ProjectFactory, version: str
) -> None:
    project = make_project()
    with pytest.raises(NexoError) as raised:
        pack(PackOptions(project=project, python_version=version))
    assert (raised.value.kind, raised.value.exit_code) == ("usage", 2)
    assert not (project / "dist").exists()


def test_a_tarball_for_a_triple_is_the_same_from_311_and_313(
    tmp_path: Path,
    make_project: ProjectFactory,
    interpreter: Callable[[str], Path],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A compiled wheel for macOS arm64 and a darwin-only backport, packed on Linux by two
    Pythons (with the wheelhouse's pip, whichever pip this environment has)."""
    wheels = tmp_path / "wheels"
    build_wheel(
        wheels, "fastlib", "1.0", {"fastlib/_speed.cpython-311-darwin.so": b"\xcf\xfa\xed\xfe"},
        purelib=False, tag="cp311-cp311-macosx_11_0_arm64",
    )  # fmt: skip
    build_wheel(
        wheels, "fastlib", "1.0", {"fastlib/_speed.cpython-311-x86_64-linux-gnu.so": b"\x7fELF"},
        purelib=False, tag="cp311-cp311-manylinux_2_17_x86_64",
    )  # fmt: skip
    build_wheel(wheels, "maconly", "1.0", {"maconly.py": b""}, purelib=True, tag="py3-none-any")
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(wheels))
    project = make_project(requirements='fastlib\nmaconly; sys_platform == "darwin"\n')
    digests = {}
    for version in ("3.11", "3.13"):
        tarball = _pack_with(
            interpreter(version),
            project,
            tmp_path / f"dist-{version}",
            monkeypatch,
            target="aarch64-apple-darwin",
        )
        digests[version] = hashlib.sha256(tarball.read_bytes()).hexdigest()
        members = _members(tarball)
        assert "lib/fastlib/_speed.cpython-311-darwin.so" in members, (version, members)
        assert "lib/maconly.py" in members, (version, members)
    assert digests["3.11"] == digests["3.13"]


def _gated_wheels(wheels: Path) -> None:
    """``gated`` 2.0 needs Python 3.13 (its Requires-Python, which pip reads from the wheel:
    a find-links directory states none), 1.0 runs on any."""
    build_wheel(
        wheels, "gated", "2.0", {"gated.py": b"V = 2\n"}, purelib=True, tag="py3-none-any",
        metadata="Requires-Python: >=3.13\n",
    )  # fmt: skip
    build_wheel(
        wheels, "gated", "1.0", {"gated.py": b"V = 1\n"}, purelib=True, tag="py3-none-any",
        metadata="Requires-Python: >=3.8\n",
    )  # fmt: skip


def test_requires_python_is_judged_for_the_tarballs_python_whoever_packs(
    tmp_path: Path,
    make_project: ProjectFactory,
    interpreter: Callable[[str], Path],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    wheels = tmp_path / "wheels"
    _gated_wheels(wheels)
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(wheels))
    project = make_project(requirements="gated\n")
    packed = {}
    for packing, target in [("3.11", "3.13"), ("3.13", "3.13"), ("3.13", "3.11")]:
        out = tmp_path / f"dist-{packing}-for-{target}"
        tarball = _pack_with(interpreter(packing), project, out, monkeypatch, python_version=target)
        packed[packing, target] = tarball.read_bytes()
        wanted = "2.0" if target == "3.13" else "1.0"
        members = _members(tarball)
        assert f"lib/gated-{wanted}.dist-info/METADATA" in members, (packing, target, members)
    assert packed["3.11", "3.13"] == packed["3.13", "3.13"]


def test_a_pip_judging_requires_python_by_the_running_python_is_refused(
    tmp_path: Path, make_project: ProjectFactory, wheelhouse: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """pip before 24.2 checks a wheel's Requires-Python against the interpreter running it,
    whatever --python-version says (pypa/pip#12216): from Python 3.11 it would vendor gated
    1.0 into a tarball for 3.13, where 3.13 itself vendors 2.0. Such a pip is refused, and
    upgrading it as the error says makes the pack go through."""
    found = sorted(_PYENV.glob("3.11.*/bin/python3"))
    if not found:
        pytest.skip(f"no Python 3.11 under {_PYENV}")
    venv = tmp_path / "venv-bundled-pip"
    subprocess.run([str(found[-1]), "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    version = subprocess.run(
        [str(python), "-c", "import pip; print(pip.__version__)"],
        check=True, capture_output=True, text=True,
    ).stdout.strip()  # fmt: skip
    if tuple(int(part) for part in version.split(".")[:2]) >= (24, 2):
        pytest.skip(f"this Python's bundled pip is {version}")
    wheels = tmp_path / "wheels"
    _gated_wheels(wheels)
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(wheels))
    project = make_project(requirements="gated\n")
    out = tmp_path / "dist"
    with pytest.raises(NexoError) as raised:
        _pack_with(python, project, out, monkeypatch, python_version="3.13")
    assert (raised.value.kind, raised.value.exit_code) == ("vendor_failed", 1)
    message = str(raised.value)
    assert f"pip {version} of {python}" in message
    assert f"`{python} -m pip install 'pip>=24.2'`" in message
    assert not out.exists()
    assert sorted(path.name for path in project.iterdir()) == sorted(
        ["nexo-plugin.toml", "requirements.txt", "src"]
    )
    # The remedy, from the wheelhouse's pip.
    subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--no-index",
         "--find-links", str(wheelhouse), "pip>=24.2"],
        check=True,
    )  # fmt: skip
    tarball = _pack_with(python, project, out, monkeypatch, python_version="3.13")
    assert "lib/gated-2.0.dist-info/METADATA" in _members(tarball)
