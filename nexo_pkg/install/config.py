"""The daemon's configuration, as far as installing plugins goes: where its configuration
directory is, which plugin root it discovers first, and where its trust policy lives.

The reference installer installs into ``plugins.discovery.search_paths[0]`` of the daemon's
configuration and reads ``<config dir>/extensions/trusted_keys.toml``; so does nexo-pkg, so a
plugin it installs is one the daemon finds, under the operator's own policy.

- Configuration directory: ``--config DIR`` > ``NEXO_CONFIG_DIR`` > ``./config`` when it is a
  directory (the daemon's own default) owned by the current user and not writable by group or
  others (as git's ``safe.directory``: a cloned repository must not supply the trust policy) >
  ``$NEXO_HOME/config``. When the working directory decides (neither ``--config`` nor
  ``NEXO_CONFIG_DIR`` is given and there is a ``./config``), stderr says which directory is in
  use, and why a ``./config`` was passed over.
- Search paths: ``<config dir>/plugins/discovery.yaml``, ``discovery.search_paths`` (YAML, as
  the daemon reads it: ``${VAR}``, ``${VAR:-default}`` and ``${VAR-default}`` placeholders;
  ``$NEXO_HOME``, ``$HOME``, ``$CARGO_HOME`` and ``~`` expanded; relative paths are relative
  to the working directory, as the daemon's are).
- Install root: ``--dest`` > the first search path > ``$NEXO_HOME/state/plugins``.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nexo_pkg.daemon_config import CONFIG_DIR_ENV, config_dir, resolve_placeholder
from nexo_pkg.daemon_config import nexo_home_from_env as nexo_home
from nexo_pkg.errors import ConfigError, UsageError
from nexo_pkg.files import read_config_bytes

__all__ = [
    "CONFIG_DIR_ENV",
    "DISCOVERY_FILE",
    "POLICY_FILE",
    "DaemonConfig",
    "config_dir",
    "install_root",
    "load_daemon_config",
]
DISCOVERY_FILE = Path("plugins") / "discovery.yaml"
POLICY_FILE = Path("extensions") / "trusted_keys.toml"
MAX_DISCOVERY_BYTES = 1024 * 1024
_PLACEHOLDER = re.compile(r"\$\{([^}]*)\}")
_HOME_VARIABLES = ("NEXO_HOME", "HOME", "CARGO_HOME")


@dataclass(frozen=True)
class DaemonConfig:
    """What nexo-pkg takes from the daemon's configuration directory."""

    directory: Path
    search_paths: tuple[Path, ...] = ()
    discovery_file: Path | None = None

    @property
    def policy_path(self) -> Path:
        """``<config dir>/extensions/trusted_keys.toml`` (it need not exist)."""
        return self.directory / POLICY_FILE

    def install_root(self, dest: Path | None = None) -> Path:
        """``--dest`` > ``search_paths[0]`` > ``$NEXO_HOME/state/plugins``, absolute."""
        if dest is not None:
            return dest.expanduser().absolute()
        if self.search_paths:
            return self.search_paths[0]
        return (nexo_home() / "state" / "plugins").absolute()


def install_root(dest: Path | None, directory: Path) -> Path:
    """``--dest`` (the daemon's configuration is then not read), else the install root the
    daemon's configuration in ``directory`` names. Raises :class:`ConfigError`, and
    :class:`UsageError` when ``dest`` exists and is not a directory (no root can be made
    there)."""
    if dest is not None:
        root = dest.expanduser().absolute()
        if root.exists() and not root.is_dir():
            raise UsageError(f"--dest {root} is a file, not a directory; name a plugin root")
        return root
    return load_daemon_config(directory).install_root()


def load_daemon_config(directory: Path, *, cwd: Path | None = None) -> DaemonConfig:
    """Read ``<directory>/plugins/discovery.yaml`` when it exists.

    Raises :class:`ConfigError` (exit 2) naming the file when it is not YAML, not shaped as
    ``discovery: {search_paths: [...]}``, or names an unset environment variable.
    """
    path = directory / DISCOVERY_FILE
    if not path.is_file():
        return DaemonConfig(directory)
    try:
        raw = read_config_bytes(path, MAX_DISCOVERY_BYTES)
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror or exc}") from exc
    if len(raw) > MAX_DISCOVERY_BYTES:
        raise ConfigError(f"{path} is larger than {MAX_DISCOVERY_BYTES} bytes")
    document = _parse_yaml(path, raw)
    discovery = document.get("discovery") if isinstance(document, dict) else None
    if document is None or (isinstance(document, dict) and discovery is None):
        return DaemonConfig(directory, discovery_file=path)
    if not isinstance(discovery, dict):
        raise ConfigError(f"{path}: `discovery` must be a mapping")
    listed = discovery.get("search_paths") or []
    if not isinstance(listed, list) or not all(isinstance(item, str) for item in listed):
        raise ConfigError(f"{path}: `discovery.search_paths` must be a list of paths")
    base = cwd or Path.cwd()
    paths = tuple(_expand(path, item, base) for item in listed if item.strip())
    return DaemonConfig(directory, paths, path)


def _parse_yaml(path: Path, raw: bytes) -> Any:
    # PyYAML is imported only when the daemon's configuration actually holds the file.
    import yaml  # noqa: PLC0415

    try:
        return yaml.safe_load(raw.decode("utf-8"))
    except (UnicodeDecodeError, yaml.YAMLError, RecursionError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ConfigError(f"{path} is not valid YAML: {reason}") from exc


def _placeholder(path: Path, inner: str) -> str:
    value = resolve_placeholder(inner)
    if value is None:
        raise ConfigError(f"{path}: environment variable {inner.strip()} is not set")
    return value


def _expand(path: Path, text: str, base: Path) -> Path:
    expanded = _PLACEHOLDER.sub(lambda match: _placeholder(path, match.group(1)), text.strip())
    for name in _HOME_VARIABLES:
        value = str(nexo_home()) if name == "NEXO_HOME" else os.environ.get(name)
        if value is None and name == "CARGO_HOME":
            value = str(Path.home() / ".cargo")
        if value is not None:
            expanded = re.sub(rf"\${name}(?![A-Za-z0-9_])", value.replace("\\", "\\\\"), expanded)
    result = Path(expanded).expanduser()
    return result if result.is_absolute() else (base / result).absolute()
