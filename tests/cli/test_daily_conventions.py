"""Conventions a daily user of ruff, uv and gh expects, each run through the real ``nexo``.

Exit codes of bad arguments (2, with nothing written); a lint walk that goes on past an
unreadable manifest (as ruff's E902); messages that say what is true and print lists one item
a line.
"""

from __future__ import annotations

import enum
import json
import os
import subprocess
import sys
from collections.abc import Mapping
from functools import partial
from pathlib import Path

import pytest
from support import cli
from support.github_server import GitHubServer, github_server
from support.stderr import without_notes
from support.tarballs import release_assets, write_plugin

__all__ = ["github_server"]


class Shape(enum.Enum):
    """Values of an option declared as an Enum (Typer turns it into a Choice)."""

    ROUND = "round"
    SQUARE = "square"


MANIFEST = """\
[plugin]
id = "{id}"
version = "0.1.0"
name = "Demo"
description = "A demo plugin."
min_nexo_version = ">=0.1.0"
"""


def base_env(home: Path, **extra: str) -> dict[str, str]:
    """The machine's environment without nexo, GitHub or colour settings; its own home."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("NEXO_", "GITHUB_", "GH_", "FORCE_COLOR", "NO_COLOR"))
        and "proxy" not in key.lower()
    }
    env.update(NEXO_HOME=str(home), NO_PROXY="127.0.0.1,localhost", NEXO_HTTP_RETRY_BASE_MS="1")
    env.update(extra)
    return env


# Runs in this process unless a test says otherwise (a command prefix needs a process).
nexo = partial(cli.nexo, in_process=True)


def tree(root: Path) -> list[str]:
    """Every path under ``root`` (to show that nothing was written)."""
    return sorted(str(path.relative_to(root)) for path in root.rglob("*"))


# -- 6: bad arguments are usage errors ------------------------------------------------------


# Every command taking --dest (a plugin root), with what it needs besides.
DEST_COMMANDS: dict[str, list[str]] = {
    "install": ["{tarball}", "--yes"],
    "list": [],
    "verify": [],
    "check": ["hello"],
    "remove": ["hello", "--yes"],
    "upgrade": ["hello", "--yes"],
    "outdated": [],
    "doctor": [],
    "rollback": ["hello", "--yes"],
    "hold": ["hello"],
    "unhold": ["hello"],
    "enable": ["hello"],
    "disable": ["hello"],
    "sbom": ["--all"],
    "sync": ["--yes"],
}


@pytest.mark.parametrize("command", [*DEST_COMMANDS])
def test_a_dest_that_is_a_file_is_a_usage_error(tmp_path: Path, command: str) -> None:
    tarball = write_plugin(tmp_path / "dist", "hello", "1.0.0")
    dest = tmp_path / "plugins"
    dest.write_text("a file\n", encoding="utf-8")
    args = [arg.format(tarball=tarball) for arg in DEST_COMMANDS[command]]
    before = tree(tmp_path)
    result = nexo(
        "plugin",
        command,
        *args,
        "--dest",
        str(dest),
        "--json",
        cwd=tmp_path,
        env=base_env(tmp_path / "home"),
    )
    assert result.code == 2, result.stderr
    document = json.loads(result.stdout)
    assert document["kind"] == "usage"
    assert f"--dest {dest} is a file" in document["error"]
    assert dest.read_text(encoding="utf-8") == "a file\n"
    assert tree(tmp_path) == before


@pytest.mark.parametrize(
    ("command", "option"),
    [
        ("install", "--dest"),
        ("install", "--config"),
        ("install", "--trusted-keys"),
        ("list", "--dest"),
        ("remove", "--dest"),
        ("upgrade", "--dest"),
        ("verify", "--config"),
        ("trust list", "--trusted-keys"),
    ],
)
@pytest.mark.parametrize("form", ["separate", "inline"])
def test_an_empty_path_option_is_a_usage_error_not_the_current_directory(
    tmp_path: Path, command: str, option: str, form: str
) -> None:
    """``--dest "$UNSET"`` would otherwise install into, list or remove from the current
    directory (and read a trust policy or daemon config there)."""
    tarball = write_plugin(tmp_path / "dist", "hello", "1.0.0")
    args = {"install": [str(tarball), "--yes"], "remove": ["hello", "--yes"],
            "upgrade": ["hello"]}.get(command, [])  # fmt: skip
    empty = [f"{option}="] if form == "inline" else [option, ""]
    work = tmp_path / "work"
    work.mkdir()
    before = tree(tmp_path)
    result = nexo(
        "plugin", *command.split(), *args, *empty, "--json",
        cwd=work, env=base_env(tmp_path / "home"),
    )  # fmt: skip
    assert result.code == 2, result.stderr
    document = json.loads(result.stdout)
    assert document["kind"] == "usage"
    assert document["error"].startswith(f"{option} is empty; name ")
    assert tree(tmp_path) == before


@pytest.mark.parametrize(
    ("args", "option"),
    [
        # Each would otherwise write into, link or read the current directory.
        (["new", "hello", "--force"], "--dest"),
        (["pack", "{project}"], "--out"),
        (["pack", "{project}"], "--requirements"),
        (["pack", "{project}", "--target", "x86_64-unknown-linux-gnu"], "--binary"),
        (["install", "--yes"], "--link"),
        (["sbom", "--all"], "--output"),
        (["check", "hello"], "--dest"),
        (["check", "hello"], "--config"),
        (["lock"], "--file"),
        (["lock"], "--lock"),
        (["sync"], "--lock"),
        (["verify"], "--lock"),
        (["trust", "verify", "{tarball}"], "--bundle"),
        (["push", "oci://127.0.0.1:1/acme/hello"], "--registry-config"),
        (["lint", "{project}"], "--config"),  # lint's own parser
    ],
)
def test_every_empty_path_option_is_a_usage_error_not_the_current_directory(
    tmp_path: Path, args: list[str], option: str
) -> None:
    """``nexo plugin new hello --dest "$UNSET" --force`` would otherwise overwrite the
    scaffold's files in the current directory, ``pack --out ""`` write its tarball there,
    ``install --link ""`` link it into the plugin root."""
    tarball = write_plugin(tmp_path / "dist", "hello", "1.0.0")
    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    (project / "plugin.toml").write_text('[plugin]\nid = "hello"\n', encoding="utf-8")
    work = tmp_path / "work"
    (work / "plugin.toml").parent.mkdir()
    (work / "plugin.toml").write_text('[plugin]\nid = "work"\n', encoding="utf-8")
    args = [arg.format(project=project, tarball=tarball) for arg in args]
    before = tree(tmp_path)
    result = nexo("plugin", *args, f"{option}=", cwd=work, env=base_env(tmp_path / "home"))
    assert result.code == 2, result.stderr
    assert without_notes(result.stderr).startswith(f"error: {option} is empty; name "), (
        result.stderr
    )
    assert tree(tmp_path) == before


def test_trust_verify_with_a_missing_bundle_is_a_usage_error(tmp_path: Path) -> None:
    tarball = write_plugin(tmp_path / "dist", "hello", "1.0.0")
    result = nexo(
        "plugin", "trust", "verify", str(tarball), "--bundle", str(tmp_path / "nope.json"),
        "--repo", "acme/hello", "--json", cwd=tmp_path, env=base_env(tmp_path / "home"),
    )  # fmt: skip
    assert result.code == 2, result.stderr
    document = json.loads(result.stdout)
    assert document["kind"] == "usage"
    assert "nope.json does not exist" in document["error"]
    # A directory is no bundle either: the same usage error, as FILE gets, not a refusal.
    (tmp_path / "bundles").mkdir()
    result = nexo(
        "plugin", "trust", "verify", str(tarball), "--bundle", str(tmp_path / "bundles"),
        "--repo", "acme/hello", "--json", cwd=tmp_path, env=base_env(tmp_path / "home"),
    )  # fmt: skip
    assert (result.code, result.document["kind"]) == (2, "usage"), result.stdout
    assert "bundles is not a file" in result.document["error"]


def test_check_on_a_tar_gz_that_is_not_gzip_is_a_usage_error(tmp_path: Path) -> None:
    fake = tmp_path / "hello-1.0.0-noarch.tar.gz"
    fake.write_bytes(b"plain text, not gzip\n")
    before = tree(tmp_path)
    result = nexo(
        "plugin", "check", str(fake), "--json", cwd=tmp_path, env=base_env(tmp_path / "home")
    )
    assert result.code == 2, result.stderr
    document = json.loads(result.stdout)
    assert document["kind"] == "archive_invalid"
    assert "not gzip-compressed" in document["error"]
    assert tree(tmp_path) == before


# Every command that reads the daemon's configuration directory, with what it needs besides.
CONFIG_COMMANDS: dict[str, list[str]] = {
    "install": ["plugin", "install", "{tarball}", "--yes"],
    "list": ["plugin", "list"],
    "trust-list": ["plugin", "trust", "list"],
    "trust-add": ["plugin", "trust", "add", "acme/hello", "--yes"],
    "trust-remove": ["plugin", "trust", "remove", "acme", "--yes"],
    "trust-verify": ["plugin", "trust", "verify", "{tarball}"],
    "remove": ["plugin", "remove", "hello", "--yes"],
    "upgrade": ["plugin", "upgrade", "hello", "--yes"],
    "outdated": ["plugin", "outdated"],
    "doctor": ["plugin", "doctor"],
    "rollback": ["plugin", "rollback", "hello", "--yes"],
    "hold": ["plugin", "hold", "hello"],
    "unhold": ["plugin", "unhold", "hello"],
    "enable": ["plugin", "enable", "hello"],
    "disable": ["plugin", "disable", "hello"],
    "sbom": ["plugin", "sbom", "--all"],
    "verify": ["plugin", "verify"],
    "check": ["plugin", "check", "hello"],
    "info": ["plugin", "info", "acme/hello"],
    "lock": ["plugin", "lock"],
    "sync": ["plugin", "sync", "--yes"],
}


@pytest.mark.parametrize("shape", ["missing", "file"])
@pytest.mark.parametrize("command", [*CONFIG_COMMANDS])
def test_a_config_that_is_not_a_directory_is_an_error(
    tmp_path: Path, shape: str, command: str
) -> None:
    """No silent fall back to ``./config`` or ``$NEXO_HOME/config`` for a mistyped --config."""
    tarball = write_plugin(tmp_path / "dist", "hello", "1.0.0")
    config = tmp_path / "daemon-config"
    if shape == "file":
        config.write_text("not a directory\n", encoding="utf-8")
    # A ./config the fall back would have used.
    (tmp_path / "config").mkdir()
    args = [arg.format(tarball=tarball) for arg in CONFIG_COMMANDS[command]]
    before = tree(tmp_path)
    result = nexo(
        *args, "--config", str(config), "--json", cwd=tmp_path, env=base_env(tmp_path / "home")
    )
    assert result.code == 2, result.stderr
    document = json.loads(result.stdout)
    assert document["kind"] == "config"
    reason = "does not exist" if shape == "missing" else "is not a directory"
    assert f"--config {config} {reason}" in document["error"]
    assert tree(tmp_path) == before


# -- 3: a walk goes on past one bad file ----------------------------------------------------

# Root reads any file whatever its mode: drop the capability that lets it (uid stays 0, so
# the interpreter under /root stays reachable), as an ordinary user runs.
WITHOUT_DAC = ("setpriv", "--bounding-set=-dac_override,-dac_read_search")


def _unprivileged() -> tuple[str, ...]:
    if os.geteuid() != 0:
        return ()
    probe = subprocess.run([*WITHOUT_DAC, "true"], capture_output=True, check=False)
    if probe.returncode != 0:
        pytest.skip("running as root and setpriv cannot drop CAP_DAC_OVERRIDE here")
    return WITHOUT_DAC


def test_lint_reports_an_unreadable_manifest_and_lints_the_others(tmp_path: Path) -> None:
    for name in ("good", "locked", "broken"):
        (tmp_path / name).mkdir()
    (tmp_path / "good" / "plugin.toml").write_text(MANIFEST.format(id="good"), "utf-8")
    (tmp_path / "broken" / "plugin.toml").write_text(MANIFEST.format(id="Broken"), "utf-8")
    locked = tmp_path / "locked" / "plugin.toml"
    locked.write_text(MANIFEST.format(id="locked"), "utf-8")
    locked.chmod(0)
    dangling = tmp_path / "gone" / "plugin.toml"
    dangling.parent.mkdir()
    dangling.symlink_to(tmp_path / "nowhere" / "plugin.toml")

    result = cli.nexo(
        "plugin",
        "lint",
        "--format",
        "json",
        ".",
        cwd=tmp_path,
        prefix=_unprivileged(),
        env=base_env(tmp_path / "home"),
    )
    assert result.code == 1, result.stderr
    assert "Traceback" not in result.stderr
    found = {
        file["path"]: [(d["code"], d["message"]) for d in file["diagnostics"]]
        for file in json.loads(result.stdout)["files"]
    }
    assert found["good/plugin.toml"] == []
    assert [code for code, _ in found["broken/plugin.toml"]] == ["NX100"]
    assert found["locked/plugin.toml"] == [("NX008", "cannot read plugin.toml: Permission denied")]
    assert found["gone/plugin.toml"] == [
        ("NX008", "cannot read plugin.toml: dangling symlink (its target does not exist)")
    ]
    text = cli.nexo(
        "plugin", "lint", ".", cwd=tmp_path, prefix=_unprivileged(), env=base_env(tmp_path / "home")
    )
    assert text.code == 1
    assert "locked/plugin.toml:1:1: NX008 cannot read plugin.toml" in text.stdout
    assert "Found 3 errors and 0 warnings in 4 files." in text.stdout


def test_a_named_manifest_in_a_directory_that_cannot_be_searched_is_a_finding(
    tmp_path: Path,
) -> None:
    """As a pre-commit hook names files: one whose directory cannot be searched (mode 0644 on
    the directory, say) is NX008 for that file, with the others linted, as ruff's E902; not
    an ``io`` error that stops the run."""
    (tmp_path / "good").mkdir()
    (tmp_path / "good" / "plugin.toml").write_text(MANIFEST.format(id="Good"), "utf-8")
    closed = tmp_path / "closed"
    closed.mkdir()
    (closed / "plugin.toml").write_text(MANIFEST.format(id="closed"), "utf-8")
    closed.chmod(0o644)
    try:
        for flags in ([], ["--force-exclude"]):
            result = cli.nexo(
                "plugin", "lint", *flags, "--format", "json", "closed/plugin.toml",
                "good/plugin.toml", cwd=tmp_path, prefix=_unprivileged(),
                env=base_env(tmp_path / "home"),
            )  # fmt: skip
            assert result.code == 1, result.stdout + result.stderr
            assert result.stderr == ""
            found = {
                file["path"]: [(d["code"], d["message"]) for d in file["diagnostics"]]
                for file in json.loads(result.stdout)["files"]
            }
            assert found["closed/plugin.toml"] == [
                ("NX008", "cannot read plugin.toml: Permission denied")
            ]
            assert [code for code, _ in found["good/plugin.toml"]] == ["NX100"]
    finally:
        closed.chmod(0o755)


def test_a_dangling_manifest_link_named_on_the_command_line_is_a_finding(tmp_path: Path) -> None:
    """As a pre-commit hook names files: the link that dangles is reported, the others linted."""
    (tmp_path / "good").mkdir()
    good = tmp_path / "good" / "plugin.toml"
    good.write_text(MANIFEST.format(id="good"), "utf-8")
    (tmp_path / "gone").mkdir()
    (tmp_path / "gone" / "plugin.toml").symlink_to(tmp_path / "nowhere" / "plugin.toml")
    before = tree(tmp_path)

    result = nexo(
        "plugin", "lint", "--format", "json", "gone/plugin.toml", "good/plugin.toml",
        cwd=tmp_path, env=base_env(tmp_path / "home"),
    )  # fmt: skip
    assert result.code == 1, result.stderr
    found = {
        file["path"]: [(d["code"], d["message"]) for d in file["diagnostics"]]
        for file in json.loads(result.stdout)["files"]
    }
    assert found == {
        "gone/plugin.toml": [
            ("NX008", "cannot read plugin.toml: dangling symlink (its target does not exist)")
        ],
        "good/plugin.toml": [],
    }
    # A path that is not there at all stays a usage error (a mistyped name).
    missing = nexo("plugin", "lint", "nowhere/plugin.toml", cwd=tmp_path, env=base_env(tmp_path))
    assert missing.code == 2
    assert "no such file or directory: nowhere/plugin.toml" in missing.stderr
    assert tree(tmp_path) == before


def test_a_directory_the_walk_cannot_list_is_a_finding(tmp_path: Path) -> None:
    """ruff reports E902 for a directory it cannot read and checks the rest; so does lint
    (NX008), instead of skipping the manifests below it without a word."""
    for name in ("good", "closed", "vendor"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "plugin.toml").write_text(MANIFEST.format(id=name), "utf-8")
    (tmp_path / "closed").chmod(0)
    (tmp_path / "vendor").chmod(0)
    (tmp_path / ".nexo.toml").write_text('[lint]\nexclude = ["vendor"]\n', "utf-8")
    try:
        result = cli.nexo(
            "plugin", "lint", "--format", "json", ".",
            cwd=tmp_path, prefix=_unprivileged(), env=base_env(tmp_path / "home"),
        )  # fmt: skip
        text = cli.nexo(
            "plugin", "lint", ".",
            cwd=tmp_path, prefix=_unprivileged(), env=base_env(tmp_path / "home"),
        )  # fmt: skip
    finally:
        (tmp_path / "closed").chmod(0o755)
        (tmp_path / "vendor").chmod(0o755)
    assert result.code == 1, result.stderr
    assert "Traceback" not in result.stderr
    found = {
        file["path"]: [(d["code"], d["message"]) for d in file["diagnostics"]]
        for file in json.loads(result.stdout)["files"]
    }
    # The excluded directory is not reported; the unreadable one is, and good is linted.
    assert found == {
        "good/plugin.toml": [],
        "closed": [
            (
                "NX008",
                "cannot list directory closed: Permission denied (manifests in it were not linted)",
            )
        ],
    }
    assert text.code == 1
    assert "closed:1:1: NX008 cannot list directory closed: Permission denied" in text.stdout


# -- 8: messages that say what is true ------------------------------------------------------


def test_trust_add_on_an_unsigned_release_says_there_is_no_signer(
    tmp_path: Path, github_server: GitHubServer
) -> None:
    github_server.publish("acme", "weather", "v0.1.0", release_assets("weather", "0.1.0"))
    env = base_env(tmp_path / "home", NEXO_GITHUB_API_BASE=github_server.url)
    result = nexo("plugin", "trust", "add", "acme/weather", "--yes", cwd=tmp_path, env=env)
    assert result.code == 1
    [line] = without_notes(result.stderr).splitlines()
    assert "release v0.1.0 of acme/weather is not signed" in line
    assert "no signer to trust" in line
    assert "policy requires" not in line
    assert not (tmp_path / "home" / "config").exists()


def test_a_refusal_without_a_policy_file_names_where_it_would_go(tmp_path: Path) -> None:
    tarball = write_plugin(tmp_path / "dist", "hello", "1.0.0")
    home = tmp_path / "home"
    result = nexo(
        "plugin", "install", str(tarball), "--yes", "--require-signature", "--json",
        cwd=tmp_path, env=base_env(home),
    )  # fmt: skip
    assert result.code == 1
    document = json.loads(result.stdout)
    assert document["kind"] == "signature_missing"
    where = home / "config" / "extensions" / "trusted_keys.toml"
    assert document["policy"] == f"{where} (not created yet)"
    assert str(where) in document["error"]
    assert not where.exists()


def test_trust_remove_without_a_policy_file_says_it_does_not_exist(tmp_path: Path) -> None:
    """``trust remove`` with no policy file is refused naming where the file would go and that
    it is not there, not as though a policy existed and lacked the entry; nothing written."""
    home = tmp_path / "home"
    result = nexo(
        "plugin", "trust", "remove", "acme", "--yes", "--json", cwd=tmp_path, env=base_env(home)
    )
    assert (result.code, result.document["kind"]) == (1, "not_trusted"), result.stdout
    where = home / "config" / "extensions" / "trusted_keys.toml"
    assert (
        f"{where} (not created yet) has no [[authors]] entry for acme" in result.document["error"]
    )
    assert not home.exists() or tree(home) == []
    # With a policy file there, the same refusal names it as it is.
    where.parent.mkdir(parents=True)
    where.write_text('default = "warn"\n', encoding="utf-8")
    again = nexo(
        "plugin", "trust", "remove", "acme", "--yes", "--json", cwd=tmp_path, env=base_env(home)
    )
    assert (again.code, again.document["kind"]) == (1, "not_trusted"), again.stdout
    assert f"{where} has no [[authors]] entry for acme" in again.document["error"]
    assert where.read_text(encoding="utf-8") == 'default = "warn"\n'


def test_pack_lists_native_code_one_item_a_line(
    tmp_path: Path, offline_pip_env: dict[str, str]
) -> None:
    env = base_env(tmp_path / "home", **offline_pip_env)
    assert nexo("plugin", "new", "demo", "-q", cwd=tmp_path, env=env).code == 0
    project = tmp_path / "demo"
    (project / "src" / "_speedups.so").write_bytes(b"\x7fELF")
    (project / "src" / "libz.so.1").write_bytes(b"\x7fELF")
    result = nexo("plugin", "pack", cwd=project, env=env)
    assert result.code == 1, result.stderr
    assert "\\u000a" not in result.stderr
    lines = result.stderr.splitlines()
    items = [line for line in lines if line.startswith("  - ")]
    assert len(items) == 2
    assert any("_speedups.so" in item for item in items)
    assert any("libz.so.1" in item for item in items)
    assert not (project / "dist").exists() or not list((project / "dist").glob("*.tar.gz"))


# -- 4: CLI basics ------------------------------------------------------------------------


def test_dash_capital_v_is_the_version(tmp_path: Path) -> None:
    env = base_env(tmp_path / "home")
    short, long = nexo("-V", cwd=tmp_path, env=env), nexo("--version", cwd=tmp_path, env=env)
    assert (short.code, short.stdout) == (0, long.stdout)
    assert short.stdout.startswith("nexo-pkg ")


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--color", "bogus"], "--color 'bogus': choose one of auto, always, never"),
        (["-q", "-v"], "--quiet and --verbose contradict each other"),
    ],
)
def test_a_bad_root_option_is_named_even_without_a_command(
    tmp_path: Path, args: list[str], said: str
) -> None:
    """As ``ruff --color bogus``: the bad value is the error, not a "Missing command" that
    hides it; the same words as after a command (``nexo plugin list --color bogus``)."""
    env = base_env(tmp_path / "home")
    for words in (args, [*args, "plugin", "list"], ["plugin", "list", *args]):
        result = nexo(*words, cwd=tmp_path, env=env)
        assert result.code == 2, words
        [line] = result.stderr.splitlines()
        assert said in line, words
        assert line.startswith("error: "), line
        assert line.endswith(" [usage]"), line
        assert "Missing command" not in line
    assert not (tmp_path / "home").exists()


def test_help_command_prints_the_help_of_a_command(tmp_path: Path) -> None:
    env = base_env(tmp_path / "home")
    assert nexo("help", cwd=tmp_path, env=env).stdout == nexo("-h", cwd=tmp_path, env=env).stdout
    shown = nexo("help", "plugin", "install", cwd=tmp_path, env=env)
    assert shown.code == 0
    assert shown.stdout == nexo("plugin", "install", "-h", cwd=tmp_path, env=env).stdout
    assert "help" in nexo("-h", cwd=tmp_path, env=env).stdout
    wrong = nexo("help", "plugin", "instal", cwd=tmp_path, env=env)
    assert wrong.code == 2
    assert "Did you mean 'install'" in wrong.stderr


@pytest.mark.parametrize(
    ("args", "suggestion"),
    [
        (["plugin", "instal"], "Did you mean 'install'"),
        (["plugn", "list"], "Did you mean 'plugin'"),
        (["plugin", "trust", "ad"], "Did you mean 'add'"),
        (["plugin", "lint", "--formt", "json"], "--format"),
        (["plugin", "install", "--jsn", "acme/hello"], "--json"),
    ],
)
def test_a_mistyped_command_or_option_gets_the_closest(
    tmp_path: Path, args: list[str], suggestion: str
) -> None:
    result = nexo(*args, cwd=tmp_path, env=base_env(tmp_path / "home"))
    assert result.code == 2
    assert suggestion in result.stderr.splitlines()[-1]
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (
            ["plugin", "list", "--dest"],
            "error: Option '--dest' requires an argument. Run 'nexo plugin list -h' for help.",
        ),
        (
            ["plugin", "lint", "--select"],
            "error: Option '--select' requires an argument. Run 'nexo plugin lint -h' for help.",
        ),
        (
            ["plugin", "lint", "--strict=yes", "x.toml"],
            "error: Option '--strict' does not take a value. Run 'nexo plugin lint -h' for help.",
        ),
        (
            ["plugin", "-q", "trust", "--color", "never", "add", "--trusted-keys"],
            "error: Option '--trusted-keys' requires an argument. "
            "Run 'nexo plugin trust add -h' for help.",
        ),
        (["--color"], "error: Option '--color' requires an argument. Run 'nexo -h' for help."),
    ],
)
def test_an_option_missing_its_value_names_the_help_to_read(
    tmp_path: Path, args: list[str], line: str
) -> None:
    # docs/cli.md: a usage error is one line on stderr that ends with the help to read; the
    # parser's own errors (a value missing, a flag given one) carry no command of their own.
    result = nexo(*args, cwd=tmp_path, env=base_env(tmp_path / "home"))
    assert result.code == 2
    assert result.stderr.splitlines() == [f"{line} [usage]"]
    assert result.stdout == ""


def _bash_complete(words: str, cwd: Path, env: Mapping[str, str]) -> list[str]:
    """What bash offers after ``words``: the script of ``--show-completion bash`` is sourced
    and its completion function is called as bash calls it on Tab."""
    bin_dir = cwd / "bin"
    bin_dir.mkdir(exist_ok=True)
    launcher = bin_dir / "nexo"
    launcher.write_text(f'#!/bin/sh\nexec {sys.executable} -m nexo_pkg "$@"\n', encoding="utf-8")
    launcher.chmod(0o755)
    script = nexo("--show-completion", "bash", cwd=cwd, env=env).stdout
    (cwd / "completion.bash").write_text(script, encoding="utf-8")
    program = (
        "source ./completion.bash\n"
        f"COMP_WORDS=({words})\n"
        "COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))\n"
        'COMP_LINE="${COMP_WORDS[*]}"\n'
        "_nexo_completion nexo\n"
        "printf '%s\\n' \"${COMPREPLY[@]}\"\n"
    )
    done = subprocess.run(
        ["bash", "--norc", "--noprofile", "-c", program],
        capture_output=True,
        text=True,
        check=False,
        cwd=cwd,
        env={**env, "PATH": f"{bin_dir}{os.pathsep}{env['PATH']}"},
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return [line for line in done.stdout.splitlines() if line]


def test_bash_completes_option_values_and_installed_ids(tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = base_env(home)
    for plugin_id in ("hello", "weather"):
        tarball = write_plugin(tmp_path / "dist", plugin_id, "1.0.0")
        installed = nexo("plugin", "install", str(tarball), "--yes", cwd=tmp_path, env=env)
        assert installed.code == 0, installed.stderr

    def offered(words: str) -> list[str]:
        return _bash_complete(words, tmp_path, env)

    assert offered("nexo plugin lint --format ''") == ["text", "json", "github", "sarif"]
    assert offered("nexo plugin lint --format s") == ["sarif"]
    assert offered("nexo plugin list --color ''") == ["auto", "always", "never"]
    assert offered("nexo --color n") == ["never"]
    assert offered("nexo plugin new demo --lang ''") == ["python"]
    assert offered("nexo plugin new demo --kind ''") == ["plugin", "microapp"]
    assert offered("nexo plugin new demo --kind m") == ["microapp"]
    kinds = ["plugin", "microapp", "extensions", "wanted", "lock", "trusted-keys", "lint-report"]
    assert offered("nexo plugin schema --kind ''") == kinds
    assert offered("nexo plugin schema --kind l") == ["lock", "lint-report"]
    for command in (
        "remove", "upgrade", "check", "verify", "rollback", "enable", "disable", "hold",
        "unhold", "sbom", "outdated",
    ):  # fmt: skip
        assert offered(f"nexo plugin {command} ''") == ["hello", "weather"], command
    assert offered("nexo plugin remove w") == ["weather"]
    # Another root (--dest) holds other plugins: those are offered.
    other = tmp_path / "other-root"
    tarball = write_plugin(tmp_path / "dist", "echo", "1.0.0")
    elsewhere = nexo("plugin", "install", str(tarball), "--yes", "--dest", str(other),
                     cwd=tmp_path, env=env)  # fmt: skip
    assert elsewhere.code == 0, elsewhere.stderr
    assert offered(f"nexo plugin remove --dest {other} ''") == ["echo"]
    # A root that does not exist offers nothing (and breaks nothing).
    assert offered(f"nexo plugin upgrade --dest {tmp_path / 'missing'} ''") == []


def test_bash_completes_the_commands_help_describes(tmp_path: Path) -> None:
    """As ``gh help <Tab>`` and ``uv help <Tab>``: ``nexo help`` completes the command path,
    one level at a time; past a command without subcommands (or a wrong name) nothing."""
    env = base_env(tmp_path / "home")

    def offered(words: str) -> list[str]:
        return _bash_complete(words, tmp_path, env)

    assert offered("nexo help ''") == ["help", "plugin"]
    assert offered("nexo help plugin in") == ["install", "info"]
    assert offered("nexo help plugin trust ''") == ["add", "list", "remove", "verify"]
    assert offered("nexo help plugin cache p") == ["prune"]
    assert offered("nexo help plugin lint ''") == []
    assert offered("nexo help bogus ''") == []


def test_completion_offers_whatever_choices_an_option_declares() -> None:
    """An option declaring its values (an Enum, Typer's Choice, or a ``[a|b]`` metavar)
    completes them: a new option needs no list of its own in the completion code."""
    import typer

    from nexo_pkg.cli.completion import attach_choice_completion, declared_choices

    app = typer.Typer()

    @app.command()
    def new(
        kind: str = typer.Option("plugin", "--kind", metavar="[plugin|microapp]"),
        shape: Shape = typer.Option(Shape.ROUND, "--shape"),  # noqa: B008
        dest: str = typer.Option(".", "--dest", metavar="[DIR]"),
    ) -> None:
        del kind, shape, dest

    command = typer.main.get_command(app)
    attach_choice_completion(command)
    by_name = {param.name: param for param in command.params}
    assert declared_choices(by_name["kind"]) == ("plugin", "microapp")
    assert declared_choices(by_name["shape"]) == ("round", "square")
    assert declared_choices(by_name["dest"]) == ()
    context = command.make_context("new", [], resilient_parsing=True)
    offered = [item.value for item in by_name["kind"].shell_complete(context, "m")]
    assert offered == ["microapp"]


# -- 7: long waits explain themselves -------------------------------------------------------


def test_a_slow_answer_is_explained_on_stderr(tmp_path: Path, github_server: GitHubServer) -> None:
    github_server.publish("acme", "hello", "v1.0.0", release_assets("hello", "1.0.0"))
    github_server.slow(4.0, times=1, path_contains="/releases/latest")
    env = base_env(tmp_path / "home", NEXO_GITHUB_API_BASE=github_server.url)
    result = nexo("plugin", "install", "acme/hello", "--yes", "--dest", str(tmp_path / "p"),
                  "--timeout", "60", cwd=tmp_path, env=env)  # fmt: skip
    assert result.code == 0, result.stderr
    host = github_server.url.split("://", 1)[1].rstrip("/")
    [line] = [line for line in result.stderr.splitlines() if line.startswith("waiting for")]
    assert line.startswith(f"waiting for {host}: no answer after 3 s (attempt 1 of 4; giving up")
    seconds_left = int(line.split("giving up in ", 1)[1].split(" s", 1)[0])
    assert 50 <= seconds_left <= 57
    assert "at the 60 s deadline" in line
    # --json keeps stderr for the error line alone; --quiet drops the note.
    for flags in (["--json"], ["--quiet"]):
        github_server.slow(4.0, times=1, path_contains="/releases/latest")
        again = nexo("plugin", "install", "acme/hello", "--yes", "--force", "--dest",
                     str(tmp_path / "p"), *flags, cwd=tmp_path, env=env)  # fmt: skip
        assert again.code == 0, again.stderr
        assert "waiting for" not in again.stderr


@pytest.mark.parametrize(
    "command",
    [["info", "acme/hello"], ["outdated"], ["search", "hello"], ["upgrade", "--all", "--yes"]],
)
def test_every_command_asking_github_explains_a_slow_answer(
    tmp_path: Path, github_server: GitHubServer, command: list[str]
) -> None:
    """Each of these says on its --help that an answer slower than 3 s is noted on stderr:
    the lookups of `info`, `outdated`, `search` and `upgrade --all` say it as `install` does
    (not with --json)."""
    github_server.publish("acme", "hello", "v1.0.0", release_assets("hello", "1.0.0"))
    env = base_env(tmp_path / "home", NEXO_GITHUB_API_BASE=github_server.url)
    installed = nexo("plugin", "install", "acme/hello", "--yes", cwd=tmp_path, env=env)
    assert installed.code == 0, installed.stderr
    host = github_server.url.split("://", 1)[1].rstrip("/")
    github_server.slow(4.0, times=1)
    result = nexo("plugin", *command, "--timeout", "60", cwd=tmp_path, env=env)
    assert result.code == 0, result.stderr
    notes = [line for line in result.stderr.splitlines() if line.startswith("waiting for")]
    assert len(notes) == 1, result.stderr
    assert notes[0].startswith(f"waiting for {host}: no answer after 3 s (attempt 1 of 4; ")
    github_server.slow(4.0, times=1)
    quiet = nexo("plugin", *command, "--json", cwd=tmp_path, env=env)
    assert quiet.code == 0, quiet.stderr
    assert "waiting for" not in quiet.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["plugin", *words]
        for words in (
            ["install"], ["upgrade"], ["outdated"], ["sync"], ["lock"], ["info"], ["search"],
            ["mirror"], ["push"], ["trust", "add"],
        )
    ],
)  # fmt: skip
def test_help_documents_the_default_deadline(tmp_path: Path, args: list[str]) -> None:
    shown = " ".join(
        nexo(*args, "-h", cwd=tmp_path, env=base_env(tmp_path / "home")).stdout.split()
    )
    assert "NEXO_HTTP_TIMEOUT, else 300 s" in shown
    assert "slower than 3 s is noted on stderr" in shown


def test_lock_sync_and_trust_add_explain_a_slow_answer(
    tmp_path: Path, github_server: GitHubServer
) -> None:
    """The other commands asking GitHub: `lock` (the release lookup), `sync` (the tarball it
    locked) and `trust add` (the release it is asked to trust) say on stderr that they are
    waiting, naming the host and the attempt, as `install` does; not with --json."""
    github_server.publish("acme", "hello", "v1.0.0", release_assets("hello", "1.0.0"))
    env = base_env(tmp_path / "home", NEXO_GITHUB_API_BASE=github_server.url)
    host = github_server.url.split("://", 1)[1].rstrip("/")
    (tmp_path / "nexo-plugins.toml").write_text(
        '[plugins.hello]\nsource = "acme/hello"\n', encoding="utf-8"
    )

    def notes(result: cli.CliResult) -> list[str]:
        return [line for line in result.stderr.splitlines() if line.startswith("waiting for")]

    for command, code in (
        (["lock"], 0),
        (["sync", "--yes", "--dest", str(tmp_path / "p")], 0),
        (["trust", "add", "acme/hello", "--yes"], 1),
    ):
        github_server.slow(4.0, times=1)
        result = cli.nexo("plugin", *command, "--timeout", "60", cwd=tmp_path, env=env)
        assert result.code == code, result.stderr
        [note] = notes(result)
        assert note.startswith(f"waiting for {host}: no answer after 3 s (attempt 1 of "), note
        assert "at the 60 s deadline" in note, note
        assert "not signed" in result.stderr or code == 0
    github_server.slow(4.0, times=1)
    quiet = cli.nexo("plugin", "lock", "--json", cwd=tmp_path, env=env)
    assert quiet.code == 0, quiet.stderr
    assert notes(quiet) == []
