"""The operating system's POSIX-only and Linux-only calls are reached through one module,
``core/posix.py`` (STYLE.md, "Portable by default"; docs/architecture.md, ``core``): no other
module imports ``ctypes`` or ``fcntl``, nor calls the ``os`` functions Windows lacks
(``fchmod``, ``killpg``, ``geteuid``, ...) itself. This reads the package's source, so a new
call outside the platform module fails here on Linux too, before it fails on Windows.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "nexo_pkg"
PLATFORM_MODULE = PACKAGE / "core" / "posix.py"

#: Modules only a POSIX system has, or that reach the C library directly.
_PLATFORM_MODULES = {"ctypes", "fcntl", "pwd", "grp", "termios", "resource"}
#: ``os`` functions Windows does not have.
_POSIX_ONLY_OS = {
    "fchmod",
    "fchown",
    "lchmod",
    "killpg",
    "getpgid",
    "setsid",
    "getuid",
    "geteuid",
    "getgid",
    "getegid",
    "mkfifo",
}


def platform_calls(source: str) -> list[tuple[int, str]]:
    """The lines of ``source`` that import a platform module or use a POSIX-only ``os``
    function, each with what it uses."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [
                (node.lineno, alias.name)
                for alias in node.names
                if alias.name.split(".")[0] in _PLATFORM_MODULES
            ]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module.split(".")[0] in _PLATFORM_MODULES:
                found.append((node.lineno, node.module))
            elif node.module == "os":
                found += [
                    (node.lineno, f"os.{alias.name}")
                    for alias in node.names
                    if alias.name in _POSIX_ONLY_OS
                ]
        elif (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "os"
            and node.attr in _POSIX_ONLY_OS
        ):
            found.append((node.lineno, f"os.{node.attr}"))
    return sorted(found)


def test_the_check_finds_each_form_of_a_platform_call() -> None:
    planted = (
        "import os\n"
        "import ctypes\n"
        "from fcntl import flock\n"
        "from os import killpg\n"
        "def f(fd):\n"
        "    os.fchmod(fd, 0o755)\n"
        "    return os.geteuid()\n"
        "import ctypes.util\n"
    )
    assert platform_calls(planted) == [
        (2, "ctypes"),
        (3, "fcntl"),
        (4, "os.killpg"),
        (6, "os.fchmod"),
        (7, "os.geteuid"),
        (8, "ctypes.util"),
    ]
    portable = "import os\nfrom nexo_pkg.core import posix\nposix.set_mode(3, 'x', 0o755)\n"
    assert platform_calls(portable) == []


def test_only_the_platform_module_makes_platform_calls() -> None:
    found = {
        f"{path.relative_to(PACKAGE)}:{line}: {name}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if path != PLATFORM_MODULE and "templates" not in path.relative_to(PACKAGE).parts
        for line, name in platform_calls(path.read_text("utf-8"))
    }
    assert not found, "ask nexo_pkg/core/posix.py instead:\n" + "\n".join(sorted(found))
