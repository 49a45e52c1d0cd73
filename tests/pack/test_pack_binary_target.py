"""pack --target TRIPLE --binary PATH warns when the binary is built for another CPU or OS.

Real executables where the machine has them (this interpreter, an ELF of the host's CPU; the
PE launchers pip vendors in distlib for x86-64, AArch64 and 32-bit x86), and headers written
byte by byte as the ELF, Mach-O and PE specifications lay them out for the rest."""

from __future__ import annotations

import json
import os
import platform
import struct
import sys
from pathlib import Path

import pytest
from pip._vendor import distlib
from support.cli import clean_env, nexo

from nexo_pkg.pack.binary import binary_mismatch
from nexo_pkg.pack.build import PackOptions, pack
from pack.pack_helpers import ProjectFactory

EPOCH = 1_700_000_000
DISTLIB = Path(distlib.__file__).parent
HOST_ELF = Path(os.path.realpath(sys.executable))
HOST_TRIPLE = {"x86_64": "x86_64-unknown-linux-gnu", "aarch64": "aarch64-unknown-linux-gnu"}.get(
    platform.machine()
)
OTHER_TRIPLE = (
    "aarch64-unknown-linux-musl" if HOST_TRIPLE != "aarch64-unknown-linux-gnu" else
    "x86_64-unknown-linux-musl"
)  # fmt: skip
on_linux_host = pytest.mark.skipif(
    sys.platform != "linux" or HOST_TRIPLE is None, reason="needs an x86-64 or AArch64 Linux"
)


def elf(machine: int, *, bits: int = 64, little: bool = True) -> bytes:
    """An ELF identification and the header up to e_machine."""
    order = "<" if little else ">"
    ident = b"\x7fELF" + bytes([bits // 32, 1 if little else 2, 1, 0]) + bytes(8)
    return ident + struct.pack(f"{order}HH", 2, machine) + bytes(44)


def macho(cpu: int) -> bytes:
    return b"\xcf\xfa\xed\xfe" + struct.pack("<I", cpu) + bytes(24)


def universal(*cpus: int) -> bytes:
    table = b"".join(struct.pack(">IIIII", cpu, 0, 4096, 0, 12) for cpu in cpus)
    return b"\xca\xfe\xba\xbe" + struct.pack(">I", len(cpus)) + table


def write(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    path.chmod(0o755)
    return path


@pytest.mark.parametrize(
    ("data", "target"),
    [
        (elf(183), "aarch64-unknown-linux-gnu"),
        (elf(62), "x86_64-unknown-freebsd"),
        (elf(40, bits=32), "armv7-unknown-linux-musleabihf"),
        (elf(3, bits=32), "i686-unknown-linux-gnu"),
        (elf(243), "riscv64gc-unknown-linux-gnu"),
        (elf(21), "powerpc64le-unknown-linux-gnu"),
        (elf(22, little=False), "s390x-unknown-linux-gnu"),
        (macho(0x0100000C), "aarch64-apple-darwin"),
        (universal(0x01000007, 0x0100000C), "x86_64-apple-darwin"),
        (universal(0x01000007, 0x0100000C), "aarch64-apple-darwin"),
        (b"#!/bin/sh\nexec true\n", "x86_64-unknown-linux-gnu"),
        (b"#!/bin/sh\nexec true\n", "aarch64-apple-darwin"),
    ],
)
def test_a_binary_for_its_target_is_not_warned(tmp_path: Path, data: bytes, target: str) -> None:
    assert binary_mismatch(write(tmp_path, "exe", data), target) is None


@pytest.mark.parametrize(
    ("data", "target", "words"),
    [
        (elf(62), "aarch64-unknown-linux-gnu", "an ELF 64-bit x86-64 executable"),
        (elf(183), "x86_64-unknown-linux-musl", "an ELF 64-bit AArch64 executable"),
        (elf(62, bits=32), "x86_64-unknown-linux-gnu", "an ELF 32-bit x86-64 executable"),
        (elf(40, bits=32), "i686-unknown-linux-gnu", "an ELF 32-bit 32-bit ARM executable"),
        (elf(22), "s390x-unknown-linux-gnu", "an ELF 64-bit IBM Z executable"),
        (elf(8, bits=32), "armv7-unknown-linux-gnueabihf", "an ELF 32-bit MIPS executable"),
        (macho(0x01000007), "x86_64-unknown-linux-gnu", "a Mach-O x86-64 executable"),
        (macho(0x01000007), "aarch64-apple-darwin", "a Mach-O x86-64 executable"),
        (universal(0x01000007), "aarch64-apple-darwin", "a Mach-O x86-64 executable"),
        (elf(183), "aarch64-apple-darwin", "an ELF 64-bit AArch64 executable"),
        (b"#!/bin/sh\n", "x86_64-pc-windows-msvc", "a #! script"),
        (
            b"\xca\xfe\xba\xbe\x00\x00\x00\x41",
            "x86_64-apple-darwin",
            "in no executable format pack knows (not ELF, Mach-O or PE)",
        ),
        (
            b"plain text\n",
            "x86_64-unknown-linux-gnu",
            "in no executable format pack knows (not ELF, Mach-O or PE)",
        ),
        (
            b"",
            "x86_64-unknown-linux-gnu",
            "in no executable format pack knows (not ELF, Mach-O or PE)",
        ),
        (b"\x7fELF", "x86_64-unknown-linux-gnu", "a malformed ELF file"),
        (b"\x7fELF\x02\x01", "x86_64-unknown-linux-gnu", "a malformed ELF file"),
        # A universal binary naming one CPU many times names it once.
        (universal(*[7] * 30), "x86_64-apple-darwin", "a Mach-O 32-bit x86 executable"),
        (
            universal(7, 0x0100000C, 7, 0x0100000C),
            "x86_64-apple-darwin",
            "a Mach-O 32-bit x86, AArch64 executable",
        ),
        # A table longer than any universal binary's, or than the bytes read: no format.
        (
            universal(*[0x01000007] * 31),
            "x86_64-apple-darwin",
            "in no executable format pack knows (not ELF, Mach-O or PE)",
        ),
        (
            b"\xca\xfe\xba\xbe\xff\xff\xff\xff",
            "x86_64-apple-darwin",
            "in no executable format pack knows (not ELF, Mach-O or PE)",
        ),
        # A DOS header pointing past the bytes read, or past the end of the file.
        (
            b"MZ" + bytes(0x3A) + struct.pack("<I", 0xFFFFFFFF),
            "x86_64-pc-windows-msvc",
            "in no executable format pack knows (not ELF, Mach-O or PE)",
        ),
        (
            b"MZ" + bytes(0x3A) + struct.pack("<I", 0x40) + b"PE\0\0\x64",
            "x86_64-pc-windows-msvc",
            "in no executable format pack knows (not ELF, Mach-O or PE)",
        ),
    ],
)
def test_a_binary_for_another_cpu_or_os_is_warned(
    tmp_path: Path, data: bytes, target: str, words: str
) -> None:
    binary = write(tmp_path, "exe", data)
    warning = binary_mismatch(binary, target)
    assert warning is not None
    assert f"--binary {binary} is {words}, but --target {target} is " in warning
    assert f"pass the binary built for {target}" in warning


@pytest.mark.parametrize(
    ("name", "target", "words"),
    [
        ("w64.exe", "x86_64-pc-windows-msvc", None),
        ("w64-arm.exe", "aarch64-pc-windows-msvc", None),
        ("w64.exe", "aarch64-pc-windows-msvc", "a PE (Windows) x86-64 executable"),
        ("w64-arm.exe", "x86_64-pc-windows-gnu", "a PE (Windows) AArch64 executable"),
        ("t32.exe", "x86_64-pc-windows-msvc", "a PE (Windows) 32-bit x86 executable"),
        ("w64.exe", "x86_64-unknown-linux-gnu", "a PE (Windows) x86-64 executable"),
    ],
)
def test_real_windows_executables_are_judged_by_their_pe_machine(
    tmp_path: Path, name: str, target: str, words: str | None
) -> None:
    binary = write(tmp_path, name, (DISTLIB / name).read_bytes())
    warning = binary_mismatch(binary, target)
    if words is None:
        assert warning is None
    else:
        assert warning is not None
        assert f"is {words}, but --target {target}" in warning


@on_linux_host
def test_pack_warns_about_the_host_s_own_executable_packed_for_another_cpu(
    tmp_path: Path, make_project: ProjectFactory
) -> None:
    binary = write(tmp_path, "plugin-exe", HOST_ELF.read_bytes())
    mine = pack(
        PackOptions(
            project=make_project("mine"),
            target=str(HOST_TRIPLE),
            binary=binary,
            source_date_epoch=EPOCH,
        ),
        environ={},
    )
    assert [note for note in mine.notes if "--binary" in note] == []
    other = pack(
        PackOptions(
            project=make_project("other"),
            target=OTHER_TRIPLE,
            binary=binary,
            source_date_epoch=EPOCH,
        ),
        environ={},
    )
    [warning] = [note for note in other.notes if "--binary" in note]
    assert f"but --target {OTHER_TRIPLE} is 64-bit" in warning
    assert other.tarball.path.is_file()  # a warning: the tarball is still written


@on_linux_host
def test_the_warning_is_printed_and_in_the_json_report(
    tmp_path: Path, make_project: ProjectFactory
) -> None:
    binary = write(tmp_path, "plugin-exe", HOST_ELF.read_bytes())
    completed = nexo(
        "plugin", "pack", make_project(), "--json", "--target", OTHER_TRIPLE,
        "--binary", binary, "--source-date-epoch", str(EPOCH), env=clean_env(),
    )  # fmt: skip
    assert completed.code == 0, completed.stderr
    [warning] = [w for w in json.loads(completed.stdout)["warnings"] if "--binary" in w]
    assert f"warning: {warning}" in completed.stderr
