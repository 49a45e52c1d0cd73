"""pack --target …-linux-gnu|musl --binary PATH tells a glibc build from a musl one by the
ELF's PT_INTERP program header: ``ld-linux-*`` (glibc) or ``ld-musl-*`` (musl). A static
binary has no interpreter and runs under either: no warning.

Real executables linked by the system's C compiler where it has one (a default dynamic build,
a static one, and one whose interpreter is musl's loader as musl-gcc writes it), and program
headers written byte by byte as the ELF gABI lays them out for the 32-bit and big-endian rest."""

from __future__ import annotations

import json
import platform
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest
from support.cli import clean_env, nexo

from nexo_pkg.pack.binary import binary_mismatch
from pack.pack_helpers import ProjectFactory

EPOCH = 1_700_000_000
ARCH = {"x86_64": "x86_64", "aarch64": "aarch64"}.get(platform.machine())
GNU, MUSL = f"{ARCH}-unknown-linux-gnu", f"{ARCH}-unknown-linux-musl"
MUSL_LOADER = f"/lib/ld-musl-{ARCH}.so.1"
CC = shutil.which("cc")
needs_cc = pytest.mark.skipif(
    sys.platform != "linux" or ARCH is None or CC is None,
    reason="needs a C compiler on x86-64 or AArch64 Linux",
)


def _cc(tmp_path: Path, name: str, *flags: str) -> Path:
    source = tmp_path / "plugin.c"
    source.write_text("int main(void) { return 0; }\n", encoding="utf-8", newline="\n")
    out = tmp_path / name
    done = subprocess.run(
        [str(CC), "-o", str(out), str(source), *flags], check=False, capture_output=True
    )
    if done.returncode != 0:
        pytest.skip(f"cc {' '.join(flags)} cannot link here: {done.stderr[-200:]!r}")
    return out


@pytest.fixture
def dynamic_glibc(tmp_path: Path) -> Path:
    return _cc(tmp_path, "glibc-exe")


@pytest.fixture
def static_exe(tmp_path: Path) -> Path:
    return _cc(tmp_path, "static-exe", "-static")


@pytest.fixture
def dynamic_musl(tmp_path: Path) -> Path:
    # What musl-gcc writes: the ELF's PT_INTERP names musl's loader.
    return _cc(tmp_path, "musl-exe", f"-Wl,--dynamic-linker={MUSL_LOADER}")


@needs_cc
def test_a_glibc_build_packed_for_musl_is_warned(dynamic_glibc: Path) -> None:
    assert binary_mismatch(dynamic_glibc, GNU) is None
    warning = binary_mismatch(dynamic_glibc, MUSL)
    assert warning is not None
    assert "dynamically linked against glibc (its interpreter is '/lib" in warning
    assert f"--target {MUSL} is a musl target" in warning


@needs_cc
def test_a_musl_build_packed_for_glibc_is_warned(dynamic_musl: Path) -> None:
    assert binary_mismatch(dynamic_musl, MUSL) is None
    warning = binary_mismatch(dynamic_musl, GNU)
    assert warning is not None
    assert f"dynamically linked against musl (its interpreter is '{MUSL_LOADER}')" in warning
    assert f"--target {GNU} is a glibc target" in warning


@needs_cc
def test_a_static_binary_runs_under_either(static_exe: Path) -> None:
    assert binary_mismatch(static_exe, GNU) is None
    assert binary_mismatch(static_exe, MUSL) is None


@needs_cc
def test_pack_prints_the_libc_warning_and_reports_it(
    dynamic_glibc: Path, static_exe: Path, make_project: ProjectFactory
) -> None:
    completed = nexo(
        "plugin", "pack", make_project("glibc"), "--json", "--target", MUSL,
        "--binary", dynamic_glibc, "--source-date-epoch", str(EPOCH), env=clean_env(),
    )  # fmt: skip
    assert completed.code == 0, completed.stderr  # a warning: the tarball is written
    [warning] = [w for w in json.loads(completed.stdout)["warnings"] if "--binary" in w]
    assert "linked against glibc" in warning
    assert f"warning: {warning}" in completed.stderr
    quiet = nexo(
        "plugin", "pack", make_project("static"), "--json", "--target", MUSL,
        "--binary", static_exe, "--source-date-epoch", str(EPOCH), env=clean_env(),
    )  # fmt: skip
    assert quiet.code == 0, quiet.stderr
    assert [w for w in json.loads(quiet.stdout)["warnings"] if "--binary" in w] == []


# ELF by hand: e_ident, then e_type .. e_shstrndx (gABI "ELF Header"), one PT_INTERP program
# header right after it, then the interpreter's path.
_PT_INTERP, _PT_LOAD = 3, 1


def _elf(machine: int, interpreter: bytes | None, *, bits: int, little: bool) -> bytes:
    order = "<" if little else ">"
    ident = b"\x7fELF" + bytes([bits // 32, 1 if little else 2, 1, 0]) + bytes(8)
    if bits == 64:
        ehsize, phentsize = 64, 56
        phdr = struct.Struct(f"{order}IIQQQQQQ")
        header = struct.pack(
            f"{order}HHIQQQIHHHHHH", 2, machine, 1, 0, ehsize, 0, 0, ehsize, phentsize, 2, 0, 0, 0
        )
    else:
        ehsize, phentsize = 52, 32
        phdr = struct.Struct(f"{order}IIIIIIII")
        header = struct.pack(
            f"{order}HHIIIIIHHHHHH", 2, machine, 1, 0, ehsize, 0, 0, ehsize, phentsize, 2, 0, 0, 0
        )
    path_at = ehsize + 2 * phentsize
    path = (interpreter or b"") + b"\0"
    if bits == 64:
        load = phdr.pack(_PT_LOAD, 5, 0, 0, 0, 0, 0, 0x1000)
        interp = phdr.pack(_PT_INTERP if interpreter else _PT_LOAD, 4, path_at, 0, 0,
                           len(path), len(path), 1)  # fmt: skip
    else:
        load = phdr.pack(_PT_LOAD, 0, 0, 0, 0, 0, 5, 0x1000)
        interp = phdr.pack(_PT_INTERP if interpreter else _PT_LOAD, path_at, 0, 0,
                           len(path), len(path), 4, 1)  # fmt: skip
    return ident + header + load + interp + path


#: (target, e_machine, ELFCLASS bits, little-endian, glibc's loader, musl's loader)
_LOADERS = [
    ("x86_64-unknown-linux-gnu", 62, 64, True,
     b"/lib64/ld-linux-x86-64.so.2", b"/lib/ld-musl-x86_64.so.1"),
    ("aarch64-unknown-linux-musl", 183, 64, True,
     b"/lib/ld-linux-aarch64.so.1", b"/lib/ld-musl-aarch64.so.1"),
    ("armv7-unknown-linux-gnueabihf", 40, 32, True,
     b"/lib/ld-linux-armhf.so.3", b"/lib/ld-musl-armhf.so.1"),
    ("armv7-unknown-linux-musleabihf", 40, 32, True,
     b"/lib/ld-linux-armhf.so.3", b"/lib/ld-musl-armhf.so.1"),
    ("i686-unknown-linux-musl", 3, 32, True, b"/lib/ld-linux.so.2", b"/lib/ld-musl-i386.so.1"),
    ("s390x-unknown-linux-gnu", 22, 64, False, b"/lib/ld64.so.1", b"/lib/ld-musl-s390x.so.1"),
]  # fmt: skip


@pytest.mark.parametrize("case", _LOADERS, ids=[row[0] for row in _LOADERS])
def test_the_interpreter_is_read_in_every_elf_class_and_byte_order(
    tmp_path: Path, case: tuple[str, int, int, bool, bytes, bytes]
) -> None:
    target, machine, bits, little, glibc, musl = case
    wants_musl = "-linux-musl" in target
    right, wrong = (musl, glibc) if wants_musl else (glibc, musl)
    fine = tmp_path / "right"
    fine.write_bytes(_elf(machine, right, bits=bits, little=little))
    assert binary_mismatch(fine, target) is None
    static = tmp_path / "static"
    static.write_bytes(_elf(machine, None, bits=bits, little=little))
    assert binary_mismatch(static, target) is None
    off = tmp_path / "wrong"
    off.write_bytes(_elf(machine, wrong, bits=bits, little=little))
    warning = binary_mismatch(off, target)
    assert warning is not None
    assert f"(its interpreter is '{wrong.decode()}')" in warning


def test_a_libc_is_not_asked_of_targets_that_name_none(tmp_path: Path) -> None:
    """FreeBSD has no glibc/musl choice: its loader is never judged."""
    exe = tmp_path / "bsd"
    exe.write_bytes(_elf(62, b"/libexec/ld-elf.so.1", bits=64, little=True))
    assert binary_mismatch(exe, "x86_64-unknown-freebsd") is None


def test_a_program_header_table_pointing_anywhere_is_no_warning_and_no_crash(
    tmp_path: Path,
) -> None:
    data = bytearray(_elf(62, b"/lib/ld-musl-x86_64.so.1", bits=64, little=True))
    struct.pack_into("<Q", data, 0x20, 2**63)  # e_phoff far past the end
    far = tmp_path / "far"
    far.write_bytes(bytes(data))
    assert binary_mismatch(far, "x86_64-unknown-linux-gnu") is None
    struct.pack_into("<Q", data, 0x20, 64)  # e_phoff back where the table is
    struct.pack_into("<HH", data, 0x36, 0xFFFF, 0xFFFF)  # e_phentsize and e_phnum at most
    huge = tmp_path / "huge"
    huge.write_bytes(bytes(data))
    assert binary_mismatch(huge, "x86_64-unknown-linux-gnu") is None


def test_an_interpreter_path_holding_control_characters_is_one_escaped_line(
    tmp_path: Path, make_project: ProjectFactory
) -> None:
    """The interpreter is the binary's bytes: an escape sequence or a line break in it is shown
    escaped, on the warning's one line, cut short past 200 characters."""
    exe = tmp_path / "exe"
    hostile = b"/lib/ld-musl\x1b[31m\nerror: forged\r.so" + b"A" * 4000
    exe.write_bytes(_elf(62, hostile, bits=64, little=True))
    exe.chmod(0o755)
    completed = nexo(
        "plugin", "pack", make_project("ctl"), "--target", "x86_64-unknown-linux-gnu",
        "--binary", exe, "--source-date-epoch", str(EPOCH), env=clean_env(),
    )  # fmt: skip
    assert completed.code == 0, completed.stderr
    [warning] = [line for line in completed.stderr.splitlines() if "--binary" in line]
    escaped = "'/lib/ld-musl\\u001b[31m\\u000aerror: forged\\u000d.soAAA"
    assert f"(its interpreter is {escaped}" in warning
    assert "A..." in warning
    assert "A" * 300 not in warning
    assert "\x1b" not in completed.stderr
    assert "\r" not in completed.stderr
    assert not any(line.startswith("error: forged") for line in completed.stderr.splitlines())
