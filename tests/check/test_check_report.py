"""The report as data (``to_json``) and as human lines (``render_report``)."""

from __future__ import annotations

from nexo_pkg.check import CheckReport, render_report


def sample(*, failing: bool) -> CheckReport:
    report = CheckReport(plugin_id="demo", root="/plugins/demo", argv=["/plugins/demo/bin/demo"])
    report.add("spawn", "pass", "started")
    report.add("tools.advertised", "warn", "declared but not advertised: demo_x")
    if failing:
        report.add("identity", "fail", 'reply claims plugin id "slack"')
    report.stderr_tail = [f"line {index}" for index in range(60)]
    return report


def test_warnings_alone_keep_the_report_ok() -> None:
    assert sample(failing=False).ok
    assert not sample(failing=True).ok


def test_json_document_has_the_documented_shape() -> None:
    report = sample(failing=True)
    report.invoke = {"tool": "demo_x", "args": {}, "result": {"ok": 1}}
    document = report.to_json()
    assert document["ok"] is False
    assert document["checks"][2] == {
        "name": "identity",
        "status": "fail",
        "detail": 'reply claims plugin id "slack"',
    }
    assert document["stderr_tail"] == report.stderr_tail
    assert document["invoke"] == {"tool": "demo_x", "args": {}, "result": {"ok": 1}}
    assert document["plugin"] == {
        "id": "demo",
        "root": "/plugins/demo",
        "command": ["/plugins/demo/bin/demo"],
    }
    assert "invoke" not in sample(failing=False).to_json()


def test_ascii_lines_without_colour() -> None:
    lines = render_report(sample(failing=False), unicode=False)
    assert lines == [
        "PASS spawn             started",
        "WARN tools.advertised  declared but not advertised: demo_x",
        "check passed for demo: 1 passed, 1 warning, 0 failed",
    ]
    assert all(line.isascii() for line in lines)


def test_unicode_symbols_colour_and_the_last_50_stderr_lines_on_failure() -> None:
    lines = render_report(sample(failing=True), unicode=True, colour=True)
    assert lines[0] == "\x1b[32m✓\x1b[0m spawn             started"
    assert lines[1].startswith("\x1b[33m!\x1b[0m tools.advertised")
    assert lines[2].startswith("\x1b[31m✗\x1b[0m identity")
    assert lines[3] == "plugin stderr (last 50 lines):"
    assert lines[4] == "\x1b[2m  | line 10\x1b[0m"
    assert lines[53] == "\x1b[2m  | line 59\x1b[0m"
    assert lines[-1] == "check failed for demo: 1 passed, 1 warning, 1 failed"
    assert len(lines) == 55


def test_no_stderr_tail_when_nothing_failed() -> None:
    lines = render_report(sample(failing=False), unicode=True)
    assert not any("plugin stderr" in line for line in lines)


def test_strict_makes_warnings_fail() -> None:
    report = sample(failing=False)
    report.strict = True
    assert not report.ok
    assert report.to_json()["strict"] is True
    assert "failed (--strict: warnings fail)" in render_report(report, unicode=False)[-1]


def test_control_characters_from_the_plugin_are_shown_escaped() -> None:
    report = CheckReport(plugin_id="demo", root="/p", argv=["/p/bin/demo"])
    report.add("frames.json", "fail", "stray non-JSON stdout line: \x1b[2J\x9b31m")
    report.stderr_tail = ["\x1b]0;owned\x07 hello\r"]
    lines = render_report(report, unicode=False)
    joined = "\n".join(lines)
    assert "\x1b" not in joined
    assert "\x9b" not in joined
    assert "\x07" not in joined
    assert "\r" not in joined
    assert "\\u001b[2J\\u009b31m" in joined
    assert "\\u001b]0;owned\\u0007 hello\\u000d" in joined


def test_an_integer_too_long_for_int_reaches_the_json_report() -> None:
    from decimal import Decimal

    report = sample(failing=False)
    report.invoke = {"tool": "demo_x", "args": {}, "result": {"n": Decimal("7" * 5000)}}
    import json

    document = json.loads(json.dumps(report.to_json()))
    assert document["invoke"]["result"]["n"] == "7" * 5000


def test_a_detail_with_line_breaks_stays_on_its_check_line() -> None:
    """One line per check: a manifest argument with a newline (shown in `spawn`) cannot
    break the report into lines that look like other checks."""
    report = CheckReport(plugin_id="demo", root="/p", argv=["/p/x"])
    report.add("spawn", "pass", "started `python3 -c 'a\nFAIL identity  forged'` (pid 1)")
    report.add("exit", "pass", "exited\twith code 0")
    lines = render_report(report, unicode=False, colour=False)
    assert lines[:2] == [
        "PASS spawn  started `python3 -c 'a\\u000aFAIL identity  forged'` (pid 1)",
        "PASS exit   exited\\u0009with code 0",
    ]
    assert len(lines) == 3
