"""Reporters: pure functions from lint results to text, one per ``--format`` choice.

``REPORTERS`` is the registry ``--format`` offers. Each reporter takes the results and a
:class:`ReportContext` and returns the whole document as a string; the CLI decides where it
goes (``text`` to stderr, the machine formats to stdout).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any
from urllib.parse import quote

from nexo_pkg import __version__
from nexo_pkg.core.diagnostics import DOCS_URL, Diagnostic, FileResult, Rule, Span
from nexo_pkg.core.terminal import cells, printable

__all__ = [
    "REPORTERS",
    "ReportContext",
    "Reporter",
    "render_github",
    "render_json",
    "render_sarif",
    "render_text",
]

TOOL_NAME = "nexo-pkg"
TOOL_URI = "https://github.com/nexo-pkg/nexo-pkg"
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


@dataclass(frozen=True)
class ReportContext:
    """What a reporter may know besides the results: colour, the rules by code, whether the
    text report ends with its summary line (``--quiet`` drops it, as ruff's ``-q``), and
    whether unsafe fixes are enabled."""

    colour: bool = False
    rules: Mapping[str, Rule] = field(default_factory=dict)
    summary: bool = True
    unsafe_fixes: bool = False
    """``--unsafe-fixes``: unsafe fixes count as fixable (``[*]``), as safe ones always do."""
    encoding: str | None = None
    """The encoding of a stream that shows what it cannot encode as backslash escapes
    (:func:`~nexo_pkg.core.terminal.escaping_encoding`): carets are placed under the escapes
    as that stream prints them."""

    def applicable(self, diagnostic: Diagnostic) -> bool:
        """Whether ``--fix`` would apply the fix of ``diagnostic`` with these settings."""
        fix = diagnostic.fix
        return fix is not None and (fix.applicability == "safe" or self.unsafe_fixes)


Reporter = Callable[[Sequence[FileResult], ReportContext], str]


def _summary(results: Sequence[FileResult]) -> dict[str, int]:
    return {
        "files": len(results),
        "errors": sum(len(result.errors) for result in results),
        "warnings": sum(len(result.warnings) for result in results),
    }


_LINE_BREAK = re.compile("\r\n|\r|\n")
_RED, _YELLOW, _BLUE, _BOLD, _RESET = "\x1b[31m", "\x1b[33m", "\x1b[34m", "\x1b[1m", "\x1b[0m"


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def _shown(text: str) -> str:
    return printable(text.replace("\t", "    "))


def _fix_note(diagnostic: Diagnostic) -> str:
    """What the text report says of a fix: what it does, how safe it is, how to apply it."""
    fix = diagnostic.fix
    if fix is None:
        return ""
    if fix.applicability == "safe":
        return f"{fix.message} (safe: apply with `--fix`)"
    from nexo_pkg.lint.fixes import UNSAFE_REASON  # noqa: PLC0415 - only fixable findings

    reason = UNSAFE_REASON.get(diagnostic.name, "it changes what the plugin does")
    return f"{fix.message} (unsafe: {reason}; apply with `--fix --unsafe-fixes`)"


def _frame(
    diagnostic: Diagnostic,
    lines: Sequence[str],
    paint: Callable[[str, str], str],
    encoding: str | None,
    shown_lines: dict[int, str],
) -> str:
    """The code frame: the source line of the span start with a caret run under the span
    (``shown_lines``: each line as printed, escaped once for all the findings on it)."""
    start, end = diagnostic.span.start, diagnostic.span.end
    if not 1 <= start.line <= len(lines):
        return ""
    source = lines[start.line - 1].rstrip("\r")
    shown_line = shown_lines.get(start.line)
    if shown_line is None:
        shown_line = shown_lines[start.line] = _shown(source)
    # Tabs are shown as four spaces so the carets line up with what is printed; control
    # characters (a file that does not parse may hold any) are shown escaped, never acted on;
    # the carets are placed by terminal cells, so a wide character counts twice (and an
    # escape a stream writes for what its encoding lacks, `\xe9`, as the cells it takes).
    before = _shown(source[: start.column - 1])
    last = end.column - 1 if end.line == start.line else len(source)
    marked = _shown(source[start.column - 1 : max(last, start.column - 1)])
    width = max(1, cells(marked, encoding))
    gutter = " " * len(str(start.line))
    colour = _RED if diagnostic.is_error else _YELLOW
    caret = paint(colour, "^" * width + f" {diagnostic.code}")
    rows = [
        paint(_BLUE, f"{gutter} |"),
        paint(_BLUE, f"{start.line} |") + f" {shown_line}",
        paint(_BLUE, f"{gutter} |") + f" {' ' * cells(before, encoding)}{caret}",
    ]
    if diagnostic.help:
        rows.append(
            paint(_BLUE, f"{gutter} =") + f" {paint(_BOLD, 'help')}: {printable(diagnostic.help)}"
        )
    if diagnostic.fix is not None:
        note = printable(_fix_note(diagnostic))
        rows.append(paint(_BLUE, f"{gutter} =") + f" {paint(_BOLD, 'fix')}: {note}")
    return "\n".join(rows)


_UNANNOUNCED_PARSERS = frozenset({"", "plugin-manifest", "trust-policy"})
"""Parsers the text report does not name: what a manifest or a policy file is by default."""


def render_text(results: Sequence[FileResult], context: ReportContext) -> str:
    """``path:line:col: CODE message``, a code frame with a caret under the span, help, then a
    summary line (like ruff and rustc)."""

    def paint(code: str, text: str) -> str:
        return f"{code}{text}{_RESET}" if context.colour else text

    blocks: list[str] = []
    for result in results:
        # Lines end where an editor ends them (a lone carriage return too, as in YAML).
        lines = _LINE_BREAK.split(result.source) if result.source else []
        shown_lines: dict[int, str] = {}
        if result.parser not in _UNANNOUNCED_PARSERS and (result.diagnostics or context.summary):
            # `path: <what it is and whose rules applied>` (--quiet: only above findings)
            from nexo_pkg.lint.microapp import PARSER_DESCRIPTIONS  # noqa: PLC0415 - rare path

            what = PARSER_DESCRIPTIONS.get(result.parser, result.parser)
            blocks.append(f"{paint(_BOLD, printable(result.path))}: {what}")
        for diagnostic in result.diagnostics:
            start = diagnostic.span.start
            label = paint(_RED if diagnostic.is_error else _YELLOW, diagnostic.code)
            if context.applicable(diagnostic):
                label += " " + paint(_BOLD, "[*]")  # fixable with --fix, as ruff marks it
            severity = "" if diagnostic.is_error else "warning: "
            # Messages quote values from the file: one line each, whatever those hold.
            head = (
                f"{paint(_BOLD, printable(result.path))}:{start.line}:{start.column}: "
                f"{label} {severity}{printable(diagnostic.message)}"
            )
            frame = _frame(diagnostic, lines, paint, context.encoding, shown_lines)
            blocks.append(f"{head}\n{frame}" if frame else head)
    totals = _summary(results)
    if not context.summary:
        return "\n\n".join(blocks) + "\n" if blocks else ""
    if totals["errors"] or totals["warnings"]:
        summary = (
            f"Found {_plural(totals['errors'], 'error')} and "
            f"{_plural(totals['warnings'], 'warning')} in {_plural(totals['files'], 'file')}."
        )
    else:
        summary = f"All checks passed ({_plural(totals['files'], 'file')} linted)."
    fixes = _fix_summary(results, context)
    blocks.append(paint(_BOLD, summary) + (f"\n{fixes}" if fixes else ""))
    return "\n\n".join(blocks) + "\n"


def _fix_summary(results: Sequence[FileResult], context: ReportContext) -> str:
    """ruff's line on fixes: how many ``--fix`` would apply, and how many unsafe ones
    ``--unsafe-fixes`` would add; empty when no finding has a fix."""
    fixable = [d for result in results for d in result.diagnostics if d.fix is not None]
    applicable = sum(context.applicable(diagnostic) for diagnostic in fixable)
    hidden = len(fixable) - applicable
    more = (
        f"{hidden} hidden fix{'' if hidden == 1 else 'es'} can be enabled with the "
        "`--unsafe-fixes` option"
    )
    if applicable and hidden:
        return f"[*] {applicable} fixable with the `--fix` option ({more})."
    if applicable:
        return f"[*] {applicable} fixable with the `--fix` option."
    return f"No fixes available ({more})." if hidden else ""


# A file name that is not UTF-8 reaches a report as lone surrogates (Python's
# ``surrogateescape``): no UTF-8 document can carry them as characters.
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _json_document(document: object) -> str:
    """``document`` as JSON text that is valid UTF-8 whatever it holds: non-ASCII text as
    itself, a lone surrogate as its ``\\udcXX`` escape (what ``json.loads`` reads back into
    the same file name, and what every other ``--json`` document of nexo-pkg writes)."""
    text = json.dumps(document, indent=2, ensure_ascii=False)
    return _LONE_SURROGATE.sub(lambda match: f"\\u{ord(match.group()):04x}", text) + "\n"


def render_json(results: Sequence[FileResult], context: ReportContext) -> str:
    """One JSON document for every file (described by ``schemas/lint-report.schema.json``)."""
    del context
    document = {
        "schema_version": 1,
        "tool": {"name": TOOL_NAME, "version": __version__},
        "files": [
            {
                "path": result.path,
                **({"parser": result.parser} if result.parser else {}),
                "diagnostics": [diagnostic.to_json() for diagnostic in result.diagnostics],
            }
            for result in results
        ],
        "summary": _summary(results),
    }
    return _json_document(document)


def _escape_data(text: str) -> str:
    """Escaping of a workflow command's message, as @actions/core does it."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    """Escaping of a workflow command's property value (also ``:`` and ``,``)."""
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


#: Windows's CPython (``\\`` separates a path's parts there, and ``/`` is its alternative).
_WINDOWS = os.name == "nt"


def _github_file(path: str) -> str:
    """The ``file`` of an annotation: on Windows, with ``/`` between its parts. The runner
    rewrites an absolute path under the workspace to a relative one with ``/`` ("prefer `/` on
    all platforms", ``IssueCommandExtension``), but passes a relative one through as it is,
    and GitHub places no annotation at ``plugins\\a\\nexo-plugin.toml``. Elsewhere a
    ``\\`` is part of a name and stays. A control character in a name is shown escaped, as the
    text report shows it (an escape sequence is never written raw); CR and LF stay, as the
    property escaping carries them to the runner as they are."""
    path = path.replace("\\", "/") if _WINDOWS else path
    return "\r".join(
        "\n".join(printable(part) for part in line.split("\n")) for line in path.split("\r")
    )


def render_github(results: Sequence[FileResult], context: ReportContext) -> str:
    """GitHub Actions workflow commands: one ``::error``/``::warning`` line per diagnostic.

    Columns are sent only for a span on one line: the toolkit's ``AnnotationProperties`` say
    ``startColumn``/``endColumn`` "cannot be sent when startLine and endLine are different
    values", and the runner drops them then (``ValidateLinesAndColumns``)."""
    del context
    lines: list[str] = []
    for result in results:
        for diagnostic in result.diagnostics:
            span = diagnostic.span
            one_line = span.end.line <= span.start.line
            properties = {"file": _github_file(result.path), "line": str(span.start.line)}
            if one_line:
                properties["col"] = str(span.start.column)
            properties["endLine"] = str(max(span.end.line, span.start.line))
            if one_line:
                properties["endColumn"] = str(max(span.end.column, span.start.column))
            properties["title"] = f"{diagnostic.code} {diagnostic.name}"
            rendered = ",".join(
                f"{key}={_escape_property(value)}" for key, value in properties.items()
            )
            # Messages quote values from the file: control characters escaped, as the text
            # report shows them (a CI log renders an escape sequence; only CR and LF are
            # escaped by the toolkit's rules, and only so that the command stays one line).
            message = printable(diagnostic.message)
            if diagnostic.help:
                message += f"\nhelp: {printable(diagnostic.help)}"
            lines.append(f"::{diagnostic.severity} {rendered}::{_escape_data(message)}")
    return "".join(line + "\n" for line in lines)


def _sarif_rule(code: str, sample: Diagnostic, rules: Mapping[str, Rule]) -> dict[str, Any]:
    rule = rules.get(code)
    if rule is None:
        return {
            "id": code,
            "name": sample.name,
            "shortDescription": {"text": sample.name},
            "helpUri": sample.url or DOCS_URL,
            "defaultConfiguration": {"level": sample.severity},
        }
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": rule.what},
        "help": {"text": f"{rule.why}\n\nFix: {rule.fix}"},
        "helpUri": rule.url,
        "defaultConfiguration": {"level": rule.severity},
    }


def _sarif_region(span: Span) -> dict[str, int]:
    return {
        "startLine": max(1, span.start.line),
        "startColumn": max(1, span.start.column),
        "endLine": max(1, span.end.line),
        "endColumn": max(1, span.end.column),
    }


def _sarif_fixes(diagnostic: Diagnostic, uri: str) -> dict[str, Any]:
    """The result's ``fixes`` (SARIF 2.1.0 §3.27.30, §3.55): the edits as replacements of the
    file, with ruff's applicability in the fix's property bag."""
    fix = diagnostic.fix
    if fix is None:
        return {}
    replacements = [
        {"deletedRegion": _sarif_region(edit.span), "insertedContent": {"text": edit.content}}
        for edit in fix.edits
    ]
    return {
        "fixes": [
            {
                "description": {"text": fix.message},
                "artifactChanges": [
                    {"artifactLocation": {"uri": uri}, "replacements": replacements}
                ],
                "properties": {"applicability": fix.applicability},
            }
        ]
    }


def _sarif_uri(path: str) -> str:
    """``artifactLocation.uri`` for a linted path (SARIF 2.1.0 §3.4.3, RFC 3986): an absolute
    path as a ``file:`` URI, a relative one as a relative reference, ``:`` escaped so that a
    first segment such as ``a:b`` is never read as a URI scheme. A name that is not UTF-8 is
    percent-encoded byte by byte (``caf%E9``), as ``as_uri`` does an absolute one."""
    pure = PurePath(path)
    if pure.is_absolute():
        return pure.as_uri()
    return quote(os.fsencode(pure.as_posix()), safe="/")


def render_sarif(results: Sequence[FileResult], context: ReportContext) -> str:
    """A SARIF 2.1.0 log with one run; every emitted rule is in ``tool.driver.rules``."""
    rule_index: dict[str, int] = {}
    descriptors: list[dict[str, Any]] = []
    sarif_results: list[dict[str, Any]] = []
    for result in results:
        uri = _sarif_uri(result.path)
        for diagnostic in result.diagnostics:
            if diagnostic.code not in rule_index:
                rule_index[diagnostic.code] = len(descriptors)
                descriptors.append(_sarif_rule(diagnostic.code, diagnostic, context.rules))
            span = diagnostic.span
            text = diagnostic.message + (f" (help: {diagnostic.help})" if diagnostic.help else "")
            sarif_results.append(
                {
                    "ruleId": diagnostic.code,
                    "ruleIndex": rule_index[diagnostic.code],
                    "level": diagnostic.severity,
                    "message": {"text": text},
                    "locations": [
                        {
                            "physicalLocation": {
                                "artifactLocation": {"uri": uri},
                                "region": _sarif_region(span),
                            }
                        }
                    ],
                    "properties": {"keyPath": diagnostic.key_path},
                    **_sarif_fixes(diagnostic, uri),
                }
            )
    log = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": TOOL_NAME,
                        "version": __version__,
                        "informationUri": TOOL_URI,
                        "rules": descriptors,
                    }
                },
                "columnKind": "unicodeCodePoints",
                "results": sarif_results,
            }
        ],
    }
    return _json_document(log)


REPORTERS: dict[str, Reporter] = {
    "text": render_text,
    "json": render_json,
    "github": render_github,
    "sarif": render_sarif,
}
"""``--format`` choices, in the order help lists them."""
