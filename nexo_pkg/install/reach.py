"""Whether the daemon's discovery reaches a plugin directory: the question behind "will the
daemon load what was installed?".

Two walks find what the daemon runs, and an install root outside them is never loaded:

- Plugins: the plugin discovery walks each ``discovery.search_paths`` of
  ``<config dir>/plugins/discovery.yaml`` two levels deep (``WalkDir::max_depth(2)``,
  ``crates/core/src/agent/nexo_plugin_registry/discovery.rs:48-67``), so it finds
  ``<search path>/<dir>/nexo-plugin.toml`` and nothing deeper. Without the file (or with no
  search path in it) it scans nothing at all (``crates/config/src/lib.rs:280-284``,
  ``crates/config/src/types/plugins.rs:18-23``): a plugin installed into the fallback root
  ``$NEXO_HOME/state/plugins`` is not loaded. The reference installer says as much when it
  falls back (``src/plugin_install.rs:156-164``).
- Microapps: the extension host walks each ``extensions.search_paths`` of
  ``<config dir>/extensions.yaml`` (default ``./extensions``, from the daemon's working
  directory) at most ``max_depth`` levels deep (default 3, at least 1), pruning the
  directories named in ``ignore_dirs``, the root's own name included
  (``crates/extensions/src/discovery.rs:172-221``, ``src/main.rs:6530-6543``); it never
  reads ``discovery.yaml``. A microapp outside that walk is never loaded, and the daemon's
  own ``ext enable`` refuses its id.

nexo-pkg still installs wherever it is told (the operator may be about to change the
configuration): these checks only say so, as a warning.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cached_property
from pathlib import Path

from nexo_pkg.core.errors import NexoError
from nexo_pkg.install.config import DISCOVERY_FILE, load_daemon_config
from nexo_pkg.manifest.daemon_config import (
    EXTENSIONS_DEFAULT_IGNORE_DIRS,
    EXTENSIONS_DEFAULT_MAX_DEPTH,
    EXTENSIONS_DEFAULT_SEARCH_PATHS,
    nexo_home_from_env,
)

__all__ = ["DaemonReach"]

EXTENSIONS_FILE = "extensions.yaml"
# The plugin discovery's fixed walk: `<search path>/<dir>/nexo-plugin.toml`.
PLUGIN_WALK_DEPTH = 2


def _canonical(path: Path) -> Path:
    """``path`` as ``std::fs::canonicalize`` would give it once it exists (links resolved; a
    part that does not exist yet taken as written)."""
    try:
        return path.resolve()
    except (OSError, RuntimeError, ValueError):
        return path.absolute()


class DaemonReach:
    """Where the daemon configured in ``directory`` looks for plugins and microapps, read
    lazily (each file when first asked about); relative search paths are taken from ``cwd``,
    as the daemon started there takes them."""

    def __init__(self, directory: Path, *, cwd: Path | None = None) -> None:
        self.directory = directory
        self.cwd = cwd or Path.cwd()
        self._roots: dict[Path, Path] = {}

    @cached_property
    def _plugin_paths(self) -> tuple[Path, ...] | None:
        """The plugin discovery's search paths, canonical; ``None`` when ``discovery.yaml``
        cannot be read (the commands that need it say so themselves)."""
        try:
            daemon = load_daemon_config(self.directory, cwd=self.cwd)
        except NexoError:
            return None
        return tuple(dict.fromkeys(_canonical(path) for path in daemon.search_paths))

    @cached_property
    def _extension_walk(self) -> tuple[bool, tuple[str, ...], tuple[str, ...], int] | None:
        """``enabled``, ``search_paths``, ``ignore_dirs``, ``max_depth`` of the extension
        host; ``None`` when they cannot be known here (a placeholder unset here)."""
        if not (self.directory / EXTENSIONS_FILE).exists():
            return (
                True,
                EXTENSIONS_DEFAULT_SEARCH_PATHS,
                EXTENSIONS_DEFAULT_IGNORE_DIRS,
                EXTENSIONS_DEFAULT_MAX_DEPTH,
            )
        # Lint's reader of the daemon's YAML, only when there is a file to read.
        from nexo_pkg.lint.daemon_files import extension_walk  # noqa: PLC0415

        return extension_walk(self.directory)

    @cached_property
    def configured(self) -> bool:
        """Whether a daemon is configured in :attr:`directory` (its ``discovery.yaml`` or
        ``extensions.yaml`` is there). Without either, nexo-pkg cannot tell where the daemon
        that will load the plugin keeps its configuration (an install with ``--dest`` into a
        scratch root, a root another machine's daemon reads): only the fallback root
        ``$NEXO_HOME/state/plugins`` is said to be unscanned, as the reference installer says
        when it falls back (``src/plugin_install.rs:156-164``)."""
        return (self.directory / DISCOVERY_FILE).exists() or (
            self.directory / EXTENSIONS_FILE
        ).exists()

    @cached_property
    def _fallback(self) -> Path:
        return _canonical(nexo_home_from_env() / "state" / "plugins")

    def _root(self, directory: Path) -> Path:
        """``directory``'s root, canonical: resolved once per root (``doctor`` asks about
        every plugin of a root of thousands)."""
        parent = directory.parent
        root = self._roots.get(parent)
        if root is None:
            root = self._roots[parent] = _canonical(parent)
        return root

    def _judged(self, directory: Path) -> bool:
        return self.configured or self._root(directory) == self._fallback

    def unreached(
        self, directory: Path, plugin_id: str, *, microapp: bool | Callable[[], bool]
    ) -> str | None:
        """Why the daemon's discovery never meets the plugin (or, with ``microapp``, the
        microapp) ``plugin_id`` in ``directory`` (which need not exist yet); ``None`` when it
        does, or when that cannot be told (no daemon configured here, a root other than the
        fallback one: :attr:`configured`). ``microapp`` may be a callable (it reads the
        manifest), asked only when the two walks disagree."""
        if not self._judged(directory):
            return None
        as_plugin = self.plugin_unreached(directory, plugin_id)
        as_microapp = self.microapp_unreached(directory, plugin_id)
        if as_plugin is None and as_microapp is None:
            return None
        is_microapp = microapp() if callable(microapp) else microapp
        return as_microapp if is_microapp else as_plugin

    def plugin_unreached(self, directory: Path, plugin_id: str) -> str | None:
        """Why the plugin discovery (``discovery.rs:48-67``) never meets ``directory``."""
        paths = self._plugin_paths
        if paths is None:
            return None
        root = self._root(directory)
        if paths and (root in paths or _canonical(directory) in paths):
            return None
        file = self.directory / DISCOVERY_FILE
        if not paths:
            having = "does not exist" if not file.exists() else "lists no search path"
            return (
                f"the daemon will not load {plugin_id} from {directory.parent}: {file} "
                f"{having}, so its plugin discovery scans no directory; list the root "
                f"there (`discovery: {{search_paths: [{root}]}}`), or name the daemon's "
                "configuration directory with --config"
            )
        listed = ", ".join(str(path) for path in paths)
        return (
            f"the daemon will not load {plugin_id} from {directory.parent}: it is not one of "
            f"the search paths of {file} ({listed}), and the daemon's plugin discovery finds "
            "only <search path>/<dir>/nexo-plugin.toml; add it to `discovery.search_paths` "
            "there, or install with --dest naming one of them"
        )

    def microapp_unreached(self, directory: Path, plugin_id: str) -> str | None:
        """Why the extension host's walk (``crates/extensions/src/discovery.rs:172-221``)
        never meets ``directory/plugin.toml``."""
        walk = self._extension_walk
        if walk is None:
            return None
        enabled, search_paths, ignore_dirs, max_depth = walk
        if not enabled:
            return None  # `enabled: false` turns every microapp off: the lists say so
        target = _canonical(directory)
        for entry in search_paths:
            if entry and _walk_reaches(
                _canonical(self.cwd / entry), target, ignore_dirs, max(max_depth, 1)
            ):
                return None
        file = self.directory / EXTENSIONS_FILE
        shown = ", ".join(entry for entry in search_paths if entry) or "none"
        where = (
            f"`extensions.search_paths` of {file} ({shown}; relative ones from the working "
            f"directory {self.cwd})"
            if file.exists()
            else f"./extensions of the working directory {self.cwd} (the default: {file} "
            "does not exist)"
        )
        skipped = ", ".join(ignore_dirs) or "none"
        return (
            f"the daemon will not load microapp {plugin_id} from {directory.parent}: its "
            f"extension host finds microapps only under {where}, at most {max_depth} "
            f"level(s) down and never in directories named {skipped} (its `ext enable` "
            f"refuses the id too); add {directory.parent} to `extensions.search_paths`, or "
            "install with --dest under one of them"
        )


def _walk_reaches(root: Path, target: Path, ignore_dirs: tuple[str, ...], depth: int) -> bool:
    """Whether walkdir from ``root`` (canonical, ``max_depth`` ``depth``, entries named in
    ``ignore_dirs`` pruned, the root included) yields ``target/plugin.toml``."""
    if root.name in ignore_dirs:
        return False
    if target == root:
        return depth >= 1
    if root not in target.parents:
        return False
    between = target.relative_to(root).parts
    return len(between) + 1 <= depth and not any(part in ignore_dirs for part in between)
