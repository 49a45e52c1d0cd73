"""Summaries of pip's output for the vendor_failed message."""

from __future__ import annotations

from nexo_pkg.pack.vendor import summarise_pip_output


def test_error_lines_are_kept() -> None:
    output = (
        "Looking in links: /w\n"
        "ERROR: Could not find a version that satisfies the requirement nope==1 "
        "(from versions: none)\n"
        "ERROR: No matching distribution found for nope==1\n"
    )
    summary = summarise_pip_output(output)
    assert summary.startswith("Could not find a version")
    assert summary.endswith("No matching distribution found for nope==1")
    assert "\n" not in summary


def test_last_line_without_error_lines_and_truncation() -> None:
    assert summarise_pip_output("a\nb\n") == "b"
    assert summarise_pip_output("") == "no output"
    assert len(summarise_pip_output("ERROR: " + "x" * 5000)) == 600
