"""The daemon's configuration, as far as installing plugins goes: where its configuration
directory is, which plugin roots it discovers, and where its trust policy lives.

The reference installer installs into ``plugins.discovery.search_paths[0]`` of the daemon's
configuration and reads ``<config dir>/extensions/trusted_keys.toml``; so does nexo-pkg, so a
plugin it installs is one the daemon finds, under the operator's own policy. ``list``,
``verify``, ``remove`` and ``upgrade`` look in every search path, as the daemon's discovery
does.

- Configuration directory: ``--config DIR`` > ``NEXO_CONFIG_DIR`` > ``./config`` when it is a
  directory (the daemon's own default) owned by the current user and not writable by group or
  others (as git's ``safe.directory``: a cloned repository must not supply the trust policy) >
  ``$NEXO_HOME/config``. When neither ``--config`` nor ``NEXO_CONFIG_DIR`` is given, stderr
  says once per run which directory is in use (a ``note:`` line, dropped by ``--quiet``), and
  why a ``./config`` was passed over.
- ``<config dir>/plugins/discovery.yaml`` is loaded as the daemon's config crate loads it:
  ``${VAR}``, ``${VAR:-default}``, ``${VAR-default}`` and ``${file:PATH}`` are substituted in
  the raw text before YAML parsing (inside quotes too, not in comments), and an unset
  variable fails the whole load; a root ``schema_version`` is ignored; ``discovery`` is
  required and neither it nor the root may hold unknown keys. Any failure is a
  :class:`ConfigError` (exit 2), never a silent fall back to ``$NEXO_HOME``.
- Each search path then expands ``$VAR`` as the daemon's discovery walker does (a path naming
  an unset variable is skipped, with a warning); ``~`` is not expanded, so such a path is
  relative to the working directory (a warning says so), as every relative path is.
- Install root: ``--dest`` > the first search path > ``$NEXO_HOME/state/plugins``.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nexo_pkg.core.errors import ConfigError, UsageError
from nexo_pkg.core.files import (
    FileTooLargeError,
    file_above,
    link_leading_nowhere,
    read_capped_bytes,
    read_config_file,
)
from nexo_pkg.manifest.daemon_config import (
    CONFIG_DIR_ENV,
    config_dir,
    find_placeholders,
    nexo_home_from_env,
    resolve_placeholder,
)
from nexo_pkg.manifest.rust_text import rust_env_value, rust_trim

__all__ = [
    "CONFIG_DIR_ENV",
    "DISCOVERY_FILE",
    "POLICY_FILE",
    "DaemonConfig",
    "config_dir",
    "install_root",
    "load_daemon_config",
    "read_discovery",
    "read_yaml_config",
]
DISCOVERY_FILE = Path("plugins") / "discovery.yaml"
POLICY_FILE = Path("extensions") / "trusted_keys.toml"
MAX_DISCOVERY_BYTES = 1024 * 1024


@dataclass(frozen=True)
class DaemonConfig:
    """What nexo-pkg takes from the daemon's configuration directory; ``warnings`` says what
    in ``discovery.yaml`` probably does not do what the operator meant (a ``~`` path, a path
    naming an unset variable)."""

    directory: Path
    search_paths: tuple[Path, ...] = ()
    warnings: tuple[str, ...] = ()

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
        return (nexo_home_from_env() / "state" / "plugins").absolute()

    def checked_install_root(self) -> Path:
        """:meth:`install_root` (no ``--dest``), refused at once with :class:`ConfigError`
        when it names a file: no plugin can be installed there."""
        root = self.install_root()
        if root.exists() and not root.is_dir():
            named = (
                f"the first search path of {self.directory / DISCOVERY_FILE}"
                if self.search_paths
                else "$NEXO_HOME/state/plugins"
            )
            raise ConfigError(
                f"the install root {root} ({named}) is a file, not a directory; name a "
                "directory there, or pass --dest DIR"
            )
        return root

    def plugin_roots(self, dest: Path | None = None) -> tuple[Path, ...]:
        """Every root the daemon discovers plugins in, install root first (``--dest`` alone
        when given)."""
        if dest is not None or not self.search_paths:
            return (self.install_root(dest),)
        return tuple(dict.fromkeys(self.search_paths))


def install_root(dest: Path | None, directory: Path | None = None) -> Path:
    """``--dest`` (the daemon's configuration is then not read, nor its directory looked
    for), else the install root the daemon's configuration in ``directory`` (default:
    :func:`config_dir`) names. Raises :class:`ConfigError`, and :class:`UsageError` when
    ``dest`` exists and is not a directory (no root can be made there)."""
    if dest is not None:
        root = dest.expanduser().absolute()
        if root.exists() and not root.is_dir():
            raise UsageError(f"--dest {root} is a file, not a directory; name a plugin root")
        nowhere = link_leading_nowhere(root)
        if nowhere is not None:
            fix = "remove it" if nowhere.loops else "create that directory"
            raise UsageError(f"--dest {root} is {nowhere.what}; {fix}, or name another plugin root")
        blocking = file_above(root)
        if blocking is not None:
            # No root can be made below a file: `list` would report an empty root there, and
            # `install` fail on mkdir's bare "Not a directory".
            raise UsageError(
                f"--dest {root} is below {blocking}, which is a file, not a directory; name a "
                "plugin root"
            )
        return root
    daemon = load_daemon_config(config_dir() if directory is None else directory)
    return daemon.checked_install_root()


_DISCOVERY_KEYS = {
    "search_paths": "a list of paths",
    "disabled": "a list of plugin ids",
    "allowlist": "a list of plugin ids",
    "follow_symlinks": "true or false",
}


def load_daemon_config(directory: Path, *, cwd: Path | None = None) -> DaemonConfig:
    """Read ``<directory>/plugins/discovery.yaml`` when it exists, as the daemon loads it.
    Raises :class:`ConfigError` (exit 2) naming the file when the daemon could not load it:
    an unset ``${VAR}``, a refused ``${file:...}``, not UTF-8 or not YAML, no ``discovery``
    mapping, an unknown key, or a value of the wrong type."""
    path = directory / DISCOVERY_FILE
    if not path.exists():
        # As the daemon's `load_optional`: only a missing file (or a dangling link) means the
        # defaults; a directory or FIFO there is a file it cannot read, refused below.
        return DaemonConfig(directory)
    base = cwd or Path.cwd()
    document = read_discovery(path, read_config_file(path, MAX_DISCOVERY_BYTES), cwd=base)
    discovery = _discovery_section(path, document)
    listed = discovery.get("search_paths") or []
    paths: list[Path] = []
    warnings: list[str] = []
    for item in listed:
        expanded, unset = _expand_variables(item)
        if unset is not None:
            what = "unset" if os.environ.get(unset) is None else "non-UTF-8"
            warnings.append(
                f"{path}: search path {item!r} names the {what} variable ${unset}; the daemon "
                "skips it, and so does nexo-pkg"
            )
            continue
        if not expanded:
            # The walker canonicalises each path: an empty one names no directory.
            warnings.append(
                f"{path}: search path {item!r} is empty once expanded, which names no "
                "directory; the daemon skips it, and so does nexo-pkg"
            )
            continue
        if "\x00" in expanded:
            # Canonicalising it fails as for an empty one (no path holds a NUL byte).
            warnings.append(
                f"{path}: search path {item!r} holds a NUL byte, which names no directory; "
                "the daemon skips it, and so does nexo-pkg"
            )
            continue
        if expanded.startswith("~"):
            warnings.append(
                f"{path}: search path {item!r} starts with `~`, which the daemon does not "
                f"expand: it is the directory {base / expanded} relative to the working "
                "directory; write $HOME instead if the home directory is meant"
            )
        result = Path(expanded)
        paths.append(result if result.is_absolute() else (base / result).absolute())
    return DaemonConfig(directory, tuple(paths), tuple(warnings))


def _discovery_section(path: Path, document: Any) -> dict[str, Any]:
    """``document['discovery']`` checked as serde checks ``PluginDiscoveryConfigFile`` read
    from a ``serde_yaml::Value``, where a null is an empty list or struct (serde_yaml 0.9.34
    ``src/value/de.rs``: ``Value::Null => visit_sequence(Sequence::new())``, and
    ``visit_mapping(Mapping::new())`` for a struct): ``discovery: ~`` and ``disabled:`` load
    as empty; a null ``follow_symlinks`` does not."""
    if not isinstance(document, dict):
        raise ConfigError(f"{path}: expected a mapping with a `discovery` section")
    document = {key: value for key, value in document.items() if key != "schema_version"}
    unknown = [str(key) for key in document if key != "discovery"]
    if unknown:
        raise ConfigError(f"{path}: unknown key `{unknown[0]}` (expected `discovery`)")
    if "discovery" not in document:
        raise ConfigError(f"{path}: missing the `discovery` section")
    discovery = document["discovery"]
    if discovery is None:
        return {}
    if not isinstance(discovery, dict):
        raise ConfigError(f"{path}: `discovery` must be a mapping")
    for key, value in discovery.items():
        if value is None and key in ("search_paths", "disabled", "allowlist"):
            continue
        if key not in _DISCOVERY_KEYS:
            raise ConfigError(
                f"{path}: unknown key `discovery.{key}` (expected one of "
                f"{', '.join(_DISCOVERY_KEYS)})"
            )
        if key == "follow_symlinks":
            valid = isinstance(value, bool)
        else:
            valid = isinstance(value, list) and all(isinstance(item, str) for item in value)
        if not valid:
            raise ConfigError(f"{path}: `discovery.{key}` must be {_DISCOVERY_KEYS[key]}")
    return discovery


def read_yaml_config(path: Path, raw: bytes, *, cwd: Path | None = None) -> Any:
    """The YAML document of a file of the daemon's configuration read as its config crate
    reads one: UTF-8, ``${...}`` placeholders substituted (:func:`resolve_placeholders`,
    relative to ``cwd``, default the working directory), then parsed. Raises
    :class:`ConfigError` naming ``path``."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"cannot read {path}: it is not UTF-8 text") from exc
    return parse_yaml_text(path, resolve_placeholders(text, path, cwd or Path.cwd()))


def read_discovery(path: Path, raw: bytes, *, cwd: Path | None = None) -> Any:
    """The data of ``discovery.yaml`` as the daemon's config crate reads it: UTF-8,
    ``${...}`` placeholders substituted, then parsed as ``serde_yaml`` parses into a ``Value``
    (YAML 1.2: ``yes`` and ``on`` are strings, ``<<`` is an ordinary key, a key given twice
    refuses the file). Raises :class:`ConfigError` naming ``path``."""
    from nexo_pkg.lint.yaml_source import parse_yaml  # noqa: PLC0415 (only when it exists)

    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"cannot read {path}: it is not UTF-8 text") from exc
    document = parse_yaml(resolve_placeholders(text, path, cwd or Path.cwd()))
    if document.problems:
        problem = document.problems[0]
        where = problem.span.start
        raise ConfigError(
            f"{path} is not valid YAML for the daemon: line {where.line}, column "
            f"{where.column}: {problem.message}"
        )
    return document.data


def parse_yaml_text(path: Path, text: str, *, nodes: bool = False) -> Any:
    """``text`` (of ``path``) as YAML data, or with ``nodes`` as PyYAML's node tree (positions
    included); :class:`ConfigError` naming ``path`` when it is not YAML."""
    # PyYAML is imported only when the daemon's configuration actually holds the file.
    import yaml  # noqa: PLC0415

    try:
        return yaml.compose(text, Loader=yaml.SafeLoader) if nodes else yaml.safe_load(text)
    except (yaml.YAMLError, RecursionError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ConfigError(f"{path} is not valid YAML: {reason}") from exc
    except ValueError as exc:
        # PyYAML reads an integer with Python's `int`, which refuses over 4300 digits.
        raise ConfigError(
            f"{path} is not valid YAML for the daemon: an integer too long to be a number"
        ) from exc


def resolve_placeholders(text: str, path: Path, cwd: Path) -> str:
    """``text`` with every ``${...}`` replaced, as the daemon's config loader does.

    Raises :class:`ConfigError` for an unset variable or a ``${file:...}`` it refuses.
    """
    parts: list[str] = []
    last = 0
    for start, end, inner in find_placeholders(text):
        parts += (text[last:start], _resolve_one(inner, path, cwd))
        last = end
    parts.append(text[last:])
    return "".join(parts)


def _resolve_one(inner: str, path: Path, cwd: Path) -> str:
    """``file:PATH``, ``VAR:-default`` (unset or empty), ``VAR-default`` (unset), ``VAR``."""
    if inner.startswith("file:"):
        return _read_secret_file(inner, path, cwd)
    value = resolve_placeholder(inner)
    if value is None:
        name = rust_trim(inner)
        if os.environ.get(name) is not None:
            raise ConfigError(
                f"{path}: env var {name} is not valid UTF-8, which the daemon's loader takes as "
                f"not set (referenced in {path.name})"
            )
        raise ConfigError(f"{path}: env var {name} not set (referenced in {path.name})")
    return value


def _read_secret_file(inner: str, path: Path, cwd: Path) -> str:
    """The daemon's ``${file:PATH}``: no ``..``; absolute paths only under its secret roots."""
    raw = inner.removeprefix("file:")
    target = Path(raw)
    if ".." in target.parts:
        raise ConfigError(f"{path}: ${{{inner}}}: `..` not allowed in file reference")
    if target.is_absolute():
        roots = [Path("/run/secrets"), Path("/var/run/secrets"), cwd / "secrets"]
        if os.environ.get("CONFIG_SECRETS_DIR"):
            roots.append(Path(os.environ["CONFIG_SECRETS_DIR"]))
        if not any(target.is_relative_to(root) for root in roots):
            raise ConfigError(
                f"{path}: ${{{inner}}}: absolute paths must be under "
                f"{', '.join(str(root) for root in roots[:3])} or CONFIG_SECRETS_DIR"
            )
    else:
        target = cwd / target
    try:
        # The daemon reads the file whole: a larger one is refused here, never cut short.
        content = read_capped_bytes(target, MAX_DISCOVERY_BYTES).decode("utf-8")
    except (OSError, FileTooLargeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: ${{{inner}}}: cannot read file {target}: {exc}") from exc
    return rust_trim(content)


_VARIABLE = re.compile(r"\$([A-Za-z0-9_]*)")


def _expand_variables(text: str) -> tuple[str, str | None]:
    """``$VAR`` expanded from the environment as the discovery walker does; ``(text, name)``
    of the first unset variable instead (the walker then skips the path). A ``$`` not
    followed by a name stays."""
    unset: list[str] = []

    def value(match: re.Match[str]) -> str:
        name = match.group(1)
        if not name:
            return "$"
        # `std::env::var`: a value that is not Unicode skips the path, as an unset one.
        found = rust_env_value(os.environ.get(name))
        if found is None:
            unset.append(name)
            return ""
        return found

    expanded = _VARIABLE.sub(value, text)
    return (text, unset[0]) if unset else (expanded, None)
