"""``nexo plugin lsp`` as a command: flags, usage errors, and ending when the editor goes."""

from __future__ import annotations

import logging
import subprocess
import sys

import pytest

from nexo_pkg.lsp.server import _guarded, document_kind

COMMAND = [sys.executable, "-m", "nexo_pkg", "plugin", "lsp"]


def test_help_lists_the_options() -> None:
    done = subprocess.run(
        [*COMMAND, "--help"], capture_output=True, text=True, check=False, timeout=60
    )
    assert done.returncode == 0
    assert "--debounce-ms" in done.stdout
    assert "--stdio" in done.stdout
    # Every kind of file it serves is named (docs/editors.md, "Which files").
    served = " ".join(done.stdout.split())
    for name in ("trusted_keys.toml", "nexo-plugins.toml", "nexo-plugins.lock", "extensions.yaml"):
        assert name in served
    assert "agents.d/*.yaml" in served


@pytest.mark.parametrize("args", [["--debounce-ms", "-5"], ["--debounce-ms", "x"], ["--bogus"]])
def test_usage_errors_exit_2_without_a_traceback(args: list[str]) -> None:
    done = subprocess.run(
        [*COMMAND, *args], capture_output=True, text=True, check=False, timeout=60
    )
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert done.stdout == ""


def test_closed_stdin_ends_the_server() -> None:
    """An editor that dies without `shutdown` must not leave the server running; the server
    ends with 1, the status of an `exit` that no `shutdown` preceded."""
    done = subprocess.run(
        [*COMMAND, "--stdio"], input=b"", capture_output=True, check=False, timeout=60
    )
    assert done.returncode == 1
    assert done.stdout == b""
    assert b"Traceback" not in done.stderr


def test_guarded_handlers_log_and_return_nothing(caplog: pytest.LogCaptureFixture) -> None:
    @_guarded
    def broken(value: int) -> int:
        raise ValueError(value)

    with caplog.at_level(logging.ERROR, logger="nexo_pkg.lsp.server"):
        assert broken(3) is None
    assert "broken failed" in caplog.text


@pytest.mark.parametrize(
    ("uri", "kind"),
    [
        ("file:///work/plugin/nexo-plugin.toml", "manifest"),
        ("file:///C:/My%20Plugins/x/nexo-plugin.toml", "manifest"),
        ("file:///work/plugin/plugin.toml", "manifest"),
        ("file:///work/plugin/myplugin.toml", None),
        ("file:///work/plugin/trusted_keys.toml", "policy"),
        ("file:///work/plugin/Cargo.toml", None),
        ("file:///work/nexo-plugin.toml.orig", None),
        ("untitled:Untitled-1", None),
    ],
)
def test_document_kind_by_file_name(uri: str, kind: str | None) -> None:
    assert document_kind(uri) == kind
