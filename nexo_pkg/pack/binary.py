"""Whether a compiled plugin's ``--binary`` is built for the ``--target`` it is packed as.

Only the first bytes of the file are read: the ELF identification and header (Linux, FreeBSD),
the Mach-O header or universal-binary table (macOS), or the DOS stub's pointer to the PE header
(Windows). A disagreement is a warning of ``pack`` (the daemon on that platform could not run
the plugin); a file in no known format is one too, except a ``#!`` script for a POSIX target.
For a Linux target, a dynamically linked ELF's interpreter (its ``PT_INTERP`` program header)
tells a glibc build (``ld-linux-*``) from a musl one (``ld-musl-*``); a static binary has none
and runs under either.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from nexo_pkg.core.terminal import shown

#: How much of the binary is read: the headers below lie within it (a PE header is pointed to
#: from offset 0x3c and sits within the first few hundred bytes in practice).
HEAD_BYTES = 4096


@dataclass(frozen=True)
class _Arch:
    name: str
    elf_machine: int
    elf_bits: int
    elf_little: bool
    macho_cpu: int | None = None
    pe_machine: int | None = None


_ARCHES = {
    "x86_64": _Arch("x86-64", 62, 64, True, 0x0100_0007, 0x8664),
    "aarch64": _Arch("AArch64", 183, 64, True, 0x0100_000C, 0xAA64),
    "armv7": _Arch("32-bit ARM", 40, 32, True, None, 0x01C4),
    "i686": _Arch("32-bit x86", 3, 32, True, 7, 0x014C),
    "riscv64gc": _Arch("RISC-V", 243, 64, True),
    "powerpc64le": _Arch("64-bit PowerPC", 21, 64, True),
    "s390x": _Arch("IBM Z", 22, 64, False),
}
_ELF_NAMES = {arch.elf_machine: arch.name for arch in _ARCHES.values()} | {8: "MIPS", 2: "SPARC"}
_MACHO_NAMES = {arch.macho_cpu: arch.name for arch in _ARCHES.values() if arch.macho_cpu}
_PE_NAMES = {arch.pe_machine: arch.name for arch in _ARCHES.values() if arch.pe_machine}


def _expected(target: str) -> tuple[str, _Arch] | None:
    arch = _ARCHES.get(target.partition("-")[0])
    if arch is None:
        return None
    if "-apple-darwin" in target:
        return "Mach-O", arch
    if "-windows-" in target:
        return "PE", arch
    return "ELF", arch


def _elf(head: bytes) -> tuple[str, int, bool] | None:
    """(machine name, bits, little-endian) of an ELF header, else None."""
    if len(head) < 20 or head[4] not in (1, 2) or head[5] not in (1, 2):
        return None
    little = head[5] == 1
    machine = int.from_bytes(head[18:20], "little" if little else "big")
    return _ELF_NAMES.get(machine, f"machine {machine}"), 32 * head[4], little


#: ``p_type`` of the program header naming the dynamic loader (ELF gABI, "Program Header").
_PT_INTERP = 3
#: The longest interpreter path read (Linux's own limit for it is PATH_MAX).
_INTERP_MAX = 4096
#: Bounds on the program header table read (real linkers write 56- or 32-byte entries, a few
#: dozen of them).
_PHENT_MAX = 256
_PHNUM_MAX = 1024


def _elf_interpreter(stream: BinaryIO, head: bytes) -> str | None:
    """The path in an ELF file's ``PT_INTERP`` program header, else None (static, or a header
    this cannot follow). Fields as the ELF gABI lays them out: ``e_phoff`` at 0x20 (64-bit) or
    0x1c (32-bit), ``e_phentsize``/``e_phnum`` at 0x36/0x38 or 0x2a/0x2c; in each entry
    ``p_type`` first, then ``p_offset`` and ``p_filesz`` at 8/32 (64-bit) or 4/16 (32-bit)."""
    if len(head) < 0x40 or head[:4] != b"\x7fELF" or head[4] not in (1, 2):
        return None
    order = "<" if head[5] == 1 else ">"
    wide = head[4] == 2
    phoff, phentsize, phnum = (
        struct.unpack_from(f"{order}Q", head, 0x20)[0]
        if wide
        else struct.unpack_from(f"{order}I", head, 0x1C)[0],
        *struct.unpack_from(f"{order}HH", head, 0x36 if wide else 0x2A),
    )
    entry = struct.Struct(f"{order}I4xQ16xQ" if wide else f"{order}I I8x I")
    if not entry.size <= phentsize <= _PHENT_MAX or not 0 < phnum <= _PHNUM_MAX:
        return None
    stream.seek(phoff)
    table = stream.read(phentsize * phnum)
    for index in range(len(table) // phentsize):
        kind, offset, size = entry.unpack_from(table, index * phentsize)
        if kind == _PT_INTERP:
            stream.seek(offset)
            path = stream.read(min(size, _INTERP_MAX))
            return path.partition(b"\0")[0].decode("utf-8", "replace")
    return None


def _libc_mismatch(binary: Path, stream: BinaryIO, head: bytes, target: str) -> str | None:
    """For a ``-linux-gnu*``/``-linux-musl*`` target: the loader a dynamically linked ELF asks
    for when it is the other C library's, else None."""
    _, _, env = target.partition("-linux-")
    wants_musl = env.startswith("musl")
    if not (wants_musl or env.startswith("gnu")):
        return None
    try:
        interpreter = _elf_interpreter(stream, head)
    except (OSError, ValueError, OverflowError):  # struct.error is a ValueError
        return None  # a table pointing past what a file may hold
    if interpreter is None:
        return None  # static: runs under glibc and musl alike
    is_musl = "ld-musl" in interpreter.rpartition("/")[2]
    if is_musl == wants_musl:
        return None
    built, wanted = ("musl", "glibc") if is_musl else ("glibc", "musl")
    return (
        f"--binary {binary} is dynamically linked against {built} (its interpreter is "
        f"{shown(interpreter)}), but --target {target} is a {wanted} target, whose hosts lack that "
        f"loader and cannot start it; pass the binary built for {target}, or link it statically"
    )


def _macho_cpus(head: bytes) -> list[int] | None:
    """The CPU types of a Mach-O file (one, or each of a universal binary's), else None."""
    if head[:4] in (b"\xcf\xfa\xed\xfe", b"\xce\xfa\xed\xfe") and len(head) >= 8:
        return [int.from_bytes(head[4:8], "little")]
    if head[:4] in (b"\xfe\xed\xfa\xcf", b"\xfe\xed\xfa\xce") and len(head) >= 8:
        return [int.from_bytes(head[4:8], "big")]
    if head[:4] in (b"\xca\xfe\xba\xbe", b"\xca\xfe\xba\xbf"):
        count = int.from_bytes(head[4:8], "big")
        size = 20 if head[3] == 0xBE else 32
        if not 0 < count <= 30 or len(head) < 8 + count * size:
            return None  # a Java class file has the same magic and a version here
        return [int.from_bytes(head[8 + i * size : 12 + i * size], "big") for i in range(count)]
    return None


def _pe_machine(head: bytes) -> int | None:
    if head[:2] != b"MZ" or len(head) < 0x40:
        return None
    offset = int.from_bytes(head[0x3C:0x40], "little")
    if head[offset : offset + 4] != b"PE\0\0" or len(head) < offset + 6:
        return None
    return int.from_bytes(head[offset + 4 : offset + 6], "little")


def _describe(head: bytes) -> str:
    """What ``head`` is, in words, for the warning."""
    if head[:4] == b"\x7fELF":
        elf = _elf(head)
        return "a malformed ELF file" if elf is None else f"an ELF {elf[1]}-bit {elf[0]} executable"
    cpus = _macho_cpus(head)
    if cpus is not None:
        # Each CPU once: a universal binary may list one several times (up to 30 entries).
        names = ", ".join(
            dict.fromkeys(_MACHO_NAMES.get(cpu, f"CPU type {cpu:#x}") for cpu in cpus)
        )
        return f"a Mach-O {names} executable"
    machine = _pe_machine(head)
    if machine is not None:
        return f"a PE (Windows) {_PE_NAMES.get(machine, f'machine {machine:#x}')} executable"
    if head[:2] == b"#!":
        return "a #! script"
    return "in no executable format pack knows (not ELF, Mach-O or PE)"


def _matches(head: bytes, form: str, arch: _Arch) -> bool:
    if form == "ELF":
        elf = _elf(head) if head[:4] == b"\x7fELF" else None
        expected = (arch.name, arch.elf_bits, arch.elf_little)
        return elf == expected or (head[:2] == b"#!")
    if form == "Mach-O":
        cpus = _macho_cpus(head)
        return (cpus is not None and arch.macho_cpu in cpus) or head[:2] == b"#!"
    return arch.pe_machine is not None and _pe_machine(head) == arch.pe_machine


def binary_mismatch(binary: Path, target: str) -> str | None:
    """A warning when ``binary`` is not an executable for ``target`` (its format or CPU
    disagrees), else None. A file that cannot be read is left to the archive writer."""
    expected = _expected(target)
    if expected is None:
        return None
    form, arch = expected
    try:
        with binary.open("rb") as stream:
            head = stream.read(HEAD_BYTES)
            if _matches(head, form, arch):
                return _libc_mismatch(binary, stream, head, target) if form == "ELF" else None
    except OSError:
        return None
    wanted = f"{arch.elf_bits}-bit {arch.name} ELF" if form == "ELF" else f"{arch.name} {form}"
    return (
        f"--binary {binary} is {_describe(head)}, but --target {target} is {wanted}: the "
        f"daemon on that platform cannot run it; pass the binary built for {target}"
    )
