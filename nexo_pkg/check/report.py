"""The result of a conformance check, as data and as human lines."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

from nexo_pkg.core.terminal import printable

Status = Literal["pass", "warn", "fail"]

#: Lines of captured stderr shown by the human renderer on failure.
STDERR_SHOWN_LINES = 50

_SYMBOLS: dict[Status, str] = {"pass": "✓", "warn": "!", "fail": "✗"}
_WORDS: dict[Status, str] = {"pass": "PASS", "warn": "WARN", "fail": "FAIL"}
_COLOURS: dict[Status, str] = {"pass": "\x1b[32m", "warn": "\x1b[33m", "fail": "\x1b[31m"}
_RESET = "\x1b[0m"
_DIM = "\x1b[2m"


@dataclass(frozen=True)
class CheckResult:
    """One check: a stable dotted ``name``, its ``status`` and a one-line ``detail``."""

    name: str
    status: Status
    detail: str

    def to_json(self) -> dict[str, str]:
        """``{"name", "status", "detail"}``."""
        return {"name": self.name, "status": self.status, "detail": self.detail}


@dataclass
class CheckReport:
    """Everything a check run found; ``invoke`` holds the ``tool.invoke`` exchange when one was
    asked for."""

    plugin_id: str
    root: str
    argv: list[str]
    checks: list[CheckResult] = field(default_factory=list)
    stderr_tail: list[str] = field(default_factory=list)
    invoke: dict[str, Any] | None = None
    #: Milliseconds from spawn to events of the session (``initialize_ms``: the reply).
    timings: dict[str, float] = field(default_factory=dict)
    #: Warnings fail too (``--strict``).
    strict: bool = False
    #: How the daemon would start the plugin (see :class:`~nexo_pkg.check.sandbox.SandboxPlan`).
    sandbox: dict[str, Any] | None = None

    @property
    def ok(self) -> bool:
        """No check failed (and, with ``strict``, none warned)."""
        failing = ("fail", "warn") if self.strict else ("fail",)
        return all(check.status not in failing for check in self.checks)

    def add(self, name: str, status: Status, detail: str) -> CheckResult:
        """Record a check and return it."""
        result = CheckResult(name, status, detail)
        self.checks.append(result)
        return result

    def judge(self, name: str, problem: str | None, status: Status, passed: str) -> None:
        """Record ``name`` as ``status`` with ``problem`` when there is one, else as a pass
        with the detail ``passed``."""
        if problem is None:
            self.add(name, "pass", passed)
        else:
            self.add(name, status, problem)

    def get(self, name: str) -> CheckResult | None:
        """The check called ``name``, if it ran."""
        return next((check for check in self.checks if check.name == name), None)

    def counts(self) -> dict[Status, int]:
        """How many checks ended in each status."""
        return {status: sum(check.status == status for check in self.checks) for status in _WORDS}

    def to_json(self) -> dict[str, Any]:
        """``{"ok", "checks", "stderr_tail"}`` plus ``plugin`` and, when asked, ``invoke``."""
        document: dict[str, Any] = {
            "ok": self.ok,
            "strict": self.strict,
            "checks": [check.to_json() for check in self.checks],
            "stderr_tail": list(self.stderr_tail),
            "plugin": {"id": self.plugin_id, "root": self.root, "command": list(self.argv)},
        }
        if self.sandbox is not None:
            document["sandbox"] = self.sandbox
        if self.invoke is not None:
            document["invoke"] = _printable(self.invoke)
        document["timings_ms"] = {key: round(value, 1) for key, value in self.timings.items()}
        return document


class ProblemTally:
    """The first problem noted under each name and how many followed: a plugin repeating a
    mistake a million times still makes one line of a report."""

    def __init__(self) -> None:
        self._seen: dict[str, tuple[str, int]] = {}

    def note(self, name: str, detail: str) -> None:
        """Count one problem under ``name``; the first one's ``detail`` is kept."""
        first, count = self._seen.get(name, (detail, 0))
        self._seen[name] = (first, count + 1)

    def summary(self, name: str) -> str | None:
        """The first problem noted under ``name`` and how many more followed; None for none."""
        if name not in self._seen:
            return None
        first, count = self._seen[name]
        return f"{first} (and {count - 1} more)" if count > 1 else first


def _printable(value: Any) -> Any:
    """A JSON copy of what a plugin sent, every :class:`~decimal.Decimal` (an integer too long
    for ``int``) as its digits; a note when it cannot be one (nested too deeply)."""
    try:
        return json.loads(json.dumps(value, default=str))
    except (RecursionError, TypeError, ValueError):
        return "<a value nested too deeply to include>"


def render_report(report: CheckReport, *, unicode: bool = True, colour: bool = False) -> list[str]:
    """The human lines for ``report``: one per check, the stderr tail on failure, a summary.

    ``unicode`` picks ``✓ ! ✗`` over ``PASS WARN FAIL`` (use ASCII when not on a TTY);
    ``colour`` adds ANSI colours. Returns the lines; printing is the caller's job.
    """
    width = max((len(check.name) for check in report.checks), default=0)
    lines: list[str] = []
    for check in report.checks:
        mark = _SYMBOLS[check.status] if unicode else _WORDS[check.status]
        if colour:
            mark = f"{_COLOURS[check.status]}{mark}{_RESET}"
        detail = printable(check.detail)  # one line per check, whatever the detail holds
        lines.append(f"{mark} {check.name.ljust(width)}  {detail}".rstrip())
    if not report.ok and report.stderr_tail:
        tail = report.stderr_tail[-STDERR_SHOWN_LINES:]
        lines.append(f"plugin stderr (last {len(tail)} lines):")
        for line in tail:
            shown = f"  | {printable(line, lines=True)}"
            lines.append(f"{_DIM}{shown}{_RESET}" if colour else shown)
    counts = report.counts()
    verdict = "passed" if report.ok else "failed"
    if report.strict and not report.ok and not counts["fail"]:
        verdict = "failed (--strict: warnings fail)"
    # A manifest refused before its id could be read leaves the id empty: name the target.
    # A refused id may hold control characters: escape it as every detail is.
    subject = printable(report.plugin_id or report.root)
    lines.append(
        f"check {verdict} for {subject}: {counts['pass']} passed, "
        f"{counts['warn']} warning{'s' if counts['warn'] != 1 else ''}, {counts['fail']} failed"
    )
    return lines
