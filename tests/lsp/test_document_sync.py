"""What the server lints is what the editor shows: ranged ``didChange`` events applied where
they say (in UTF-16 code units, with astral characters, CRLF and lone CR line ends, ranges past
the end), and a document text read as ``nexo plugin lint`` reads the file (a byte-order mark,
NUL bytes)."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types

from nexo_pkg.lint.engine import lint_file

from .client import LspSession
from .conftest import SharedServer

MANIFEST = """\
[plugin]
id = "weather"
version = "0.1.0"
name = "Weather"
description = "Forecasts."
min_nexo_version = ">=0.1.0"

[plugin.extends]
tools = ["😀", "weather_ok"]
"""
TOOLS_LINE = 8


def _codes_and_ranges(
    published: types.PublishDiagnosticsParams,
) -> list[tuple[str, tuple[int, int], tuple[int, int]]]:
    return [
        (
            str(item.code),
            (item.range.start.line, item.range.start.character),
            (item.range.end.line, item.range.end.character),
        )
        for item in published.diagnostics
    ]


def _utf16(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def _as_the_command_reports(
    path: Path, text: str
) -> list[tuple[str, tuple[int, int], tuple[int, int]]]:
    """``nexo plugin lint``'s findings for ``text`` written to ``path``, as LSP ranges."""
    path.write_bytes(text.encode("utf-8"))
    lines = text.split("\n")
    found = []
    for item in lint_file(path).diagnostics:
        start, end = item.span.start, item.span.end
        found.append(
            (
                item.code,
                (start.line - 1, _utf16(lines[start.line - 1][: start.column - 1])),
                (end.line - 1, _utf16(lines[end.line - 1][: end.column - 1])),
            )
        )
    return found


def test_ranged_changes_apply_in_utf16_units(shared_server: SharedServer, tmp_path: Path) -> None:
    async def scenario(session: LspSession) -> None:
        uri = session.open(tmp_path / "nexo-plugin.toml", MANIFEST)
        await session.diagnostics(uri, version=1)
        # Replace the emoji (two UTF-16 units, after `tools = ["`) by a well-named tool.
        column = len('tools = ["')
        version = session.edit(
            uri, [((TOOLS_LINE, column), (TOOLS_LINE, column + 2), "weather_now")]
        )
        published = await session.diagnostics(uri, version=version)
        assert list(published.diagnostics) == []
        # A range that ends inside the emoji's surrogate pair rounds down (LSP): the edit
        # inserts before the emoji and keeps it.
        session.edit(uri, [((TOOLS_LINE, column), (TOOLS_LINE, column + 11), "😀")])
        version = session.edit(uri, [((TOOLS_LINE, column), (TOOLS_LINE, column + 1), "x")])
        published = await session.diagnostics(uri, version=version)
        expected = MANIFEST.replace('["😀"', '["x😀"')
        assert _codes_and_ranges(published) == _as_the_command_reports(
            tmp_path / "expected.toml", expected
        )
        assert {str(item.code) for item in published.diagnostics} >= {"NX113"}

    shared_server.run(scenario)


def test_ranged_changes_past_the_end_and_in_sequence(
    shared_server: SharedServer, tmp_path: Path
) -> None:
    async def scenario(session: LspSession) -> None:
        uri = session.open(tmp_path / "nexo-plugin.toml", MANIFEST.replace("\n", "\r\n"))
        await session.diagnostics(uri, version=1)
        version = session.edit(
            uri,
            [
                # Past the end of the document: appended.
                ((400, 3), (900, 7), '\r\n[plugin.sandbox]\r\nnetwork = "internet"\r\n'),
                # Then, in the text the first change made, past the end of line 8: the end of
                # that line, before its CRLF.
                ((TOOLS_LINE, 9), (TOOLS_LINE, 999), '"weather_sun"]'),
            ],
        )
        published = await session.diagnostics(uri, version=version)
        expected = (
            MANIFEST.replace('["😀", "weather_ok"]', '["weather_sun"]')
            + '\n[plugin.sandbox]\nnetwork = "internet"\n'
        ).replace("\n", "\r\n")
        assert _codes_and_ranges(published) == _as_the_command_reports(
            tmp_path / "expected.toml", expected
        )
        assert [str(item.code) for item in published.diagnostics] != []

    shared_server.run(scenario)


def test_a_lone_carriage_return_is_a_line_break_for_ranges(
    shared_server: SharedServer, tmp_path: Path
) -> None:
    async def scenario(session: LspSession) -> None:
        # The client counts the lone CR in the comment as a line break (LSP): line 1 is `# a`
        # and line 2 is `b`, so the edit removes the CR and the `b`.
        text = MANIFEST.replace("[plugin]\n", "[plugin]\n# a\rb\n", 1)
        uri = session.open(tmp_path / "nexo-plugin.toml", text)
        await session.diagnostics(uri, version=1)
        version = session.edit(uri, [((1, 3), (2, 1), "")])
        published = await session.diagnostics(uri, version=version)
        expected = MANIFEST.replace("[plugin]\n", "[plugin]\n# a\n", 1)
        assert _codes_and_ranges(published) == _as_the_command_reports(
            tmp_path / "expected.toml", expected
        )

    shared_server.run(scenario)


def test_a_byte_order_mark_is_read_as_the_command_reads_it(
    shared_server: SharedServer, tmp_path: Path
) -> None:
    async def scenario(session: LspSession) -> None:
        text = "\ufeff" + MANIFEST.replace('id = "weather"', 'id = "weather"  x = 1', 1)
        uri = session.open(tmp_path / "nexo-plugin.toml", text)
        published = await session.diagnostics(uri, version=1)
        assert _codes_and_ranges(published) == _as_the_command_reports(
            tmp_path / "expected.toml", text
        )
        version = session.change(uri, "\ufeff" + MANIFEST)
        published = await session.diagnostics(uri, version=version)
        assert "NX001" not in {str(item.code) for item in published.diagnostics}
        assert _codes_and_ranges(published) == _as_the_command_reports(
            tmp_path / "expected.toml", "\ufeff" + MANIFEST
        )

    shared_server.run(scenario)


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("nexo-plugin.toml", "[plugin]\nid = \x00\x01"),
        ("trusted_keys.toml", 'schema_version = 1\ndefault = "\x00"\n'),
        ("extensions.yaml", "extensions:\n  entries: {}\n# \x00\n"),
    ],
    ids=["manifest", "trust-policy", "daemon-config"],
)
def test_a_binary_document_gets_the_commands_finding(
    shared_server: SharedServer, tmp_path: Path, name: str, text: str
) -> None:
    async def scenario(session: LspSession) -> None:
        uri = session.open(tmp_path / name, text)
        published = await session.diagnostics(uri, version=1)
        path = tmp_path / "copy" / name
        path.parent.mkdir()
        assert _codes_and_ranges(published) == _as_the_command_reports(path, text)
        assert [str(item.code) for item in published.diagnostics] == ["NX003"]

    shared_server.run(scenario)


# Over the 4 MiB cap every file lint reads gets NX004 alone; over 1 MiB, a warning beside the
# findings. Padded with comment lines, so only the size is wrong.
OVER_THE_CAP = 4 * 1024 * 1024 + 1
LARGE = 1024 * 1024 + 1


def _padded(head: str, tail: str, size: int) -> str:
    lines = (size - len(head) - len(tail)) // 10 + 1
    return head + "# padding\n" * lines + tail


@pytest.mark.parametrize("size", [OVER_THE_CAP, LARGE], ids=["over-the-cap", "large"])
@pytest.mark.parametrize(
    ("name", "head", "tail"),
    [
        ("nexo-plugin.toml", MANIFEST, "[plugin.sandbox]\nnetwork = \n"),
        ("extensions.yaml", "extensions:\n  entries:\n", "    x:\n      enabled: \n"),
    ],
    ids=["manifest", "daemon-config"],
)
def test_a_document_the_command_judges_by_its_size_gets_the_commands_findings(
    shared_server: SharedServer,
    tmp_path: Path,
    *,
    name: str,
    head: str,
    tail: str,
    size: int,
) -> None:
    """As `nexo plugin lint` reads the same bytes from a file: over the cap the one finding
    that it is too large (and hover and completion, which would read it all, answer
    nothing), above 1 MiB the warning that it is large beside the other findings."""
    text = _padded(head, tail, size)
    assert len(text.encode("utf-8")) >= size

    async def scenario(session: LspSession) -> None:
        uri = session.open(tmp_path / name, text)
        published = await session.diagnostics(uri, version=1, timeout=60)
        path = tmp_path / "copy" / name
        path.parent.mkdir()
        expected = _as_the_command_reports(path, text)
        assert _codes_and_ranges(published) == expected
        codes = [code for code, _, _ in expected]
        last = text.count("\n") - 1
        if size == OVER_THE_CAP:
            assert codes == ["NX004"]
            key_line = tail.splitlines()[-1]
            key_at = len(key_line) - len(key_line.lstrip())
            assert await session.hover(uri, last, key_at + 1) is None
            assert await session.complete(uri, last, len(key_line)) == []
        else:
            assert "NX004" not in codes
            assert len(codes) >= 2  # the size warning and the finding at the end

    shared_server.run(scenario)


def test_hover_and_quick_fixes_read_past_a_byte_order_mark(
    shared_server: SharedServer, tmp_path: Path
) -> None:
    async def scenario(session: LspSession) -> None:
        text = "\ufeff" + MANIFEST.replace('"😀", "weather_ok"', '"forecast"')
        uri = session.open(tmp_path / "nexo-plugin.toml", text)
        published = await session.diagnostics(uri, version=1)
        hover = await session.hover(uri, 1, 1)
        assert hover is not None
        assert isinstance(hover.contents, types.MarkupContent)
        assert "plugin.id" in hover.contents.value
        [finding] = [item for item in published.diagnostics if item.code == "NX113"]
        actions = await session.code_actions(uri, [finding])
        assert actions, "no quick fix offered"
        assert actions[0].edit is not None
        assert actions[0].edit.changes is not None
        [edit] = actions[0].edit.changes[uri]
        assert edit.range.start.line == edit.range.end.line == TOOLS_LINE
        line = text.split("\n")[TOOLS_LINE]
        fixed_line = (
            line[: edit.range.start.character] + edit.new_text + line[edit.range.end.character :]
        )
        lines = text.split("\n")
        lines[TOOLS_LINE] = fixed_line
        version = session.change(uri, "\n".join(lines))
        fixed = await session.diagnostics(uri, version=version)
        assert "NX113" not in {str(item.code) for item in fixed.diagnostics}

    shared_server.run(scenario)


def test_a_lone_carriage_return_in_toml_ends_the_line_for_the_range(
    shared_server: SharedServer, tmp_path: Path
) -> None:
    """TOML has no lone-CR line end, so the command reports the CR as a syntax error on the
    line it counts; in the editor, which ends line 1 there (LSP), the finding runs from the
    CR to the start of line 2, not past the end of line 1."""
    text = MANIFEST.replace("[plugin]\n", "[plugin]\n# a\rb\n", 1)
    path = tmp_path / "nexo-plugin.toml"
    path.write_bytes(text.encode("utf-8"))
    [finding] = lint_file(path).diagnostics
    assert (finding.code, finding.span.start.line, finding.span.start.column) == ("NX001", 2, 4)

    async def scenario(session: LspSession) -> None:
        uri = session.open(path, text)
        published = await session.diagnostics(uri, version=1)
        assert _codes_and_ranges(published) == [("NX001", (1, 3), (2, 0))]

    shared_server.run(scenario)
