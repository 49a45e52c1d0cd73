"""Where the daemon's configuration lives and how its loader expands ``${...}`` placeholders.

Import-cheap (standard library only), so both ``install`` and ``lint`` use it:

- :func:`config_dir`: the directory docs/install.md names, in its order; ``./config`` only when
  owned by the current user and not writable by group or others (as git's ``safe.directory``:
  a cloned repository must not supply the install root or the trust policy).
- :func:`resolve_placeholder`: one ``${...}`` as the daemon's config loader resolves it
  (``crates/config/src/env.rs``): ``${VAR}``; ``${VAR:-default}`` (default when unset or
  empty); ``${VAR-default}`` (default when unset). ``${file:...}`` is left to the caller.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator, Mapping
from itertools import takewhile
from pathlib import Path

from nexo_pkg.core import posix
from nexo_pkg.manifest.rust_text import rust_env_value, rust_trim

__all__ = [
    "CONFIG_DIR_ENV",
    "EXTENSIONS_DEFAULT_IGNORE_DIRS",
    "EXTENSIONS_DEFAULT_MAX_DEPTH",
    "EXTENSIONS_DEFAULT_SEARCH_PATHS",
    "config_dir",
    "find_placeholders",
    "nexo_home_from_env",
    "placeholder_name",
    "resolve_placeholder",
]

CONFIG_DIR_ENV = "NEXO_CONFIG_DIR"

# The extension host's walk when extensions.yaml does not set it (or does not exist):
# `ExtensionsConfig`'s defaults (`crates/config/src/types/extensions.rs:14-50,191-211`).
EXTENSIONS_DEFAULT_SEARCH_PATHS = ("./extensions",)
EXTENSIONS_DEFAULT_IGNORE_DIRS = ("target", ".git", "node_modules", "dist", ".build")
EXTENSIONS_DEFAULT_MAX_DEPTH = 3


def nexo_home_from_env() -> Path:
    """``NEXO_HOME``, else ``~/.nexo``, as an absolute path (a relative ``NEXO_HOME`` is taken
    from the current directory, so ``cache dir`` prints a path that works anywhere). Raises
    :class:`~nexo_pkg.core.errors.ConfigError` when there is no home directory to find (no
    ``HOME``, and no entry for this user in the password database, as in a container run
    under a bare numeric uid)."""
    from nexo_pkg.core.errors import ConfigError  # noqa: PLC0415 (only on its errors)

    value = os.environ.get("NEXO_HOME")
    try:
        home = Path(value).expanduser() if value else Path.home() / ".nexo"
    except RuntimeError as exc:  # "Could not determine home directory."
        raise ConfigError(
            "cannot find the home directory: HOME is unset and this user has no entry in the "
            "password database; set NEXO_HOME (or HOME)"
        ) from exc
    if value and home.exists() and not home.is_dir():
        raise ConfigError(
            f"NEXO_HOME={value} is a file, not a directory; name the nexo home directory, or "
            "unset NEXO_HOME for ~/.nexo"
        )
    from nexo_pkg.core.files import file_above, link_leading_nowhere  # noqa: PLC0415 (as above)

    blocking = file_above(home) if value else None
    if blocking is not None:
        # Nothing can be read or made below a file: every command would fail on its first
        # path there, each in words of its own ("cannot read trusted_keys.toml"), or report
        # an empty root as if it were one.
        raise ConfigError(
            f"NEXO_HOME={value} is below {blocking}, which is a file, not a directory; name "
            "the nexo home directory, or unset NEXO_HOME for ~/.nexo"
        )
    nowhere = link_leading_nowhere(home) if value else None
    if nowhere is not None:
        fix = "remove it" if nowhere.loops else "create that directory"
        raise ConfigError(
            f"NEXO_HOME={value} is {nowhere.what}; {fix}, or point NEXO_HOME at another"
        )
    return home.absolute()


def config_dir(
    flag: Path | None = None,
    *,
    cwd: Path | None = None,
    announce: bool = True,
    reads: tuple[Path, ...] | None = None,
) -> Path:
    """The daemon's configuration directory (see the module docstring for the order).

    When it was not given (``flag`` or ``NEXO_CONFIG_DIR``), the directory chosen is named on
    stderr once per run when it holds a file the caller reads from it (``reads``, default
    :data:`READ_FILES`; :func:`supplies_anything`), unless ``announce`` is false (shell
    completion, which must print nothing); a
    ``./config`` passed over is always warned about. Raises
    :class:`~nexo_pkg.core.errors.ConfigError` (exit 2) when ``flag`` (``--config``) or
    ``NEXO_CONFIG_DIR`` names no directory: a mistyped path must not fall back to another
    configuration silently.
    """
    if flag is not None:
        named = flag.expanduser().absolute()
        if not named.is_dir():
            from nexo_pkg.core.errors import ConfigError  # noqa: PLC0415 (only on this error)

            reason = "is not a directory" if named.exists() else "does not exist"
            raise ConfigError(
                f"--config {named} {reason}; name the daemon's configuration directory"
            )
        return named
    value = os.environ.get(CONFIG_DIR_ENV)
    if value:
        named = Path(value).expanduser().absolute()
        if not named.is_dir():
            from nexo_pkg.core.errors import ConfigError  # noqa: PLC0415 (only on this error)

            reason = "is not a directory" if named.exists() else "does not exist"
            raise ConfigError(
                f"{CONFIG_DIR_ENV}={value} ({named}) {reason}; name the daemon's configuration "
                f"directory, or unset {CONFIG_DIR_ENV}"
            )
        return named
    local = (cwd or Path.cwd()) / "config"
    fallback = (nexo_home_from_env() / "config").absolute()
    if local.is_dir():
        distrust = _untrusted_within(local)
        if distrust is None:
            if announce and supplies_anything(local, reads):
                _note(f"using the configuration directory {local.absolute()} (./config)")
            return local.absolute()
        _note(
            f"ignoring ./config: {distrust}; using {fallback} (pass --config ./config to use "
            "it anyway)",
            warn=True,
        )
    if announce and supplies_anything(fallback, reads):
        # Only a directory holding one of the files read from it changes anything (the
        # install root, the trust policy): one that does not is not worth a line.
        home = "$NEXO_HOME/config" if os.environ.get("NEXO_HOME") else "~/.nexo/config"
        _note(
            f"using the configuration directory {fallback} ({home}; --config or "
            f"{CONFIG_DIR_ENV} names another)"
        )
    return fallback


# The files of the daemon's configuration nexo-pkg reads: the plugin roots, the trust
# policy and its registry bindings (nexo-pkg's own file, beside it), the microapps' grants.
READ_FILES = (
    Path("plugins") / "discovery.yaml",
    Path("extensions") / "trusted_keys.toml",
    Path("extensions") / "registry_owners.toml",
    Path("extensions.yaml"),
)
# What a command that manages plugin roots without a trust policy (list, verify, remove, …)
# reads: the roots and the discovery state.
DISCOVERY_FILES = (READ_FILES[0], READ_FILES[-1])


def supplies_anything(directory: Path, reads: tuple[Path, ...] | None = None) -> bool:
    """Whether ``directory`` holds one of ``reads`` (default :data:`READ_FILES`, every file
    read from it): only then does using it change what a command does."""
    return any((directory / name).exists() for name in reads or READ_FILES)


def untrusted_reason(directory: Path) -> str | None:
    """Why ``directory`` may not supply configuration unasked: not owned by the current user,
    or writable by group or others; ``None`` when it may. One that cannot be examined is
    not trusted either."""
    try:
        info = directory.stat()
    except OSError as exc:
        return f"it cannot be examined ({exc.strerror or exc})"
    uid = posix.effective_uid()
    if uid is None:
        # Windows: no owner uid nor group bits in a stat; its ACLs are the user's business.
        return None
    if info.st_uid != uid:
        return f"it is owned by uid {info.st_uid}, not by you (uid {uid})"
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return "it is writable by group or others"
    return None


def _untrusted_within(directory: Path) -> str | None:
    """:func:`untrusted_reason` for ``./config`` and for what is read from it: a
    subdirectory or file another user may write could supply the install root or the trust
    policy as well as the directory itself could."""
    reason = untrusted_reason(directory)
    if reason is not None:
        return reason
    folders = dict.fromkeys(
        f"{file.parent.as_posix()}/" for file in READ_FILES if file.parent.parts
    )
    for name in (*folders, *(file.as_posix() for file in READ_FILES)):
        inside = directory / name
        if inside.exists():
            reason = untrusted_reason(inside)
            if reason is not None:
                return f"its {name} {reason.removeprefix('it ')}"
    return None


def _note(message: str, *, warn: bool = False) -> None:
    """Say once per run on stderr which configuration directory is in use (a ``note:`` line,
    dropped by ``--quiet``) or that a ``./config`` was passed over (a warning, shown even
    with ``--quiet``)."""
    from nexo_pkg.core import output  # noqa: PLC0415 - the run's streams, on use only
    from nexo_pkg.core.terminal import printable  # noqa: PLC0415

    text = printable(message)
    output.say_once(text if warn else f"note: {text}", warning=warn)


#: The JSON Schema ``pattern`` of ``extensions.schema.json`` for a value written as a ``${VAR}``
#: placeholder where the daemon's type is not a string (the loader substitutes the text first):
#: at least one ``${``, and every ``${`` closed (braces inside nest one level deep), since the
#: loader scans for the ``}`` of one that never closes forever (:func:`find_placeholders`).
PLACEHOLDER_SCHEMA_PATTERN = r"^(?=[\s\S]*\$\{)(?:[^$]|\$(?!\{)|\$\{(?:[^{}]|\{[^{}]*\})*\})*$"


def find_placeholders(text: str) -> Iterator[tuple[int, int, str]]:
    """``(start, end, inner)`` of every ``${...}``, skipping comments as the daemon's config
    loader does (``find_placeholders`` in its ``crates/config/src/env.rs``).

    The loader tracks quotes only to tell a ``#`` in a string from a comment; placeholders in
    quoted strings are resolved too. Braces nest. At a ``${`` that never closes the daemon's
    scan does not advance (it never finishes loading the file,
    :func:`unterminated_placeholder`); here the scan stops.
    """
    yield from takewhile(lambda found: found[1] >= 0, _scan_placeholders(text))


def unterminated_placeholder(text: str) -> int | None:
    """The offset of the first ``${`` outside a comment that never closes (its braces never
    balance), or ``None``. The daemon's loader loops there forever: its scan leaves the index
    where it was when the inner search reaches the end (``crates/config/src/env.rs:59-79``),
    so the daemon never finishes loading the file and never starts."""
    return next((start for start, end, _ in _scan_placeholders(text) if end < 0), None)


def _scan_placeholders(text: str) -> Iterator[tuple[int, int, str]]:
    """:func:`find_placeholders`' scan; an unterminated ``${`` ends it as ``(start, -1, "")``."""
    index, length = 0, len(text)
    in_comment = in_single = in_double = False
    while index + 1 < length:
        char = text[index]
        if char == "\n":
            in_comment = in_single = in_double = False
        elif in_comment:
            pass
        elif char == "#" and not in_single and not in_double:
            in_comment = True
        elif char == "'" and not in_double:
            in_single = not in_single
        elif char == '"' and not in_single:
            in_double = not in_double
        elif char == "$" and text[index + 1] == "{":
            depth, scan = 1, index + 2
            while scan < length:
                if text[scan] == "{":
                    depth += 1
                elif text[scan] == "}":
                    depth -= 1
                    if depth == 0:
                        yield index, scan + 1, text[index + 2 : scan]
                        index = scan
                        break
                scan += 1
            else:
                yield index, -1, ""
                return
        index += 1


def placeholder_name(inner: str) -> tuple[str, str | None]:
    """The variable name of placeholder ``inner`` and its default (``None``: no default).

    The name is trimmed as Rust's ``str::trim`` trims (``split_default`` and ``resolve_one``
    in the daemon's ``crates/config/src/env.rs``): the information separators U+001C-U+001F
    stay part of it, where Python's ``str.strip()`` would drop them."""
    if ":-" in inner:
        name, default = inner.split(":-", 1)
        return rust_trim(name), default
    name, dash, default = inner.partition("-")
    if dash and name:
        return rust_trim(name), default
    return rust_trim(inner), None


def resolve_placeholder(inner: str, environ: Mapping[str, str] | None = None) -> str | None:
    """The value of ``${inner}``, or ``None`` when its variable is unset and it has no default."""
    environ = os.environ if environ is None else environ
    name, default = placeholder_name(inner)
    # `std::env::var`: a value that is not Unicode is an error, as an unset one.
    value = rust_env_value(environ.get(name))
    if default is None:
        return value
    if ":-" in inner:
        return value or default
    return default if value is None else value
