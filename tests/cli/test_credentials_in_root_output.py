"""A URL with credentials given to ``--dest`` (where a directory is expected) is a directory
name like any other for ``list`` and ``doctor``; what they print of it — the root, each
plugin's path, in text and in ``--json`` — never shows the credentials: the masking every
error uses (``***@``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.cli import clean_env, nexo
from support.tarballs import write_plugin

SECRET = "ghp_n0tEch0edR00t"  # noqa: S105 (a directory name here: never sent anywhere)
DEST = f"https://x-access-token:{SECRET}@github.com/acme/root"
SHOWN = "https:/***@github.com/acme/root"


def _outputs(tmp_path: Path, command: str, *extra: str) -> list[tuple[str, str]]:
    env = clean_env(NEXO_HOME=str(tmp_path / "home"), NEXO_CONFIG_DIR=str(tmp_path / "config"))
    shown = []
    for flags in ((), ("--json",)):
        result = nexo("plugin", command, "--dest", DEST, *extra, *flags, env=env, cwd=tmp_path)
        assert result.exit_code == 0, result.stderr
        if flags:
            json.loads(result.stdout)
        shown.append((result.stdout, result.stderr))
    return shown


@pytest.mark.daemon_host
@pytest.mark.parametrize("installed", [False, True], ids=["empty", "one-plugin"])
@pytest.mark.parametrize("command", ["list", "doctor"])
def test_list_and_doctor_never_print_the_credentials_of_a_root(
    tmp_path: Path, command: str, *, installed: bool
) -> None:
    (tmp_path / "config").mkdir()
    if installed:
        tarball = write_plugin(tmp_path / "dist", "echo", "0.1.0")
        env = clean_env(NEXO_HOME=str(tmp_path / "home"))
        done = nexo("plugin", "install", tarball, "--dest", DEST, "--yes", env=env, cwd=tmp_path)
        assert done.exit_code == 0, done.stderr
        assert (tmp_path / "https:" / DEST.split("//", 1)[1] / "echo-0.1.0").is_dir()
    extra = ("--no-check",) if command == "doctor" else ()
    (text, text_err), (document, document_err) = _outputs(tmp_path, command, *extra)
    for output in (text, text_err, document, document_err):
        assert SECRET not in output, output
        assert "x-access-token" not in output, output
    # The root is still named, masked, in both forms.
    assert SHOWN in text + text_err
    assert SHOWN in json.loads(document)["dest"]
    if installed and command == "list":
        plugin = json.loads(document)["plugins"][0]
        assert plugin["path"].endswith(f"{SHOWN}/echo-0.1.0"), plugin
        assert f"{SHOWN}/echo-0.1.0" in text, text
    if installed and command == "doctor":
        assert json.loads(document)["plugins"] == ["echo"]
        assert f"1 plugin(s) in {tmp_path}/{SHOWN}: " in text_err, text_err


@pytest.mark.daemon_host
@pytest.mark.parametrize(
    "flags", [("--dry-run",), ("--yes",), ("--yes", "--json")], ids=["screen", "text", "json"]
)
def test_install_never_prints_the_credentials_of_its_root(
    tmp_path: Path, flags: tuple[str, ...]
) -> None:
    """``install --dest URL``: the confirmation screen (``Install to:``), the line that says
    where it went, and the ``--json`` document name the root masked, as ``list`` does."""
    tarball = write_plugin(tmp_path / "dist", "echo", "0.1.0")
    env = clean_env(NEXO_HOME=str(tmp_path / "home"))
    done = nexo("plugin", "install", tarball, "--dest", DEST, *flags, env=env, cwd=tmp_path)
    assert done.exit_code == 0, done.stderr
    assert SECRET not in done.stdout + done.stderr
    assert "x-access-token" not in done.stdout + done.stderr
    if "--json" in flags:
        assert json.loads(done.stdout)["path"].endswith(f"{SHOWN}/echo-0.1.0")
    elif "--dry-run" in flags:
        assert f"Install to:   {tmp_path}/{SHOWN}/echo-0.1.0" in done.stderr, done.stderr
    else:
        assert f"Installed echo 0.1.0 to {tmp_path}/{SHOWN}/echo-0.1.0." in done.stderr
    installed = tmp_path / "https:" / DEST.split("//", 1)[1] / "echo-0.1.0"
    assert installed.is_dir() is ("--dry-run" not in flags)


@pytest.mark.daemon_host
@pytest.mark.parametrize("flags", [(), ("--json",)], ids=["text", "json"])
def test_install_check_never_prints_the_credentials_of_its_root(
    tmp_path: Path, flags: tuple[str, ...]
) -> None:
    """``install --check --dest URL``: the check's report on stderr, the line of a failed
    check (with its `remove` remedy) and the ``--json`` document with its ``check`` part name
    the root masked, as ``install`` without ``--check`` does."""
    tarball = write_plugin(tmp_path / "dist", "echo", "0.1.0")  # exits before `initialize`
    env = clean_env(NEXO_HOME=str(tmp_path / "home"))
    done = nexo(
        "plugin", "install", tarball, "--dest", DEST, "--yes", "--check", *flags,
        env=env, cwd=tmp_path,
    )  # fmt: skip
    assert done.exit_code == 1, done.stderr
    assert SECRET not in done.stdout + done.stderr
    assert "x-access-token" not in done.stdout + done.stderr
    assert f"{SHOWN}/echo-0.1.0/bin/echo" in done.stderr + done.stdout
    assert "failed the handshake checks" in done.stderr
    assert done.stderr.rstrip().endswith("[check_failed]"), done.stderr
    assert f"--dest {tmp_path}/{SHOWN}`" in done.stderr, done.stderr
    if flags:
        document = json.loads(done.stdout)
        assert document["kind"] == "check_failed"
        assert document["path"].endswith(f"{SHOWN}/echo-0.1.0")
        assert document["check"]["ok"] is False
    assert (tmp_path / "https:" / DEST.split("//", 1)[1] / "echo-0.1.0").is_dir()


@pytest.mark.daemon_host
@pytest.mark.parametrize(
    "command",
    [
        ("verify",),
        ("verify", "echo"),
        ("outdated",),
        ("hold", "echo"),
        ("disable", "echo"),
        ("upgrade", "--all"),
        ("remove", "echo", "--yes"),
    ],
    ids=" ".join,
)
def test_json_answers_never_print_the_credentials_of_a_root(
    tmp_path: Path, command: tuple[str, ...]
) -> None:
    """Every command's ``--json`` answer names a root given as a URL masked, as its text
    output and its errors do."""
    tarball = write_plugin(tmp_path / "dist", "echo", "0.1.0")
    env = clean_env(NEXO_HOME=str(tmp_path / "home"), NEXO_GITHUB_API_BASE="http://127.0.0.1:9")
    done = nexo("plugin", "install", tarball, "--dest", DEST, "--yes", env=env, cwd=tmp_path)
    assert done.exit_code == 0, done.stderr
    extra = ("--config", str(tmp_path / "config")) if command[0] == "disable" else ()
    if extra:
        (tmp_path / "config" / "plugins").mkdir(parents=True)
    result = nexo("plugin", *command, "--dest", DEST, "--json", *extra, env=env, cwd=tmp_path)
    json.loads(result.stdout)
    assert SECRET not in result.stdout + result.stderr, result.stdout
    assert "x-access-token" not in result.stdout + result.stderr, result.stdout
