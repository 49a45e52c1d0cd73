"""``-q`` prints only results, warnings and errors (``nexo plugin --help``), and ``--json``
prints exactly one document on stdout (SPEC §1), on every command's failures.

Each case is a realistic failure of one command (bad input, a failed check, a refused
install, a GitHub or registry on a loopback port nothing listens on), run three times through
the installed console script (``.venv/bin/nexo``, a real subprocess): as it is, with ``-q``,
and with ``--json`` where the command offers it. The quiet run exits as the plain one, says
the failure as the plain one does, and drops nothing but the plain run's notes and progress:
every ``error:`` and ``warning:`` line stays. The ``--json`` run prints one failure document,
and writes and loses nothing (NEXO_HOME, the lock, the projects) beyond what its error says it
left.
"""

from __future__ import annotations

import hashlib
import json
import re
import socket
import stat
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from support.cli import TRACEBACK, CliResult, clean_env, nexo
from support.github_server import GitHubServer
from support.tarballs import manifest_text, release_assets, write_plugin

NEXO = Path(sys.executable).with_name("nexo")


@dataclass(frozen=True)
class World:
    """Plugins installed from the stand-in GitHub, a plugin project whose plugin fails its
    handshake, and the environment that sends every network call to a refused port."""

    tmp: Path
    env: dict[str, str]
    refused: int


def _refused_port() -> int:
    """A loopback port nothing listens on (bound, then closed)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _steady(text: str) -> str:
    """``text`` without what differs from one run to the next (a check's scratch directory
    and the plugin's pid)."""
    text = re.sub(r"/nexo-check-\w+/", "/nexo-check-X/", text)
    return re.sub(r"\(pid \d+\)", "(pid N)", text)


def _script(args: list[str], world: World) -> CliResult:
    """``nexo ARGS`` through the console script, in a subprocess, standard input closed."""
    completed = subprocess.run(
        [str(NEXO), *args],
        env=world.env,
        cwd=world.tmp,
        capture_output=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
        check=False,
    )
    result = CliResult(
        completed.returncode,
        _steady(completed.stdout.decode("utf-8", "replace")),
        _steady(completed.stderr.decode("utf-8", "replace")),
    )
    assert TRACEBACK not in result.stderr, result.stderr
    return result


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    tmp = tmp_path_factory.mktemp("quiet")
    home = tmp / "home"
    base = clean_env(
        NEXO_HOME=str(home),
        NEXO_HTTP_RETRY_BASE_MS="1",
        NO_PROXY="127.0.0.1",
        XDG_CACHE_HOME=str(tmp / "xdg-cache"),
    )
    base.pop("NEXO_CONFIG_DIR", None)
    with GitHubServer() as server:
        online = {**base, "NEXO_GITHUB_API_BASE": server.url}
        server.publish("acme", "hello", "v1.0.0", release_assets("hello", "1.0.0"))
        server.publish("acme", "weather", "v1.0.0", release_assets("weather", "1.0.0"))
        for plugin in ("hello", "weather"):
            installed = nexo("plugin", "install", f"acme/{plugin}", "--yes", env=online, cwd=tmp)
            assert installed.code == 0, installed.stderr
        (tmp / "nexo-plugins.toml").write_text('[plugins.hello]\nsource = "acme/hello"\n')
        locked = nexo("plugin", "lock", "--yes", env=online, cwd=tmp, in_process=True)
        assert locked.code == 0, locked.stderr
    # A changed file in an installed tree: verify and doctor find it.
    changed = home / "state/plugins/weather-1.0.0/nexo-plugin.toml"
    changed.write_text(changed.read_text() + "\n# changed\n")
    # A plugin project whose plugin exits before it answers initialize.
    created = nexo("plugin", "new", "demo", "-q", env=base, cwd=tmp, in_process=True)
    assert created.code == 0, created.stderr
    (tmp / "demo/src/main.py").write_text("import sys\n\nsys.exit(3)\n")
    (tmp / "demo/requirements.txt").write_text("")
    packed = nexo("plugin", "pack", "demo", "--out", "packed-demo", env=base, cwd=tmp)
    assert packed.code == 0, packed.stderr
    # A release tarball whose sidecar names other bytes.
    tarball = write_plugin(tmp / "dist", "forged", "1.0.0")
    sidecar = tarball.with_name(tarball.name + ".sha256")
    sidecar.write_text(f"{'0' * 64}  {tarball.name}\n")
    write_plugin(tmp / "clean", "hello", "1.0.0")
    (tmp / "clean/nexo-plugin.toml").write_text(manifest_text("hello", "1.0.0"))
    (tmp / "bad.toml").write_text("[plugin\nid = 1\n")
    (tmp / "bad-manifest.toml").write_text('[plugin]\nid = "Bad"\n')
    (tmp / "open.toml").write_text('default = "warn"\n')
    (tmp / "open.toml").chmod(0o666)
    port = _refused_port()
    return World(tmp, {**base, "NEXO_GITHUB_API_BASE": f"http://127.0.0.1:{port}"}, port)


IDENTITY = "https://github.com/acme/x/.github/workflows/r.yml@refs/tags/v1"
REFUSED = "(Connection refused|127\\.0\\.0\\.1)"

# (args, exit code, what the failure says (a regular expression), --json offered, its kind).
# ``{oci}`` is a registry reference on the refused port.
CASES: dict[str, tuple[list[str], int, str, bool, str | None]] = {
    "lint-missing": (["lint", "nosuch.toml"], 2, r"^error: no such file", True, "usage"),
    "schema-kind": (["schema", "--kind", "nosuch"], 2, r"^error: --kind 'nosuch'", False, None),
    "rule-unknown": (["rule", "NX999"], 2, r"^error: unknown rule `NX999`", True, "usage"),
    "new-exists": (["new", "demo"], 2, r"^error: demo exists and is not empty", False, None),
    "pack-check": (
        ["pack", "demo", "--out", "packed", "--check"],
        1,
        r"^error: the packed plugin failed the handshake checks \[check_failed\]$",
        True,
        "check_failed",
    ),
    "check-fails": (["check", "demo"], 1, r"^FAIL initialize", True, None),
    "install-forged": (
        ["install", "dist/forged-1.0.0-noarch.tar.gz", "--yes", "--dest", "elsewhere"],
        1,
        r"^error: .*sha256",
        True,
        "checksum_mismatch",
    ),
    "install-check": (
        ["install", "packed-demo/demo-0.1.0-noarch.tar.gz", "--check", "--yes", "--dest", "chk"],
        1,
        r"^error: demo failed the handshake checks; it is installed at ",
        True,
        "check_failed",
    ),
    # -q drops lint's summary line (as ruff -q does); every finding stays.
    "lint-findings": (["lint", "bad-manifest.toml"], 1, r"NX100 key `plugin.id`", True, None),
    "install-refused": (
        ["install", "acme/other", "--yes", "--dest", "elsewhere"],
        1,
        rf"^error: .*{REFUSED}",
        True,
        "network",
    ),
    "upgrade-refused": (["upgrade", "hello"], 1, rf"^error: .*{REFUSED}", True, "network"),
    "upgrade-all-refused": (
        ["upgrade", "--all"],
        1,
        rf"^error: hello: .*{REFUSED}.* \[network\]$",
        True,
        None,
    ),
    "list-dest-file": (
        ["list", "--dest", "bad.toml"],
        2,
        r"^error: --dest .* is a file",
        True,
        "usage",
    ),
    "remove-unknown": (
        ["remove", "nosuch", "--yes"],
        1,
        r"^error: plugin 'nosuch' is not",
        True,
        "not_installed",
    ),
    "verify-changed": (["verify"], 1, r"^CHANGED +weather 1\.0\.0", True, None),
    "sbom-unknown": (["sbom", "nosuch"], 1, r"^error: plugin 'nosuch' is not", False, None),
    "outdated-refused": (
        ["outdated"],
        1,
        rf"^error: hello: .*{REFUSED}.* \[network\]$",
        True,
        None,
    ),
    "rollback-nothing": (
        ["rollback", "hello", "--yes"],
        1,
        r"^error: .*hello",
        True,
        "not_installed",
    ),
    "hold-unknown": (
        ["hold", "nosuch"],
        1,
        r"^error: plugin 'nosuch' is not",
        True,
        "not_installed",
    ),
    "unhold-unknown": (
        ["unhold", "nosuch"],
        1,
        r"^error: plugin 'nosuch' is not",
        True,
        "not_installed",
    ),
    "search-refused": (
        ["search", "weather"],
        1,
        rf"^error: the repository search: .*{REFUSED}",
        True,
        "network",
    ),
    "info-refused": (["info", "acme/hello"], 1, rf"^error: .*{REFUSED}", True, "network"),
    "doctor-changed": (["doctor", "--no-check"], 1, r"weather", True, None),
    "enable-unknown": (
        ["enable", "nosuch", "--yes"],
        1,
        r"^error: plugin 'nosuch' is not",
        True,
        "not_installed",
    ),
    "disable-unknown": (
        ["disable", "nosuch", "--yes"],
        1,
        r"^error: plugin 'nosuch' is not",
        True,
        "not_installed",
    ),
    "lock-refused": (["lock", "--upgrade", "--yes"], 1, rf"^error: .*{REFUSED}", True, "network"),
    "lock-wanted-missing": (
        ["lock", "--file", "missing.toml"],
        2,
        r"^error: missing\.toml does not exist",
        True,
        "wanted_invalid",
    ),
    "sync-refused": (
        ["sync", "--dest", "synced", "--yes"],
        1,
        r"^error: hello: ",
        True,
        "sync_failed",
    ),
    "push-refused": (
        ["push", "clean", "{oci}", "--yes"],
        1,
        rf"^error: .*{REFUSED}",
        True,
        "network",
    ),
    "mirror-refused": (
        ["mirror", "acme/hello@v1.0.0", "{oci}", "--yes"],
        1,
        rf"^error: .*{REFUSED}",
        True,
        "network",
    ),
    "cache-prune-bad": (
        ["cache", "prune", "--older-than-days", "abc"],
        2,
        r"--older-than-days",
        True,
        "usage",
    ),
    "trust-list-bad": (
        ["trust", "list", "--trusted-keys", "bad.toml"],
        2,
        r"^error: .*bad\.toml.*invalid trust policy",
        True,
        "policy_invalid",
    ),
    # Not a failure: a warning, which -q keeps as well.
    "trust-list-open-policy": (
        ["trust", "list", "--trusted-keys", "open.toml"],
        0,
        r"^WARNING: the trust policy .* is writable by every user",
        False,
        None,
    ),
    "trust-verify-missing": (
        ["trust", "verify", "nosuch"],
        2,
        r"^error: nosuch is not a file",
        True,
        "usage",
    ),
    "trust-add-no-terminal": (
        ["trust", "add", "acme", "--identity", IDENTITY, "--trusted-keys", "policy.toml"],
        2,
        r"^error: .*--yes",
        True,
        "usage",
    ),
}


# What a failure may leave: the root a sync created (with its two lock files) before its
# plugins failed, when no earlier run created it; nothing else is written or lost.
LEFT = {
    "sync-refused": {"synced", "synced/.nexo-install.lock", "synced/.nexo-sync.lock"},
}
# The failures that report on what they made, and leave it to be looked at: the packed
# output whose check failed, the plugin installed (its tarball cached) before its check
# failed (the error says where and how to remove it).
MADE = {"pack-check": ("packed",), "install-check": ("chk", "home/cache")}


def _under(path: str, directory: str) -> bool:
    return path == directory or path.startswith(f"{directory}/")


def _state(root: Path) -> dict[str, tuple[str, int, str, int]]:
    """Every entry below ``root``: kind, mode, content hash (or link target) and, for a file,
    its modification time (a lock rewritten with the same bytes is a write too)."""
    state: dict[str, tuple[str, int, str, int]] = {}
    for path in sorted(root.rglob("*")):
        info = path.lstat()
        relative, mode = path.relative_to(root).as_posix(), stat.S_IMODE(info.st_mode)
        if stat.S_ISLNK(info.st_mode):
            state[relative] = ("link", 0, str(path.readlink()), 0)
        elif stat.S_ISREG(info.st_mode):
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            # A cached blob's time records its use (`cache prune` ages blobs by it).
            used = relative.startswith("home/cache/")
            state[relative] = ("file", mode, digest, 0 if used else info.st_mtime_ns)
        else:
            state[relative] = ("dir", mode, "", 0)
    return state


def _without_summary(stdout: str) -> str:
    """``stdout`` without lint's closing summary (``Found 5 errors and 0 warnings in 1
    file.``), which ``-q`` drops."""
    return re.sub(r"(?m)^\n?Found \d+ errors? and \d+ warnings? in \d+ files?\.\n", "", stdout)


def _kept_lines(text: str) -> list[str]:
    """The lines ``-q`` must keep: errors and warnings (any case, as ``WARNING: … NOT
    SIGNED``)."""
    return [line for line in text.splitlines() if re.match(r"(?i)(error|warning)\b", line)]


def _args(case: str, world: World) -> list[str]:
    oci = f"oci://127.0.0.1:{world.refused}/acme/hello:1.0.0"
    return ["plugin", *(arg.replace("{oci}", oci) for arg in CASES[case][0])]


@pytest.mark.parametrize("case", list(CASES))
def test_quiet_keeps_the_failure(case: str, world: World) -> None:
    _, code, said, _, _ = CASES[case]
    args = _args(case, world)
    plain = _script(args, world)
    quiet = _script([*args, "-q"], world)
    assert (plain.code, quiet.code) == (code, code), (plain, quiet)
    shown = re.compile(said, re.MULTILINE)
    for result in (plain, quiet):
        assert shown.search(result.stderr + result.stdout), (said, result)
    # The result is the same; stderr only loses lines, never the errors and warnings.
    assert quiet.stdout == _without_summary(plain.stdout)
    assert _kept_lines(quiet.stderr) == _kept_lines(plain.stderr), (plain.stderr, quiet.stderr)
    quiet_lines = quiet.stderr.splitlines()
    assert all(line in plain.stderr.splitlines() for line in quiet_lines), quiet.stderr


@pytest.mark.parametrize("case", [case for case, row in CASES.items() if row[3]])
def test_json_prints_one_failure_document(case: str, world: World) -> None:
    _, code, said, _, kind = CASES[case]
    before = _state(world.tmp)
    result = _script([*_args(case, world), "--json"], world)
    assert result.code == code, result
    # A refusal writes nothing and loses nothing: NEXO_HOME (receipts, kept versions,
    # policy), the lock and the wanted file, the projects (bytes, modes and times alike).
    after = _state(world.tmp)
    changed = {p for p in before.keys() | after.keys() if before.get(p) != after.get(p)}
    changed = {p for p in changed if not any(_under(p, made) for made in MADE.get(case, ()))}
    assert changed <= LEFT.get(case, set()), (sorted(changed), result.stderr)
    assert all(before.get(p) is None for p in changed), sorted(changed)  # added, not lost
    document = json.loads(result.stdout)  # one document and nothing else
    assert isinstance(document, dict)
    if case == "lint-findings":
        # lint's report has its own schema (`schema --kind lint-report`): its summary says it.
        assert document["summary"]["errors"] == 5, document["summary"]
        return
    assert document["ok"] is False, document
    if kind is not None:
        assert document["kind"] == kind, document
        # An error is said on stderr too, as without --json (a partly failed sync included).
        assert re.search(said, result.stderr, re.MULTILINE), result.stderr


def _json_commands(option: str) -> list[tuple[str, ...]]:
    """Every command path (``("plugin", "trust", "add")``, …) that offers both ``--json`` and
    ``option``."""
    from nexo_pkg.cli.app import COMMANDS, module_commands

    found: list[tuple[str, ...]] = []
    pending: list[tuple[tuple[str, ...], Any]] = [
        (("plugin", name), module_commands(spec.module)[name]) for name, spec in COMMANDS.items()
    ]
    while pending:
        path, command = pending.pop()
        offered = {opt for param in command.params for opt in param.opts}
        if {"--json", option} <= offered:
            found.append(path)
        subcommands = getattr(command, "commands", {})
        pending.extend(((*path, name), sub) for name, sub in subcommands.items())
    return sorted(found)


@pytest.mark.parametrize("path", _json_commands("--json"), ids=" ".join)
def test_a_usage_error_with_json_is_one_document(path: tuple[str, ...], world: World) -> None:
    """An option the command does not take: exit 2 and one ``usage`` document, whatever the
    command (the shared renderer, the small parsers of ``lint`` and ``list`` alike)."""
    result = nexo(*path, "--json", "--no-such-option", env=world.env, cwd=world.tmp)
    assert result.code == 2, result
    document = json.loads(result.stdout)
    assert (document["ok"], document["kind"]) == (False, "usage"), document


@pytest.mark.parametrize("path", _json_commands("--config"), ids=" ".join)
def test_a_config_that_is_a_file_with_json_is_one_document(
    path: tuple[str, ...], world: World
) -> None:
    """``--config`` naming a file, not the daemon's configuration directory: exit 2 and one
    document of a configuration kind, before anything is asked or written."""
    by_id = (
        "disable",
        "enable",
        "hold",
        "unhold",
        "remove",
        "rollback",
        "upgrade",
        "check",
        "sbom",
    )
    args: dict[tuple[str, ...], list[str]] = {
        **{("plugin", name): ["hello"] for name in by_id},
        ("plugin", "info"): ["acme/hello"],
        ("plugin", "install"): ["acme/hello"],
        ("plugin", "trust", "add"): ["acme/hello"],
        ("plugin", "trust", "remove"): ["acme", "--yes"],
        ("plugin", "trust", "verify"): ["bad.toml"],
    }
    config = ["--config", str(world.tmp / "bad.toml")]
    result = nexo(*path, *args.get(path, []), *config, "--json", env=world.env, cwd=world.tmp)
    assert result.code == 2, result
    document = json.loads(result.stdout)
    assert (document["ok"], document["kind"]) == (False, "config"), document
    assert "is not a directory" in document["error"]
    assert result.stderr.count("error: ") == 1, result.stderr
