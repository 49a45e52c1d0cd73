"""One set of habits on every command, as gh, apt and ruff users know them: ``--yes`` taken by
every command that changes state, ``-q`` silent on success, ``--json`` on ``lint`` too,
``--color always`` honoured by every table, one ``warning:`` prefix a warning."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.cli import clean_env, nexo
from support.github_server import GitHubServer, github_server
from support.tarballs import release_assets, tree_snapshot, write_plugin

__all__ = ["github_server"]

# Every command that changes an install root, the daemon's configuration, the trust policy,
# a lock, a registry or the cache.
STATE_CHANGING = (
    "install",
    "upgrade",
    "remove",
    "rollback",
    "hold",
    "unhold",
    "enable",
    "disable",
    "lock",
    "sync",
    "push",
    "mirror",
    "cache clean",
    "cache prune",
    "trust add",
    "trust remove",
)


@pytest.mark.parametrize("command", STATE_CHANGING)
def test_every_command_that_changes_state_takes_yes(command: str) -> None:
    shown = nexo("plugin", *command.split(), "--help", in_process=True)
    assert shown.code == 0, shown.stderr
    assert "--yes" in shown.stdout, command


@pytest.mark.parametrize("command", STATE_CHANGING)
def test_every_command_that_changes_state_accepts_yes_when_run(
    tmp_path: Path, command: str
) -> None:
    """Accepted, not only listed in the help: a script passing ``--yes`` to any of them
    (``rollback --yes``, prompt or not) gets the command's own answer, never a usage error
    about the flag."""
    env = clean_env(NEXO_HOME=str(tmp_path / "home"))
    env.pop("NEXO_CONFIG_DIR", None)
    for flag in ("--yes", "-y"):
        ran = nexo(
            "plugin", *command.split(), flag, "--json", env=env, cwd=tmp_path, in_process=True
        )
        assert "No such option" not in ran.stderr, (command, flag, ran.stderr)
        assert flag not in ran.document.get("error", ""), (command, flag, ran.document)


def _env(tmp_path: Path) -> dict[str, str]:
    env = clean_env(NEXO_HOME=str(tmp_path / "home"))
    env.pop("NEXO_CONFIG_DIR", None)
    return env


def _discovered(tmp_path: Path, *roots: Path) -> None:
    """The daemon of ``_env`` discovers plugins in ``roots``: an install there has nothing to
    warn about but its signature."""
    plugins = tmp_path / "home" / "config" / "plugins"
    plugins.mkdir(parents=True, exist_ok=True)
    listed = ", ".join(str(root) for root in roots)
    (plugins / "discovery.yaml").write_text(f"discovery:\n  search_paths: [{listed}]\n")


def test_quiet_is_silent_on_success(tmp_path: Path) -> None:
    """``install -q --yes``: no confirmation screen, no note; ``lint -q`` on a clean
    microapp: nothing at all."""
    env = _env(tmp_path)
    tarball = write_plugin(tmp_path / "dist", "hello", "1.0.0")
    root = str(tmp_path / "root")
    _discovered(tmp_path, tmp_path / "root")
    quiet = nexo(
        "plugin", "install", str(tarball), "--dest", root, "-q", "--yes",
        env=env, cwd=tmp_path, in_process=True,
    )  # fmt: skip
    assert quiet.code == 0, quiet.stderr
    # An unsigned tarball under the default policy: the NOT SIGNED warning is all there is.
    assert [line for line in quiet.stderr.splitlines() if "NOT SIGNED" not in line] == []
    assert quiet.stdout == ""
    assert (tmp_path / "root" / "hello-1.0.0").is_dir()
    # Without -q (and with --yes) the screen is still shown, as apt-get -y shows its plan.
    loud = nexo(
        "plugin", "install", str(tarball), "--dest", root, "--yes", "--force",
        env=env, cwd=tmp_path, in_process=True,
    )  # fmt: skip
    assert "hello" in loud.stderr
    assert len(loud.stderr.splitlines()) > 3

    made = nexo(
        "plugin", "new", "demo_app", "--kind", "microapp", "--dest", str(tmp_path / "app"),
        env=env, cwd=tmp_path, in_process=True,
    )  # fmt: skip
    assert made.code == 0, made.stderr
    linted = nexo("plugin", "lint", "-q", env=env, cwd=tmp_path / "app")
    assert (linted.code, linted.stdout, linted.stderr) == (0, "", "")
    told = nexo("plugin", "lint", env=env, cwd=tmp_path / "app")
    assert "microapp manifest" in told.stdout  # what each file is, when not quiet


def test_quiet_without_a_terminal_shows_no_screen_it_does_not_ask_on(tmp_path: Path) -> None:
    """Without a terminal `install` asks nothing (it goes ahead, SPEC), so `-q` without
    `--yes` is as silent as `-q --yes`: the screen is for a person deciding, and none is."""
    env = _env(tmp_path)
    tarball = write_plugin(tmp_path / "dist", "hello", "1.0.0")
    _discovered(tmp_path, tmp_path / "root-True", tmp_path / "root-False")
    for in_process in (True, False):  # in this process and in one of its own
        root = tmp_path / f"root-{in_process}"
        quiet = nexo(
            "plugin", "install", str(tarball), "--dest", str(root), "-q",
            env=env, cwd=tmp_path, in_process=in_process,
        )  # fmt: skip
        assert quiet.code == 0, quiet.stderr
        assert [line for line in quiet.stderr.splitlines() if "NOT SIGNED" not in line] == []
        assert quiet.stdout == ""
        assert (root / "hello-1.0.0").is_dir()


def test_lint_takes_json_as_every_command_does(tmp_path: Path) -> None:
    env = _env(tmp_path)
    manifest = tmp_path / "nexo-plugin.toml"
    manifest.write_text('[plugin]\nid = "Bad Id"\n')
    for in_process in (True, False):  # in this process and in one of its own
        as_json = nexo("plugin", "lint", str(manifest), "--json", env=env, in_process=in_process)
        as_format = nexo(
            "plugin", "lint", str(manifest), "--format", "json", env=env, in_process=in_process
        )
        assert as_json.code == as_format.code == 1
        assert json.loads(as_json.stdout) == json.loads(as_format.stdout)
        both = nexo(
            "plugin", "lint", str(manifest), "--json", "--format", "sarif",
            env=env, in_process=in_process,
        )  # fmt: skip
        assert (both.code, both.document["kind"]) == (2, "usage")


def test_color_always_paints_the_verify_and_doctor_tables(tmp_path: Path) -> None:
    env = _env(tmp_path)
    tarball = write_plugin(tmp_path / "dist", "hello", "1.0.0")
    root = str(tmp_path / "root")
    installed = nexo(
        "plugin", "install", str(tarball), "--dest", root, "--yes",
        env=env, cwd=tmp_path, in_process=True,
    )  # fmt: skip
    assert installed.code == 0, installed.stderr
    painted = nexo(
        "plugin", "verify", "--dest", root, "--color", "always",
        env=env, cwd=tmp_path, in_process=True,
    )  # fmt: skip
    assert painted.stdout.startswith("\x1b[32mok      \x1b[0m hello 1.0.0"), painted.stdout
    plain = nexo("plugin", "verify", "--dest", root, env=env, cwd=tmp_path, in_process=True)
    assert plain.stdout.startswith("ok       hello 1.0.0")
    assert "\x1b" not in plain.stdout  # NO_COLOR (clean_env) and a pipe
    manifest = next((tmp_path / "root").glob("hello-1.0.0/nexo-plugin.toml"))
    manifest.write_text(manifest.read_text() + "\n# edited\n")
    changed = nexo(
        "plugin", "verify", "--dest", root, "--color", "always",
        env=env, cwd=tmp_path, in_process=True,
    )  # fmt: skip
    assert changed.code == 1
    assert changed.stdout.startswith("\x1b[31mCHANGED \x1b[0m hello 1.0.0")
    doctor = nexo(
        "plugin", "doctor", "--dest", root, "--no-check", "--color", "always",
        env=env, cwd=tmp_path, in_process=True,
    )  # fmt: skip
    assert doctor.code == 1
    assert any(line.startswith("\x1b[31mERROR ") for line in doctor.stdout.splitlines())
    never = nexo(
        "plugin", "doctor", "--dest", root, "--no-check", "--color", "never",
        env={**env, "FORCE_COLOR": "1"}, cwd=tmp_path, in_process=True,
    )  # fmt: skip
    assert "\x1b" not in never.stdout


def test_color_always_paints_the_check_table(tmp_path: Path) -> None:
    """`check`'s table honours --color as lint's, verify's and doctor's do: painted with
    `always` even through a pipe and under NO_COLOR, never with `never` under FORCE_COLOR."""
    env = _env(tmp_path)
    tarball = write_plugin(tmp_path / "dist", "hello", "1.0.0")

    def rows(*flags: str, **extra: str) -> list[str]:
        done = nexo("plugin", "check", str(tarball), *flags, env={**env, **extra}, cwd=tmp_path)
        assert done.code in {0, 1}, done.stderr
        return [line for line in done.stdout.splitlines() if "spawn" in line]

    [painted] = rows("--color", "always", NO_COLOR="1")
    assert painted.startswith("\x1b[32mPASS\x1b[0m spawn "), painted
    [plain] = rows("--color", "never", FORCE_COLOR="1")
    assert plain.startswith("PASS "), plain
    assert "\x1b" not in plain


def test_info_says_a_warning_once(tmp_path: Path, github_server: GitHubServer) -> None:
    github_server.publish("acme", "hello", "v1.0.0", release_assets("hello", "1.0.0"))
    env = {**_env(tmp_path), "NEXO_GITHUB_API_BASE": github_server.url}
    for quiet in ((), ("-q",)):
        shown = nexo("plugin", "info", "acme/hello", *quiet, env=env, cwd=tmp_path, in_process=True)
        assert shown.code == 0, shown.stderr
        (warning,) = [line for line in shown.stderr.splitlines() if "NOT SIGNED" in line]
        assert warning.startswith("WARNING: ")
        assert "warning: WARNING" not in shown.stderr


def test_trust_add_says_what_its_mode_means(tmp_path: Path) -> None:
    env = _env(tmp_path)
    policy = tmp_path / "trusted_keys.toml"
    identity = "https://github.com/acme/x/.github/workflows/release.yml@refs/tags/v1"
    base = ("plugin", "trust", "add", "acme", "--identity", identity, "--trusted-keys", str(policy))
    added = nexo(*base, "--yes", env=env, cwd=tmp_path, in_process=True)
    assert added.code == 0, added.stderr
    assert (
        "Mode: warn (the policy's default; --mode sets one for this owner): an artifact of "
        "acme without a trusted signature is installed, with a warning." in added.stderr
    )
    # Another policy: beside the entry above, a second one for acme would be ignored.
    other = tmp_path / "strict_keys.toml"
    strict = nexo(*base[:-1], str(other), "--mode", "require", "--yes", env=env, cwd=tmp_path,
                  in_process=True)  # fmt: skip
    assert strict.code == 0, strict.stderr
    assert "Mode: require: an artifact of acme without a signature this policy trusts is " in (
        strict.stderr
    )
    wrong = nexo(*base, "--mode", "strict", "--yes", "--json", env=env, in_process=True)
    assert (wrong.code, wrong.document["kind"]) == (2, "usage")
    assert "ignore, warn, require" in wrong.document["error"]
    shown = nexo("plugin", "trust", "add", "--help", env=env, in_process=True)
    assert "--mode [ignore|warn|require]" in shown.stdout


def test_rule_lists_and_explains_every_code_from_the_installed_tool(tmp_path: Path) -> None:
    """As ``ruff rule --all``: no docs/rules.md is needed (a pipx install has none)."""
    from nexo_pkg.lint.registry import every_rule
    from nexo_pkg.trust.policy import POLICY_RULES

    env = _env(tmp_path)
    listed = nexo("plugin", "rule", "--all", env=env, cwd=tmp_path, in_process=True)
    assert listed.code == 0, listed.stderr
    codes = [line.split()[0] for line in listed.stdout.splitlines()]
    assert codes == sorted(every_rule())
    assert {"NX113", *POLICY_RULES} <= set(codes)
    document = nexo("plugin", "rule", "--all", "--json", env=env, in_process=True).document
    assert [rule["code"] for rule in document["rules"]] == codes
    explained = nexo("plugin", "rule", "tool-namespace-violation", env=env, in_process=True)
    assert explained.stdout.startswith("NX113 tool-namespace-violation (error)")
    unknown = nexo("plugin", "rule", "NX999", "--json", env=env, in_process=True)
    assert (unknown.code, unknown.document["kind"]) == (2, "usage")
    assert "`nexo plugin rule --all` lists them" in unknown.document["error"]
    neither = nexo("plugin", "rule", env=env, in_process=True)
    assert neither.code == 2
    told = nexo("plugin", "lint", "--explain", "NX999", env=env, cwd=tmp_path)
    assert "`nexo plugin rule --all` lists every code" in told.stderr
    assert "docs/rules.md" not in told.stderr


def test_schema_kind_prints_each_shipped_schema() -> None:
    shipped = Path(__file__).resolve().parents[2] / "nexo_pkg" / "schemas"
    seen = set()
    for kind in ("plugin", "microapp", "extensions", "wanted", "lock", "trusted-keys",
                 "lint-report"):  # fmt: skip
        shown = nexo("plugin", "schema", "--kind", kind, in_process=True)
        assert shown.code == 0, shown.stderr
        (match,) = [p.name for p in shipped.glob("*.json") if p.read_text() == shown.stdout]
        seen.add(match)
    assert seen == {path.name for path in shipped.glob("*.json")}
    assert (
        nexo("plugin", "schema", in_process=True).stdout
        == (shipped / "nexo-plugin.schema.json").read_text()
    )
    assert nexo("plugin", "schema", "--kind", "policy", in_process=True).code == 2


def test_the_configuration_directory_is_named_only_where_it_changes_something(
    tmp_path: Path,
) -> None:
    env = _env(tmp_path)
    config = tmp_path / "home" / "config"
    config.mkdir(parents=True)
    listed = nexo("plugin", "list", env=env, cwd=tmp_path, in_process=True)
    assert "configuration directory" not in listed.stderr  # it holds nothing read from it
    (config / "plugins").mkdir()
    (config / "plugins" / "discovery.yaml").write_text("discovery:\n  search_paths: []\n")
    listed = nexo("plugin", "list", env=env, cwd=tmp_path, in_process=True)
    assert f"note: using the configuration directory {config}" in listed.stderr
    # push reads no policy: nothing to name, whatever the directory holds.
    pushed = nexo(
        "plugin", "push", str(tmp_path / "no-dist"), "oci://127.0.0.1:9/x/y", "--plain-http",
        env=env, cwd=tmp_path, in_process=True,
    )  # fmt: skip
    assert pushed.code != 0
    assert "configuration directory" not in pushed.stderr


def test_a_command_is_not_told_of_a_configuration_file_it_never_reads(tmp_path: Path) -> None:
    """A trust policy changes nothing for ``list``, ``verify`` or ``remove``: a configuration
    directory holding only that file is not named by them, with ``--dest`` or without; the
    discovery file ``list`` reads the plugins' state from is."""
    env = _env(tmp_path)
    config = tmp_path / "home" / "config"
    (config / "extensions").mkdir(parents=True)
    (config / "extensions" / "trusted_keys.toml").write_text('schema_version = "1.0"\n')
    dest = tmp_path / "plugins"
    for command in (
        ("list",), ("list", "--dest", str(dest)), ("verify",), ("verify", "--dest", str(dest)),
        ("remove", "weather", "--yes"), ("remove", "weather", "--yes", "--dest", str(dest)),
    ):  # fmt: skip
        ran = nexo("plugin", *command, env=env, cwd=tmp_path)
        assert "configuration directory" not in ran.stderr, (command, ran.stderr)
    (config / "plugins").mkdir()
    (config / "plugins" / "discovery.yaml").write_text("discovery:\n  search_paths: []\n")
    listed = nexo("plugin", "list", "--dest", str(dest), env=env, cwd=tmp_path)
    assert f"note: using the configuration directory {config}" in listed.stderr


def test_quiet_check_step_is_silent_when_it_passes(
    tmp_path: Path, offline_pip_env: dict[str, str]
) -> None:
    """``pack --check -q`` and ``install --check -q --yes`` of a plugin that passes say
    nothing (the report is not their result); a failing check still shows its report."""
    env = {**_env(tmp_path), **offline_pip_env}
    _discovered(tmp_path, tmp_path / "root")
    assert nexo("plugin", "new", "demo", "--lang", "python", cwd=tmp_path, env=env).code == 0
    project = tmp_path / "demo"
    packed = nexo("plugin", "pack", "--check", "-q", cwd=project, env=env, in_process=True)
    assert (packed.code, packed.stdout) == (0, "")
    assert "PASS" not in packed.stderr
    assert packed.stderr == ""
    installed = nexo(
        "plugin", "install", str(project / "dist" / "demo-0.1.0-noarch.tar.gz"),
        "--dest", str(tmp_path / "root"), "--check", "-q", "--yes",
        cwd=tmp_path, env=env, in_process=True,
    )  # fmt: skip
    assert (installed.code, installed.stdout) == (0, "")
    assert [line for line in installed.stderr.splitlines() if "NOT SIGNED" not in line] == []
    assert (tmp_path / "root" / "demo-0.1.0" / ".nexo-install.json").is_file()

    noisy = write_plugin(tmp_path / "noisy", "noisy", "0.1.0")  # prints instead of replying
    failed = nexo(
        "plugin", "install", str(noisy), "--dest", str(tmp_path / "root"), "--check", "-q",
        "--yes", cwd=tmp_path, env=env, in_process=True,
    )  # fmt: skip
    assert failed.code == 1
    assert "FAIL" in failed.stderr


def test_quiet_fix_that_leaves_nothing_to_report_prints_nothing(tmp_path: Path) -> None:
    """``lint --fix --unsafe-fixes -q`` fixing every finding is a clean run: nothing printed,
    as ``ruff check --fix -q``; without ``-q`` the fix is said."""
    env = _env(tmp_path)
    assert nexo("plugin", "new", "demo", "--lang", "python", cwd=tmp_path, env=env).code == 0
    manifest = tmp_path / "demo" / "plugin.toml"
    good = manifest.read_text()
    assert 'tools = ["demo_hello"]' in good
    bad = good.replace('tools = ["demo_hello"]', 'tools = ["hello"]')
    for quiet in (True, False):
        manifest.write_text(bad)
        fixed = nexo(
            "plugin", "lint", "--fix", "--unsafe-fixes", *(["-q"] if quiet else []),
            cwd=tmp_path / "demo", env=env, in_process=True,
        )  # fmt: skip
        assert fixed.code == 0, fixed.stdout
        assert manifest.read_text() == good
        if quiet:
            assert (fixed.stdout, fixed.stderr) == ("", "")
        else:
            assert "fixed 1 finding in" in fixed.stderr


def test_remove_without_a_terminal_is_a_usage_error_that_deletes_nothing(tmp_path: Path) -> None:
    """The confirmation rule without a TTY: a command that deletes needs --yes, exit 2, kind
    `usage`, in text (the line ends with ` [usage]`) and in --json, and nothing is removed."""
    env = _env(tmp_path)
    tarball = write_plugin(tmp_path / "dist", "hello", "1.0.0")
    root = tmp_path / "root"
    installed = nexo(
        "plugin", "install", str(tarball), "--dest", str(root), "--yes", "-q",
        env=env, cwd=tmp_path, in_process=True,
    )  # fmt: skip
    assert installed.code == 0, installed.stderr
    before = tree_snapshot(root)
    as_json = nexo(
        "plugin", "remove", "hello", "--dest", str(root), "--json", env=env, cwd=tmp_path
    )
    assert (as_json.code, as_json.document["kind"]) == (2, "usage")
    assert "pass --yes" in as_json.document["error"]
    text = nexo("plugin", "remove", "hello", "--dest", str(root), env=env, cwd=tmp_path)
    assert text.code == 2
    [line] = [each for each in text.stderr.splitlines() if each.startswith("error: ")]
    assert line.endswith(" [usage]"), line
    assert tree_snapshot(root) == before
