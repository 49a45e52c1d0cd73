"""Rule metadata: every diagnostic code has one :class:`Rule` with its ``--explain`` text."""

from __future__ import annotations

from dataclasses import dataclass

from nexo_pkg.lint.diagnostic import Diagnostic, Severity, Span

DOCS_URL = "https://github.com/nexo-pkg/nexo-pkg/blob/main/docs/rules.md"


@dataclass(frozen=True)
class Rule:
    """A lint rule. ``code`` and ``name`` are stable once released; retired codes are never reused.

    ``what``/``why``/``example``/``fix`` make up the ``--explain`` page. ``beyond_daemon`` marks
    rules stricter than the reference daemon's own validation, which the explanation must say.
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

    @property
    def url(self) -> str:
        return f"{DOCS_URL}#{self.code.lower()}-{self.name}"

    def diagnostic(
        self, message: str, key_path: str, span: Span, help_text: str = ""
    ) -> Diagnostic:
        """A :class:`Diagnostic` of this rule (its code, name, severity and documentation URL)."""
        return Diagnostic(
            code=self.code,
            name=self.name,
            severity=self.severity,
            message=message,
            key_path=key_path,
            span=span,
            help=help_text,
            url=self.url,
        )
