"""Lint settings from a file: ``.nexo.toml`` (``[lint]``) or ``pyproject.toml``
(``[tool.nexo.lint]``), found and merged with the flags as in ruff (docs/cli.md,
"Configuration files"): each linted file takes the nearest config file in its directory or
above it, and only that one; paths in a config file are relative to its directory.
"""

from __future__ import annotations

import contextlib
import posixpath
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from fnmatch import fnmatch
from functools import cached_property
from pathlib import Path, PurePosixPath
from typing import Any

from nexo_pkg.core.errors import ConfigError, UsageError
from nexo_pkg.core.files import read_config_file
from nexo_pkg.core.toml_spans import syntax_error
from nexo_pkg.manifest.names import listed_names
from nexo_pkg.manifest.options import LintOptions

__all__ = ["LintConfig", "LintSettings", "load_config"]

CONFIG_FILES = (".nexo.toml", "pyproject.toml")
# Configuration files are read whole; past this size one is refused, not read.
MAX_CONFIG_BYTES = 4 * 1024 * 1024
_KEYS = {"select", "ignore", "per-file-ignores", "exclude"}


@dataclass(frozen=True)
class LintConfig:
    """The settings of one config file (empty when there is none)."""

    path: Path | None = None
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    exclude: tuple[str, ...] = ()
    root: Path = field(default_factory=Path.cwd)

    @cached_property
    def _resolved_root(self) -> Path:
        return self.root.resolve()

    def _relative(self, path: Path, resolved: Path | None) -> str:
        try:
            return PurePosixPath(
                self._real(path, resolved).relative_to(self._resolved_root)
            ).as_posix()
        except ValueError:
            return path.as_posix()

    @staticmethod
    def _real(path: Path, resolved: Path | None) -> Path:
        return resolved if resolved is not None else path.resolve()

    def ignored_for(self, path: Path, resolved: Path | None = None) -> frozenset[str]:
        """The rules ``per-file-ignores`` drops for the file at ``path`` (``resolved``: its
        ``resolve()``, when the caller has it): a pattern matches its path relative to the
        config's directory (an absolute pattern, its absolute path), or its name."""
        relative = self._relative(path, resolved)
        real = self._real(path, resolved).as_posix()
        found: set[str] = set()
        for given, rules in self.per_file_ignores:
            pattern = _normal(given)
            if _matches(real if _absolute(pattern) else relative, pattern) or _matches(
                path.name, pattern
            ):
                found.update(rules)
        return frozenset(found)

    def excludes(self, path: Path, resolved: Path | None = None, below: Path | None = None) -> bool:
        """Whether ``exclude`` of this file skips ``path`` in the directory search, as ruff's
        walk would: a pattern matches the path relative to the config's directory, or one of
        the directories it is in (``examples/old`` skips ``examples/old/x/nexo-plugin.toml``),
        or the name of one of them; an absolute pattern matches the absolute path or a
        directory above it. With ``below`` (the resolved directory the search started from),
        only the directories under it and the file count, as ruff never excludes the
        directory it was asked to check; a file found there that resolves elsewhere (a link
        into an excluded directory) is matched whole."""
        if not self.exclude:
            return False
        relative = self._relative(path, resolved)
        real_path = self._real(path, resolved)
        real = real_path.as_posix()
        skip_relative = skip_real = 0
        if below is not None and real_path.is_relative_to(below):
            skip_real = len(below.parts)
            with contextlib.suppress(ValueError):
                skip_relative = len(below.relative_to(self._resolved_root).parts)
        for pattern in map(_normal, self.exclude):
            subject = real if _absolute(pattern) else relative
            skip = skip_real if _absolute(pattern) else skip_relative
            parts = PurePosixPath(subject).parts
            prefixes = (
                PurePosixPath(*parts[: end + 1]).as_posix() for end in range(skip, len(parts))
            )
            if any(_matches(prefix, pattern) for prefix in prefixes):
                return True
            if not _absolute(pattern) and any(_matches(part, pattern) for part in parts[skip:]):
                return True
        return False


def _normal(pattern: str) -> str:
    """``pattern`` without what names no directory: a trailing ``/``, ``./`` and ``x/..``
    (``--exclude ./vendor/``, as a shell completes it, is ``vendor``)."""
    trimmed = pattern.rstrip("/")
    return posixpath.normpath(trimmed) if trimmed else pattern


def _absolute(pattern: str) -> bool:
    return PurePosixPath(pattern).is_absolute() or Path(pattern).is_absolute()


def _matches(path: str, pattern: str) -> bool:
    """``fnmatch``, where a ``**/`` may also stand for no directory at all, as in ruff's and
    git's globs (``**/legacy/*`` matches ``legacy/nexo-plugin.toml``)."""
    if fnmatch(path, pattern):
        return True
    if "**/" not in pattern:
        return False
    variants = {pattern}
    # Each `**/` read as nothing, in every combination (a handful at most in practice).
    for _ in range(min(pattern.count("**/"), 4)):
        variants |= {
            variant[:at] + variant[at + 3 :]
            for variant in variants
            for at in range(len(variant))
            if variant.startswith("**/", at)
        }
    return any(fnmatch(path, variant) for variant in variants)


def _parse(raw: bytes, path: Path) -> dict[str, Any]:
    """The TOML document ``raw`` read from ``path``; ``config_invalid`` when it is not UTF-8,
    not TOML (with the line and column the parser named) or nested too deeply."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ConfigError(f"cannot read {path}: {error}", kind="config_invalid") from error
    try:
        return tomllib.loads(text)
    except ValueError as error:
        syntax = syntax_error(text, error, tomllib.loads)
        where = syntax.span.start
        raise ConfigError(
            f"cannot read {path}: {syntax.message} (at line {where.line}, column {where.column})",
            kind="config_invalid",
            details={"path": str(path), "line": where.line},
        ) from error
    except RecursionError as error:
        raise ConfigError(
            f"cannot read {path}: it is nested too deeply to be a configuration file",
            kind="config_invalid",
        ) from error


def _has_lint_table(pyproject: Path) -> bool:
    """Whether ``pyproject`` holds ``[tool.nexo.lint]`` (one without it is not a config file,
    as a ``pyproject.toml`` without ``[tool.ruff]`` is none for ruff)."""
    raw = read_config_file(pyproject, MAX_CONFIG_BYTES, kind="config_invalid")
    if b"nexo" not in raw:
        return False  # the common case, without parsing
    document = _parse(raw, pyproject)
    tool = document.get("tool")
    nexo = tool.get("nexo") if isinstance(tool, dict) else None
    return isinstance(nexo, dict) and "lint" in nexo


def _config_in(directory: Path) -> Path | None:
    listed = listed_names(directory)  # what a directory search saw there, if it walked it
    for name in CONFIG_FILES:
        if listed is not None and name not in listed:
            continue
        candidate = directory / name
        try:
            is_file = candidate.is_file()
        except OSError:
            # A directory that cannot be searched (as ruff, no config there): nothing in it
            # can be read either, so its manifests are NX008 whatever a config would say.
            return None
        if is_file and (name != "pyproject.toml" or _has_lint_table(candidate)):
            return candidate
    return None


class ConfigResolver:
    """Which config file applies to each linted file (the nearest one above it)."""

    def __init__(self, cwd: Path) -> None:
        self._nearest: dict[Path, Path | None] = {}
        self._loaded: dict[Path, LintConfig] = {}
        # Each directory of the run resolved once, not once per file (a tree of thousands of
        # manifests sits in a few hundred directories).
        self._directories: dict[Path, Path] = {}
        found = self._nearest_config(cwd.resolve())
        self.fallback = self._load(found) if found is not None else LintConfig(root=cwd)

    def _load(self, path: Path) -> LintConfig:
        config = self._loaded.get(path)
        if config is None:
            config = self._loaded[path] = load_config(path)
        return config

    def _nearest_config(self, directory: Path) -> Path | None:
        """The nearest ``.nexo.toml``, or ``pyproject.toml`` with ``[tool.nexo.lint]``, in
        ``directory`` or above it."""
        if directory in self._nearest:
            return self._nearest[directory]
        walked: list[Path] = []
        found: Path | None = None
        for candidate_dir in (directory, *directory.parents):
            if candidate_dir in self._nearest:
                found = self._nearest[candidate_dir]
                break
            walked.append(candidate_dir)
            found = _config_in(candidate_dir)
            if found is not None:
                break
        for seen in walked:
            self._nearest[seen] = found
        return found

    def know(self, resolved: Mapping[Path, Path]) -> None:
        """Take the ``resolve()`` of directories already known (those a search walked)."""
        self._directories.update(resolved)

    def resolved(self, path: Path) -> Path:
        """``path.resolve()``, its directory resolved once per run (a file that is a link is
        resolved itself, as before)."""
        if path.is_symlink():
            return path.resolve()
        directory = self._directories.get(path.parent)
        if directory is None:
            directory = self._directories[path.parent] = path.parent.resolve()
        return directory / path.name

    def for_path(self, path: Path, resolved: Path | None = None) -> LintConfig:
        """The settings for the file at ``path`` (``resolved``: its :meth:`resolved`);
        raises ``config_invalid`` for a bad file."""
        found = self._nearest_config((resolved or self.resolved(path)).parent)
        return self._load(found) if found is not None else self.fallback


def _strings(value: Any, key: str, path: Path) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ConfigError(f"{path}: `{key}` must be an array of strings", kind="config_invalid")
    return tuple(value)


def _section(document: Mapping[str, Any], path: Path) -> Mapping[str, Any]:
    if path.name == "pyproject.toml":
        tool = document.get("tool", {})
        nexo = tool.get("nexo", {}) if isinstance(tool, dict) else {}
        section = nexo.get("lint", {}) if isinstance(nexo, dict) else {}
        where = "[tool.nexo.lint]"
    else:
        section = document.get("lint", {})
        where = "[lint]"
    if not isinstance(section, dict):
        raise ConfigError(f"{path}: {where} must be a table", kind="config_invalid")
    unknown = sorted(set(section) - _KEYS)
    if unknown:
        raise ConfigError(
            f"{path}: unknown key {', '.join(unknown)} in {where}; "
            f"known: {', '.join(sorted(_KEYS))}",
            kind="config_invalid",
        )
    return section


def load_config(path: Path | None) -> LintConfig:
    """Read one config file; raises ``config_invalid`` (exit 2) for a bad one."""
    if path is None:
        return LintConfig()
    raw = read_config_file(path, MAX_CONFIG_BYTES, kind="config_invalid")
    document = _parse(raw, path)
    section = _section(document, path)
    per_file = section.get("per-file-ignores", {})
    if not isinstance(per_file, dict):
        raise ConfigError(f"{path}: `per-file-ignores` must be a table", kind="config_invalid")
    return LintConfig(
        path=path,
        select=_strings(section.get("select", []), "select", path),
        ignore=_strings(section.get("ignore", []), "ignore", path),
        per_file_ignores=tuple(
            (pattern, _strings(rules, f"per-file-ignores.{pattern}", path))
            for pattern, rules in per_file.items()
        ),
        exclude=_strings(section.get("exclude", []), "exclude", path),
        root=path.parent,
    )


def split_selectors(
    values: Sequence[str], where: str, *, from_config: bool = False
) -> frozenset[str]:
    """Rule selectors from ``values`` (comma-separated entries); raises :class:`UsageError`
    (exit 2) naming ``where`` for an entry that names no rule, or ``config_invalid`` (exit 2)
    when ``from_config`` (the entry was read from a config file, as ruff refuses one)."""
    from nexo_pkg.lint.registry import is_known_selector  # noqa: PLC0415 - cold-path cost

    selectors = {item.strip() for value in values for item in value.split(",") if item.strip()}
    unknown = sorted(item for item in selectors if not is_known_selector(item))
    if unknown:
        message = (
            f"{where}: unknown rule code or name {', '.join(unknown)} "
            "(`nexo plugin rule --all` lists every code)"
        )
        if from_config:
            raise ConfigError(message, kind="config_invalid")
        raise UsageError(message)
    return frozenset(selectors)


class LintSettings:
    """The options for each linted file: the flags over the nearest config file's settings.

    Raises :class:`UsageError` or ``config_invalid`` for a bad selector or config file, the one
    found from ``cwd`` at once, the others when a file under them is linted.
    """

    def __init__(
        self,
        cwd: Path,
        *,
        select: Sequence[str] = (),
        ignore: Sequence[str] = (),
        exclude: Sequence[str] = (),
        nexo_version: str | None = None,
    ) -> None:
        self._resolver = ConfigResolver(cwd)
        self._flag_select = split_selectors(select, "--select")
        self._flag_ignore = split_selectors(ignore, "--ignore")
        self._flag_excludes = LintConfig(exclude=tuple(exclude), root=cwd)
        self._nexo_version = nexo_version
        self._by_config: dict[Path | None, LintOptions] = {}
        self._last: tuple[Path, tuple[Path, LintConfig]] | None = None
        self._base(self._resolver.fallback)

    def know(self, resolved: Mapping[Path, Path]) -> None:
        """Take the ``resolve()`` of directories a search already walked."""
        self._resolver.know(resolved)

    def _base(self, config: LintConfig) -> LintOptions:
        options = self._by_config.get(config.path)
        if options is None:
            where = str(config.path) if config.path is not None else "config"
            # Every rule the file names is checked when it is read, as ruff reads its own:
            # whether `--select` replaces `select` or a per-file pattern matches no file
            # linted, the file is refused the same.
            configured = split_selectors(config.select, f"{where}: select", from_config=True)
            for _pattern, rules in config.per_file_ignores:
                split_selectors(rules, f"{where}: per-file-ignores", from_config=True)
            select = self._flag_select or configured
            ignore = self._flag_ignore | split_selectors(
                config.ignore, f"{where}: ignore", from_config=True
            )
            options = LintOptions(nexo_version=self._nexo_version, select=select, ignore=ignore)
            self._by_config[config.path] = options
        return options

    def _config_for(self, path: Path, resolved: Path | None) -> tuple[Path, LintConfig]:
        """``path`` resolved (``resolved``, when the caller has it) and its config file's
        settings (the last file's kept: the directory search asks :meth:`excluded`, then
        :meth:`options_for`)."""
        if self._last is not None and self._last[0] is path:
            return self._last[1]
        if resolved is None:
            resolved = self._resolver.resolved(path)
        found = resolved, self._resolver.for_path(path, resolved)
        self._last = (path, found)
        return found

    def options_for(self, path: Path, resolved: Path | None = None) -> LintOptions:
        """The options for the file at ``path`` (``per-file-ignores`` included); ``resolved``:
        its ``resolve()``, when the caller has it."""
        resolved, config = self._config_for(path, resolved)
        options = self._base(config)
        ignored = config.ignored_for(path, resolved) if config.per_file_ignores else frozenset()
        if not ignored:
            return options
        where = f"{config.path}: per-file-ignores"
        return replace(
            options,
            ignore=options.ignore | split_selectors(sorted(ignored), where, from_config=True),
        )

    def excluded(
        self, path: Path, resolved: Path | None = None, *, below: Path | None = None
    ) -> bool:
        """Whether the directory search skips ``path`` (its config's and the flags' excludes);
        ``resolved``: its ``resolve()``, when the caller has it; ``below``: the resolved
        directory searched, whose own path is not matched."""
        resolved, config = self._config_for(path, resolved)
        return config.excludes(path, resolved, below) or self._flag_excludes.excludes(
            path, resolved, below
        )
