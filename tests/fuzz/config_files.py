"""Generators of the daemon's ``plugins/discovery.yaml`` and ``extensions.yaml`` as people and
tools write them, for the property tests of ``nexo plugin enable|disable``.

Every file is built from pieces whose meaning the generator knows: comments carry a unique
marker (``# c7``; on a list item, ``# disabled-hello-7``) so a test can tell which ones an edit
may drop (those on the line of an item it removes) from those it must keep; the lists come
block, flow, flow over several lines, empty or null; items plain, quoted, escaped, anchored or
aliased; lines end LF, CRLF or a lone CR, with or without a BOM, trailing blanks and a final
newline. ``hostile`` says whether the file holds something an edit may refuse cleanly instead of
rewriting (an alias or anchor in a list, a tab, a placeholder standing for a list item).
"""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import strategies as st

# Ids the edits target: valid plugin ids, some of which YAML 1.1 reads as something else.
TARGETS = ("hello", "other", "yes", "null", "on", "tool_2")
# What lists hold besides: duplicate-looking spellings, unicode, ids no plugin can have.
LISTED = (*TARGETS, "hello_", "hello2", "tést", "héllo", "a", "Hello", "hello ", "日本")

_LIST_KEYS = ("disabled", "allowlist")


@dataclass(frozen=True)
class ConfigFile:
    text: str
    top: str  # "discovery" or "extensions"
    hostile: bool
    #: The marker of each comment standing on a list item's line: ``(list key, item)``.
    item_comments: dict[str, tuple[str, str]]


def _scalar(draw: st.DrawFn, value: str, *, quote_only: bool = False) -> str:
    """``value`` as a YAML scalar that every reader takes for the string ``value``."""
    needs_quotes = value in {"null", "on", "yes", "Hello"} or value != value.strip()
    styles = ["double", "single", "escaped"]
    if not needs_quotes and not quote_only:
        styles.append("plain")
    style = draw(st.sampled_from(styles))
    if style == "plain":
        return value
    if style == "single":
        return f"'{value}'"
    if style == "escaped" and value and value[0].isascii():
        return f'"\\x{ord(value[0]):02x}{value[1:]}"'
    return f'"{value}"'


class _Builder:
    def __init__(self, draw: st.DrawFn, eol: str) -> None:
        self.draw = draw
        self.eol = eol
        self.count = 0
        self.anchors: list[str] = []
        self.hostile = False
        self.item_comments: dict[str, tuple[str, str]] = {}

    def comment(self, item: tuple[str, str] | None = None) -> str:
        self.count += 1
        if item is None:
            return f"# c{self.count}"
        self.item_comments[f"# i{self.count}"] = item
        return f"# i{self.count}"

    def maybe_comment(self, item: tuple[str, str] | None = None) -> str:
        if not self.draw(st.booleans()):
            return ""
        gap = self.draw(st.sampled_from([" ", "  ", "   ", " ", "  ", "   ", "\t"]))
        if gap == "\t":
            self.hostile = True
        return f"{gap}{self.comment(item)}"

    def trailing(self) -> str:
        return self.draw(st.sampled_from(["", "", "", " ", "  "]))

    def item(self, key: str, value: str, *, in_flow: bool) -> str:
        draw = self.draw
        choice = draw(st.sampled_from(["text", "text", "text", "anchor", "alias", "placeholder"]))
        if choice == "alias" and self.anchors:
            self.hostile = True
            return f"*{draw(st.sampled_from(self.anchors))}"
        if choice == "placeholder" and value.isascii() and value == value.strip() and value:
            self.hostile = True  # the edit sees `${...}`, the daemon the id
            return f"${{NEXO_FUZZ_UNSET_{self.count}:-{value}}}"
        text = _scalar(draw, value, quote_only=in_flow and not value.isascii())
        if choice == "anchor":
            self.hostile = True
            name = f"a{len(self.anchors)}"
            self.anchors.append(name)
            return f"&{name} {text}"
        return text

    def string_list(self, key: str, values: list[str], indent: str, step: str) -> list[str]:
        """The lines of ``key: <list>`` at ``indent``."""
        draw = self.draw
        style = draw(st.sampled_from(["block", "block", "flow", "multi", "null"]))
        if style == "null" and not values:
            null = draw(st.sampled_from(["", " ~", " null", " []"]))
            return [f"{indent}{key}:{null}{self.maybe_comment()}"]
        if style == "null" or (style == "block" and not values):
            style = "flow"
        if style == "flow":
            inner_gap = draw(st.sampled_from(["", " "]))
            sep = draw(st.sampled_from([", ", ",", " , "]))
            items = sep.join(self.item(key, v, in_flow=True) for v in values)
            comma = "," if bool(values) and draw(st.booleans()) else ""
            return [
                f"{indent}{key}: [{inner_gap}{items}{comma}{inner_gap}]{self.trailing()}"
                f"{self.maybe_comment()}"
            ]
        if style == "multi":
            lines = [f"{indent}{key}: [{self.maybe_comment()}"]
            for index, value in enumerate(values):
                last = index == len(values) - 1
                comma = "" if last and draw(st.booleans()) else ","
                lines.append(
                    f"{indent}{step}{self.item(key, value, in_flow=True)}{comma}"
                    f"{self.maybe_comment((key, value))}"
                )
            lines.append(f"{indent}]{self.trailing()}")
            return lines
        lines = [f"{indent}{key}:{self.maybe_comment()}"]
        dash_indent = indent + draw(st.sampled_from([step, ""]))
        for value in values:
            if draw(st.integers(0, 4)) == 0:
                lines.append(f"{dash_indent}{self.comment()}")
            if draw(st.integers(0, 6)) == 0:
                lines.append("")
            lines.append(
                f"{dash_indent}- {self.item(key, value, in_flow=False)}{self.trailing()}"
                f"{self.maybe_comment((key, value))}"
            )
        return lines


@st.composite
def config_files(draw: st.DrawFn, top: str) -> ConfigFile:
    """A ``discovery.yaml`` (``top="discovery"``) or ``extensions.yaml`` the daemon loads."""
    eol = draw(st.sampled_from(["\n", "\n", "\r\n", "\r"]))
    build = _Builder(draw, eol)
    step = draw(st.sampled_from(["  ", "    ", " "]))
    lines: list[str] = [build.comment() for _ in range(draw(st.integers(0, 2)))]
    if draw(st.integers(0, 4)) == 0:
        lines.append("---")
    if draw(st.integers(0, 5)) == 0:
        lines.append(f"schema_version: 1{build.maybe_comment()}")
    section_lines: list[str] = []
    keys = ["search_paths", *_LIST_KEYS]
    keys += ["follow_symlinks"] if top == "discovery" else ["ignore_dirs", "max_depth", "enabled"]
    chosen = draw(st.lists(st.sampled_from(keys), unique=True, max_size=len(keys)))
    for key in chosen:
        if draw(st.integers(0, 3)) == 0:
            section_lines.append(f"{step}{build.comment()}")
        if key in _LIST_KEYS:
            values = draw(st.lists(st.sampled_from(LISTED), max_size=4))
            section_lines += build.string_list(key, values, step, step)
        elif key == "search_paths":
            paths = draw(
                st.lists(
                    st.sampled_from(
                        [
                            "/srv/nexo/plugins",
                            "${NEXO_FUZZ_ROOT:-/srv/nexo/more}",
                            "./plugins",
                            "/opt/x y",
                        ]
                    ),
                    max_size=3,
                )
            )
            section_lines += build.string_list(key, paths, step, step)
        elif key == "ignore_dirs":
            section_lines += build.string_list(key, ["node_modules", ".git"], step, step)
        elif key == "max_depth":
            section_lines.append(f"{step}max_depth: {draw(st.integers(0, 9))}{build.trailing()}")
        elif key == "enabled":
            switch = draw(st.sampled_from(["true", "true", "true", "false"]))
            section_lines.append(f"{step}enabled: {switch}")
        else:
            section_lines.append(f"{step}{key}: {draw(st.sampled_from(['true', 'false']))}")
    if not section_lines:
        lines.append(f"{top}:{draw(st.sampled_from(['', ' ~', ' {}']))}{build.maybe_comment()}")
    else:
        lines.append(f"{top}:{build.maybe_comment()}")
        lines += section_lines
    lines += [build.comment() for _ in range(draw(st.integers(0, 2)))]
    if draw(st.integers(0, 6)) == 0:
        lines.append("...")
    text = build.eol.join(lines)
    if draw(st.integers(0, 4)) != 0:
        text += build.eol
    if draw(st.integers(0, 5)) == 0:
        text = "\ufeff" + text
    return ConfigFile(text, top, build.hostile, build.item_comments)
