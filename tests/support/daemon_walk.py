"""Walk a plugin root the way the daemon's discovery does, to see what it would load.

The daemon looks for manifest files (``nexo-plugin.toml``, ``plugin.toml``) in each search
path and in the directories up to two levels below it, hidden directories included, without
following links; it visits entries in file-name order and keeps the *first* manifest of each
plugin id, reporting the rest as duplicates. :func:`discoverable` returns every manifest it
would meet, by id, in that order; :func:`assert_one_per_id` checks that no id is met twice.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from nexo_pkg.manifest.names import MANIFEST_NAMES

DEPTH = 2


def _plugin_id(manifest: Path) -> str | None:
    try:
        document = tomllib.loads(manifest.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None
    plugin = document.get("plugin")
    plugin_id = plugin.get("id") if isinstance(plugin, dict) else None
    return plugin_id if isinstance(plugin_id, str) else None


def discoverable(root: Path) -> dict[str, list[Path]]:
    """Every manifest the daemon meets under ``root``, grouped by plugin id, first one first
    (a depth-first walk in file-name order, as a sorted ``walkdir`` gives)."""
    by_id: dict[str, list[Path]] = {}

    def visit(directory: Path, depth: int) -> None:
        try:
            entries = sorted(directory.iterdir())
        except OSError:
            return
        for entry in entries:
            if entry.is_symlink():
                continue
            if entry.is_dir():
                if depth < DEPTH:
                    visit(entry, depth + 1)
            elif entry.name in MANIFEST_NAMES and entry.is_file():
                plugin_id = _plugin_id(entry)
                if plugin_id is not None:
                    by_id.setdefault(plugin_id, []).append(entry)

    visit(root, 0)
    return by_id


def assert_one_per_id(root: Path) -> dict[str, Path]:
    """No plugin id is discoverable twice under ``root``; return the manifest of each id."""
    found = discoverable(root)
    duplicates = {plugin_id: paths for plugin_id, paths in found.items() if len(paths) > 1}
    assert not duplicates, f"the daemon would meet these ids twice: {duplicates}"
    return {plugin_id: paths[0] for plugin_id, paths in found.items()}


def discovered_versions(root: Path) -> dict[str, str]:
    """``{id: version}`` of what the daemon would load under ``root`` (one per id)."""
    versions: dict[str, str] = {}
    for plugin_id, manifest in assert_one_per_id(root).items():
        document = tomllib.loads(manifest.read_text(encoding="utf-8"))
        versions[plugin_id] = str(document["plugin"]["version"])
    return versions
