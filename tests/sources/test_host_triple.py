"""Host triple detection on hosts this machine is not: the detector's own inputs (``uname``,
``confstr``, ``platform.libc_ver``, the musl loader's directories, ``sys.platform``) are
replaced, and the real functions answer (SPEC §5 step 2: Linux glibc → gnu then musl, Linux
musl → musl only, macOS → ``<arch>-apple-darwin``)."""

from __future__ import annotations

import errno
import os
import platform
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from nexo_pkg.core.errors import NexoError
from nexo_pkg.pack.layout import KNOWN_TARGETS
from nexo_pkg.sources import hosttriple
from nexo_pkg.sources.hosttriple import host_candidates

#: Kernel versions as ``uname -v`` prints them (Apple silicon, an Intel Mac, a Linux build).
APPLE_SILICON = (
    "Darwin Kernel Version 23.4.0: Fri Mar 15 00:12:49 PDT 2024; "
    "root:xnu-10063.101.17~1/RELEASE_ARM64_T6020"
)
INTEL_MAC = (
    "Darwin Kernel Version 23.4.0: Fri Mar 15 00:10:42 PDT 2024; "
    "root:xnu-10063.101.17~1/RELEASE_X86_64"
)
Host = Callable[..., None]

LINUX = "#1 SMP PREEMPT_DYNAMIC Debian 6.1.76-1 (2024-02-01)"


def _glibc(name: str) -> str:
    assert name == "CS_GNU_LIBC_VERSION"
    return "glibc 2.36"


def _musl_confstr(name: str) -> str:
    # musl's confstr() sets EINVAL for _CS_GNU_LIBC_VERSION; os.confstr raises it.
    raise OSError(errno.EINVAL, os.strerror(errno.EINVAL))


@pytest.fixture
def host(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Host:
    """Set up a host: ``host(platform, machine, version, libc, musl_loader)``."""
    monkeypatch.delenv("NEXO_INSTALL_TARGET", raising=False)
    lib, usr_lib = tmp_path / "lib", tmp_path / "usr-lib"
    lib.mkdir()
    usr_lib.mkdir()
    monkeypatch.setattr(hosttriple, "_MUSL_LOADER_DIRS", (str(lib), str(usr_lib)))

    def make(
        plat: str,
        machine: str,
        version: str = LINUX,
        *,
        libc: str = "glibc",
        musl_loader: str | None = None,
    ) -> None:
        monkeypatch.setattr(sys, "platform", plat)
        monkeypatch.setattr(hosttriple, "_uname", lambda: (machine, version))
        if libc == "glibc":
            monkeypatch.setattr(os, "confstr", _glibc)
        else:
            monkeypatch.setattr(os, "confstr", _musl_confstr)
            # python:3.x-alpine: libc_ver() finds nothing it knows in the executable.
            monkeypatch.setattr(platform, "libc_ver", lambda: ("", ""))
        if musl_loader is not None:
            (usr_lib if musl_loader.startswith("usr/") else lib).joinpath(
                musl_loader.rpartition("/")[2]
            ).write_bytes(b"\x7fELF")

    return make


@pytest.mark.parametrize(
    ("machine", "expected"),
    [
        ("x86_64", ("x86_64-unknown-linux-gnu", "x86_64-unknown-linux-musl")),
        ("aarch64", ("aarch64-unknown-linux-gnu", "aarch64-unknown-linux-musl")),
        ("i686", ("i686-unknown-linux-gnu", "i686-unknown-linux-musl")),
        ("i386", ("i686-unknown-linux-gnu", "i686-unknown-linux-musl")),
        ("ppc64le", ("powerpc64le-unknown-linux-gnu", "powerpc64le-unknown-linux-musl")),
        ("riscv64", ("riscv64gc-unknown-linux-gnu", "riscv64gc-unknown-linux-musl")),
        ("s390x", ("s390x-unknown-linux-gnu", "s390x-unknown-linux-musl")),
        ("armv7l", ("armv7-unknown-linux-gnueabihf", "armv7-unknown-linux-musleabihf")),
        ("armv8l", ("armv7-unknown-linux-gnueabihf", "armv7-unknown-linux-musleabihf")),
    ],
)
def test_a_glibc_linux_host_names_rusts_triples(
    host: Host, machine: str, expected: tuple[str, ...]
) -> None:
    """``uname -m`` spells some architectures otherwise than the triples ``pack --target``
    writes (``ppc64le`` for ``powerpc64le``, ``armv7l`` for ``armv7-…-gnueabihf``): detection
    must name the triples a release carries, or such a host never finds its tarball."""
    host("linux", machine)
    assert host_candidates(None) == expected


def test_every_detected_linux_triple_is_one_pack_writes(host: Host) -> None:
    for machine in ("x86_64", "aarch64", "i686", "armv7l", "ppc64le", "riscv64", "s390x"):
        host("linux", machine)
        first = host_candidates(None)[0]
        assert first in KNOWN_TARGETS, (machine, first)


@pytest.mark.parametrize("folder", ["lib/ld-musl-x86_64.so.1", "usr/lib/ld-musl-x86_64.so.1"])
def test_alpine_is_musl_only(host: Host, folder: str) -> None:
    """Alpine: confstr has no glibc version, ``libc_ver()`` says ``('', '')``, and musl's loader
    is in /lib (or /usr/lib on merged-/usr systems): musl only, no gnu tarball."""
    host("linux", "x86_64", libc="musl", musl_loader=folder)
    assert host_candidates(None) == ("x86_64-unknown-linux-musl",)
    assert hosttriple.requested_target(None) == "x86_64-unknown-linux-musl"


def test_alpine_on_arm64_is_aarch64_musl(host: Host) -> None:
    host("linux", "aarch64", libc="musl", musl_loader="lib/ld-musl-aarch64.so.1")
    assert host_candidates(None) == ("aarch64-unknown-linux-musl",)


def test_a_glibc_host_with_musl_installed_stays_glibc(host: Host) -> None:
    """Debian with the ``musl`` package has /lib/ld-musl-x86_64.so.1 too: glibc decides."""
    host("linux", "x86_64", musl_loader="lib/ld-musl-x86_64.so.1")
    assert host_candidates(None) == ("x86_64-unknown-linux-gnu", "x86_64-unknown-linux-musl")


def test_an_unknown_libc_without_musls_loader_is_taken_as_glibc(host: Host) -> None:
    host("linux", "x86_64", libc="other")
    assert host_candidates(None)[0] == "x86_64-unknown-linux-gnu"


@pytest.mark.parametrize(
    ("machine", "version", "expected"),
    [
        ("arm64", APPLE_SILICON, ("aarch64-apple-darwin",)),
        ("x86_64", INTEL_MAC, ("x86_64-apple-darwin",)),
        # An x86_64 Python under Rosetta 2 on Apple silicon: the machine's own triple first,
        # the translated one after it.
        ("x86_64", APPLE_SILICON, ("aarch64-apple-darwin", "x86_64-apple-darwin")),
    ],
)
def test_macos_names_aarch64_and_sees_through_rosetta(
    host: Host, machine: str, version: str, expected: tuple[str, ...]
) -> None:
    host("darwin", machine, version)
    assert host_candidates(None) == expected
    assert hosttriple.requested_target(None) == expected[0]


@pytest.mark.parametrize("plat", ["linux", "darwin"])
@pytest.mark.parametrize("machine", ["", "  ", "x86_64\n", "x86_64 ", "x86\x1b[2J", "\uff5886_64"])
def test_a_machine_no_triple_spells_is_a_host_without_one(
    host: Host, plat: str, machine: str
) -> None:
    """A ``uname`` machine that no triple spells (empty, blanks, an escape, full-width
    letters) names no triple: the host asks for ``noarch``, never a malformed triple."""
    host(plat, machine)
    assert host_candidates(None) == ()
    assert hosttriple.requested_target(None) == "noarch"


def test_an_override_replaces_detection_on_every_host(
    host: Host, monkeypatch: pytest.MonkeyPatch
) -> None:
    host("darwin", "x86_64", APPLE_SILICON)
    assert host_candidates("x86_64-apple-darwin") == ("x86_64-apple-darwin",)
    monkeypatch.setenv("NEXO_INSTALL_TARGET", "x86_64-unknown-linux-musl")
    assert host_candidates(None) == ("x86_64-unknown-linux-musl",)


@pytest.mark.parametrize(
    "value", [" x86_64-unknown-linux-gnu", "x86_64-unknown-linux-gnu\n", "x86_64 linux", "  "]
)
def test_a_target_with_whitespace_is_a_usage_error(
    monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    """``NEXO_INSTALL_TARGET=$(cat target.txt)`` keeps no newline, but a hand-written value
    with blanks is refused naming the variable, never trimmed into another host's triple."""
    monkeypatch.setenv("NEXO_INSTALL_TARGET", value)
    with pytest.raises(NexoError) as caught:
        host_candidates(None)
    assert (caught.value.kind, caught.value.exit_code) == ("usage", 2)
    assert "NEXO_INSTALL_TARGET=" in caught.value.message
    monkeypatch.delenv("NEXO_INSTALL_TARGET")
    if value.strip():
        with pytest.raises(NexoError) as flagged:
            host_candidates(value)
        assert (flagged.value.kind, flagged.value.exit_code) == ("usage", 2)


@pytest.mark.parametrize(
    ("override", "expected"),
    [
        ("x86_64-unknown-linux-gnu", ("x86_64-unknown-linux-gnu", "x86_64-unknown-linux-musl")),
        (
            "armv7-unknown-linux-gnueabihf",
            ("armv7-unknown-linux-gnueabihf", "armv7-unknown-linux-musleabihf"),
        ),
        ("arm-unknown-linux-gnueabi", ("arm-unknown-linux-gnueabi", "arm-unknown-linux-musleabi")),
        ("armv7-unknown-linux-musleabihf", ("armv7-unknown-linux-musleabihf",)),
    ],
)
def test_a_glibc_override_falls_back_to_musl_as_the_host_it_names_would(
    host: Host, override: str, expected: tuple[str, ...]
) -> None:
    """``--target armv7-unknown-linux-gnueabihf`` asks what an armv7 glibc host detects."""
    host("linux", "x86_64")
    assert host_candidates(override) == expected
