"""The conventions of docs/cli.md, each run as a user would: a real ``nexo`` subprocess.

Help with ``-h``; ``--version`` and lazily imported commands; shell completion; ``--quiet``,
``--verbose`` and ``--color`` with ``NO_COLOR``/``FORCE_COLOR``; results on stdout; usage
errors exit 2; ``remove`` without a terminal; Ctrl-C and SIGTERM (one line, 130/143, nothing
left behind), at a prompt and in the language server.
"""

from __future__ import annotations

import io
import json
import os
import pty
import select
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from crash.scenario import Root, installed_versions, leftovers, publish, wait_for
from faults.server import FaultyGitHubServer
from support import cli
from support.stderr import without_notes
from support.tarballs import tree_snapshot, write_plugin

from nexo_pkg import __version__

REPO = Path(__file__).resolve().parents[2]
INVALID_MANIFEST = REPO / "tests/fixtures/manifests/invalid"


def base_env(**extra: str) -> dict[str, str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("NEXO_", "GITHUB_", "GH_", "FORCE_COLOR", "NO_COLOR", "CLICOLOR"))
    }
    env.update(extra)
    return env


# A run in this process unless it is about imports, signals or a terminal (those make their
# own processes below).
nexo = partial(cli.nexo, in_process=True)


def imported_modules(*args: str) -> set[str]:
    """Module names imported by ``nexo ARGS`` (exit code ignored)."""
    script = (
        "import atexit, sys\n"
        "atexit.register(lambda: sys.__stderr__.write("
        "'MODULES ' + ' '.join(sorted(sys.modules)) + '\\n'))\n"
        f"sys.argv = ['nexo', *{list(args)!r}]\n"
        "from nexo_pkg.cli.main import main\n"
        "main()\n"
    )
    completed = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        check=False,
        env=base_env(),
        stdin=subprocess.DEVNULL,
        timeout=60,
    )
    line = next(line for line in completed.stderr.splitlines() if line.startswith("MODULES "))
    return set(line.split()[1:])


def a_manifest_with_errors() -> Path:
    return next(iter(sorted(INVALID_MANIFEST.glob("*.toml"))))


# -- help, version, lazy commands -----------------------------------------------------------


@pytest.mark.parametrize(
    "args", [["-h"], ["plugin", "-h"], ["plugin", "install", "-h"], ["plugin", "lint", "-h"]]
)
def test_dash_h_is_help(args: list[str]) -> None:
    result = nexo(*args, env=base_env())
    assert result.code == 0, result.stderr
    assert result.stdout.startswith("Usage: nexo")


def test_help_prints_patterns_as_written() -> None:
    result = nexo("plugin", "new", "--help", env=base_env())
    assert result.code == 0
    assert "^[a-z][a-z0-9_]{0,31}$" in result.stdout
    install = nexo("plugin", "install", "--help", env=base_env()).stdout
    assert "owner/repo[@tag]" in install
    assert "\\[" not in install


def test_version_imports_nothing_but_the_version() -> None:
    result = nexo("--version", env=base_env())
    assert (result.code, result.stdout) == (0, f"nexo-pkg {__version__}\n")
    modules = imported_modules("--version")
    ours = {name for name in modules if name.startswith("nexo_pkg")}
    assert ours == {"nexo_pkg", "nexo_pkg.cli", "nexo_pkg.cli.main"}
    assert "typer" not in modules


def test_a_command_imports_only_its_own_module() -> None:
    modules = imported_modules("plugin", "install", "--help")
    assert "nexo_pkg.cli.install" in modules
    for other in ("nexo_pkg.cli.check", "nexo_pkg.cli.lsp", "nexo_pkg.cli.pack", "rich"):
        assert other not in modules, other
    # --help does not need the install machinery either.
    for machinery in ("nexo_pkg.install.root", "nexo_pkg.install.receipts"):
        assert machinery not in modules, machinery
    assert "httpx" not in modules


@pytest.mark.parametrize("command", ["list", "lint", "lint-warnings"])
def test_list_and_lint_load_no_unicode_database_for_ascii_text(
    tmp_path: Path, command: str
) -> None:
    """Carets are placed by terminal cells; ASCII text (every plain report) is measured
    without loading Python's Unicode database, which `list` and a clean `lint DIR` never
    loaded (they are hot paths: a host's thousand plugins, a pre-commit run)."""
    if command == "list":
        arguments = ["plugin", "list", "--dest", str(tmp_path / "root")]
    else:
        kind = "valid" if command == "lint" else "warning"
        arguments = ["plugin", "lint", str(REPO / "tests/fixtures/manifests" / kind)]
    modules = imported_modules(*arguments)
    assert "nexo_pkg.core.terminal" in modules
    assert "unicodedata" not in modules


def test_check_does_not_import_install_or_jsonschema(tmp_path: Path) -> None:
    modules = imported_modules("plugin", "check", str(tmp_path / "missing"))
    assert "nexo_pkg.cli.check" in modules
    assert not {name for name in modules if name.startswith("nexo_pkg.install")}
    assert "jsonschema" not in modules


def test_a_whole_check_of_a_plugin_without_tools_imports_neither(tmp_path: Path) -> None:
    """A full session (spawn, initialize, probes, shutdown) of a plugin directory named by its
    path: nothing installed is looked up and no input_schema is there to check, so neither
    the install machinery nor jsonschema is loaded."""
    plugin = tmp_path / "scripted"
    plugin.mkdir()
    (plugin / "nexo-plugin.toml").write_text(
        '[plugin]\nid = "scripted"\nversion = "0.1.0"\nname = "Scripted"\n'
        'description = "Test plugin"\nmin_nexo_version = ">=0.1.0"\n\n'
        f"[plugin.entrypoint]\ncommand = {json.dumps(sys.executable)}\n"
        f'args = [{json.dumps(str(REPO / "tests/fixtures/plugins/scripted.py"))}, "ok"]\n',
        encoding="utf-8",
    )
    assert nexo("plugin", "check", str(plugin), env=base_env()).code == 0
    modules = imported_modules("plugin", "check", str(plugin))
    assert "nexo_pkg.check.checks" in modules  # the session ran
    assert not {name for name in modules if name.startswith("nexo_pkg.install")}
    assert "jsonschema" not in modules


# -- completion -----------------------------------------------------------------------------


def test_show_and_install_completion(tmp_path: Path) -> None:
    shown = nexo("--show-completion", "bash", env=base_env())
    assert shown.code == 0, shown.stderr
    assert "_NEXO_COMPLETE" in shown.stdout
    env = base_env(HOME=str(tmp_path))
    installed = nexo("--install-completion", "bash", env=env)
    assert installed.code == 0, installed.stderr
    assert "bash completion installed" in installed.stderr
    assert "nexo" in (tmp_path / ".bashrc").read_text()
    unknown = nexo("--install-completion", "tcsh", env=env)
    assert unknown.code == 2
    assert "unsupported shell 'tcsh'" in unknown.stderr


@pytest.mark.parametrize("shell", ["pwsh", "powershell"])
def test_install_completion_for_a_powershell_that_is_missing_or_fails(
    tmp_path: Path, shell: str
) -> None:
    # PowerShell is asked where its profile is; without it (or when it fails) the answer is
    # one usage line that names the way by hand, with -v too, and nothing is written.
    home = tmp_path / "home"
    home.mkdir()
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    path = f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"
    missing = cli.nexo("-v", "--install-completion", shell, env=base_env(HOME=str(home), PATH=path))
    assert missing.code == 2, missing.stderr
    assert missing.stderr.count("\n") == 1, missing.stderr
    assert f"{shell} is not installed here" in missing.stderr
    assert f"nexo --show-completion {shell}" in missing.stderr
    failing = bin_dir / shell
    failing.write_text("#!/bin/sh\nexit 3\n")
    failing.chmod(0o755)
    refused = cli.nexo("--install-completion", shell, env=base_env(HOME=str(home), PATH=path))
    assert refused.code == 2, refused.stderr
    assert f"`{shell}` did not say where its profile is (exit 3)" in refused.stderr
    assert list(home.iterdir()) == []


def test_install_completion_into_a_profile_that_cannot_be_written_is_one_line(
    tmp_path: Path,
) -> None:
    # A `.bashrc` that cannot be written (here: a directory of that name) is an io error in
    # one line naming it and the way by hand, never an unexpected error of nexo-pkg.
    home = tmp_path / "home"
    (home / ".bashrc").mkdir(parents=True)
    refused = cli.nexo("--install-completion", "bash", env=base_env(HOME=str(home)))
    assert refused.code == 1, refused.stderr
    assert refused.stderr.count("\n") == 1, refused.stderr
    assert refused.stderr.startswith(f"error: cannot write {home / '.bashrc'}: "), refused.stderr
    assert "nexo --show-completion bash" in refused.stderr
    assert "unexpected" not in refused.stderr


@pytest.mark.parametrize(("shell", "profile"), [("bash", ".bashrc"), ("zsh", ".zshrc")])
def test_install_completion_into_a_profile_that_is_not_utf8_is_one_line(
    tmp_path: Path, shell: str, profile: str
) -> None:
    # A profile written on a Latin-1 system: one io line naming it and the way by hand,
    # never an unexpected error of nexo-pkg, and the home directory exactly as it was.
    home = tmp_path / "home"
    home.mkdir()
    (home / profile).write_bytes(b"export NAME=caf\xe9\n")
    before = tree_snapshot(home)
    refused = cli.nexo("--install-completion", shell, env=base_env(HOME=str(home)))
    assert refused.code == 1, refused.stderr
    [line] = refused.stderr.splitlines()
    assert line.startswith(f"error: cannot add completion to {home / profile}: it is not UTF-8"), (
        line
    )
    assert f"nexo --show-completion {shell}" in line
    assert line.endswith(" [io]"), line
    assert tree_snapshot(home) == before


@pytest.mark.skipif(
    os.name != "posix" or os.geteuid() != 0, reason="runs as a uid without a passwd entry"
)
@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_install_completion_without_a_home_directory_is_a_configuration_error(
    tmp_path: Path, shell: str
) -> None:
    # No HOME and no passwd entry (a container under a bare numeric uid): exit 2, one line
    # saying what to set, as every command that needs the home directory says it.
    env = {key: value for key, value in base_env().items() if key not in ("HOME", "NEXO_HOME")}
    prefix = ["setpriv", "--reuid=54321", "--regid=54321", "--clear-groups"]
    # An interpreter under a home of mode 0700 (pyenv's in /root, whose libpython the uid
    # cannot load) does not start at all for that uid: nothing of nexo-pkg to judge then.
    starts = subprocess.run(
        [*prefix, sys.executable, "-c", ""], capture_output=True, text=True, check=False
    )
    if starts.returncode != 0:
        pytest.skip(f"{sys.executable} does not start as uid 54321: {starts.stderr.strip()}")
    done = subprocess.run(
        [*prefix, sys.executable, "-m", "nexo_pkg", "--install-completion", shell],
        capture_output=True,
        text=True,
        env={**env, "PYTHONPATH": os.pathsep.join(sys.path)},
        cwd=tmp_path,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1, done.stderr
    assert "cannot find the home directory" in done.stderr
    assert f"nexo --show-completion {shell}" in done.stderr


def test_completion_lists_commands_and_options() -> None:
    env = base_env(_NEXO_COMPLETE="complete_bash", COMP_WORDS="nexo plugin ins", COMP_CWORD="2")
    commands = nexo(env=env)
    assert commands.code == 0
    assert set(commands.stdout.split()) == {"install"}
    env.update(COMP_WORDS="nexo plugin upgrade --al", COMP_CWORD="3")
    assert set(nexo(env=env).stdout.split()) == {
        "--all",
        "--allow-downgrade",
        "--allow-signer-change",
    }


# -- quiet, verbose, colour -----------------------------------------------------------------


def test_quiet_drops_notes_but_not_errors(tmp_path: Path) -> None:
    created = nexo("plugin", "new", "demo", "--quiet", cwd=tmp_path, env=base_env())
    assert created.code == 0
    assert created.stderr == ""
    assert (tmp_path / "demo" / "plugin.toml").is_file()
    again = nexo("-q", "plugin", "new", "demo", cwd=tmp_path, env=base_env())
    assert again.code == 2
    assert again.stderr.startswith("error: ")


def test_quiet_and_verbose_contradict() -> None:
    result = nexo("plugin", "list", "--quiet", "--verbose", env=base_env())
    assert result.code == 2
    assert "--quiet and --verbose" in result.stderr


def test_the_error_line_names_its_kind_and_verbose_adds_details(tmp_path: Path) -> None:
    plain = nexo("plugin", "install", "no/such@@tag", "--dest", str(tmp_path), env=base_env())
    verbose = nexo(
        "plugin", "install", "no/such@@tag", "--dest", str(tmp_path), "--verbose", env=base_env()
    )
    [line] = without_notes(plain.stderr).splitlines()
    assert line.startswith("error: "), line
    assert line.endswith(" [source_invalid]"), line
    assert line in verbose.stderr.splitlines()
    assert "  source: no/such@@tag" in verbose.stderr.splitlines(), verbose.stderr


@pytest.mark.parametrize(
    ("flags", "env", "painted"),
    [
        ([], {}, False),
        ([], {"FORCE_COLOR": "1"}, True),
        ([], {"FORCE_COLOR": "1", "NO_COLOR": "1"}, False),
        (["--color", "always"], {"NO_COLOR": "1"}, True),
        (["--color", "never"], {"FORCE_COLOR": "1"}, False),
        ([], {"CLICOLOR_FORCE": "1"}, True),
        ([], {"CLICOLOR_FORCE": "0"}, False),
        ([], {"FORCE_COLOR": ""}, False),  # set but empty: not forced, as NO_COLOR=""
        ([], {"FORCE_COLOR": "", "CLICOLOR_FORCE": "1"}, True),
        ([], {"CLICOLOR_FORCE": "1", "NO_COLOR": "1"}, False),
        ([], {"CLICOLOR_FORCE": "1", "CLICOLOR": "0"}, True),
        (["--color", "never"], {"CLICOLOR_FORCE": "1"}, False),
    ],
)
def test_colour_choice(flags: list[str], env: dict[str, str], painted: bool) -> None:
    result = nexo("plugin", "lint", *flags, str(a_manifest_with_errors()), env=base_env(**env))
    assert result.code == 1, result.stderr
    assert ("\x1b[" in result.stdout) is painted


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(
    ("env", "painted"),
    [({}, True), ({"CLICOLOR": "0"}, False), ({"CLICOLOR": "1"}, True), ({"NO_COLOR": "1"}, False)],
)
def test_clicolor_0_turns_colour_off_on_a_terminal(
    env: dict[str, str], painted: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    from nexo_pkg.cli.common import colour_enabled

    for name in ("NO_COLOR", "FORCE_COLOR", "CLICOLOR", "CLICOLOR_FORCE"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert colour_enabled(_Terminal()) is painted


def test_bad_colour_is_a_usage_error() -> None:
    result = nexo("plugin", "list", "--color", "sometimes", env=base_env())
    assert result.code == 2
    assert "auto, always, never" in result.stderr


@pytest.mark.parametrize(
    "wrong", [["--color", "sometimes"], ["-q", "-v"], ["--verbose", "--quiet"]]
)
def test_a_shared_option_used_wrongly_is_the_same_usage_error_on_every_command(
    wrong: list[str], tmp_path: Path
) -> None:
    """`lint`, `list` and `sync` parse their own arguments: a shared option used wrongly
    still gets the line and the --json document every other command gives for it."""
    env = base_env(NEXO_HOME=str(tmp_path / "home"))
    seen = set()
    for command in (["lint"], ["list"], ["sync"], ["verify"]):
        result = nexo("plugin", *command, "--json", *wrong, env=env, cwd=tmp_path)
        assert result.code == 2, result.stderr
        [line] = result.stderr.splitlines()
        assert line.endswith(f"Run 'nexo plugin {command[0]} -h' for help. [usage]"), line
        document = json.loads(result.stdout)
        assert document["kind"] == "usage"
        assert line == (
            f"error: {document['error']}. Run 'nexo plugin {command[0]} -h' for help. [usage]"
        )
        seen.add(document["error"])
    assert len(seen) == 1, seen
    assert not (tmp_path / "home").exists()


# -- exit codes and streams -----------------------------------------------------------------


@pytest.mark.parametrize("source", ["acme", "a/b/c", "https://github.com/acme/hello", "a b/c"])
def test_a_malformed_source_is_a_usage_error(source: str, tmp_path: Path) -> None:
    result = nexo(
        "plugin", "install", source, "--dest", str(tmp_path / "d"), "--json", env=base_env()
    )
    assert result.code == 2
    assert json.loads(result.stdout)["kind"] == "source_invalid"
    assert not (tmp_path / "d").exists()


@pytest.mark.parametrize(
    "args",
    [
        ["plugin", "install", "--json", "--no-such-flag", "acme/hello"],
        ["plugin", "install", "--json"],
        ["plugin", "list", "--json", "--no-such-flag"],
        ["plugin", "verify", "--json", "a", "b"],
        ["plugin", "lock", "--json", "--no-such-flag"],
        # lint's `--format json` is its `--json`: the same document for a parser's refusal.
        ["plugin", "lint", "--format", "json", "--no-such-flag"],
        ["plugin", "lint", "--no-such-flag", "--format=json"],
        ["plugin", "lint", "--format", "json", "--color", "sometimes"],
    ],
)
def test_json_usage_errors_still_print_one_document(args: list[str], tmp_path: Path) -> None:
    result = nexo(*args, env=base_env(NEXO_HOME=str(tmp_path / "home")))
    assert result.code == 2
    document = json.loads(result.stdout)
    assert document["ok"] is False
    assert document["kind"] == "usage"
    assert document["error"]
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "home").exists()


@pytest.mark.parametrize(
    ("args", "says", "help_of"),
    [
        (
            ["plugin", "lint", "--no-such-flag"],
            "No such option: --no-such-flag",
            "nexo plugin lint",
        ),
        (["plugin", "schema", "extra"], "unexpected extra argument", "nexo plugin schema"),
        (["plugin", "instal"], "Did you mean 'install'", "nexo plugin"),
        (["plugin", "trust", "add"], "Missing argument", "nexo plugin trust add"),
        (
            ["plugin", "cache", "prune", "--older-than-days", "soon"],
            "'soon' is not a valid float",
            "nexo plugin cache prune",
        ),
        (["--no-such-flag"], "No such option", "nexo"),
    ],
)
def test_a_usage_error_is_one_line_naming_the_help_to_read(
    args: list[str], says: str, help_of: str, tmp_path: Path
) -> None:
    """SPEC §1: one clear line on stderr saying what is wrong and what to do, exit 2: not
    click's usage block."""
    result = nexo(*args, env=base_env(NEXO_HOME=str(tmp_path / "home")))
    assert result.code == 2
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ")
    assert says in lines[0]
    assert lines[0].endswith(f"Run '{help_of} -h' for help. [usage]")
    assert not (tmp_path / "home").exists()


_BROKEN_COMMAND = """
import errno, sys
import nexo_pkg.cli.app as app
from nexo_pkg.cli.main import main

def run(arguments):
    if sys.argv[-1] == "os":
        raise OSError(errno.ENOSPC, "No space left on device", "/plugins/.nexo/staging")
    raise ValueError("a bug's own words")

app.run = run
sys.argv = ["nexo", *sys.argv[1:]]
main()
"""


@pytest.mark.parametrize(
    ("what", "kind", "says"),
    [
        ("bug", "internal", "unexpected ValueError: a bug's own words (a bug in nexo-pkg"),
        ("os", "io", "No space left on device: /plugins/.nexo/staging"),
    ],
)
@pytest.mark.parametrize("json_output", [False, True])
def test_a_failure_no_kind_describes_is_one_line_not_a_traceback(
    what: str, kind: str, says: str, json_output: bool
) -> None:
    """The last resort: an exception that reaches the top as no NexoError (a bug, or an
    operating-system error no caller expected) is one line with its kind, and with
    ``--json`` one document; ``--verbose`` adds the traceback."""
    flags = ["--json"] if json_output else []
    result = subprocess.run(
        [sys.executable, "-c", _BROKEN_COMMAND, "plugin", "list", *flags, what],
        capture_output=True, text=True, env=base_env(), timeout=60, check=False,
    )  # fmt: skip
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ")
    assert says in lines[0]
    if json_output:
        document = json.loads(result.stdout)
        assert document["ok"] is False
        assert document["kind"] == kind
        assert says in document["error"]
    else:
        assert result.stdout == ""
    verbose = subprocess.run(
        [sys.executable, "-c", _BROKEN_COMMAND, "plugin", "list", "--verbose", what],
        capture_output=True, text=True, env=base_env(), timeout=60, check=False,
    )  # fmt: skip
    assert verbose.returncode == 1
    assert "Traceback" in verbose.stderr
    said = [line for line in verbose.stderr.splitlines() if line.startswith("error: ")]
    assert len(said) == 1
    assert said[0].endswith(f" [{kind}]")


def test_json_after_double_dash_is_an_argument_not_the_option(tmp_path: Path) -> None:
    result = nexo("plugin", "install", "--no-such-flag", "--", "--json", env=base_env())
    assert result.code == 2
    assert result.stdout == ""


def test_remove_without_a_terminal_needs_yes(tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = base_env(NEXO_HOME=str(home))
    tarball = write_plugin(tmp_path / "dist", "hello", "1.0.0")
    assert nexo("plugin", "install", str(tarball), "--yes", env=env).code == 0
    installed = home / "state/plugins/hello-1.0.0"
    before = tree_snapshot(tmp_path)
    refused = nexo("plugin", "remove", "hello", env=env)
    assert refused.code == 2
    assert "--yes" in refused.stderr
    assert len(without_notes(refused.stderr).splitlines()) == 1
    assert without_notes(refused.stderr).rstrip().endswith(" [usage]"), refused.stderr
    assert tree_snapshot(tmp_path) == before
    listed = nexo("plugin", "list", env=env)
    assert len(listed.stdout.splitlines()) == 1
    removed = nexo("plugin", "remove", "hello", "--yes", env=env)
    assert removed.code == 0
    assert not installed.exists()


# -- signals --------------------------------------------------------------------------------


@pytest.fixture
def root(tmp_path: Path) -> Iterator[Root]:
    with FaultyGitHubServer() as server:
        yield Root(server, tmp_path / "home")


def test_ctrl_c_during_download_is_one_line_and_130(root: Root) -> None:
    path = publish(root.server, "hello", "1.0.0")
    root.server.throttle(path, 64 * 1024)
    process = subprocess.Popen(
        [sys.executable, "-m", "nexo_pkg", "plugin", "install", "acme/hello", "--yes"],
        env=root.env(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert wait_for(lambda: bool(root.server.requests_to(path)), 30)
    time.sleep(0.3)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=30)
    assert process.returncode == 130
    assert err.strip().splitlines()[-1] == "error: interrupted [interrupted]"
    assert "Traceback" not in err
    assert out == ""
    assert leftovers(root) == []
    cache = root.cache
    assert not cache.exists() or [p for p in cache.rglob("*") if p.is_file()] == []


def test_sigterm_during_extraction_removes_staging(root: Root) -> None:
    caught = 0
    for attempt in range(4):
        publish(root.server, "hello", f"1.0.{attempt}", files=2000)
        process = root.spawn("install", f"acme/hello@v1.0.{attempt}", "--yes")
        if not wait_for(lambda: bool(leftovers(root)), 60):
            process.wait(timeout=60)
            continue
        process.send_signal(signal.SIGTERM)
        code = process.wait(timeout=60)
        if code == 0:
            continue  # finished between the check and the signal
        assert code == 143
        caught += 1
        assert leftovers(root) == []
        # Nothing half-installed is visible: no directory without a receipt, and the
        # interrupted version is not listed.
        assert f"1.0.{attempt}" not in installed_versions(root)
        break
    assert caught, "the install was never caught with a staging tree"


def _read_until(fd: int, needle: bytes, timeout: float) -> bytes:
    seen = b""
    deadline = time.monotonic() + timeout
    while needle not in seen and time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.1)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
    return seen


def _install_asking(tmp_path: Path, *flags: str) -> tuple[subprocess.Popen[bytes], int, bytes]:
    """``install`` of a local hello 1.0.0 under ``NEXO_HOME=tmp_path/home`` with stdin and
    stderr on a terminal (stdout too, unless ``--json``: then a pipe), run up to its question;
    the process, the terminal's controlling end (for the caller to close) and what it showed."""
    tarball = write_plugin(tmp_path / "dist", "hello", "1.0.0")
    controller, terminal = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "nexo_pkg", "plugin", "install", str(tarball), *flags],
        env=base_env(NEXO_HOME=str(tmp_path / "home"), NO_COLOR="1"),
        stdin=terminal,
        stdout=subprocess.PIPE if "--json" in flags else terminal,
        stderr=terminal,
        start_new_session=True,
    )
    os.close(terminal)
    shown = _read_until(controller, b"Install this plugin?", 60)
    return process, controller, shown


def test_ctrl_c_at_the_prompt_is_130_not_aborted(tmp_path: Path) -> None:
    home = tmp_path / "home"
    process, controller, shown = _install_asking(tmp_path)
    try:
        assert b"Install this plugin?" in shown, shown
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=30) == 130
        rest = _read_until(controller, b"interrupted", 5)
    finally:
        os.close(controller)
    assert b"interrupted" in rest
    assert b"Aborted" not in rest
    assert not (home / "state/plugins/hello-1.0.0").exists()


@pytest.mark.parametrize(
    ("sent", "code", "line"),
    [
        (signal.SIGINT, 130, b"error: interrupted [interrupted]"),
        (signal.SIGTERM, 143, b"error: terminated [interrupted]"),
    ],
)
def test_a_signal_at_the_prompt_takes_the_staged_tree_away_and_says_one_line(
    tmp_path: Path, sent: signal.Signals, code: int, line: bytes
) -> None:
    # The tarball is extracted before the question: a staged tree waits in the root while the
    # prompt is up. Ctrl-C or SIGTERM there takes it away, then prints one line with its kind.
    root = tmp_path / "home/state/plugins"
    process, controller, shown = _install_asking(tmp_path)
    try:
        assert b"Install this plugin?" in shown, shown
        staged = [path for path in root.rglob("*") if "staging" in path.parts]
        assert staged, sorted(root.rglob("*"))
        process.send_signal(sent)
        assert process.wait(timeout=30) == code
        rest = _read_until(controller, line, 5)
    finally:
        os.close(controller)
    assert [said for said in rest.splitlines() if said.strip()] == [line], rest
    left = sorted(str(path) for path in root.rglob("*") if path.name != ".nexo-install.lock")
    assert left == [], left


def test_json_install_on_a_terminal_shows_what_it_asks_about(tmp_path: Path) -> None:
    # --json keeps stdout to one document, but the person asked on the terminal still sees
    # the plugin, its source and its signer before the question, as without --json.
    process, controller, shown = _install_asking(tmp_path, "--json")
    try:
        assert b"Install this plugin?" in shown, shown
        os.write(controller, b"n\n")
        out, _ = process.communicate(timeout=30)
    finally:
        os.close(controller)
    question = shown.index(b"Install this plugin?")
    for line in (b"Plugin:       hello 1.0.0", b"Source:", b"Signer:       unsigned"):
        assert 0 <= shown.find(line) < question, shown
    assert process.returncode == 1
    document = json.loads(out)
    assert (document["ok"], document["kind"]) == (False, "cancelled")
    assert not (tmp_path / "home/state/plugins").exists()


@pytest.mark.parametrize(
    ("sent", "code", "line"),
    [
        pytest.param(signal.SIGINT, 130, "interrupted", id="SIGINT"),
        pytest.param(getattr(signal, "SIGHUP", None), 129, "hung up", id="SIGHUP"),
        pytest.param(getattr(signal, "SIGUSR1", None), 138, "stopped by SIGUSR1", id="SIGUSR1"),
    ],
)
def test_lsp_stops_on_the_first_ctrl_c(sent: signal.Signals | None, code: int, line: str) -> None:
    """Ctrl-C, and every other signal the command line unwinds on, end the server at once
    (not an interruption raised into pygls's loop)."""
    if sent is None:
        pytest.skip("no such signal on this platform")
    process = subprocess.Popen(
        [sys.executable, "-m", "nexo_pkg", "plugin", "lsp"],
        env=base_env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdin is not None
    body = json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}}
    ).encode()
    process.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
    process.stdin.flush()
    assert process.stdout is not None
    header = process.stdout.readline()
    assert header.startswith(b"Content-Length")
    process.send_signal(sent)
    _, err = process.communicate(timeout=20)
    assert process.returncode == code
    assert err.decode().strip().splitlines()[-1] == f"error: {line} [interrupted]"
    assert b"Fatal Python error" not in err


def _waiting_on_stdin(pid: int) -> bool:
    """The process handles SIGTERM (nexo's handlers are in place: Python's own do not take
    it) and sleeps reading a pipe."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
        wchan = Path(f"/proc/{pid}/wchan").read_text()
    except OSError:
        return False
    caught = int(next(line for line in status.splitlines() if line.startswith("SigCgt:"))[7:], 16)
    return bool(caught & 1 << (signal.SIGTERM - 1)) and "pipe" in wchan


@pytest.mark.skipif(not Path("/proc/self/wchan").exists(), reason="needs Linux's /proc")
@pytest.mark.parametrize("spelling", [["--json"], ["--format", "json"], ["--format=json"]])
def test_lint_interrupted_reading_stdin_prints_its_json_document(spelling: list[str]) -> None:
    """``lint --format json`` is ``lint --json``: a run cut short prints the interrupted
    document too (an editor or CI step piping a buffer that never ends)."""
    process = subprocess.Popen(
        [sys.executable, "-m", "nexo_pkg", "plugin", "lint", "--stdin", *spelling],
        env=base_env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert wait_for(lambda: _waiting_on_stdin(process.pid), 60)
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 130
    assert json.loads(out) == {"ok": False, "kind": "interrupted", "error": "interrupted"}
    assert err.decode().strip().splitlines() == ["error: interrupted [interrupted]"]


@pytest.mark.parametrize(
    ("platform", "handled"),
    [("linux", True), ("darwin", False), ("freebsd14", False)],
)
def test_sigio_is_unwound_only_where_its_default_ends_the_process(
    platform: str, handled: bool
) -> None:
    """SIGIO ends a Linux process by default, so nexo unwinds on it there; macOS and the BSDs
    discard it by default, and a handler would turn it into an interruption. The set is
    decided as ``nexo_pkg.cli`` is imported, on the platform it is imported on."""
    if not hasattr(signal, "SIGIO"):
        pytest.skip("no SIGIO on this platform")
    probe = (
        "import signal, sys\n"
        f"sys.platform = {platform!r}\n"
        "from nexo_pkg.cli import STOPPING\n"
        "print(signal.SIGIO in STOPPING, signal.SIGUSR1 in STOPPING)\n"
    )
    completed = subprocess.run(
        [sys.executable, "-c", probe],
        env=base_env(),
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.split() == [str(handled), "True"]


def test_a_process_sent_sigio_on_linux_unwinds_with_its_number() -> None:
    """Linux: SIGIO, whose default action ends a process, is unwound as SIGTERM is."""
    if not sys.platform.startswith("linux"):
        pytest.skip("SIGIO ends a process by default only on Linux")
    process = subprocess.Popen(
        [sys.executable, "-m", "nexo_pkg", "plugin", "lsp"],
        env=base_env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdin is not None
    assert process.stdout is not None
    body = json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}}
    ).encode()
    process.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
    process.stdin.flush()
    assert process.stdout.readline().startswith(b"Content-Length")
    process.send_signal(signal.SIGIO)
    _, err = process.communicate(timeout=20)
    assert process.returncode == 128 + signal.SIGIO
    assert err.decode().strip().splitlines()[-1] == "error: stopped by SIGIO [interrupted]"


def test_command_table_names_every_registered_command() -> None:
    from nexo_pkg.cli.app import COMMANDS, module_commands

    for module in {spec.module for spec in COMMANDS.values()}:
        listed = {name for name, spec in COMMANDS.items() if spec.module == module}
        assert set(module_commands(module)) == listed, module
    modules = {
        path.stem
        for path in (REPO / "nexo_pkg" / "cli").glob("*.py")
        if "def register(" in path.read_text(encoding="utf-8")
    }
    assert modules == {spec.module for spec in COMMANDS.values()}


def _every_command_path() -> list[tuple[str, ...]]:
    """``("plugin",)``, ``("plugin", "lint")``, …, ``("plugin", "trust", "add")``, …"""
    from nexo_pkg.cli.app import COMMANDS, module_commands

    paths: list[tuple[str, ...]] = [("plugin",)]
    pending: list[tuple[tuple[str, ...], Any]] = [
        (("plugin", name), module_commands(spec.module)[name]) for name, spec in COMMANDS.items()
    ]
    while pending:
        path, command = pending.pop()
        paths.append(path)
        subcommands = getattr(command, "commands", {})
        pending.extend(((*path, name), sub) for name, sub in subcommands.items())
    return sorted(paths)


def test_every_group_and_command_teaches_the_shared_options() -> None:
    from typer.testing import CliRunner

    from nexo_pkg.cli.app import build_app

    runner = CliRunner()
    app = build_app()[0]
    paths = _every_command_path()
    assert ("plugin", "trust") in paths
    assert ("plugin", "cache", "prune") in paths
    for path in paths:
        result = runner.invoke(app, [*path, "-h"])
        assert result.exit_code == 0, (path, result.output)
        for option in ("-q, --quiet", "-v, --verbose", "--color [auto|always|never]", "-h, --help"):
            assert option in result.output, (path, option)
        if "Commands:" in result.output:
            # Each group says what its exit codes mean, as `nexo plugin -h` does.
            assert "Exit codes: 0 success" in result.output, path


@pytest.mark.parametrize(
    "args",
    [
        ["plugin", "-q", "list"],
        ["plugin", "trust", "-q", "list"],
        ["plugin", "trust", "--color", "never", "list"],
        ["plugin", "cache", "-q", "prune"],
    ],
)
def test_groups_accept_the_shared_options_before_the_command(
    args: list[str], tmp_path: Path
) -> None:
    result = nexo(*args, env=base_env(NEXO_HOME=str(tmp_path)), cwd=tmp_path)
    assert result.code == 0, result.stderr
    assert "No such option" not in result.stderr


def test_group_shared_option_takes_effect(tmp_path: Path) -> None:
    quiet = nexo("plugin", "cache", "-q", "prune", env=base_env(NEXO_HOME=str(tmp_path)))
    loud = nexo("plugin", "cache", "prune", env=base_env(NEXO_HOME=str(tmp_path)))
    assert loud.stderr != ""
    assert quiet.stderr == ""
    contradicting = nexo("plugin", "trust", "-q", "-v", "list", env=base_env())
    assert contradicting.code == 2
    assert "--quiet and --verbose" in contradicting.stderr


def test_a_command_built_alone_is_the_command_built_with_its_module() -> None:
    from nexo_pkg.cli.app import COMMANDS, module_command, module_commands

    def shape(command: Any) -> list[tuple[tuple[str, ...], str | None]]:
        params = [(tuple(param.opts), param.name) for param in command.params]
        for name, sub in sorted(getattr(command, "commands", {}).items()):
            params += [((name, *opts), pname) for opts, pname in shape(sub)]
        return params

    for name, spec in COMMANDS.items():
        alone = module_command(spec.module, name)
        assert alone is not None, name
        assert alone.name == name
        assert shape(alone) == shape(module_commands(spec.module)[name]), name


@pytest.mark.parametrize(
    ("args", "line"),
    [
        # Nothing close: no guess (click's, counting the dashes, offered --quiet and --yes).
        (["plugin", "lock", "--dest", "x"], "error: No such option: --dest. Run"),
        (["plugin", "info", "--dest", "x", "acme/x"], "error: No such option: --dest. Run"),
        # A slip of the keyboard: the one option meant, and only it.
        (
            ["plugin", "install", "--dets", "x"],
            "No such option: --dets (Possible options: --dest).",
        ),
        (["plugin", "lint", "--formt=json", "."], "(Possible options: --format)."),
        (["plugin", "sync", "--hlep"], "(Possible options: --help)."),
    ],
)
def test_an_unknown_option_suggests_only_options_close_to_its_name(
    args: list[str], line: str, tmp_path: Path
) -> None:
    """As gh and ruff: the guess compares the names, not the dashes every long option has."""
    result = nexo(*args, env=base_env(NEXO_HOME=str(tmp_path / "home")))
    assert result.code == 2
    (said,) = result.stderr.splitlines()
    assert line in said
    assert not (tmp_path / "home").exists()
