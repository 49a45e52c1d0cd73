"""Lint findings as values: a :class:`Diagnostic` per problem, a :class:`FileResult` per file."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Severity = Literal["error", "warning"]


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


@dataclass(frozen=True)
class Diagnostic:
    """One problem found in one file."""

    code: str
    name: str
    severity: Severity
    message: str
    key_path: str
    span: Span
    help: str = ""
    url: str = ""

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
        }


@dataclass(frozen=True)
class FileResult:
    """The diagnostics of one file, sorted in file order, plus its text for code frames."""

    path: str
    diagnostics: tuple[Diagnostic, ...]
    source: str = field(default="", repr=False)

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
