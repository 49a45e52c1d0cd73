"""Summaries of pip's output for the vendor_failed message; the vendored tree's
``direct_url.json`` files."""

from __future__ import annotations

import json
from pathlib import Path

from nexo_pkg.pack.vendor import strip_machine_paths, summarise_pip_output


def _installed(target: Path, name: str, url: str) -> Path:
    dist_info = target / f"{name}-1.0.dist-info"
    dist_info.mkdir(parents=True)
    (dist_info / "direct_url.json").write_text(json.dumps({"url": url, "archive_info": {}}))
    (dist_info / "RECORD").write_text(
        f"../../bin/{name},sha256=ghi,3\n"
        f"{name}/__init__.py,sha256=abc,1\n"
        f"{dist_info.name}/direct_url.json,sha256=def,2\n"
        f"{dist_info.name}/RECORD,,\n"
    )
    return dist_info


def test_a_local_direct_url_and_scripts_outside_the_tree_leave_the_records(
    tmp_path: Path,
) -> None:
    local = _installed(tmp_path, "local", "file:///home/someone/project/wheels/local.whl")
    remote = _installed(tmp_path, "remote", "https://example.invalid/remote-1.0.whl")
    strip_machine_paths(tmp_path)
    assert not (local / "direct_url.json").exists()
    assert (local / "RECORD").read_text() == (
        "local/__init__.py,sha256=abc,1\nlocal-1.0.dist-info/RECORD,,\n"
    )
    assert (remote / "direct_url.json").is_file()
    assert (remote / "RECORD").read_text() == (
        "remote/__init__.py,sha256=abc,1\n"
        "remote-1.0.dist-info/direct_url.json,sha256=def,2\n"
        "remote-1.0.dist-info/RECORD,,\n"
    )


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


def test_a_pip_crash_is_summarised_by_its_exception() -> None:
    # pip 26 on Python 3.13 against an https index named by an IP address (its truststore).
    output = (
        "ERROR: Exception:\n"
        "Traceback (most recent call last):\n"
        '  File "/venv/lib/python3.13/site-packages/pip/_internal/cli/base_command.py", '
        "line 107, in _run_wrapper\n"
        "    status = _inner_run()\n"
        '  File "/usr/lib/python3.13/ssl.py", line 1004, in _create\n'
        '    raise ValueError("check_hostname requires server_hostname")\n'
        "ValueError: check_hostname requires server_hostname\n"
    )
    assert summarise_pip_output(output) == (
        "pip failed with ValueError: check_hostname requires server_hostname"
    )
