"""SIGKILL the commands that write one file (``disable``, ``enable``, ``hold``,
``trust add``, ``trust remove``; ``unhold`` only unlinks one) at the two moments of the
atomic write: the new text written and flushed but not yet renamed, and renamed but the
directory not yet flushed. After each kill the file holds exactly the old bytes or exactly
the new ones, the commands that read it still read it, and running the command again (after
removing a stale discovery edit lock, as its error says) finishes the edit.

The moments are exact (a ``sitecustomize`` hook that kills the process from inside
``os.fsync`` / ``os.replace`` of that file), so no kill depends on timing."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest
from support.cli import CliResult, clean_env, nexo
from support.tarballs import write_plugin

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="the hook names descriptors by /proc/self/fd"
)

PLUGIN = "hello"
IDENTITY = "https://github.com/acme/hello/.github/workflows/release.yml@refs/tags/v1"
ISSUER = "https://token.actions.githubusercontent.com"

# Kills the process at KILL_STAGE of the atomic write of the file named KILL_NAME.
HOOK = textwrap.dedent(
    """
    import os
    import signal

    _name = os.environ["KILL_NAME"]
    _stage = os.environ["KILL_STAGE"]
    _fsync = os.fsync
    _replace = os.replace


    def _die():
        os.kill(os.getpid(), signal.SIGKILL)


    def fsync(descriptor):
        _fsync(descriptor)
        if _stage != "written":
            return
        try:
            opened = os.path.basename(os.readlink(f"/proc/self/fd/{descriptor}"))
        except OSError:
            return
        if opened.startswith("." + _name + ".") and opened.endswith(".tmp"):
            _die()


    def replace(source, target, *args, **kwargs):
        _replace(source, target, *args, **kwargs)
        if _stage == "renamed" and os.path.basename(os.fspath(target)) == _name:
            _die()


    os.fsync = fsync
    os.replace = replace
    """
)


@dataclass
class Setup:
    home: Path
    dest: Path
    config: Path

    @property
    def discovery(self) -> Path:
        return self.config / "plugins" / "discovery.yaml"

    @property
    def policy(self) -> Path:
        return self.config / "extensions" / "trusted_keys.toml"

    @property
    def hold(self) -> Path:
        return self.dest / ".nexo" / "holds" / f"{PLUGIN}.json"

    def env(self, **extra: str) -> dict[str, str]:
        return clean_env(NEXO_HOME=str(self.home), NEXO_CONFIG_DIR=str(self.config), **extra)

    def run(self, *args: str) -> CliResult:
        return nexo("plugin", *args, env=self.env())


def _setup(tmp_path: Path) -> Setup:
    setup = Setup(tmp_path / "home", tmp_path / "root", tmp_path / "config")
    setup.discovery.parent.mkdir(parents=True)
    setup.discovery.write_text(
        f"# the operator's comment\ndiscovery:\n  search_paths: [{setup.dest}]\n  disabled: []\n",
        encoding="utf-8",
    )
    setup.policy.parent.mkdir(parents=True)
    setup.policy.write_text(
        '# who we trust\nschema_version = "1.0"\ndefault = "warn"\n\n'
        f'[[authors]]\nowner = "other"\nidentity = "{IDENTITY.replace("acme/hello", "other/x")}"\n'
        f'oidc_issuer = "{ISSUER}"\nrepos = ["x"]\n',
        encoding="utf-8",
    )
    tarball = write_plugin(tmp_path / "dist", PLUGIN, "1.0.0")
    installed = setup.run("install", str(tarball), "--dest", str(setup.dest), "--yes", "--json")
    assert installed.exit_code == 0, installed.stderr
    return setup


def _killed(setup: Setup, name: str, stage: str, args: Sequence[str]) -> tuple[int, int]:
    """Run ``nexo plugin ARGS`` killed at ``stage`` of the write of ``name``: its exit code
    and process id."""
    hook = setup.home.parent / "hook"
    hook.mkdir(exist_ok=True)
    (hook / "sitecustomize.py").write_text(HOOK, encoding="utf-8", newline="\n")
    env = setup.env(KILL_NAME=name, KILL_STAGE=stage)
    env["PYTHONPATH"] = os.pathsep.join(
        part for part in (str(hook), os.environ.get("PYTHONPATH", "")) if part
    )
    process = subprocess.Popen(
        [str(Path(sys.executable).with_name("nexo")), "plugin", *args],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return process.wait(timeout=120), process.pid


def _state(path: Path) -> bytes | None:
    return path.read_bytes() if path.exists() else None


def _disabled(setup: Setup) -> bool:
    listing = setup.run("list", "--dest", str(setup.dest), "--json")
    assert listing.exit_code == 0, listing.stderr
    [plugin] = [p for p in listing.document["plugins"] if p["id"] == PLUGIN]
    return bool(plugin["discovery"] == "disabled")


def _held(setup: Setup) -> bool:
    listing = setup.run("list", "--dest", str(setup.dest), "--json")
    assert listing.exit_code == 0, listing.stderr
    [plugin] = [p for p in listing.document["plugins"] if p["id"] == PLUGIN]
    return bool(plugin["held"])


def _trusted_owners(setup: Setup) -> list[str]:
    listing = setup.run("trust", "list", "--json")
    assert listing.exit_code == 0, listing.stderr
    return sorted(author["owner"] for author in listing.document["authors"])


DEST = ("--dest",)
TRUST_ADD = ("trust", "add", "acme/hello", "--identity", IDENTITY, "--oidc-issuer", ISSUER)

# (command, file it writes, command that puts the old state first (or none))
EDITS = {
    "disable": (("disable", PLUGIN, *DEST), "discovery", None),
    "enable": (("enable", PLUGIN, *DEST), "discovery", ("disable", PLUGIN, *DEST)),
    "hold": (("hold", PLUGIN, *DEST), "hold", None),
    "trust add": ((*TRUST_ADD, "--yes"), "policy", None),
    "trust remove": (("trust", "remove", "other", "--yes"), "policy", None),
}


def _argv(setup: Setup, args: Sequence[str]) -> list[str]:
    out: list[str] = []
    for arg in args:
        out.append(arg)
        if arg == "--dest":
            out.append(str(setup.dest))
    return out


def _readable(setup: Setup) -> tuple[bool, bool, list[str]]:
    """What each reader makes of the state: disabled, held, trusted owners."""
    return _disabled(setup), _held(setup), _trusted_owners(setup)


@pytest.mark.daemon_host
@pytest.mark.parametrize("stage", ["written", "renamed"])
@pytest.mark.parametrize("command", list(EDITS))
def test_sigkill_during_a_one_file_edit_leaves_the_old_or_the_new_file(
    tmp_path: Path, command: str, stage: str
) -> None:
    args, which, before = EDITS[command]
    setup = _setup(tmp_path)
    target: Path = getattr(setup, which)
    if before is not None:
        assert setup.run(*_argv(setup, before)).exit_code == 0
    old, old_view = _state(target), _readable(setup)

    # The uninterrupted edit, for the new bytes; then the old state back.
    done = setup.run(*_argv(setup, args))
    assert done.exit_code == 0, done.stderr
    new, new_view = _state(target), _readable(setup)
    assert new != old
    assert new_view != old_view
    if old is None:
        target.unlink()
    else:
        target.write_bytes(old)
    assert _readable(setup) == old_view

    code, pid = _killed(setup, target.name, stage, _argv(setup, args))
    assert code == -9, f"the kill point was never reached ({code})"
    # Beside the file: at most the killed writer's temporary file and, for the daemon's
    # discovery files, its edit lock (the daemon's own protocol: an O_EXCL file naming the pid).
    lock = target.with_suffix(".yaml.lock")
    others = {p.name for p in target.parent.iterdir()} - {target.name}
    stray = {n for n in others if n.startswith(f".{target.name}.") and n.endswith(".tmp")}
    assert others - stray <= ({lock.name} if which == "discovery" else set()), others
    assert len(stray) == (1 if stage == "written" else 0), stray
    # Before the rename the old file stands; after it, the new one: never a part of either.
    # (A hold records when it was made: its bytes differ from run to run, its reading not.)
    if which != "hold":
        assert _state(target) == (old if stage == "written" else new)
    else:
        assert (_state(target) is None) == ((old if stage == "written" else new) is None)
    assert _readable(setup) == (old_view if stage == "written" else new_view)

    if lock.exists():
        # The stale lock blocks the next edit, naming itself and its remedy; followed, it works.
        assert lock.read_text(encoding="utf-8") == f"{pid}\n"
        blocked = setup.run(*_argv(setup, args))
        assert (blocked.exit_code, blocked.stderr) == (
            1,
            f"error: {lock} is held by another edit; remove it if no other edit is running [io]\n",
        )
        assert _readable(setup) == (old_view if stage == "written" else new_view)
        lock.unlink()
    # Run again, the edit is done (every edit but `trust remove` is a no-op when it is).
    again = setup.run(*_argv(setup, args))
    landed = stage == "renamed" and command == "trust remove"
    assert again.exit_code == (1 if landed else 0), again.stderr
    if which != "hold":
        assert _state(target) == new
    assert _readable(setup) == new_view
