"""``nexo plugin enable|disable ID``: edit the daemon's discovery configuration.

The daemon skips a discovered plugin whose id is in ``discovery.disabled`` of
``<config dir>/plugins/discovery.yaml``, and, when ``discovery.allowlist`` is not empty, every
plugin whose id is not in it (``crates/config/src/types/plugins.rs``,
``PluginDiscoveryConfig``). A microapp is discovered by the extension host instead, which
applies ``extensions.enabled``, ``extensions.disabled`` and ``extensions.allowlist`` of
``<config dir>/extensions.yaml`` (``src/main.rs:6530-6543``, ``crates/extensions/src/
discovery.rs:329-360``) and never reads ``discovery.yaml``: a microapp's lists are those.
``disable`` adds the id to ``disabled``; ``enable`` takes it out and, when an allowlist is in
force without it, adds it there, so it loads at the next start. The daemon's own ``agent ext
enable/disable`` edits ``extensions.disabled`` the same way (a ``.yaml.lock`` file made with
``O_EXCL`` while it writes, temp file and rename: ``crates/extensions/src/cli/yaml_edit.rs``,
``commands.rs:144-180``); unlike it, which re-serialises the file and drops its comments,
this edit rewrites only the lines of the list that changes and keeps every other byte.
"""

from __future__ import annotations

import contextlib
import os
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from nexo_pkg.core import posix
from nexo_pkg.core.dirs import make_dirs
from nexo_pkg.core.errors import ConfigError, NexoError
from nexo_pkg.core.files import read_config_file, write_config_file
from nexo_pkg.install.config import (
    DISCOVERY_FILE,
    MAX_DISCOVERY_BYTES,
    load_daemon_config,
    parse_yaml_text,
    read_discovery,
)
from nexo_pkg.manifest.daemon import check_id
from nexo_pkg.manifest.daemon_config import find_placeholders

LOCK_TIMEOUT = 5.0
LOCK_POLL = 0.025

State = Literal["enabled", "disabled", "not-allowlisted"]

# The extension host's configuration, beside ``plugins/`` in the config directory.
EXTENSIONS_FILE = "extensions.yaml"


@dataclass(frozen=True)
class DiscoveryState:
    """The ``disabled`` and ``allowlist`` lists of the daemon's discovery configuration."""

    disabled: tuple[str, ...] = ()
    allowlist: tuple[str, ...] = ()
    # ``discovery.follow_symlinks`` (default false): links out of the root are followed.
    follow_symlinks: bool = False
    #: ``extensions.yaml``'s ``enabled``, ``disabled`` and ``allowlist``: the lists a microapp
    #: obeys instead of these (``src/main.rs:6530-6543``, ``discovery.rs:329-360``; no file:
    #: the defaults, every microapp loads).
    extensions_enabled: bool = True
    extensions_disabled: tuple[str, ...] = ()
    extensions_allowlist: tuple[str, ...] = ()

    def skipped_by(
        self, plugin_id: str, *, microapp: bool | Callable[[], bool] = False
    ) -> str | None:
        """Which setting keeps the daemon from loading ``plugin_id`` (as :meth:`state` decides
        it), in words naming the file; ``None`` when it loads it."""
        if self.state(plugin_id, microapp=microapp) == "enabled":
            return None
        if not (microapp() if callable(microapp) else microapp):
            listed = _listed_state(plugin_id, self.disabled, self.allowlist)
            return "discovery.disabled" if listed == "disabled" else "not in discovery.allowlist"
        if not self.extensions_enabled:
            return "extensions.enabled is false in extensions.yaml: no microapp loads"
        listed = _listed_state(plugin_id, self.extensions_disabled, self.extensions_allowlist)
        return (
            "extensions.disabled in extensions.yaml"
            if listed == "disabled"
            else "not in extensions.allowlist of extensions.yaml"
        )

    def state(self, plugin_id: str, *, microapp: bool | Callable[[], bool] = False) -> State:
        """Whether the daemon would load ``plugin_id`` once discovered; a ``microapp`` is
        discovered by the extension host, which reads ``extensions.yaml``, never
        ``plugins/discovery.yaml``. ``microapp`` may be a callable, asked only when the two
        files' lists give the plugin different states (it reads the plugin's manifest)."""
        as_plugin = _listed_state(plugin_id, self.disabled, self.allowlist)
        as_microapp = (
            "disabled"
            if not self.extensions_enabled
            else _listed_state(plugin_id, self.extensions_disabled, self.extensions_allowlist)
        )
        if as_plugin == as_microapp:
            return as_plugin
        is_microapp = microapp() if callable(microapp) else microapp
        return as_microapp if is_microapp else as_plugin


def _listed_state(plugin_id: str, disabled: tuple[str, ...], allowlist: tuple[str, ...]) -> State:
    if plugin_id in disabled:
        return "disabled"
    if allowlist and plugin_id not in allowlist:
        return "not-allowlisted"
    return "enabled"


@dataclass(frozen=True)
class EditResult:
    """What ``enable``/``disable`` did to ``path`` (``extensions.yaml`` for a ``microapp``)."""

    plugin_id: str
    path: Path
    state: State
    changed: bool
    allowlisted: bool = False
    microapp: bool = False
    #: Why the daemon would still never load the plugin (its install root is not one the
    #: daemon's discovery walks), as ``install`` warns.
    warnings: tuple[str, ...] = ()

    @property
    def section(self) -> str:
        """The top-level key of the lists edited: ``extensions`` or ``discovery``."""
        return "extensions" if self.microapp else "discovery"

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": True,
            "id": self.plugin_id,
            "state": self.state,
            "changed": self.changed,
            "added_to_allowlist": self.allowlisted,
            "microapp": self.microapp,
            "path": str(self.path),
            "warnings": list(self.warnings),
        }


def _load(path: Path) -> tuple[Any, str]:
    """``(document, text)`` of ``path``; ``(None, "")`` when it does not exist."""
    try:
        raw = read_config_file(path, MAX_DISCOVERY_BYTES, missing_ok=True)
    except FileNotFoundError:
        return None, ""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path} is not UTF-8 text") from exc
    return read_discovery(path, raw), text


def _string_list(section: Any, key: str, path: Path, top: str = "discovery") -> list[str]:
    value = section.get(key) if section is not None else None
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ConfigError(f"{path}: `{top}.{key}` must be a list of plugin ids")
    return list(value)


def _section(document: Any, path: Path) -> Any:
    if document is None:
        return None
    if not isinstance(document, dict):
        raise ConfigError(f"{path}: the top level must be a mapping with `discovery`")
    section = document.get("discovery")
    if section is not None and not isinstance(section, dict):
        raise ConfigError(f"{path}: `discovery` must be a mapping")
    return section


def discovery_state(config_directory: Path) -> DiscoveryState:
    """The discovery lists of ``<config_directory>/plugins/discovery.yaml`` (empty when the
    file is absent). Raises :class:`ConfigError` for a file the daemon could not load."""
    path = config_directory / DISCOVERY_FILE
    enabled, disabled, allowlist = _extensions_lists(config_directory)
    return replace(
        _state(_load(path)[0], path),
        extensions_enabled=enabled,
        extensions_disabled=disabled,
        extensions_allowlist=allowlist,
    )


def _extensions_lists(config_directory: Path) -> tuple[bool, tuple[str, ...], tuple[str, ...]]:
    """``enabled``, ``disabled`` and ``allowlist`` of ``<config_directory>/extensions.yaml``,
    read as the daemon's loader reads it; the defaults when there is no such file
    (``src/main.rs:6530``)."""
    try:
        raw = read_config_file(
            config_directory / EXTENSIONS_FILE, MAX_DISCOVERY_BYTES, missing_ok=True
        )
    except FileNotFoundError:
        return True, (), ()
    # Lint's reading of the daemon's YAML is loaded only when there is a file to read: a host
    # without microapps lists its plugins without it.
    from nexo_pkg.lint.daemon_files import extensions_lists  # noqa: PLC0415

    return extensions_lists(raw.decode("utf-8", errors="replace"))


def _state(document: Any, path: Path) -> DiscoveryState:
    section = _section(document, path)
    follow = section.get("follow_symlinks", False) if section is not None else False
    return DiscoveryState(
        tuple(_string_list(section, "disabled", path)),
        tuple(_string_list(section, "allowlist", path)),
        follow is True,
    )


@contextlib.contextmanager
def _edit_lock(path: Path) -> Iterator[None]:
    """The daemon's lock for editing ``path``: ``<path>.yaml.lock`` made with ``O_EXCL``."""
    lock = path.with_suffix(".yaml.lock")
    deadline = time.monotonic() + LOCK_TIMEOUT
    while True:
        try:
            descriptor = os.open(
                lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL | posix.O_NOFOLLOW, 0o644
            )
            break
        except FileExistsError as exc:
            if time.monotonic() >= deadline:
                raise NexoError(
                    f"{lock} is held by another edit; remove it if no other edit is running",
                    kind="io",
                ) from exc
            time.sleep(LOCK_POLL)
        except OSError as exc:
            raise NexoError(f"cannot lock {path}: {exc.strerror or exc}", kind="io") from exc
    try:
        os.write(descriptor, f"{os.getpid()}\n".encode())
        os.close(descriptor)
        yield
    finally:
        lock.unlink(missing_ok=True)


def _plain(plugin_id: str) -> str:
    """``plugin_id`` as a YAML list item: plain, or quoted where YAML would read it as
    something else than a string (``null``, ``yes``, ``1_0``…)."""
    import yaml  # noqa: PLC0415

    return plugin_id if yaml.safe_load(plugin_id) == plugin_id else f'"{plugin_id}"'


def _mapping_item(node: Any, key: str) -> tuple[Any, Any] | None:
    for key_node, value_node in getattr(node, "value", ()):
        if getattr(key_node, "value", None) == key:
            return key_node, value_node
    return None


def _newline(text: str) -> str:
    """The line ending the file uses (that of its first line: ``\\r\\n``, a lone ``\\r``,
    which YAML reads as a line break too, or ``\\n``), for the lines an edit adds."""
    found = _BREAK.search(text)
    return found.group() if found else "\n"


_BREAK = re.compile(r"\r\n|\r|\n")


def _ends_line(text: str) -> bool:
    return text.endswith(("\n", "\r"))


def _line_start(text: str, index: int) -> int:
    return max(text.rfind("\n", 0, index), text.rfind("\r", 0, index)) + 1


def _line_end(text: str, index: int) -> int:
    """The index just past the line break of the line holding ``index`` (or the text's end)."""
    found = _BREAK.search(text, index)
    return len(text) if found is None else found.end()


class _LayoutError(Exception):
    """The file is laid out in a way this edit does not rewrite safely."""


def _items(value: Any) -> list[Any]:
    """The item nodes of the sequence node ``value`` where the list is written; ``None`` for
    an alias (``*name``: its node is the one of its anchor, written elsewhere)."""
    items: list[Any] = []
    for node in value.value:
        inside = value.start_mark.index <= node.start_mark.index < value.end_mark.index
        items.append(None if not inside or any(node is seen for seen in items) else node)
    return items


def _alias(key: str) -> _LayoutError:
    return _LayoutError(f"an item of `{key}` next to the change is an alias (`*name`)")


def _item_line(text: str, node: Any, key: str) -> tuple[int, int]:
    """Where the line of the list item ``node`` starts and ends; :class:`_LayoutError` unless
    the item stands on a line of its own (``- item``). ``key`` is the list's dotted name."""
    start = _line_start(text, node.start_mark.index)
    if text[start : node.start_mark.index].strip() != "-":
        raise _LayoutError(f"an item of `{key}` does not stand on a line of its own")
    return start, _line_end(text, max(node.end_mark.index - 1, node.start_mark.index))


def _append(text: str, section: Any, key: str, plugin_id: str, top: str = "discovery") -> str:
    """``text`` with ``plugin_id`` appended to the list ``key`` of the ``top`` mapping node
    ``section`` (``discovery`` or ``extensions``), touching only what must change."""
    from yaml import MappingNode, ScalarNode, SequenceNode  # noqa: PLC0415

    item = _plain(plugin_id)
    name = f"{top}.{key}"
    found = _mapping_item(section, key)
    if found is None:
        if isinstance(section, MappingNode) and section.flow_style:
            # `discovery: {}` or `{search_paths: [...]}`: the key goes in before the `}`.
            close = section.end_mark.index - 1
            if text[close] != "}":
                raise _LayoutError(f"`{top}` does not end with `}}`")
            separator = ", " if section.value else ""
            return f"{text[:close]}{separator}{key}: [{item}]{text[close:]}"
        if not isinstance(section, MappingNode) or not section.value:
            raise _LayoutError(f"`{top}` is not a block mapping to add `{key}` to")
        first_key = section.value[0][0]
        indent = " " * first_key.start_mark.column
        last_value = section.value[-1][1]
        at = _line_end(text, max(last_value.end_mark.index - 1, last_value.start_mark.index))
        eol = _newline(text)
        prefix = "" if at == 0 or text[at - 1] in "\r\n" else eol
        return f"{text[:at]}{prefix}{indent}{key}: [{item}]{eol}{text[at:]}"
    key_node, value = found
    if isinstance(value, ScalarNode) and value.tag.endswith(":null"):
        colon = text.index(":", key_node.end_mark.index)
        end = value.end_mark.index if value.end_mark.index > colon else colon + 1
        return f"{text[: colon + 1]} [{item}]{text[end:]}"
    if not isinstance(value, SequenceNode):
        raise _LayoutError(f"`{name}` is not a list")
    items = _items(value)
    if value.flow_style:
        close = value.end_mark.index - 1
        if text[close] != "]":
            raise _LayoutError(f"`{name}` does not end with `]`")
        if not items:
            return f"{text[:close]}{item}{text[close:]}"
        if items[-1] is None:
            raise _alias(name)
        # Right after the last item, so its comma (`[a, b,]`) and comment stay where they are.
        at = items[-1].end_mark.index
        return f"{text[:at]}, {item}{text[at:]}"
    if not items:
        raise _LayoutError(f"`{name}` is an empty block list")
    last = items[-1]
    if last is None:
        raise _alias(name)
    start, at = _item_line(text, last, name)
    lead = text[start : last.start_mark.index]
    eol = _newline(text)
    prefix = "" if text[at - 1] in "\r\n" else eol
    return f"{text[:at]}{prefix}{lead}{item}{eol}{text[at:]}"


def _remove(text: str, path: Path, key: str, plugin_id: str, top: str = "discovery") -> str:
    """``text`` (of ``path``) without ``plugin_id`` in the list ``key`` of the
    ``top`` mapping; a list left empty becomes ``[]``. Each occurrence goes with its line
    (``- item  # why``) in a block list, with one comma in a flow list: the other items,
    their comments and the list's layout stay as written."""
    while True:
        section = _mapping_item(_nodes(path, text), top)
        edited = _remove_first(text, section[1] if section else None, key, plugin_id, top)
        if edited == text:
            return text
        text = edited


def _remove_first(text: str, section: Any, key: str, plugin_id: str, top: str) -> str:
    """``text`` without the first occurrence of ``plugin_id`` in the list ``key`` of the
    mapping node ``section`` (``text`` itself when there is none)."""
    from yaml import SequenceNode  # noqa: PLC0415

    found = _mapping_item(section, key)
    if found is None or not isinstance(found[1], SequenceNode):
        return text
    key_node, value = found
    name = f"{top}.{key}"
    items = _items(value)
    index = next(
        (i for i, n in enumerate(value.value) if getattr(n, "value", None) == plugin_id), None
    )
    if index is None:
        return text
    node = items[index]
    if node is None:
        raise _alias(name)
    if value.flow_style:
        return _remove_flow_item(text, items, index, name)
    start, end = _item_line(text, node, name)
    text = text[:start] + text[end:]
    if len(items) == 1:
        colon = text.index(":", key_node.end_mark.index)
        text = f"{text[: colon + 1]} []{text[colon + 1 :]}"
    return text


def _remove_flow_item(text: str, items: list[Any], index: int, name: str) -> str:
    """``text`` without the flow-list item ``items[index]`` and one comma beside it."""
    node = items[index]
    start, end = node.start_mark.index, node.end_mark.index
    after = end
    while after < len(text) and text[after] in " \t":
        after += 1
    if after < len(text) and text[after] == ",":
        # `a, ITEM, b` or `ITEM,`: the item, its comma and the blanks after it.
        end = after + 1
        while end < len(text) and text[end] in " \t":
            end += 1
    elif index > 0:
        # The last item, without a comma of its own: the comma after the one before goes.
        if items[index - 1] is None:
            raise _alias(name)
        comma = items[index - 1].end_mark.index
        while comma < start and text[comma] in " \t":
            comma += 1
        if text[comma] != ",":
            raise _LayoutError(f"a comma of `{name}` is not where this edit looks for it")
        if not text[comma + 1 : start].strip(" \t"):
            start = comma  # `a, ITEM` on one line: `, ITEM`
        else:
            text = text[:comma] + text[comma + 1 :]
            start, end = start - 1, end - 1
    line = _line_start(text, start)
    rest = _line_end(text, end)
    tail = text[end:rest].strip()
    if not text[line:start].strip() and (not tail or tail.startswith("#")):
        # The item stood on a line of its own (`  ITEM,  # why`): the line goes.
        start, end = line, rest
    return text[:start] + text[end:]


def set_enabled(
    config_directory: Path, plugin_id: str, *, enabled: bool, microapp: bool = False
) -> EditResult:
    """Enable or disable ``plugin_id`` in the daemon's discovery configuration (a
    ``microapp``'s: ``extensions.yaml``), under the daemon's edit lock: only the list lines
    that change are rewritten (every other byte stays), and the result must read back as
    exactly the intended lists before it atomically replaces the file. Raises ``usage`` for
    an id the daemon would never discover, ``config`` for a file the daemon could not load
    (or laid out in a way this edit cannot rewrite safely, or, enabling a microapp, with the
    extension host turned off), ``io`` when it cannot be written.
    """
    check_id(plugin_id)
    if microapp:
        return _set_microapp_enabled(config_directory, plugin_id, enabled=enabled)
    path = config_directory / DISCOVERY_FILE
    load_daemon_config(config_directory)  # a file the daemon cannot load is not edited
    lock = _edit_lock(path) if path.parent.is_dir() else contextlib.nullcontext()
    with lock:
        document, text = _load(path)
        current = _state(document, path)
        disabled, allowlist = current.disabled, current.allowlist
        before = current.state(plugin_id)
        wanted: State = "enabled" if enabled else "disabled"
        if before == wanted:
            return EditResult(plugin_id, path, before, changed=False)
        allowlisted = enabled and bool(allowlist) and plugin_id not in allowlist
        if enabled:
            expected = replace(
                current,
                disabled=tuple(x for x in disabled if x != plugin_id),
                allowlist=(*allowlist, plugin_id) if allowlisted else allowlist,
            )
        else:
            expected = replace(current, disabled=(*disabled, plugin_id))
        new_text = _edited(text, path, plugin_id, enabled=enabled, allowlisted=allowlisted)
        try:
            edited = read_discovery(path, new_text.encode("utf-8"))
        except ConfigError as exc:
            raise ConfigError(f"{path}: cannot edit this layout safely; edit it by hand") from exc
        if _state(edited, path) != expected or _others(edited, "discovery") != _others(
            document, "discovery"
        ):
            raise ConfigError(f"{path}: cannot edit this layout safely; edit it by hand")
        _write(path, text, new_text)
    return EditResult(plugin_id, path, wanted, changed=True, allowlisted=allowlisted)


def _others(document: Any, top: str) -> Any:
    """``document`` (read as the daemon reads it) without the two lists of its ``top``
    mapping: what an edit of those lists must leave as it was (an alias or anchor could tie
    another key to the text the edit changes)."""
    if document is None:
        return {top: {}}
    if not isinstance(document, dict) or not isinstance(document.get(top) or {}, dict):
        return document
    section = {
        key: value
        for key, value in (document.get(top) or {}).items()
        if key not in ("disabled", "allowlist")
    }
    return {**document, top: section}


def _write(path: Path, text: str, new_text: str) -> None:
    try:
        make_dirs(path.parent)  # 0755 whatever the umask, as the policy's directory
        mode = path.stat().st_mode & 0o7777 if text else 0o644
    except OSError as exc:
        raise NexoError(f"cannot write {path}: {exc.strerror or exc}", kind="io") from exc
    write_config_file(path, new_text.encode("utf-8"), mode=mode)


# What lint reports on extensions.yaml that keeps the daemon from starting: an unknown key, a
# wrong type, YAML it cannot read, a refused `${file:...}`, a `${` that never closes.
_BOOT_FATAL = frozenset({"NX220", "NX221", "NX222", "NX224", "NX231"})


def _refuse_unloadable(path: Path, text: str) -> None:
    """:class:`ConfigError` when the daemon could not load ``extensions.yaml``'s ``text``
    (its loader stops the daemon's boot): such a file is not edited."""
    from nexo_pkg.lint.daemon_files import lint_config_text  # noqa: PLC0415

    found = lint_config_text(text, path=str(path), kind="extensions")
    fatal = next((item for item in found if item.code in _BOOT_FATAL), None)
    if fatal is not None:
        where = fatal.span.start
        raise ConfigError(
            f"{path}: the daemon cannot load it (line {where.line}: {fatal.message}); fix it "
            f"first (`nexo plugin lint {path}`)"
        )


def _microapp_lists(document: Any, path: Path) -> tuple[bool, tuple[str, ...], tuple[str, ...]]:
    """``extensions.enabled``, ``disabled`` and ``allowlist`` of ``document`` (read as the
    daemon reads it, nulls as the defaults); the defaults with no file (``None``)."""
    if document is None:
        return True, (), ()
    if not isinstance(document, dict):
        raise ConfigError(f"{path}: the top level must be a mapping with `extensions`")
    section = document.get("extensions")
    if section is not None and not isinstance(section, dict):
        raise ConfigError(f"{path}: `extensions` must be a mapping")
    switch = section.get("enabled", True) if section is not None else True
    if not isinstance(switch, bool):
        raise ConfigError(f"{path}: `extensions.enabled` must be true or false")
    return (
        switch,
        tuple(_string_list(section, "disabled", path, "extensions")),
        tuple(_string_list(section, "allowlist", path, "extensions")),
    )


def _set_microapp_enabled(config_directory: Path, plugin_id: str, *, enabled: bool) -> EditResult:
    """:func:`set_enabled` of a microapp: ``extensions.disabled`` (and ``extensions.allowlist``)
    of ``<config_directory>/extensions.yaml``, the lists the extension host applies
    (``crates/extensions/src/discovery.rs:329-360``), as the daemon's own ``agent ext
    enable/disable`` edits them (``crates/extensions/src/cli/commands.rs:144-180``). No file:
    every microapp loads, and ``disable`` creates it, as the daemon's command does. A file
    whose ``${...}`` names a variable unset here is refused: the lists the daemon reads from
    it are not known. ``enabled: false`` turns the whole extension host off, which ``enable``
    of one microapp does not undo (refused); ``disable`` still lists the id."""
    path = config_directory / EXTENSIONS_FILE
    lock = _edit_lock(path) if path.parent.is_dir() else contextlib.nullcontext()
    with lock:
        exists = path.exists()
        document, text = _load(path)
        if exists:
            _refuse_unloadable(path, text)
        switch, disabled, allowlist = _microapp_lists(document, path)
        if enabled and not switch:
            raise ConfigError(
                f"{path} sets `extensions.enabled: false`: the daemon's extension host is off "
                f"and loads no microapp, {plugin_id} included; set it to true by hand to turn "
                "every microapp on"
            )
        wanted: State = "enabled" if enabled else "disabled"
        if _listed_state(plugin_id, disabled, allowlist) == wanted:
            return EditResult(plugin_id, path, wanted, changed=False, microapp=True)
        allowlisted = enabled and bool(allowlist) and plugin_id not in allowlist
        if enabled:
            expected = (
                switch,
                tuple(x for x in disabled if x != plugin_id),
                (*allowlist, plugin_id) if allowlisted else allowlist,
            )
        else:
            expected = (switch, (*disabled, plugin_id), allowlist)
        new_text = _edited(
            text, path, plugin_id, enabled=enabled, allowlisted=allowlisted, top="extensions"
        )
        unsafe = ConfigError(f"{path}: cannot edit this layout safely; edit it by hand")
        try:
            edited = read_discovery(path, new_text.encode("utf-8"))
            _refuse_unloadable(path, new_text)
        except ConfigError as exc:
            raise unsafe from exc
        if _microapp_lists(edited, path) != expected or _others(edited, "extensions") != _others(
            document, "extensions"
        ):
            raise unsafe
        _write(path, text, new_text)
    return EditResult(plugin_id, path, wanted, changed=True, allowlisted=allowlisted, microapp=True)


def _nodes(path: Path, text: str) -> Any:
    """The node tree of ``text`` as written, for the positions of what the edit changes. The
    daemon substitutes every ``${...}`` in the raw text before it parses it (a placeholder
    in a flow list is no YAML as written): each is read here as a plain word of its own
    length, so positions are those of ``text``, whose placeholders stay as they are (the
    edited file is read back substituted, as the daemon reads it, and must hold exactly the
    intended lists)."""
    masked = list(text)
    for start, end, _ in find_placeholders(text):
        masked[start:end] = "x" * (end - start)
    return parse_yaml_text(path, "".join(masked), nodes=True)


def _edited(
    text: str,
    path: Path,
    plugin_id: str,
    *,
    enabled: bool,
    allowlisted: bool,
    top: str = "discovery",
) -> str:
    """The new text of the file (see :func:`set_enabled`), whose lists are under ``top``."""
    eol = _newline(text)
    if not text.strip():
        return f"{text}{top}:{eol}  disabled: [{_plain(plugin_id)}]{eol}"
    root = _nodes(path, text)
    found = _mapping_item(root, top)
    if found is None:
        separator = "" if _ends_line(text) else eol
        return f"{text}{separator}{top}:{eol}  disabled: [{_plain(plugin_id)}]{eol}"
    if getattr(found[1], "tag", "").endswith(":null"):
        # `discovery:` or `discovery: ~`, which the daemon reads as every default: the null
        # becomes the one-key mapping (only `disable` gets here; enabled is the default).
        key_node, value = found
        if key_node.start_mark.column != 0:
            raise ConfigError(f"{path}: `{top}` is empty; edit it by hand")
        colon = text.index(":", key_node.end_mark.index)
        end = max(value.end_mark.index, colon + 1)
        return f"{text[: colon + 1]}{eol}  disabled: [{_plain(plugin_id)}]{text[end:]}"
    section = found[1]
    try:
        if not enabled:
            return _append(text, section, "disabled", plugin_id, top)
        text = _remove(text, path, "disabled", plugin_id, top)
        if allowlisted:
            section = _mapping_item(_nodes(path, text), top)
            assert section is not None  # noqa: S101 (it was there before the removal)
            text = _append(text, section[1], "allowlist", plugin_id, top)
    except _LayoutError as exc:
        raise ConfigError(f"{path}: {exc}; edit it by hand") from exc
    return text
