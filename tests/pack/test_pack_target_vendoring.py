"""A Python plugin packed for a target triple vendors what that target runs (SPEC, pack:
"Vendoring resolves for the target the tarball declares (the daemon's Python and the target
triple), not for the packing interpreter or OS"): pip takes that platform's wheels
(``--platform``, ``--only-binary=:all:``) and evaluates markers for that OS and CPU, whatever
machine packs.

Every pack runs the real CLI and real pip, offline against a wheel directory of hand-made
wheels tagged for Linux (glibc and musl), macOS and Windows.
"""

from __future__ import annotations

import json
import tarfile
from pathlib import Path

import pytest
from support import windows_shim
from support.cli import clean_env, nexo

from nexo_pkg.pack.layout import LAUNCHER
from pack.pack_helpers import build_wheel, write_project

EPOCH = "1700000000"
REQUIREMENTS = """\
fastlib
maconly; sys_platform == "darwin"
linuxonly; sys_platform == "linux"
winonly; sys_platform == "win32"
armonly; platform_machine == "arm64" or platform_machine == "aarch64"
"""
# The extension module each platform's fastlib wheel ships, by wheel platform tag.
EXTENSIONS = {
    "manylinux_2_17_x86_64.manylinux2014_x86_64": "fastlib/_speed.cpython-311-x86_64-linux-gnu.so",
    "manylinux_2_17_aarch64.manylinux2014_aarch64": (
        "fastlib/_speed.cpython-311-aarch64-linux-gnu.so"
    ),
    "musllinux_1_2_x86_64": "fastlib/_speed.cpython-311-x86_64-linux-musl.so",
    "macosx_11_0_arm64": "fastlib/_speed.cpython-311-darwin.so",
    "win_amd64": "fastlib/_speed.cp311-win_amd64.pyd",
}


@pytest.fixture
def wheels(tmp_path: Path) -> Path:
    """A wheel directory: fastlib compiled for each platform, four pure packages."""
    directory = tmp_path / "wheels"
    for platform, extension in EXTENSIONS.items():
        build_wheel(
            directory,
            "fastlib",
            "1.0",
            {"fastlib/__init__.py": b"", extension: b"\x7fELF native " + platform.encode()},
            purelib=False,
            tag=f"cp311-cp311-{platform}",
        )
    for name in ("maconly", "linuxonly", "winonly", "armonly"):
        build_wheel(
            directory, name, "1.0", {f"{name}/__init__.py": b""}, purelib=True, tag="py3-none-any"
        )
    return directory


def _pack(
    project: Path, wheels: Path, *args: str, windows: bool = False
) -> tuple[int, dict[str, object], str]:
    env = clean_env(PIP_NO_INDEX="1", PIP_FIND_LINKS=str(wheels), PIP_DISABLE_PIP_VERSION_CHECK="1")
    if windows:
        # nexo-pkg as Windows's CPython shows it the standard library (tests/support).
        windows_shim.child_environment(env)
    result = nexo(
        "plugin", "pack", str(project), "--source-date-epoch", EPOCH, "--json", *args, env=env
    )
    return result.exit_code, json.loads(result.stdout), result.stderr


def _members(tarball: Path) -> dict[str, bytes]:
    members: dict[str, bytes] = {}
    with tarfile.open(tarball) as archive:
        for member in archive.getmembers():
            stream = archive.extractfile(member) if member.isfile() else None
            members[member.name] = stream.read() if stream is not None else b""
    return members


def _vendored_packages(members: dict[str, bytes]) -> set[str]:
    return {name.split("/")[1] for name in members if name.endswith(".dist-info/WHEEL")}


# target triple -> (fastlib's wheel platform, packages the markers keep, packages they drop)
CASES = {
    "x86_64-unknown-linux-gnu": ("manylinux_2_17_x86_64.manylinux2014_x86_64",
                                 {"linuxonly"}, {"maconly", "winonly", "armonly"}),
    "aarch64-unknown-linux-gnu": ("manylinux_2_17_aarch64.manylinux2014_aarch64",
                                  {"linuxonly", "armonly"}, {"maconly", "winonly"}),
    "x86_64-unknown-linux-musl": ("musllinux_1_2_x86_64",
                                  {"linuxonly"}, {"maconly", "winonly", "armonly"}),
    "aarch64-apple-darwin": ("macosx_11_0_arm64",
                             {"maconly", "armonly"}, {"linuxonly", "winonly"}),
}  # fmt: skip


@pytest.mark.parametrize("target", sorted(CASES))
def test_a_python_plugin_packed_for_a_triple_vendors_that_platforms_wheels(
    tmp_path: Path, wheels: Path, target: str
) -> None:
    platform, present, absent = CASES[target]
    project = write_project(tmp_path / "project", requirements=REQUIREMENTS)
    code, document, stderr = _pack(project, wheels, "--target", target)
    assert code == 0, stderr
    assert document["ok"] is True
    assert document["target"] == target
    tarball = project / "dist" / f"demo-0.1.0-{target}.tar.gz"
    assert tarball.is_file()
    members = _members(tarball)
    # The Python layout: the launcher, the plugin's code, the vendored tree.
    assert members["bin/demo"] == LAUNCHER.encode()
    assert "lib/plugin/main.py" in members
    assert members[f"lib/{EXTENSIONS[platform]}"] == b"\x7fELF native " + platform.encode()
    other_extensions = {f"lib/{path}" for tag, path in EXTENSIONS.items() if tag != platform}
    assert not other_extensions & members.keys()
    vendored = _vendored_packages(members)
    assert {f"{name}-1.0.dist-info" for name in {"fastlib", *present}} == vendored
    assert not {f"{name}-1.0.dist-info" for name in absent} & vendored
    record = json.loads(members["lib/nexo-vendor.json"])
    assert record["target"] == target
    assert record["python_version"] == "3.11"
    # The SBOM beside the tarball is the one inside it, and names the target.
    sbom = (project / "dist" / f"demo-0.1.0-{target}.cdx.json").read_bytes()
    assert members["sbom.cdx.json"] == sbom
    bom = json.loads(sbom)
    properties = {
        item["name"]: item["value"] for item in bom["metadata"]["component"]["properties"]
    }
    assert properties["nexo:target"] == target
    assert {component["name"] for component in bom["components"]} == {"fastlib", *present}


def test_the_same_triple_packs_the_same_bytes_on_linux_and_windows(
    tmp_path: Path, wheels: Path
) -> None:
    project = write_project(tmp_path / "project", requirements=REQUIREMENTS)
    digests = []
    for out, windows in (("linux", False), ("windows", True)):
        code, document, stderr = _pack(
            project,
            wheels,
            "--target",
            "aarch64-apple-darwin",
            "--out",
            str(tmp_path / out),
            windows=windows,
        )
        assert code == 0, stderr
        assets = document["assets"]
        assert isinstance(assets, list)
        digests.append([(Path(asset["path"]).name, asset["sha256"]) for asset in assets])
    assert digests[0] == digests[1]


def test_a_requirement_without_a_wheel_for_the_target_fails_and_writes_nothing(
    tmp_path: Path,
) -> None:
    wheels = tmp_path / "wheels"
    build_wheel(
        wheels, "fastlib", "1.0", {EXTENSIONS["win_amd64"]: b"MZ"}, purelib=False,
        tag="cp311-cp311-win_amd64",
    )  # fmt: skip
    project = write_project(tmp_path / "project", requirements="fastlib\n")
    code, document, _ = _pack(project, wheels, "--target", "x86_64-unknown-linux-gnu")
    assert code == 1
    assert document["ok"] is False
    assert document["kind"] == "vendor_failed"
    assert "fastlib" in str(document["error"])
    assert not (project / "dist").exists()


@pytest.mark.parametrize("target", ["x86_64-pc-windows-msvc", "x86_64-unknown-freebsd"])
def test_a_python_plugin_for_a_host_the_daemon_does_not_run_on_is_a_usage_error(
    tmp_path: Path, wheels: Path, target: str
) -> None:
    project = write_project(tmp_path / "project", requirements=REQUIREMENTS)
    code, document, _ = _pack(project, wheels, "--target", target)
    assert code == 2
    assert document["kind"] == "usage"
    assert target in str(document["error"])
    assert "Linux" in str(document["error"])
    assert not (project / "dist").exists()


def test_windows_code_in_a_linux_tarball_is_refused(tmp_path: Path, wheels: Path) -> None:
    project = write_project(
        tmp_path / "project", requirements="linuxonly\n", files={"src/helper.pyd": "MZ"}
    )
    code, document, _ = _pack(project, wheels, "--target", "x86_64-unknown-linux-gnu")
    assert code == 1
    assert document["kind"] == "native_code"
    assert "lib/plugin/helper.pyd" in str(document["error"])
    assert not (project / "dist").exists()


def test_a_compiled_plugin_still_packs_its_binary_alone(tmp_path: Path, wheels: Path) -> None:
    project = write_project(tmp_path / "project", requirements=REQUIREMENTS)
    binary = tmp_path / "demo-exe"
    binary.write_bytes(b"\x7fELF binary")
    binary.chmod(0o755)
    code, _, stderr = _pack(
        project, wheels, "--target", "x86_64-unknown-linux-gnu", "--binary", str(binary)
    )
    assert code == 0, stderr
    members = _members(project / "dist" / "demo-0.1.0-x86_64-unknown-linux-gnu.tar.gz")
    assert members["bin/demo"] == b"\x7fELF binary"
    assert not any(name.startswith("lib/") for name in members)


def test_console_scripts_stay_out_whichever_os_pip_ran_on(tmp_path: Path) -> None:
    """pip --target leaves a distribution's console scripts in ``bin/`` on POSIX and in
    ``Scripts/`` (``.exe`` launchers) on Windows, both naming the packing interpreter: neither
    is packed, so Windows packs the same bytes. The wheel puts a file in each, as pip's
    scheme for --target does on either OS (``<name>.data/scripts`` and ``.data/data``)."""
    wheels = tmp_path / "wheels"
    build_wheel(
        wheels,
        "tooling",
        "1.0",
        {
            "tooling/__init__.py": b"",
            "tooling-1.0.data/scripts/tooling": b"#!/usr/bin/python3\n",
            "tooling-1.0.data/data/Scripts/tooling.exe": b"MZ launcher",
        },
        purelib=True,
        tag="py3-none-any",
    )
    project = write_project(tmp_path / "project", requirements="tooling\n")
    code, _, stderr = _pack(project, wheels)
    assert code == 0, stderr
    members = _members(project / "dist" / "demo-0.1.0-noarch.tar.gz")
    assert "lib/tooling/__init__.py" in members
    assert not [name for name in members if name.startswith(("lib/bin", "lib/Scripts"))]
    record = members["lib/tooling-1.0.dist-info/RECORD"].decode()
    assert "Scripts" not in record
    assert "bin/tooling" not in record


def test_a_triple_without_binary_or_python_code_is_a_usage_error(
    tmp_path: Path, wheels: Path
) -> None:
    """A compiled plugin's project (no src/main.py) packed without its --binary."""
    project = write_project(tmp_path / "project")
    (project / "src" / "main.py").unlink()
    code, document, _ = _pack(project, wheels, "--target", "x86_64-unknown-linux-gnu")
    assert code == 2
    assert document["kind"] == "usage"
    assert "needs --binary PATH" in str(document["error"])
    assert not (project / "dist").exists()
