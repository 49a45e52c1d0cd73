"""The one way tests run ``nexo``: a subprocess and an in-process run see the same exit code
and the same streams, and an in-process run leaves this process as it found it."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from .cli import CliResult, clean_env, nexo

MINIMAL = Path(__file__).resolve().parents[1] / "fixtures/manifests/valid/minimal.toml"


@pytest.mark.parametrize(
    ("args", "stdin"),
    [
        (["--version"], None),
        (["plugin", "lint", "--format", "json", "-"], MINIMAL.read_text("utf-8")),
        (["plugin", "lint", "-"], b"[plugin\r\nid = 1\r\n"),
        (["plugin", "bogus"], None),
        (["plugin", "remove", "nothing_here", "--json"], None),
    ],
    ids=["version", "lint-stdin", "lint-bytes", "usage", "json-failure"],
)
def test_in_process_and_subprocess_runs_agree(
    tmp_path: Path, args: list[str], stdin: str | bytes | None
) -> None:
    env = clean_env(NEXO_HOME=str(tmp_path / "home"))
    apart = nexo(*args, env=env, cwd=tmp_path, stdin=stdin)
    inside = nexo(*args, env=env, cwd=tmp_path, stdin=stdin, in_process=True)
    assert inside == apart
    assert apart.stdout or apart.stderr


def test_the_result_reads_the_json_document_and_the_error_line(tmp_path: Path) -> None:
    home = tmp_path / "home"
    result = nexo("plugin", "remove", "nothing_here", "--json", env=clean_env(NEXO_HOME=str(home)))
    assert result.code == result.exit_code == 1
    assert result.document["kind"] == "not_installed"
    assert result.error_line.startswith("error: plugin 'nothing_here' is not installed in ")
    with pytest.raises(AssertionError, match="no error line"):
        _ = CliResult(0, "", "note\n").error_line


def test_an_in_process_run_restores_this_process(tmp_path: Path) -> None:
    before = (dict(os.environ), Path.cwd(), signal.getsignal(signal.SIGINT))
    env = clean_env(NEXO_HOME=str(tmp_path / "home"), ONLY_IN_THE_RUN="1")
    # A configuration directory holding a file read from it is named.
    (tmp_path / "home" / "config" / "plugins").mkdir(parents=True)
    (tmp_path / "home" / "config" / "plugins" / "discovery.yaml").write_text("discovery: {}\n")
    quiet = nexo("--quiet", "plugin", "list", env=env, cwd=tmp_path, in_process=True)
    assert (quiet.code, quiet.stdout, quiet.stderr) == (0, "", "")
    assert (dict(os.environ), Path.cwd(), signal.getsignal(signal.SIGINT)) == before
    # --quiet ended with its run: the next run speaks as a subprocess does.
    loud = nexo("plugin", "list", env=env, cwd=tmp_path, in_process=True)
    assert loud == nexo("plugin", "list", env=env, cwd=tmp_path)
    # The configuration directory's note is said again: once per run, not once per process.
    note, listing = loud.stderr.splitlines()
    assert note.startswith("note: using the configuration directory ")
    assert listing.startswith("No plugins installed in ")


def test_clean_env_drops_github_and_proxy_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GH_TOKEN", "secret")
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:9")
    env = clean_env(EXTRA="x")
    assert "GH_TOKEN" not in env
    assert "HTTPS_PROXY" not in env
    assert (env["NO_COLOR"], env["EXTRA"]) == ("1", "x")
    assert not Path(env["GH_CONFIG_DIR"]).exists()
