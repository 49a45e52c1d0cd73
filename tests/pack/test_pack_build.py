"""`pack` end to end through the API: layout, reproducibility, vendoring, audit, bad input."""

from __future__ import annotations

import hashlib
import io
import json
import os
import subprocess
import sys
import tarfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from nexo_pkg.core.errors import NexoError
from nexo_pkg.core.source_date import LATEST_EPOCH
from nexo_pkg.pack.archive import ArchiveEntry
from nexo_pkg.pack.build import PackOptions, _write_assets, pack
from nexo_pkg.pack.epoch import FALLBACK_EPOCH, SourceDateEpoch, resolve_source_date_epoch
from nexo_pkg.pack.layout import LAUNCHER, MODES_ON_DISK
from pack.pack_helpers import ProjectFactory, build_wheel, write_project

EPOCH = 1_700_000_000


def _members(tarball: Path) -> dict[str, tarfile.TarInfo]:
    with tarfile.open(tarball, "r:gz") as archive:
        return {member.name: member for member in archive.getmembers()}


def _read(tarball: Path, name: str) -> bytes:
    with tarfile.open(tarball, "r:gz") as archive:
        handle = archive.extractfile(name)
        assert handle is not None
        return handle.read()


def _error(options: PackOptions, environ: dict[str, str] | None = None) -> NexoError:
    with pytest.raises(NexoError) as caught:
        pack(options, environ=environ or {})
    return caught.value


def _listing(directory: Path) -> list[str]:
    return sorted(str(p.relative_to(directory)) for p in directory.rglob("*"))


@contextmanager
def _umask(mask: int) -> Iterator[None]:
    previous = os.umask(mask)
    try:
        yield
    finally:
        os.umask(previous)


def test_noarch_layout(make_project: ProjectFactory) -> None:
    project = make_project(files={"src/helpers/util.py": "X = 1\n"})
    result = pack(PackOptions(project=project, source_date_epoch=EPOCH), environ={})
    dist = project / "dist"
    assert sorted(p.name for p in dist.iterdir()) == [
        "demo-0.1.0-noarch.cdx.json",
        "demo-0.1.0-noarch.tar.gz",
        "demo-0.1.0-noarch.tar.gz.sha256",
        "nexo-plugin.toml",
    ]
    tarball = dist / "demo-0.1.0-noarch.tar.gz"
    members = _members(tarball)
    assert sorted(name for name in members if "/" not in name) == [
        "bin",
        "lib",
        "nexo-plugin.toml",
        "sbom.cdx.json",
    ]
    assert sorted(members) == [
        "bin",
        "bin/demo",
        "lib",
        "lib/plugin",
        "lib/plugin/helpers",
        "lib/plugin/helpers/util.py",
        "lib/plugin/main.py",
        "nexo-plugin.toml",
        "sbom.cdx.json",
    ]
    assert members["bin/demo"].mode == 0o755
    assert _read(tarball, "bin/demo").decode() == LAUNCHER
    assert LAUNCHER.splitlines()[1:] == [
        'DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"',
        'exec env PYTHONPATH="$DIR/lib" python3 "$DIR/lib/plugin/main.py" "$@"',
    ]
    assert _read(tarball, "nexo-plugin.toml") == (project / "nexo-plugin.toml").read_bytes()
    assert (dist / "nexo-plugin.toml").read_bytes() == (project / "nexo-plugin.toml").read_bytes()
    digest = hashlib.sha256(tarball.read_bytes()).hexdigest()
    assert result.tarball.sha256 == digest
    assert result.tarball.size == tarball.stat().st_size
    sidecar = dist / "demo-0.1.0-noarch.tar.gz.sha256"
    assert sidecar.read_text() == f"{digest}  demo-0.1.0-noarch.tar.gz\n"
    subprocess.run(["sha256sum", "--check", "--strict", sidecar.name], cwd=dist, check=True)
    document = result.to_json()
    assert document["ok"] is True
    assert (document["id"], document["version"], document["target"]) == ("demo", "0.1.0", "noarch")
    assert document["assets"][0]["sha256"] == digest


def test_modes_bytecode_and_symlinks_inside(make_project: ProjectFactory) -> None:
    project = make_project(files={"src/run.sh": "#!/bin/sh\n", "src/data.txt": "d\n"})
    (project / "src" / "run.sh").chmod(0o700)
    (project / "src" / "data.txt").chmod(0o600)
    (project / "src" / "__pycache__").mkdir()
    (project / "src" / "__pycache__" / "main.cpython-311.pyc").write_bytes(b"\0")
    (project / "src" / "stale.pyc").write_bytes(b"\0")
    (project / "shared.txt").write_text("shared\n")
    (project / "src" / "link.txt").symlink_to(project / "shared.txt")
    # Byte code by its own name, whatever the link points at.
    (project / "src" / "linked.pyc").symlink_to(project / "shared.txt")
    pack(PackOptions(project=project, source_date_epoch=EPOCH), environ={})
    tarball = project / "dist" / "demo-0.1.0-noarch.tar.gz"
    members = _members(tarball)
    # Where files keep no execute bit (Windows), only git's index makes one 0755; this
    # project is no checkout.
    assert members["lib/plugin/run.sh"].mode == (0o755 if MODES_ON_DISK else 0o644)
    assert members["lib/plugin/data.txt"].mode == 0o644
    assert not any("__pycache__" in name or name.endswith(".pyc") for name in members)
    assert members["lib/plugin/link.txt"].isfile()
    assert _read(tarball, "lib/plugin/link.txt") == b"shared\n"


def _project_in_order(root: Path, names: list[str], mtime: int) -> Path:
    write_project(root)
    for name in names:
        path = root / "src" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# {name}\n")
        os.utime(path, (mtime, mtime))
    for path in root.rglob("*"):
        os.utime(path, (mtime, mtime), follow_symlinks=False)
    return root


def test_byte_identical_across_umask_mtime_and_creation_order(tmp_path: Path) -> None:
    names = [f"pkg{i % 4}/mod{i}.py" for i in range(40)]
    with _umask(0o022):
        first = _project_in_order(tmp_path / "first", names, 1_000_000)
    with _umask(0o077):
        second = _project_in_order(tmp_path / "second", list(reversed(names)), 2_000_000)
    assert (first / "src" / "main.py").stat().st_mode != (second / "src" / "main.py").stat().st_mode
    one = pack(PackOptions(project=first, source_date_epoch=EPOCH), environ={})
    with _umask(0o077):
        two = pack(PackOptions(project=second, source_date_epoch=EPOCH), environ={})
    again = pack(
        PackOptions(project=first, out=tmp_path / "again", source_date_epoch=EPOCH), environ={}
    )
    assert one.tarball.path.read_bytes() == two.tarball.path.read_bytes()
    assert one.tarball.sha256 == two.tarball.sha256 == again.tarball.sha256
    # A content change does change the bytes: the comparison above is not vacuous.
    (second / "src" / "main.py").write_text("print('changed')\n")
    changed = pack(
        PackOptions(project=second, out=tmp_path / "c", source_date_epoch=EPOCH), environ={}
    )
    assert changed.tarball.sha256 != one.tarball.sha256


def test_source_date_epoch_precedence(tmp_path: Path, make_project: ProjectFactory) -> None:
    project = make_project()
    assert resolve_source_date_epoch(5, {"SOURCE_DATE_EPOCH": "7"}, project).value == 5
    assert resolve_source_date_epoch(None, {"SOURCE_DATE_EPOCH": "7"}, project).value == 7
    fallback = resolve_source_date_epoch(None, {}, project)
    assert (fallback.value, fallback.origin) == (FALLBACK_EPOCH, "default")
    env = {
        **os.environ,
        "GIT_AUTHOR_DATE": "@1600000000 +0000",
        "GIT_COMMITTER_DATE": "@1600000000 +0000",
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.invalid",
    }
    subprocess.run(["git", "init", "-q", str(project)], check=True, env=env)
    subprocess.run(["git", "-C", str(project), "add", "."], check=True, env=env)
    subprocess.run(["git", "-C", str(project), "commit", "-qm", "init"], check=True, env=env)
    from_git = resolve_source_date_epoch(None, {}, project)
    assert (from_git.value, from_git.origin) == (1_600_000_000, "git")
    assert resolve_source_date_epoch(None, {"SOURCE_DATE_EPOCH": "9"}, project).value == 9
    result = pack(PackOptions(project=project), environ={})
    assert {m.mtime for m in _members(result.tarball.path).values()} == {1_600_000_000}


@pytest.mark.parametrize(
    # A superscript and Arabic-Indic digits pass str.isdigit but are no ASCII integer.
    "value",
    ["soon", "-5", "1.5", str(LATEST_EPOCH + 1), "\u00b2", "\u0661\u0662", "1\u00b2"],
)
def test_bad_source_date_epoch_is_a_usage_error(make_project: ProjectFactory, value: str) -> None:
    project = make_project()
    error = _error(PackOptions(project=project), {"SOURCE_DATE_EPOCH": value})
    assert (error.kind, error.exit_code) == ("usage", 2)
    assert not (project / "dist").exists()
    for flag in (-1, LATEST_EPOCH + 1, 99_999_999_999_999):
        error = _error(PackOptions(project=project, source_date_epoch=flag))
        assert (error.kind, error.exit_code) == ("usage", 2)
        assert str(LATEST_EPOCH) in error.message
    assert not (project / "dist").exists()


def test_leading_zeros_do_not_count_against_the_digits(make_project: ProjectFactory) -> None:
    """``0…09`` is the integer 9 however many zeros lead it, by flag and by variable alike
    (Python's ``int`` alone refuses more than 4300 digits)."""
    padded = "0" * 5000 + "9"
    project = make_project()
    assert resolve_source_date_epoch(padded, {}, project) == SourceDateEpoch(9, "flag")
    assert resolve_source_date_epoch(None, {"SOURCE_DATE_EPOCH": padded}, project).value == 9
    for refused in ("0" * 5000 + str(LATEST_EPOCH + 1), "9" * 5000):
        for flag, environ in ((refused, {}), (None, {"SOURCE_DATE_EPOCH": refused})):
            with pytest.raises(NexoError) as caught:
                resolve_source_date_epoch(flag, environ, project)
            assert (caught.value.kind, caught.value.exit_code) == ("usage", 2)


def test_latest_source_date_epoch_packs(make_project: ProjectFactory) -> None:
    result = pack(PackOptions(project=make_project(), source_date_epoch=LATEST_EPOCH))
    assert {m.mtime for m in _members(result.tarball.path).values()} == {LATEST_EPOCH}
    sbom = json.loads(_read(result.tarball.path, "sbom.cdx.json"))
    assert sbom["metadata"]["timestamp"].startswith("9999-12-31T23:59:59")


@pytest.mark.usefixtures("offline_pip_env")
def test_requirements_are_vendored(make_project: ProjectFactory) -> None:
    project = make_project(requirements="nexoai>=0.4\n")
    result = pack(PackOptions(project=project, source_date_epoch=EPOCH))
    members = _members(result.tarball.path)
    assert "lib/nexo_plugin_sdk/adapter.py" in members
    assert "lib/nexoai-0.4.0.dist-info/WHEEL" in members
    assert not any(name.startswith("lib/bin") or name.endswith(".pyc") for name in members)
    again = pack(PackOptions(project=project, out=project / "d2", source_date_epoch=EPOCH))
    assert again.tarball.sha256 == result.tarball.sha256


@pytest.mark.usefixtures("offline_pip_env")
@pytest.mark.parametrize("configured", ["environment", "pip.conf"])
def test_a_pip_set_for_user_installs_still_vendors_into_the_tree(
    make_project: ProjectFactory, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, configured: str
) -> None:
    """A pip configured for user installs (``user = true`` in pip.conf, ``PIP_USER=1``)
    refuses ``--target`` unless told otherwise: the tree is vendored all the same, and nothing
    lands in the user's site."""
    user_base = tmp_path / "user-base"
    monkeypatch.setenv("PYTHONUSERBASE", str(user_base))
    if configured == "environment":
        monkeypatch.setenv("PIP_USER", "1")
    else:
        config = tmp_path / "pip.conf"
        config.write_text("[install]\nuser = true\n", encoding="utf-8")
        monkeypatch.setenv("PIP_CONFIG_FILE", str(config))
    project = make_project(requirements="nexoai>=0.4\n")
    result = pack(PackOptions(project=project, source_date_epoch=EPOCH))
    assert "lib/nexo_plugin_sdk/adapter.py" in _members(result.tarball.path)
    assert not user_base.exists()


@pytest.mark.usefixtures("offline_pip_env")
def test_a_local_wheel_packs_the_same_bytes_from_any_checkout(tmp_path: Path) -> None:
    """pip records a requirement installed from a local file in ``direct_url.json`` with the
    checkout's absolute path: that file is not packed, so two checkouts give one tarball and
    the packing machine's paths stay out of the release."""
    files = {"localdep/__init__.py": b"X = 1\n"}
    wheel = build_wheel(tmp_path / "w", "localdep", "1.0", files, purelib=True, tag="py3-none-any")
    tarballs: list[Path] = []
    for place in ("one", "elsewhere/two"):
        project = write_project(tmp_path / place, requirements=f"./wheels/{wheel.name}\n")
        (project / "wheels").mkdir()
        (project / "wheels" / wheel.name).write_bytes(wheel.read_bytes())
        options = PackOptions(
            project=project, out=tmp_path / f"out{len(tarballs)}", source_date_epoch=EPOCH
        )
        tarballs.append(pack(options).tarball.path)
    assert tarballs[0].read_bytes() == tarballs[1].read_bytes()
    members = _members(tarballs[0])
    assert "lib/localdep/__init__.py" in members
    assert not [name for name in members if name.endswith("direct_url.json")]
    record = _read(tarballs[0], "lib/localdep-1.0.dist-info/RECORD").decode()
    assert "localdep/__init__.py," in record
    assert "direct_url.json" not in record
    for name, member in members.items():
        if member.isfile():
            assert str(tmp_path).encode() not in _read(tarballs[0], name), name


@pytest.mark.usefixtures("offline_pip_env")
def test_console_scripts_leave_no_interpreter_path_in_the_records(tmp_path: Path) -> None:
    """pip writes a console script's wrapper with a ``#!`` line naming the packing interpreter
    and records its hash in RECORD as ``../../bin/<script>``: the wrapper is not packed, and
    neither is its RECORD line, so another interpreter path packs the same bytes."""
    files = {
        "tooly/__init__.py": b"def main() -> None: ...\n",
        "tooly-1.0.dist-info/entry_points.txt": b"[console_scripts]\ntooly = tooly:main\n",
    }
    wheel = build_wheel(tmp_path / "w", "tooly", "1.0", files, purelib=True, tag="py3-none-any")
    project = write_project(tmp_path / "p", requirements=f"{wheel}\n")
    result = pack(PackOptions(project=project, source_date_epoch=EPOCH))
    members = _members(result.tarball.path)
    assert "lib/tooly/__init__.py" in members
    assert not [name for name in members if name.startswith("lib/bin")]
    record = _read(result.tarball.path, "lib/tooly-1.0.dist-info/RECORD").decode()
    assert "tooly/__init__.py," in record
    assert [line for line in record.splitlines() if line.startswith("../")] == []
    assert sys.executable not in record


@pytest.mark.usefixtures("offline_pip_env")
def test_requirements_flag_overrides_the_default(
    tmp_path: Path, make_project: ProjectFactory
) -> None:
    project = make_project(requirements="definitely-not-installable==9\n")
    override = tmp_path / "runtime.txt"
    override.write_text("nexoai\n")
    result = pack(PackOptions(project=project, requirements=override, source_date_epoch=EPOCH))
    assert "lib/nexo_plugin_sdk/__init__.py" in _members(result.tarball.path)


@pytest.mark.usefixtures("offline_pip_env")
def test_native_dependencies_are_refused_with_every_offender(
    tmp_path: Path, make_project: ProjectFactory, host_tag: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    wheels = tmp_path / "wheels"
    build_wheel(
        wheels,
        "fastthing",
        "1.0",
        {
            "fastthing/__init__.py": b"",
            "fastthing/_speedups.so": b"\x7fELF",
            "fastthing/_extra.so": b"\x7fELF",
        },
        purelib=False,
        tag=host_tag,
    )
    build_wheel(
        wheels,
        "sneaky",
        "2.0",
        {"sneaky/__init__.py": b"", "sneaky/helper.dll": b"MZ"},
        purelib=True,
        tag="py3-none-any",
    )
    monkeypatch.setenv("PIP_FIND_LINKS", f"{wheels} {os.environ['PIP_FIND_LINKS']}")
    project = make_project(requirements="fastthing\nsneaky\n")
    error = _error(PackOptions(project=project, source_date_epoch=EPOCH), dict(os.environ))
    assert (error.kind, error.exit_code) == ("native_code", 1)
    offenders = {(o["path"], o["distribution"]) for o in error.details["offenders"]}
    assert offenders == {
        ("lib/fastthing-1.0.dist-info/WHEEL", "fastthing 1.0"),
        ("lib/fastthing/_speedups.so", "fastthing 1.0"),
        ("lib/fastthing/_extra.so", "fastthing 1.0"),
        ("lib/sneaky/helper.dll", "sneaky 2.0"),
    }
    reasons = " ".join(o["reason"] for o in error.details["offenders"])
    assert "Root-Is-Purelib: false" in reasons
    assert host_tag in reasons
    assert "per-target" in error.message
    for path, _ in offenders:
        assert path in error.message
    assert not (project / "dist").exists()


@pytest.mark.usefixtures("offline_pip_env")
def test_a_dependency_with_a_pure_wheel_gets_it_whatever_the_packing_os(
    tmp_path: Path, make_project: ProjectFactory, host_tag: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A release with a compiled wheel for this OS and a none-any one (as mypyc-built
    packages ship them) is vendored from the none-any wheel: what another OS without that
    compiled wheel would take, so every OS packs the same bytes."""
    wheels = tmp_path / "wheels"
    pure = {"dual/__init__.py": b"PURE = True\n"}
    build_wheel(wheels, "dual", "1.0", pure, purelib=True, tag="py3-none-any")
    native = {"dual/__init__.py": b"PURE = False\n", "dual/_speed.so": b"\x7fELF"}
    build_wheel(wheels, "dual", "1.0", native, purelib=False, tag=host_tag)
    monkeypatch.setenv("PIP_FIND_LINKS", f"{wheels} {os.environ['PIP_FIND_LINKS']}")
    project = make_project(requirements="dual\n")
    result = pack(PackOptions(project=project, source_date_epoch=EPOCH), environ={})
    assert _read(result.tarball.path, "lib/dual/__init__.py") == b"PURE = True\n"
    assert "lib/dual/_speed.so" not in _members(result.tarball.path)
    assert b"Tag: py3-none-any" in _read(result.tarball.path, "lib/dual-1.0.dist-info/WHEEL")


@pytest.mark.usefixtures("offline_pip_env")
def test_a_compiled_only_release_is_refused_not_swapped_for_an_older_pure_one(
    tmp_path: Path, make_project: ProjectFactory, host_tag: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Preferring pure wheels keeps the versions pip chose: a newest release with compiled
    wheels only is named by the audit, never silently replaced by an older pure release."""
    wheels = tmp_path / "wheels"
    build_wheel(wheels, "fast", "1.0", {"fast/__init__.py": b""}, purelib=True, tag="py3-none-any")
    native = {"fast/__init__.py": b"", "fast/_speed.so": b"\x7fELF"}
    build_wheel(wheels, "fast", "2.0", native, purelib=False, tag=host_tag)
    monkeypatch.setenv("PIP_FIND_LINKS", f"{wheels} {os.environ['PIP_FIND_LINKS']}")
    project = make_project(requirements="fast\n")
    error = _error(PackOptions(project=project, source_date_epoch=EPOCH), dict(os.environ))
    assert (error.kind, error.exit_code) == ("native_code", 1)
    assert {o["distribution"] for o in error.details["offenders"]} == {"fast 2.0"}
    assert not (project / "dist").exists()


@pytest.mark.usefixtures("offline_pip_env")
def test_uninstallable_requirement_is_summarised(make_project: ProjectFactory) -> None:
    project = make_project(requirements="no-such-dist-for-tests==1.0\n")
    error = _error(PackOptions(project=project, source_date_epoch=EPOCH), dict(os.environ))
    assert (error.kind, error.exit_code) == ("vendor_failed", 1)
    assert "no-such-dist-for-tests" in error.message
    assert "\n" not in error.message
    assert not (project / "dist").exists()


def test_a_requirement_published_only_as_an_sdist_is_named_with_a_hint(
    tmp_path: Path, make_project: ProjectFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    links = tmp_path / "links"
    links.mkdir()
    source = io.BytesIO()
    with tarfile.open(fileobj=source, mode="w:gz") as archive:
        data = b"[project]\nname = 'sdistonly'\nversion = '1.0'\n"
        info = tarfile.TarInfo("sdistonly-1.0/pyproject.toml")
        info.size = len(data)
        archive.addfile(info, io.BytesIO(data))
    (links / "sdistonly-1.0.tar.gz").write_bytes(source.getvalue())
    project = make_project(requirements="sdistonly==1.0\n")
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(links))
    error = _error(PackOptions(project=project, source_date_epoch=EPOCH))
    assert (error.kind, error.exit_code) == ("vendor_failed", 1)
    assert "found only as source distributions: sdistonly;" in error.message
    assert "pip wheel --no-deps" in error.message
    assert "\n" not in error.message
    assert not (project / "dist").exists()
    # With a wheel pip passes over (another platform) the distribution is not sdist-only:
    # pip's own message is left to say why, without the hint.
    build_wheel(
        links,
        "sdistonly",
        "1.0",
        {"sdistonly/__init__.py": b""},
        purelib=True,
        tag="py3-none-win_amd64",
    )
    error = _error(PackOptions(project=project, source_date_epoch=EPOCH))
    assert (error.kind, error.exit_code) == ("vendor_failed", 1)
    assert "sdistonly" in error.message
    assert "source distributions" not in error.message


@pytest.mark.usefixtures("offline_pip_env")
def test_an_editable_requirement_is_refused(make_project: ProjectFactory, wheelhouse: Path) -> None:
    """`-e ./dir` leaves a finder naming the packing checkout's absolute path in lib/, and
    none of the package's code: the tarball would fail to import it on any other host."""
    project = make_project(requirements="-e ./localdep\n")
    (project / "localdep" / "localdep").mkdir(parents=True)
    (project / "localdep" / "localdep" / "__init__.py").write_text("X = 1\n")
    (project / "localdep" / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n'
        '[project]\nname = "localdep"\nversion = "1.0"\n'
    )
    if not any(wheelhouse.glob("setuptools-*.whl")):
        pytest.skip(f"no setuptools wheel in {wheelhouse} (scripts/test.sh puts one there)")
    # Built with setuptools from the wheelhouse (PEP 660 editable wheel).
    error = _error(PackOptions(project=project, source_date_epoch=EPOCH))
    assert (error.kind, error.exit_code) == ("vendor_failed", 1), error.message
    assert "localdep 1.0 in editable mode" in error.message
    assert "\n" not in error.message
    assert not (project / "dist").exists()


def test_uninstallable_requirement_has_no_sdist_hint(make_project: ProjectFactory) -> None:
    project = make_project(requirements="no-such-dist-for-tests==1.0\n")
    error = _error(PackOptions(project=project, source_date_epoch=EPOCH), dict(os.environ))
    assert "source distributions" not in error.message


def test_per_target_tarball(tmp_path: Path, make_project: ProjectFactory) -> None:
    project = make_project()
    binary = tmp_path / "plugin-exe"
    binary.write_bytes(b"\x7fELF fake binary")
    binary.chmod(0o700)
    result = pack(
        PackOptions(
            project=project,
            target="x86_64-unknown-linux-gnu",
            binary=binary,
            source_date_epoch=EPOCH,
        ),
        environ={},
    )
    assert result.tarball.path.name == "demo-0.1.0-x86_64-unknown-linux-gnu.tar.gz"
    members = _members(result.tarball.path)
    assert sorted(members) == ["bin", "bin/demo", "nexo-plugin.toml", "sbom.cdx.json"]
    assert members["bin/demo"].mode == 0o755
    assert _read(result.tarball.path, "bin/demo") == b"\x7fELF fake binary"


@pytest.mark.parametrize(
    ("target", "binary_state", "message"),
    [
        ("noarch", "executable", "--binary needs --target"),
        ("x86_64-pc-windows-msvc", None, "cannot be packed for x86_64-pc-windows-msvc"),
        ("x86_64-unknown-linux-gnu", "no-src", "needs --binary"),
        ("sparc-sun-solaris", "executable", "unknown target"),
        ("aarch64-apple-darwin", "plain", "not executable"),
        ("aarch64-apple-darwin", "missing", "is not a file"),
    ],
)
def test_target_flag_errors(
    tmp_path: Path,
    make_project: ProjectFactory,
    target: str,
    binary_state: str | None,
    message: str,
) -> None:
    project = make_project()
    binary: Path | None = None
    if binary_state == "no-src":
        (project / "src" / "main.py").unlink()
    elif binary_state is not None:
        binary = tmp_path / "exe"
        if binary_state != "missing":
            binary.write_bytes(b"x")
            binary.chmod(0o755 if binary_state == "executable" else 0o644)
    error = _error(PackOptions(project=project, target=target, binary=binary))
    assert (error.kind, error.exit_code) == ("usage", 2)
    assert message in error.message
    assert not (project / "dist").exists()


def test_missing_manifest(tmp_path: Path) -> None:
    error = _error(PackOptions(project=tmp_path))
    assert (error.kind, error.exit_code) == ("manifest_missing", 2)
    error = _error(PackOptions(project=tmp_path / "nope"))
    assert (error.kind, error.exit_code) == ("manifest_missing", 2)
    assert _listing(tmp_path) == []


def test_lint_errors_stop_the_pack(make_project: ProjectFactory) -> None:
    project = make_project()
    manifest = project / "nexo-plugin.toml"
    manifest.write_text(manifest.read_text().replace('name = "Demo"\n', ""))
    error = _error(PackOptions(project=project))
    assert (error.kind, error.exit_code) == ("manifest_invalid", 1)
    assert error.details["diagnostics"]
    assert not (project / "dist").exists()


@pytest.mark.parametrize(
    ("plugin_id", "version"),
    [("demo", "1.0"), ("demo", "v1.0.0"), ("demo", "1.0.0/../x"), ("demo", "1.0.0-" + "a" * 231)],
)
def test_version_that_cannot_name_a_file(
    make_project: ProjectFactory, plugin_id: str, version: str
) -> None:
    project = make_project(plugin_id=plugin_id, version=version)
    error = _error(PackOptions(project=project))
    assert (error.kind, error.exit_code) == ("manifest_invalid", 1)
    assert not (project / "dist").exists()


def test_missing_main_py(make_project: ProjectFactory) -> None:
    project = make_project()
    (project / "src" / "main.py").unlink()
    error = _error(PackOptions(project=project))
    assert (error.kind, error.exit_code) == ("layout_invalid", 1)
    assert "main.py" in error.message
    assert not (project / "dist").exists()


@pytest.mark.parametrize("kind", ["outside", "directory", "dangling"])
def test_refused_symlinks(tmp_path: Path, make_project: ProjectFactory, kind: str) -> None:
    project = make_project()
    link = project / "src" / "link"
    if kind == "outside":
        secret = tmp_path / "secret.txt"
        secret.write_text("secret\n")
        link.symlink_to(secret)
    elif kind == "directory":
        (project / "docs").mkdir()
        link.symlink_to(project / "docs")
    else:
        link.symlink_to(project / "gone")
    error = _error(PackOptions(project=project))
    assert (error.kind, error.exit_code) == ("layout_invalid", 1)
    assert str(link) in error.message
    assert not (project / "dist").exists()


def test_special_files_are_refused(make_project: ProjectFactory) -> None:
    project = make_project()
    os.mkfifo(project / "src" / "pipe")
    error = _error(PackOptions(project=project))
    assert (error.kind, error.exit_code) == ("layout_invalid", 1)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_unreadable_file(make_project: ProjectFactory) -> None:
    project = make_project()
    secret = project / "src" / "secret.py"
    secret.write_text("x = 1\n")
    secret.chmod(0)
    error = _error(PackOptions(project=project))
    assert (error.kind, error.exit_code) == ("io", 2)
    assert list((project / "dist").glob("*")) == []


def test_a_failed_write_leaves_no_partial_tarball(tmp_path: Path) -> None:
    out = tmp_path / "dist"
    out.mkdir()
    (out / "keep.txt").write_text("keep\n")
    (out / "demo-0.1.0-noarch.tar.gz").write_bytes(b"previous release")
    entries = [ArchiveEntry("a", data=b"a"), ArchiveEntry("b", source=tmp_path / "vanished")]
    with pytest.raises(NexoError) as caught:
        _write_assets(
            out,
            "demo-0.1.0-noarch.tar.gz",
            entries=entries,
            manifest_name="nexo-plugin.toml",
            manifest_bytes=b"",
            sbom_bytes=b"{}",
            epoch=0,
        )
    assert (caught.value.kind, caught.value.exit_code) == ("io", 2)
    assert _listing(out) == ["demo-0.1.0-noarch.tar.gz", "keep.txt"]
    assert (out / "demo-0.1.0-noarch.tar.gz").read_bytes() == b"previous release"


@pytest.mark.parametrize(
    "blocked", ["demo-0.1.0-noarch.tar.gz.sha256", "nexo-plugin.toml", "demo-0.1.0-noarch.cdx.json"]
)
def test_a_directory_in_the_way_of_one_asset_replaces_none(
    make_project: ProjectFactory, blocked: str
) -> None:
    """The four assets are one release: a directory under the name of a later one must not
    leave the new tarball beside the old sidecar or SBOM."""
    project = make_project()
    first = pack(PackOptions(project=project, source_date_epoch=EPOCH), environ={})
    dist = project / "dist"
    before = {path.name: path.read_bytes() for path in dist.iterdir()}
    (dist / blocked).unlink()
    del before[blocked]
    (dist / blocked / "inside").mkdir(parents=True)
    (project / "src" / "main.py").write_text("print('v2')\n")
    error = _error(PackOptions(project=project, source_date_epoch=EPOCH), {})
    assert (error.kind, error.exit_code) == ("io", 2)
    assert str(dist / blocked) in error.message
    assert ".nexo-pack-" not in error.message
    after = {path.name: path.read_bytes() for path in dist.iterdir() if path.is_file()}
    assert after == before
    assert first.tarball.path.read_bytes() == before[first.tarball.path.name]
    assert sorted(path.name for path in dist.iterdir()) == sorted([*before, blocked])


def test_out_dir_that_is_a_file(make_project: ProjectFactory) -> None:
    project = make_project()
    out = project / "dist"
    out.write_text("not a directory\n")
    error = _error(PackOptions(project=project, out=out))
    assert (error.kind, error.exit_code) == ("usage", 2)
    assert out.read_text() == "not a directory\n"


def test_requirements_flag_must_exist(tmp_path: Path, make_project: ProjectFactory) -> None:
    project = make_project()
    error = _error(PackOptions(project=project, requirements=tmp_path / "missing.txt"))
    assert (error.kind, error.exit_code) == ("usage", 2)


def test_existing_assets_are_replaced_atomically(make_project: ProjectFactory) -> None:
    project = make_project()
    first = pack(PackOptions(project=project, source_date_epoch=EPOCH), environ={})
    (project / "src" / "main.py").write_text("print('v2')\n")
    second = pack(PackOptions(project=project, source_date_epoch=EPOCH), environ={})
    assert first.tarball.sha256 != second.tarball.sha256
    assert hashlib.sha256(second.tarball.path.read_bytes()).hexdigest() == second.tarball.sha256
    assert sorted(p.name for p in (project / "dist").iterdir()) == [
        "demo-0.1.0-noarch.cdx.json",
        "demo-0.1.0-noarch.tar.gz",
        "demo-0.1.0-noarch.tar.gz.sha256",
        "nexo-plugin.toml",
    ]


def test_tarball_extracts_with_data_filter(tmp_path: Path, make_project: ProjectFactory) -> None:
    project = make_project()
    result = pack(PackOptions(project=project, source_date_epoch=EPOCH), environ={})
    with tarfile.open(fileobj=io.BytesIO(result.tarball.path.read_bytes()), mode="r:gz") as tar:
        tar.extractall(tmp_path / "x", filter="data")
    assert (tmp_path / "x" / "lib" / "plugin" / "main.py").is_file()


def test_output_directory_inside_src_is_not_packed(make_project: ProjectFactory) -> None:
    project = make_project()
    out = project / "src" / "dist"
    first = pack(PackOptions(project=project, out=out, source_date_epoch=EPOCH), environ={})
    second = pack(PackOptions(project=project, out=out, source_date_epoch=EPOCH), environ={})
    assert first.tarball.sha256 == second.tarball.sha256
    assert not any("dist" in name for name in _members(second.tarball.path))


def test_src_itself_as_the_output_directory_is_refused(make_project: ProjectFactory) -> None:
    project = make_project()
    before = _listing(project)
    for out in (project / "src", project / "src" / "." / ".." / "src"):
        error = _error(PackOptions(project=project, out=out, source_date_epoch=EPOCH))
        assert (error.kind, error.exit_code) == ("usage", 2)
        assert "src/" in error.message
    assert _listing(project) == before


@pytest.mark.usefixtures("offline_pip_env")
def test_requirements_without_any_requirement(make_project: ProjectFactory) -> None:
    project = make_project(requirements="# nothing to vendor yet\n\n")
    result = pack(PackOptions(project=project, source_date_epoch=EPOCH))
    assert sorted(n for n in _members(result.tarball.path) if n.startswith("lib/")) == [
        "lib/plugin",
        "lib/plugin/main.py",
    ]


def test_a_project_with_only_plugin_toml_ships_it_as_nexo_plugin_toml(
    make_project: ProjectFactory,
) -> None:
    """SPEC §3: the release holds `nexo-plugin.toml`, at the tarball's root and beside it, the
    one name every daemon's discovery reads and the reference installer requires
    (`crates/ext-installer/src/extract.rs` MANIFEST_FILE and `lib.rs` asset lookup, nexo-rs
    eec3f33), whichever of the two names the project uses."""
    project = make_project()
    (project / "nexo-plugin.toml").rename(project / "plugin.toml")
    result = pack(PackOptions(project=project, source_date_epoch=EPOCH), environ={})
    dist = project / "dist"
    assert sorted(p.name for p in dist.iterdir()) == [
        "demo-0.1.0-noarch.cdx.json",
        "demo-0.1.0-noarch.tar.gz",
        "demo-0.1.0-noarch.tar.gz.sha256",
        "nexo-plugin.toml",
    ]
    members = _members(dist / "demo-0.1.0-noarch.tar.gz")
    assert sorted(name for name in members if "/" not in name) == [
        "bin",
        "lib",
        "nexo-plugin.toml",
        "sbom.cdx.json",
    ]
    written = (project / "plugin.toml").read_bytes()
    assert _read(dist / "demo-0.1.0-noarch.tar.gz", "nexo-plugin.toml") == written
    assert (dist / "nexo-plugin.toml").read_bytes() == written
    assert result.notes == ()


def test_a_shadowed_manifest_stays_out_and_is_named(make_project: ProjectFactory) -> None:
    project = make_project()
    (project / "plugin.toml").write_text("[plugin]\nid = 'stale'\n", encoding="utf-8")
    result = pack(PackOptions(project=project, source_date_epoch=EPOCH), environ={})
    members = _members(project / "dist" / "demo-0.1.0-noarch.tar.gz")
    assert "nexo-plugin.toml" in members
    assert "plugin.toml" not in members
    assert result.notes
    assert "plugin.toml is shadowed by nexo-plugin.toml" in result.notes[0]
    assert result.to_json()["warnings"] == list(result.notes)


def test_a_src_linked_outside_the_project_is_refused(
    tmp_path: Path, make_project: ProjectFactory
) -> None:
    """A symlinked ``src/`` would pack every file of wherever it points (a home directory, a
    CI runner's secrets) into a release: refused as a link inside ``src/`` is."""
    project = make_project()
    elsewhere = tmp_path / "elsewhere"
    (project / "src").rename(elsewhere)
    (elsewhere / "secret.txt").write_text("secret\n")
    (project / "src").symlink_to(elsewhere, target_is_directory=True)
    error = _error(PackOptions(project=project, source_date_epoch=EPOCH))
    assert (error.kind, error.exit_code) == ("layout_invalid", 1)
    assert str(project / "src") in error.message
    assert "outside" in error.message
    assert not (project / "dist").exists()


def test_a_src_linked_inside_the_project_packs(make_project: ProjectFactory) -> None:
    project = make_project()
    (project / "src").rename(project / "code")
    (project / "src").symlink_to(project / "code", target_is_directory=True)
    result = pack(PackOptions(project=project, source_date_epoch=EPOCH), environ={})
    assert "lib/plugin/main.py" in _members(result.tarball.path)


def test_out_dir_that_is_a_dangling_link(tmp_path: Path, make_project: ProjectFactory) -> None:
    """A link to a directory that does not exist is named as such, before any work (mkdir would
    only say "File exists"), and is left as it was."""
    project = make_project()
    out = project / "dist"
    out.symlink_to(tmp_path / "gone")
    error = _error(PackOptions(project=project, out=out))
    assert (error.kind, error.exit_code) == ("usage", 2)
    assert "symbolic link" in error.message
    assert str(tmp_path / "gone") in error.message
    assert out.is_symlink()
    assert not (tmp_path / "gone").exists()


def _dangling(path: Path) -> None:
    path.symlink_to("../shared/requirements.txt")  # a checkout without the shared file


def _looping(path: Path) -> None:
    path.symlink_to(path.name)


def _directory(path: Path) -> None:
    path.mkdir()


def _fifo(path: Path) -> None:
    os.mkfifo(path)


@pytest.mark.skipif(sys.platform == "win32", reason="symlinks and FIFOs")
@pytest.mark.parametrize(
    ("make", "what"),
    [
        (_dangling, "a symlink that never reaches a file"),
        (_looping, "a symlink that never reaches a file"),
        (_directory, "a directory"),
        (_fifo, "not a regular file"),
    ],
    ids=["dangling", "loop", "directory", "fifo"],
)
def test_a_requirements_txt_that_is_no_file_is_refused_not_packed_without_dependencies(
    make_project: ProjectFactory, make: object, what: str
) -> None:
    project = make_project()
    assert callable(make)
    make(project / "requirements.txt")
    completed = subprocess.run(
        [sys.executable, "-m", "nexo_pkg", "plugin", "pack", str(project), "--json"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert completed.returncode == 2, completed.stderr
    document = json.loads(completed.stdout)
    assert document["ok"] is False
    assert document["kind"] == "io"
    assert f"requirements.txt is {what}" in document["error"]
    assert completed.stderr.strip().splitlines() == [
        f"error: {document['error']} [{document['kind']}]"
    ]
    assert not (project / "dist").exists()  # nothing written


@pytest.mark.parametrize(
    # Python's int() takes the first five; SOURCE_DATE_EPOCH is ASCII decimal digits. The
    # last is digits beyond int()'s 4300-digit limit: refused in words, not as a bug.
    "value",
    ["1_000", "+5", "\u0661\u0662", "0x10", "1e3", "garbage", "9" * 5000],
    ids=["underscore", "plus", "arabic-indic", "hex", "exponent", "word", "5000-digits"],
)
def test_the_flag_refuses_what_the_variable_refuses(
    make_project: ProjectFactory, value: str
) -> None:
    project = make_project()
    command = [sys.executable, "-m", "nexo_pkg", "plugin", "pack", str(project), "--json"]
    by_flag = subprocess.run(
        [*command, f"--source-date-epoch={value}"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    by_variable = subprocess.run(
        command,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "SOURCE_DATE_EPOCH": value},
    )
    for completed, name in ((by_flag, "--source-date-epoch"), (by_variable, "SOURCE_DATE_EPOCH")):
        assert completed.returncode == 2, completed.stderr
        document = json.loads(completed.stdout)
        assert document["kind"] == "usage"
        assert document["error"].startswith(f"{name} must be an integer ")
        assert "from 0 to 253402300799" in document["error"]
        assert document["error"].endswith(f"got {value!r}")
        assert completed.stderr.strip().splitlines() == [
            f"error: {document['error']} [{document['kind']}]"
        ]
    assert not (project / "dist").exists()


def _device_link(path: Path) -> None:
    path.symlink_to(os.devnull)


@pytest.mark.skipif(sys.platform == "win32", reason="symlinks and FIFOs")
@pytest.mark.parametrize(
    ("make", "problem"),
    [
        (_directory, "is a directory, not a file"),
        (_dangling, "is a symlink that never reaches a file"),
        (_fifo, "is not a regular file"),
        (_device_link, "is not a regular file"),
    ],
    ids=["directory", "dangling", "fifo", "device"],
)
def test_a_main_py_that_is_no_file_is_named_for_what_it_is(
    make_project: ProjectFactory, make: object, problem: str
) -> None:
    project = make_project()
    main = project / "src" / "main.py"
    main.unlink()
    assert callable(make)
    make(main)
    error = _error(PackOptions(project=project))
    assert (error.kind, error.exit_code) == ("layout_invalid", 1)
    assert error.message.startswith(f"{main} {problem}; a Python plugin runs src/main.py")
    assert not (project / "dist").exists()


def test_the_sbom_is_dated_as_the_tarball_whatever_the_epoch_s_source(
    make_project: ProjectFactory,
) -> None:
    """The SBOM's timestamp is the tarball's epoch however it was found: the fixed constant
    without git or SOURCE_DATE_EPOCH, then the last commit's time once DIR is a git checkout."""
    from datetime import UTC, datetime

    project = make_project()
    for expected in (FALLBACK_EPOCH, 1_600_000_000):
        if expected != FALLBACK_EPOCH:
            env = {
                **os.environ,
                "GIT_AUTHOR_DATE": f"@{expected} +0000", "GIT_COMMITTER_DATE": f"@{expected} +0000",
                "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
                "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid",
            }  # fmt: skip
            subprocess.run(["git", "init", "-q", str(project)], check=True, env=env)
            subprocess.run(["git", "-C", str(project), "add", "."], check=True, env=env)
            subprocess.run(["git", "-C", str(project), "commit", "-qm", "i"], check=True, env=env)
        out = project.parent / f"out-{expected}"
        result = pack(PackOptions(project=project, out=out), environ={})
        assert {m.mtime for m in _members(result.tarball.path).values()} == {expected}
        carried = _read(result.tarball.path, "sbom.cdx.json")
        assert (out / "demo-0.1.0-noarch.cdx.json").read_bytes() == carried
        stamp = datetime.fromisoformat(json.loads(carried)["metadata"]["timestamp"])
        assert stamp == datetime.fromtimestamp(expected, UTC)
