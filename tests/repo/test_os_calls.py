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


#: ``os`` keywords that Windows refuses (``os.supports_dir_fd`` is empty there).
_DIR_FD_KEYWORDS = {"dir_fd", "src_dir_fd", "dst_dir_fd"}
#: The modules besides the platform module that may pass them, and why each may.
_DIR_FD_ALLOWED = {
    # Only install, sync and remove reach the root's journal walk; they refuse to run on
    # Windows before any of it.
    "install/root.py",
    # Every use is on the writer whose descriptor exists only when posix.DIR_FD; elsewhere
    # members are created by path with O_EXCL (check of a tarball on Windows).
    "sources/extract.py",
}


def dir_fd_calls(source: str) -> list[tuple[int, str]]:
    """The lines of ``source`` that pass a ``dir_fd``-family keyword, each with the keyword."""
    return sorted(
        (node.lineno, keyword.arg)
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Call)
        for keyword in node.keywords
        if keyword.arg in _DIR_FD_KEYWORDS
    )


def test_the_check_finds_each_dir_fd_keyword() -> None:
    planted = (
        "import os\n"
        "os.open('x', os.O_RDONLY, dir_fd=3)\n"
        "os.rename('a', 'b',\n"
        "          src_dir_fd=3, dst_dir_fd=4)\n"
        "stat = os.stat\n"
        "stat('x', dir_fd=5)\n"
    )
    assert dir_fd_calls(planted) == [
        (2, "dir_fd"),
        (3, "dst_dir_fd"),
        (3, "src_dir_fd"),
        (6, "dir_fd"),
    ]
    assert dir_fd_calls("import os\nos.open('x', os.O_RDONLY)\n") == []


def test_dir_fd_is_passed_only_where_windows_never_runs_it() -> None:
    """``dir_fd=`` raises NotImplementedError on Windows: outside ``core/posix.py`` only the
    modules of :data:`_DIR_FD_ALLOWED` pass it, on paths Windows never reaches."""
    found = {
        f"{relative}:{line}: {name}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if path != PLATFORM_MODULE
        and "templates" not in (relative := path.relative_to(PACKAGE)).parts
        and relative.as_posix() not in _DIR_FD_ALLOWED
        for line, name in dir_fd_calls(path.read_text("utf-8"))
    }
    assert not found, "ask nexo_pkg/core/posix.py (posix.DIR_FD) instead:\n" + "\n".join(
        sorted(found)
    )
    # Each allowed module still passes one (else the allowance is stale and goes).
    for allowed in _DIR_FD_ALLOWED:
        assert dir_fd_calls((PACKAGE / allowed).read_text("utf-8")), allowed


def test_the_receipt_name_is_defined_once() -> None:
    """Install writes the receipt and check, verify and the fleet commands find installs by
    it: one binding (``manifest/names.py``), so the names cannot drift apart."""
    defined = {
        f"{path.relative_to(PACKAGE)}:{node.lineno}"
        for path in sorted(PACKAGE.rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text("utf-8")))
        if isinstance(node, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == "RECEIPT_NAME" for t in node.targets)
        and isinstance(node.value, ast.Constant)
    }
    assert len(defined) == 1, defined
