"""Host target triples: which per-target tarballs this machine can run, best first."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

from nexo_pkg.core.errors import UsageError

NOARCH = "noarch"
TARGET_ENV = "NEXO_INSTALL_TARGET"
_TRIPLE = re.compile(r"^[A-Za-z0-9_]+(?:-[A-Za-z0-9_.]+){1,3}$")
#: ``uname``'s machine names to the architecture field of Rust's target triples (the names
#: per-target tarballs carry, as ``pack --target`` writes them): macOS and Windows say
#: ``arm64``/``AMD64``; Linux says ``ppc64le``, ``riscv64``, ``i386``… where Rust says
#: ``powerpc64le``, ``riscv64gc``, ``i686``.
_ARCH_ALIASES = {
    "amd64": "x86_64",
    "x64": "x86_64",
    "arm64": "aarch64",
    "i386": "i686",
    "i486": "i686",
    "i586": "i686",
    "ppc64le": "powerpc64le",
    "riscv64": "riscv64gc",
    "armv7l": "armv7",
    "armv8l": "armv7",  # a 32-bit ARM userland on a 64-bit kernel
}
#: Where musl's dynamic loader (``ld-musl-<arch>.so.1``) lives: Alpine, Void, Chimera.
_MUSL_LOADER_DIRS = ("/lib", "/usr/lib")


def _uname() -> tuple[str, str]:
    """(machine, kernel version) as ``uname`` gives them; the seam tests replace."""
    if hasattr(os, "uname"):
        name = os.uname()  # what platform.machine() reads on POSIX
        return name.machine, name.version
    import platform  # noqa: PLC0415

    return platform.machine(), ""


def _arch() -> str:
    machine, version = _uname()
    machine = machine.lower()
    if sys.platform == "darwin" and machine == "x86_64" and "ARM64" in version:
        # An x86_64 Python under Rosetta 2: uname translates the machine but not the kernel's
        # version (``…RELEASE_ARM64_T6000``). The machine is Apple silicon, where the daemon
        # built for it runs natively.
        return "aarch64"
    return _ARCH_ALIASES.get(machine, machine)


def _libc_name() -> str:
    """The C library's name as ``platform.libc_ver()`` gives it, from ``confstr`` as it asks
    first, so that ``platform`` (a few milliseconds of every sync's start-up) is loaded only
    where that says nothing."""
    try:
        parts = (os.confstr("CS_GNU_LIBC_VERSION") or "").split(maxsplit=1)
    except (AttributeError, ValueError, OSError):
        parts = []
    if len(parts) == 2:
        return parts[0]
    import platform  # noqa: PLC0415

    return platform.libc_ver()[0]


def _linux_is_musl() -> bool:
    """glibc reports itself through ``libc_ver``; musl does not, but ships ``ld-musl-*``."""
    if _libc_name() == "glibc":
        return False
    return any(any(Path(folder).glob("ld-musl-*")) for folder in _MUSL_LOADER_DIRS)


#: The ABI suffixes of a glibc triple that have a musl twin: ``-gnu`` and 32-bit ARM's
#: ``-gnueabihf``/``-gnueabi`` (``armv7-unknown-linux-musleabihf`` is the musl build of
#: ``armv7-unknown-linux-gnueabihf``, as :func:`detect_host_candidates` asks on such a host).
_GNU_ABIS = ("-gnu", "-gnueabihf", "-gnueabi")


def expand_triple(triple: str) -> tuple[str, ...]:
    """A glibc triple can also run the musl build (static), so it falls back to it (SPEC §5:
    glibc, then musl). Any triple ending in ``-gnu`` falls back to the same with ``-musl``
    (``x86_64-pc-windows-gnu`` to ``x86_64-pc-windows-musl``, ``x-gnu`` to ``x-musl``); one
    ending in ``-gnueabihf``/``-gnueabi`` to ``-musleabihf``/``-musleabi``, as an armv7 glibc
    host detects it."""
    for abi in _GNU_ABIS:
        if triple.endswith(abi):
            return (triple, triple.removesuffix(abi) + "-musl" + abi.removeprefix("-gnu"))
    return (triple,)


def detect_host_candidates() -> tuple[str, ...]:
    """Triples this host runs, best first (``noarch`` is added by the asset selection); none
    when ``uname`` names a machine no triple spells (empty, blanks, control characters), so
    such a host takes ``noarch`` rather than a malformed triple."""
    return tuple(triple for triple in _detected() if _TRIPLE.fullmatch(triple))


def _detected() -> tuple[str, ...]:
    arch = _arch()
    if sys.platform.startswith("linux"):
        # 32-bit ARM's triples name the hard-float ABI: armv7-unknown-linux-gnueabihf.
        abi = "eabihf" if arch == "armv7" else ""
        musl = f"{arch}-unknown-linux-musl{abi}"
        if _linux_is_musl():
            return (musl,)
        return (f"{arch}-unknown-linux-gnu{abi}", musl)
    if sys.platform == "darwin":
        if arch == "aarch64" and _uname()[0].lower() == "x86_64":
            # Under Rosetta 2 this process proves x86_64 builds run too: the fallback.
            return ("aarch64-apple-darwin", "x86_64-apple-darwin")
        return (f"{arch}-apple-darwin",)
    return ()


def host_candidates(override: str | None = None) -> tuple[str, ...]:
    """``--target`` wins, then ``NEXO_INSTALL_TARGET``, then detection.

    Raises :class:`UsageError` (exit 2) for an override that is not shaped like a triple.
    """
    if override is not None and not override.strip():
        # `--target "$TARGET"` with the variable unset: not a request for this host's.
        raise UsageError("--target is empty; name a target triple such as "
                         "x86_64-unknown-linux-gnu, or noarch")  # fmt: skip
    chosen = override or os.environ.get(TARGET_ENV) or None
    if chosen is None:
        return detect_host_candidates()
    if chosen == NOARCH:
        return ()
    if not _TRIPLE.fullmatch(chosen):
        if override:
            raise UsageError(
                f"target {chosen!r} is not a target triple such as x86_64-unknown-linux-gnu"
            )
        raise UsageError(
            f"{TARGET_ENV}={chosen!r} is not a target triple such as "
            f"x86_64-unknown-linux-gnu; fix it, or unset {TARGET_ENV} to use this host's"
        )
    return expand_triple(chosen)


def requested_target(override: str | None = None) -> str:
    """The target an install asks for, before any fallback: ``--target``, else
    ``NEXO_INSTALL_TARGET``, else this host's best triple; ``noarch`` when that is asked for
    or the host has no triple. Raises as :func:`host_candidates` does."""
    candidates = host_candidates(override)
    return candidates[0] if candidates else NOARCH
