"""Diagnostic primitives every linter shares: positions, spans, findings and rule metadata.

This module stands on the ground floor: the manifest rules, the trust-policy linter, the lint
engine and its reporters, and the language server all import it, and it imports nothing of
nexo-pkg. A lint finding is a frozen :class:`Diagnostic`; the findings of one file make a
:class:`FileResult`; every diagnostic code has one :class:`Rule` with its ``--explain`` text.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Severity = Literal["error", "warning"]

DOCS_URL = "https://github.com/nexo-pkg/nexo-pkg/blob/main/docs/rules.md"


@dataclass(frozen=True, order=True)
class Position:
    """A 1-based line and column (columns count Unicode code points)."""

    line: int
    column: int

    def to_json(self) -> dict[str, int]:
        return {"line": self.line, "column": self.column}


@dataclass(frozen=True, order=True)
class Span:
    """A range in a file; ``end`` is exclusive (the column just past the last character)."""

    start: Position
    end: Position

    def to_json(self) -> dict[str, Any]:
        return {"start": self.start.to_json(), "end": self.end.to_json()}


Applicability = Literal["safe", "unsafe"]
"""How safe a fix is, as ruff grades its fixes: a ``safe`` fix keeps what the plugin does (``nexo
plugin lint --fix`` applies it); an ``unsafe`` one changes behaviour (a name the plugin's code
also uses) and is applied only with ``--unsafe-fixes``."""


@dataclass(frozen=True)
class Edit:
    """Replace the text of ``span`` with ``content``."""

    span: Span
    content: str

    def to_json(self) -> dict[str, Any]:
        return {"content": self.content, "range": self.span.to_json()}


@dataclass(frozen=True)
class Fix:
    """The mechanical repair of a finding: its edits, what it does and how safe it is.
    ``subject`` is the name the finding reported, which the text at its span must still be
    for the fix to apply (the language server carries it in the diagnostic's ``data``)."""

    applicability: Applicability
    message: str
    edits: tuple[Edit, ...]
    subject: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "applicability": self.applicability,
            "message": self.message,
            "edits": [edit.to_json() for edit in self.edits],
        }


@dataclass(frozen=True)
class Diagnostic:
    """One problem found in one file (with its :class:`Fix`, when it has one)."""

    code: str
    name: str
    severity: Severity
    message: str
    key_path: str
    span: Span
    help: str = ""
    url: str = ""
    fix: Fix | None = None

    @property
    def is_error(self) -> bool:
        return self.severity == "error"

    def to_json(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "name": self.name,
            "severity": self.severity,
            "message": self.message,
            "key_path": self.key_path,
            "range": self.span.to_json(),
            "help": self.help,
            "url": self.url,
            "fix": None if self.fix is None else self.fix.to_json(),
        }


@dataclass(frozen=True)
class FileResult:
    """The diagnostics of one file, sorted in file order, plus its text for code frames.

    ``parser`` names whose rules applied (``plugin-manifest``, ``extension-manifest``, ...);
    empty when the caller did not say.
    """

    path: str
    diagnostics: tuple[Diagnostic, ...]
    source: str = field(default="", repr=False)
    parser: str = ""

    @property
    def errors(self) -> tuple[Diagnostic, ...]:
        return tuple(d for d in self.diagnostics if d.severity == "error")

    @property
    def warnings(self) -> tuple[Diagnostic, ...]:
        return tuple(d for d in self.diagnostics if d.severity == "warning")

    @property
    def success(self) -> bool:
        """True when the file has no error (warnings do not count)."""
        return not self.errors


@dataclass(frozen=True)
class Rule:
    """A lint rule. ``code`` and ``name`` are stable once released; retired codes are never reused.

    ``what``/``why``/``example``/``fix`` make up the ``--explain`` page. ``beyond_daemon`` marks
    rules stricter than the reference daemon's own validation, which the explanation must say.
    ``docs`` is the page that documents the rule (its section is ``#<code>-<name>``).
    """

    code: str
    name: str
    severity: Severity
    summary: str
    what: str
    why: str
    example: str
    fix: str
    beyond_daemon: bool = False
    docs: str = DOCS_URL

    @property
    def url(self) -> str:
        return f"{self.docs}#{self.code.lower()}-{self.name}"

    def diagnostic(
        self, message: str, key_path: str, span: Span, help_text: str = ""
    ) -> Diagnostic:
        """A :class:`Diagnostic` of this rule (its code, name, severity and documentation URL)."""
        return Diagnostic(
            self.code, self.name, self.severity, message, key_path, span, help_text, self.url
        )


def first_of_errors(path: object, span: Span, count: int) -> tuple[str, str]:
    """Where the first of ``count`` errors stands (``path:line:column``, from its ``span``)
    and what follows its message: `` (and N more)`` when there are others, else nothing."""
    more = f" (and {count - 1} more)" if count > 1 else ""
    return f"{path}:{span.start.line}:{span.start.column}", more
