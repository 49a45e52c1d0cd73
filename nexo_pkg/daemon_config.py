"""Where the daemon's configuration lives and how its loader expands ``${...}`` placeholders.

Import-cheap (standard library only), so both ``install`` and ``lint`` use it:

- :func:`config_dir`: ``--config DIR`` > ``NEXO_CONFIG_DIR`` > ``./config`` when it is a
  directory (the daemon's own default) > ``$NEXO_HOME/config``.
- :func:`resolve_placeholder`: one ``${...}`` as the daemon's config loader resolves it
  (``crates/config/src/env.rs``): ``${VAR}``; ``${VAR:-default}`` (default when unset or
  empty); ``${VAR-default}`` (default when unset). ``${file:...}`` is left to the caller.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

__all__ = [
    "CONFIG_DIR_ENV",
    "config_dir",
    "nexo_home_from_env",
    "placeholder_name",
    "resolve_placeholder",
]

CONFIG_DIR_ENV = "NEXO_CONFIG_DIR"


def nexo_home_from_env() -> Path:
    """``NEXO_HOME``, else ``~/.nexo``."""
    value = os.environ.get("NEXO_HOME")
    return Path(value).expanduser() if value else Path.home() / ".nexo"


def config_dir(flag: Path | None = None, *, cwd: Path | None = None) -> Path:
    """The daemon's configuration directory (see the module docstring for the order).

    Raises :class:`~nexo_pkg.errors.ConfigError` (exit 2) when ``flag`` (``--config``) names
    no directory: a mistyped path must not fall back to another configuration silently.
    """
    if flag is not None:
        named = flag.expanduser().absolute()
        if not named.is_dir():
            from nexo_pkg.errors import ConfigError  # noqa: PLC0415 (only on this error)

            reason = "is not a directory" if named.exists() else "does not exist"
            raise ConfigError(
                f"--config {named} {reason}; name the daemon's configuration directory"
            )
        return named
    value = os.environ.get(CONFIG_DIR_ENV)
    if value:
        return Path(value).expanduser().absolute()
    local = (cwd or Path.cwd()) / "config"
    if local.is_dir():
        return local.absolute()
    return (nexo_home_from_env() / "config").absolute()


def placeholder_name(inner: str) -> tuple[str, str | None]:
    """The variable name of placeholder ``inner`` and its default (``None``: no default)."""
    if ":-" in inner:
        name, default = inner.split(":-", 1)
        return name.strip(), default
    name, dash, default = inner.partition("-")
    if dash and name:
        return name.strip(), default
    return inner.strip(), None


def resolve_placeholder(inner: str, environ: Mapping[str, str] | None = None) -> str | None:
    """The value of ``${inner}``, or ``None`` when its variable is unset and it has no default."""
    environ = os.environ if environ is None else environ
    name, default = placeholder_name(inner)
    value = environ.get(name)
    if default is None:
        return value
    if ":-" in inner:
        return value or default
    return default if value is None else value
