"""``nexo plugin check``: spawn a plugin as a minimal nexo host and check its handshake.

Library entry point for ``pack --check`` and ``install --check``::

    report = run_check(Path("dist/plugin"), timeout_ms=5000)
    for line in render_report(report, unicode=False):
        ...
    report.ok, report.checks, report.stderr_tail, report.to_json()
"""

from __future__ import annotations

from nexo_pkg.check.checks import check_plugin, run_check
from nexo_pkg.check.microapp_target import TargetError
from nexo_pkg.check.report import CheckReport, CheckResult, render_report
from nexo_pkg.check.rpc import DEFAULT_TIMEOUT_MS
from nexo_pkg.check.target import ResolvedPlugin, resolve_target

__all__ = [
    "DEFAULT_TIMEOUT_MS",
    "CheckReport",
    "CheckResult",
    "ResolvedPlugin",
    "TargetError",
    "check_plugin",
    "render_report",
    "resolve_target",
    "run_check",
]
