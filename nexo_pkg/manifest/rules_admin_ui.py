"""Rules on ``[plugin.admin_ui]``: every reason the daemon's ``AdminUiInvalid`` can give.

Order follows the daemon: schema_version, mode, each screen (id, title, load, fields,
actions, refresh), then each contribution (id, label, parent or slot, icon, screen,
visible_when). Each reason is its own diagnostic, pointed at the offending value.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from nexo_pkg.manifest.rules_context import Context, KeyPath, as_int, as_str, as_table, tables
from nexo_pkg.manifest.rules_visible_when import VisibleWhenError, check_visible_when
from nexo_pkg.manifest.rust_text import is_blank

__all__ = ["LUCIDE_SUBSET", "check"]

KEBAB_ID = re.compile(r"^[a-z][a-z0-9-]{0,40}$")
FIELD_KEY = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
ADMIN_METHOD_PREFIX = "nexo/admin/"
MAX_PARENT_HOPS = 5

CORE_SLOTS = (
    "core.sidebar.root",
    "core.sidebar.channels",
    "core.sidebar.integrations",
    "core.sidebar.settings",
    "core.agent_detail.tabs",
    "core.command_palette.actions",
)

LUCIDE_SUBSET = frozenset(
    (
        *("settings", "mail", "calendar", "key", "lock", "shield", "globe", "link"),
        *("database", "cloud", "bell", "user", "users", "message-circle", "message-square"),
        *("send", "phone", "bot", "cpu", "server", "plug", "puzzle", "sliders", "wrench"),
        *("tool", "activity", "bar-chart", "pie-chart", "list", "grid", "folder", "file"),
        *("search", "filter", "refresh-cw", "download", "upload", "check", "x"),
        *("alert-triangle", "info", "eye", "eye-off", "play", "pause", "trash", "plus"),
        *("edit", "external-link", "zap", "terminal", "webhook", "map-pin", "clock", "tag"),
        *("star", "home", "layout"),
    )
)

_BASE: KeyPath = ("plugin", "admin_ui")


def label_is_empty(value: Any) -> bool | None:
    """Whether an I18nLabel is empty; None when ``value`` is neither a string nor a table."""
    if isinstance(value, str):
        return is_blank(value)
    table = as_table(value)
    if table is None:
        return None
    texts = [text for text in table.values() if isinstance(text, str)]
    if len(texts) != len(table):
        return None  # a non-string value is a type error for the schema
    return all(is_blank(text) for text in texts)


def _kebab_fix(text: str) -> str:
    fixed = re.sub(r"[^a-z0-9-]+", "-", text.lower()).strip("-")
    if fixed and not fixed[0].isalpha():
        fixed = f"x-{fixed}"
    return fixed[:41].rstrip("-") or "main"


def _identified(
    context: Context, items: Any, base: KeyPath, kind: str, *, screen: str | None = None
) -> Iterator[tuple[KeyPath, Mapping[str, Any], str]]:
    """``(path, table, its name in messages)`` of every table of the array ``items`` at
    ``base``: the screens, the contributions, or the actions of ``screen`` (its name). Each
    ``id`` is checked first: NX162 when it is not kebab-case, else NX163 when an earlier
    entry has it."""
    what = f"{screen} {kind}" if screen is not None else kind
    seen: set[str] = set()
    for index, entry in tables(items):
        path: KeyPath = (*base, index)
        entry_id = as_str(entry.get("id"))
        if entry_id is None:
            yield path, entry, f"{what} #{index + 1}"
            continue
        if not KEBAB_ID.fullmatch(entry_id):
            context.add(
                "NX162",
                (*path, "id"),
                f"{what} id `{entry_id}` in table [plugin.admin_ui] must be kebab-case "
                "(a-z, 0-9, -; a letter first; 1-41 characters)",
                f'write `id = "{_kebab_fix(entry_id)}"`',
            )
        elif entry_id in seen and screen is not None:
            context.add(
                "NX163",
                (*path, "id"),
                f"{screen} has duplicate {kind} id `{entry_id}`",
                f"give each {kind} of the screen its own id",
            )
        elif entry_id in seen:
            context.add(
                "NX163",
                (*path, "id"),
                f"duplicate {kind} id `{entry_id}` in table [plugin.admin_ui]",
                f"give each {kind} its own id",
            )
        seen.add(entry_id)
        yield path, entry, f"{what} `{entry_id}`"


def _check_label(
    context: Context, owner: Mapping[str, Any], key: str, path: KeyPath, what: str
) -> None:
    if key in owner and label_is_empty(owner[key]):
        context.add(
            "NX164",
            (*path, key),
            f"{what}: key `{key}` is empty",
            f"write a non-blank `{key}` (a string or a table of locale -> text)",
        )


def _check_method(context: Context, value: Any, path: KeyPath, what: str) -> None:
    method = as_str(value)
    if method is not None and not method.startswith(ADMIN_METHOD_PREFIX):
        suggestion = ADMIN_METHOD_PREFIX + method.lstrip("/")
        context.add(
            "NX165",
            path,
            f"{what}: method `{method}` must start with `{ADMIN_METHOD_PREFIX}`",
            f'write `"{suggestion}"`',
        )


def _check_visible_when(
    context: Context, owner: Mapping[str, Any], path: KeyPath, what: str
) -> None:
    expression = as_str(owner.get("visible_when"))
    if expression is None:
        return
    try:
        check_visible_when(expression)
    except VisibleWhenError as exc:
        context.add(
            "NX169",
            (*path, "visible_when"),
            f"{what}: key `visible_when` is invalid: {exc}",
            "use variables, literals, `== != < > <= >=`, `!`, `&&`, `||` and parentheses, "
            "at most 200 bytes and 5 levels deep",
        )


def _check_field(context: Context, field: Mapping[str, Any], path: KeyPath, owner: str) -> None:
    key = as_str(field.get("key"))
    what = f"{owner} field `{key}`" if key is not None else f"{owner} field #{path[-1]}"
    if key is not None and not FIELD_KEY.fullmatch(key):
        fixed = re.sub(r"[^A-Za-z0-9_.-]+", "_", key).strip("_.-")[:64] or "field"
        context.add(
            "NX167",
            (*path, "key"),
            f"{what}: key `{key}` is invalid (1-64 characters of A-Z, a-z, 0-9, `_`, `.`, `-`, "
            "starting with a letter or digit)",
            f'write `key = "{fixed}"`',
        )
    _check_label(context, field, "label", path, what)
    if field.get("type") in ("select", "multiselect") and not (
        "options" in field or "options_source" in field
    ):
        context.add(
            "NX168",
            (*path, "type"),
            f"{what}: type `{field['type']}` needs `options` or `options_source`",
            'add `options = [{ value = "...", label = "..." }]` or an `options_source`',
        )
    source = as_table(field.get("options_source"))
    if source is not None and source.get("kind") == "rpc":
        _check_method(
            context,
            source.get("method"),
            (*path, "options_source", "method"),
            f"{what} options_source",
        )
    _check_visible_when(context, field, path, what)


def _check_screens(context: Context, admin_ui: Mapping[str, Any]) -> None:
    describe = admin_ui.get("describe") is True
    screens = admin_ui.get("screens")
    for path, screen, what in _identified(context, screens, (*_BASE, "screens"), "screen"):
        _check_label(context, screen, "title", path, what)
        _check_method(context, screen.get("load"), (*path, "load"), f"{what} load")
        fields = screen.get("fields")
        if not describe and (fields is None or fields == []):
            context.add(
                "NX166",
                (*path, "fields") if fields is not None else path,
                f"{what} declares no fields while [plugin.admin_ui] has `describe = false`",
                "add `[[plugin.admin_ui.screens.fields]]`, or set `describe = true`",
                part="key",
            )
        keys: set[str] = set()
        for field_index, field in tables(fields):
            field_path: KeyPath = (*path, "fields", field_index)
            _check_field(context, field, field_path, what)
            key = as_str(field.get("key"))
            if key is None:
                continue
            if key in keys:
                context.add(
                    "NX163",
                    (*field_path, "key"),
                    f"{what} has duplicate field key `{key}`",
                    "give each field of the screen its own key",
                )
            keys.add(key)
        actions = screen.get("actions")
        for action_path, action, action_what in _identified(
            context, actions, (*path, "actions"), "action", screen=what
        ):
            _check_label(context, action, "label", action_path, action_what)
            _check_method(context, action.get("method"), (*action_path, "method"), action_what)
            for prompt_index, prompt in tables(action.get("prompt_fields")):
                _check_field(
                    context,
                    prompt,
                    (*action_path, "prompt_fields", prompt_index),
                    f"{action_what} prompt",
                )
        refresh = as_table(screen.get("refresh"))
        if refresh is not None:
            _check_method(
                context, refresh.get("method"), (*path, "refresh", "method"), f"{what} refresh"
            )


def _check_contributions(context: Context, admin_ui: Mapping[str, Any]) -> None:
    screen_ids = {
        screen_id
        for _, screen in tables(admin_ui.get("screens"))
        if (screen_id := as_str(screen.get("id"))) is not None
    }
    contributions = admin_ui.get("contributions")
    parents: dict[str, str | None] = {}
    for _, entry in tables(contributions):
        entry_id = as_str(entry.get("id"))
        if entry_id is not None and entry_id not in parents:
            parents[entry_id] = as_str(entry.get("parent"))
    plugin_slot = f"plugin.{context.plugin_id}." if context.plugin_id else None
    for path, entry, what in _identified(
        context, contributions, (*_BASE, "contributions"), "contribution"
    ):
        entry_id = as_str(entry.get("id"))
        _check_label(context, entry, "label", path, what)
        parent = as_str(entry.get("parent"))
        if parent is not None:
            _check_parent(context, path, what, entry_id=entry_id, parent=parent, parents=parents)
        elif "parent" not in entry:
            slot = as_str(entry.get("slot"))
            if "slot" not in entry:
                context.add(
                    "NX172",
                    path,
                    f"{what} needs a `slot` (top-level menu) or a `parent` (submenu)",
                    'add `slot = "core.sidebar.integrations"` or `parent = "<contribution id>"`',
                    part="key",
                )
            elif (
                slot is not None
                and slot not in CORE_SLOTS
                and not (
                    plugin_slot is not None
                    and slot.startswith(plugin_slot)
                    and KEBAB_ID.fullmatch(slot[len(plugin_slot) :])
                )
            ):
                own = f"`{plugin_slot}<kebab-id>`" if plugin_slot else "`plugin.<id>.<kebab-id>`"
                context.add(
                    "NX171",
                    (*path, "slot"),
                    f"{what} slot `{slot}` is unknown; use a core slot or {own}",
                    "use one of " + ", ".join(f"`{name}`" for name in CORE_SLOTS),
                )
        icon = as_str(entry.get("icon"))
        if icon is not None and icon not in LUCIDE_SUBSET:
            context.add(
                "NX173",
                (*path, "icon"),
                f"{what} icon `{icon}` is not in the supported Lucide subset",
                "pick a supported icon such as `settings`, `cloud`, `plug` or `bot`",
            )
        screen = as_str(entry.get("screen"))
        if screen is not None and screen not in screen_ids:
            known = ", ".join(f"`{name}`" for name in sorted(screen_ids)) or "none"
            context.add(
                "NX174",
                (*path, "screen"),
                f"{what} references unknown screen `{screen}`",
                f"use the id of a [[plugin.admin_ui.screens]] (defined: {known})",
            )
        _check_visible_when(context, entry, path, what)


def _check_parent(
    context: Context,
    path: KeyPath,
    what: str,
    *,
    entry_id: str | None,
    parent: str,
    parents: Mapping[str, str | None],
) -> None:
    parent_path: KeyPath = (*path, "parent")
    if parent == entry_id:
        context.add(
            "NX170",
            parent_path,
            f"{what} cannot be its own parent",
            "point `parent` at another contribution, or use `slot`",
        )
        return
    if parent not in parents:
        known = ", ".join(f"`{name}`" for name in parents if name != entry_id) or "none"
        context.add(
            "NX170",
            parent_path,
            f"{what} parent `{parent}` does not exist",
            f"use the id of another contribution (defined: {known})",
        )
        return
    visited = {entry_id} if entry_id is not None else set()
    current = parent
    hops = 1
    while True:
        if current in visited:
            problem = f"{what} parent chain cycles at `{current}`"
            break
        visited.add(current)
        upper = parents.get(current)
        if upper is None or upper not in parents:
            return
        hops += 1
        if hops > MAX_PARENT_HOPS:
            problem = f"{what} parent chain nests deeper than {MAX_PARENT_HOPS} levels at `{upper}`"
            break
        current = upper
    context.add(
        "NX170",
        parent_path,
        problem,
        "break the cycle or flatten the menu so no entry is more than 5 levels deep",
    )


def check(context: Context) -> None:
    """Check ``[plugin.admin_ui]`` if present."""
    admin_ui = as_table(context.plugin.get("admin_ui"))
    if admin_ui is None:
        return
    version = as_int(admin_ui.get("schema_version"))
    if version is not None and version != 1:
        context.add(
            "NX160",
            (*_BASE, "schema_version"),
            f"key `schema_version` in table [plugin.admin_ui] is {version}; only 1 is supported",
            "set `schema_version = 1`",
        )
    if admin_ui.get("mode") == "embedded":
        context.add(
            "NX161",
            (*_BASE, "mode"),
            'key `mode` in table [plugin.admin_ui] is "embedded", which is not supported yet',
            'use `mode = "declarative"`',
        )
    _check_screens(context, admin_ui)
    _check_contributions(context, admin_ui)
