"""Properties of ``nexo plugin enable|disable``: on any ``discovery.yaml`` or
``extensions.yaml`` (comments everywhere, block/flow/null lists, quoted, escaped, anchored and
aliased items, LF/CRLF/lone-CR lines, a BOM, no final newline, ``${VAR}`` placeholders), the
edit either

* changes exactly the intended list: the daemon's reading of the file (as lint and ``list``
  read it) is the old one with the id added to or taken out of ``disabled`` (and, enabling
  under an allowlist, added to ``allowlist``), every other key unchanged; what it inserts
  and deletes is list syntax and the id only (nothing else the file holds, not an anchor,
  a quote or a ``---``); every comment survives but those on the line
  of an item it removes; the line endings stay the file's; or
* refuses as ``config`` (exit 2) with the file byte for byte as it was and nothing left
  beside it; a file the daemon loads and that holds nothing hostile is never refused;

and never raises anything else.
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nexo_pkg.core.errors import ConfigError
from nexo_pkg.install.config import load_daemon_config, read_discovery
from nexo_pkg.install.discovery_edit import discovery_state, set_enabled
from nexo_pkg.lint.daemon_files import extensions_as_read, extensions_lists, lint_config_text

from .config_files import TARGETS, ConfigFile, config_files
from .strategies import attempt

# Lint's findings that stop the daemon's boot on extensions.yaml (unknown key, wrong type,
# not YAML, a refused `${file:...}`, an unclosed `${`).
BOOT_FATAL = {"NX220", "NX221", "NX222", "NX224", "NX231"}
_MARKER = re.compile(r"# [ci]\d+\b")
_BREAK = re.compile(r"\r\n|\r|\n")
# What an edit may write or delete besides the id's own spelling.
_SYNTAX = set(" \t\r\n,[]-:{}")


def _path(directory: Path, top: str) -> Path:
    if top == "discovery":
        return directory / "plugins" / "discovery.yaml"
    return directory / "extensions.yaml"


def _reading(directory: Path, top: str) -> tuple[Any, bool, tuple[str, ...], tuple[str, ...]]:
    """``(rest, enabled, disabled, allowlist)`` as nexo-pkg models the daemon's reading;
    ``rest`` is the whole document without the two lists.
    Raises :class:`ConfigError` when the daemon could not load the file."""
    path = _path(directory, top)
    raw = path.read_bytes()
    if top == "discovery":
        load_daemon_config(directory)
        document = read_discovery(path, raw)
        state = discovery_state(directory)
        switch, disabled, allowlist = True, state.disabled, state.allowlist
    else:
        text = raw.decode("utf-8")
        fatal = lint_config_text(text, path=str(path), kind="extensions")
        if any(d.code in BOOT_FATAL for d in fatal):
            raise ConfigError("the daemon cannot load it")
        document = extensions_as_read(text).data
        switch, disabled, allowlist = extensions_lists(text)
    rest = dict(document) if isinstance(document, dict) else {}
    section = dict(rest.get(top) or {})
    for key in ("disabled", "allowlist"):
        section.pop(key, None)  # compared as read, below
    rest[top] = section
    return rest, switch, disabled, allowlist


def _names(directory: Path) -> list[str]:
    return sorted(child.name for child in directory.iterdir())


def _state(target: str, disabled: tuple[str, ...], allowlist: tuple[str, ...]) -> str:
    if target in disabled:
        return "disabled"
    if allowlist and target not in allowlist:
        return "not-allowlisted"
    return "enabled"


def _spellings(target: str) -> re.Pattern[str]:
    """Every way the generator writes ``target`` as a list item."""
    escaped = re.escape(target)
    first = f"\\\\x{ord(target[0]):02x}{re.escape(target[1:])}"
    return re.compile(
        rf"(&a\d+ )?(\"{escaped}\"|'{escaped}'|\"{first}\"|"
        rf"\$\{{NEXO_FUZZ_UNSET_\d+:-{escaped}\}}|\*a\d+|{escaped})"
    )


def check_edit(config: ConfigFile, target: str, *, enabled: bool) -> None:
    raw = config.text.encode("utf-8")
    microapp = config.top == "extensions"
    with tempfile.TemporaryDirectory(prefix="nexo-edit-") as tmp:
        directory = Path(tmp)
        (directory / "plugins").mkdir()
        path = _path(directory, config.top)
        path.write_bytes(raw)
        listing = _names(path.parent)
        try:
            before = _reading(directory, config.top)
        except ConfigError:
            before = None
        result, error = attempt(
            lambda: set_enabled(directory, target, enabled=enabled, microapp=microapp)
        )
        if error is not None:
            assert (error.kind, error.exit_code) == ("config", 2), error
            assert path.read_bytes() == raw
            assert _names(path.parent) == listing
            refused_switch = before is not None and microapp and enabled and not before[1]
            assert before is None or config.hostile or refused_switch, error.message
            return
        assert result is not None
        assert before is not None, "a file the daemon cannot load was edited"
        rest, switch, disabled, allowlist = before
        assert not (microapp and enabled and not switch)
        wanted = "enabled" if enabled else "disabled"
        new = path.read_bytes().decode("utf-8")
        if _state(target, disabled, allowlist) == wanted:
            assert not result.changed
            assert new == config.text
            return
        assert result.changed
        if enabled:
            expected_disabled = tuple(x for x in disabled if x != target)
            add = bool(allowlist) and target not in allowlist
            expected_allowlist = (*allowlist, target) if add else allowlist
        else:
            expected_disabled, expected_allowlist = (*disabled, target), allowlist
        assert _reading(directory, config.top) == (
            rest,
            switch,
            expected_disabled,
            expected_allowlist,
        )
        assert _names(path.parent) == sorted({*listing, path.name})
    # Comments: all kept, in order, but those on the line of an item taken out.
    droppable = {
        marker
        for marker, (key, value) in config.item_comments.items()
        if enabled and key == "disabled" and value == target
    }
    old_markers = _MARKER.findall(config.text)
    new_markers = _MARKER.findall(new)
    assert set(old_markers) - set(new_markers) <= droppable
    assert new_markers == [m for m in old_markers if m in new_markers]
    # Line endings: a file that ends its lines one way keeps doing so.
    old_breaks = set(_BREAK.findall(config.text))
    if len(old_breaks) == 1:
        assert set(_BREAK.findall(new)) == old_breaks
    # Bytes: what changed is list syntax and the id only (a BOM stays): the two texts are the
    # same once the id's spellings, the comments that may go, the list keys and list syntax
    # (blanks, line breaks, `[],:-{}`) are taken out of both.
    assert new.startswith("\ufeff") == config.text.startswith("\ufeff")
    assert _skeleton(config.text, target, droppable) == _skeleton(new, target, droppable)


def _skeleton(text: str, target: str, dropped: set[str]) -> str:
    for marker in dropped:
        text = text.replace(marker, "")
    text = _spellings(target).sub("", text)
    for word in ("disabled", "allowlist", "~", "null"):
        text = text.replace(word, "")
    return "".join(char for char in text if char not in _SYNTAX)


_targets = st.sampled_from(TARGETS)


@given(config_files("discovery"), _targets, st.booleans())
def test_enable_disable_edit_only_the_plugin_lists(
    config: ConfigFile, target: str, enabled: bool
) -> None:
    check_edit(config, target, enabled=enabled)


@given(config_files("extensions"), _targets, st.booleans())
def test_enable_disable_edit_only_the_microapp_lists(
    config: ConfigFile, target: str, enabled: bool
) -> None:
    check_edit(config, target, enabled=enabled)


@pytest.mark.slow
@settings(max_examples=5_000)
@given(config_files("discovery") | config_files("extensions"), _targets, st.booleans())
def test_enable_disable_edit_only_the_lists_at_scale(
    config: ConfigFile, target: str, enabled: bool
) -> None:
    check_edit(config, target, enabled=enabled)
