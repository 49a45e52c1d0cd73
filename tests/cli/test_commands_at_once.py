"""Two operator commands at once on one plugin root: a hold is judged under the root's lock.

Each test pauses the first command at a known point (its tarball download held by the
loopback GitHub, or the root's lock held by the test) and runs the second one meanwhile, so
the order is certain, never a race of timings.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
import urllib.request
from pathlib import Path

import pytest
from support.cli import nexo
from support.github_server import GitHubServer
from support.stand_in import use_stand_in
from support.tarballs import file, plugin_members, release_assets, targz, write_plugin

from nexo_pkg.core import posix

CLEARED = ("NEXO_GITHUB_TOKEN", "GITHUB_TOKEN", "GH_TOKEN", "GITHUB_API_URL", "NEXO_INSTALL_TARGET")
TARBALL = "hello-2.0.0-noarch.tar.gz"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, server: GitHubServer) -> Path:
    home = use_stand_in(monkeypatch, tmp_path, server, cleared=CLEARED)
    server.publish("acme", "hello", "v1.0.0", release_assets("hello", "1.0.0"))
    assert nexo("plugin", "install", "acme/hello", "--yes", in_process=True).code == 0
    return home


def _start(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "nexo_pkg", "plugin", *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _wait_for(condition: object, what: str, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 30
    while not condition():  # type: ignore[operator]
        assert process.poll() is None, f"ended before {what}: {process.communicate()}"
        assert time.monotonic() < deadline, f"never {what}"
        time.sleep(0.02)


def _listed(home: Path) -> list[tuple[str, bool]]:
    listing = nexo("plugin", "list", "--json", in_process=True).document["plugins"]
    return [(entry["version"], entry["held"]) for entry in listing if not entry["kept"]]


@pytest.mark.daemon_host
def test_a_hold_made_while_an_upgrade_downloads_stops_that_upgrade(
    home: Path, server: GitHubServer
) -> None:
    release = server.publish("acme", "hello", "v2.0.0", release_assets("hello", "2.0.0"))
    (tarball,) = [asset for asset in release.assets if asset.name == TARBALL]
    download = f"/assets/{tarball.id}"
    # The upgrade looked for a hold (none), then downloads 2.0.0; the hold comes meanwhile.
    server.hold_until(download, "/let-the-download-go", seconds=30)
    upgrade = _start("upgrade", "hello", "--yes", "--json")
    _wait_for(
        lambda: any(request.path.endswith(download) for request in server.requests),
        "downloaded the tarball",
        upgrade,
    )
    held = nexo("plugin", "hold", "hello", in_process=True)
    assert held.code == 0, held.stderr
    assert "hello is held at 1.0.0" in held.stderr
    with pytest.raises(urllib.error.HTTPError):
        urllib.request.urlopen(server.url + "/let-the-download-go", timeout=10)
    out, err = upgrade.communicate(timeout=60)
    assert server.released_by[download] == "request"

    assert (upgrade.returncode, "Traceback" in err) == (0, False), err
    document = json.loads(out)
    said = (document["upgraded"], document["held"], document["version"])
    assert said == (False, "1.0.0", "1.0.0")
    # The hold the operator was told of stands, on the version installed.
    assert _listed(home) == [("1.0.0", True)]
    hold = json.loads((home / "state/plugins/.nexo/holds/hello.json").read_text())
    assert hold["version"] == "1.0.0"
    assert not (home / "state/plugins/hello-2.0.0").exists()


def _opened(pid: int, path: Path) -> bool:
    """Whether process ``pid`` has ``path`` open (Linux's ``/proc``)."""
    try:
        descriptors = list(Path(f"/proc/{pid}/fd").iterdir())
    except OSError:
        return False
    for descriptor in descriptors:
        try:
            if descriptor.readlink() == path:
                return True
        except OSError:
            continue
    return False


@pytest.mark.daemon_host
@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc")
def test_a_hold_waiting_on_the_lock_while_the_plugin_goes_holds_nothing(home: Path) -> None:
    root = home / "state/plugins"
    lock = root / ".nexo-install.lock"
    descriptor = os.open(lock, os.O_RDWR)
    try:
        posix.lock_exclusive(descriptor)
        hold = _start("hold", "hello")
        # `hold` found the plugin installed and now waits for the root's lock, which a
        # `remove` holds: the plugin leaves the daemon's sight meanwhile, as remove does it.
        _wait_for(lambda: _opened(hold.pid, lock), "opened the lock", hold)
        removing = root / ".nexo" / "removing"
        removing.mkdir(parents=True, exist_ok=True)
        (root / "hello-1.0.0").rename(removing / "hello-1.0.0")
    finally:
        os.close(descriptor)
    out, err = hold.communicate(timeout=60)

    assert hold.returncode == 1, (out, err)
    assert err.strip().splitlines()[-1].endswith("[not_installed]"), err
    assert "Traceback" not in err
    # No hold on a plugin that is gone (it would name no version: `?`).
    assert not (root / ".nexo/holds/hello.json").exists()


@pytest.mark.daemon_host
def test_a_plugin_removed_while_doctor_checks_it_is_no_error_of_the_plugin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NEXO_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("NEXO_DAEMON_VERSION", "1.0.0")
    monkeypatch.chdir(tmp_path)
    started, go = tmp_path / "started", tmp_path / "go"
    # The plugin's launcher says it runs, then waits (bounded) for the test before it exits
    # without a reply, as a plugin whose files were taken away while it started would.
    launcher = (
        f"#!/usr/bin/env bash\n: > '{started}'\n"
        f"for _ in $(seq 600); do [ -e '{go}' ] && exit 2; sleep 0.05; done\nexit 2\n"
    )
    members = [
        member if member.name != "bin/hello" else file("bin/hello", launcher, mode=0o755)
        for member in plugin_members("hello", "1.0.0")
    ]
    tarball = write_plugin(tmp_path / "dist", "hello", "1.0.0", data=targz(members))
    root = tmp_path / "plugins"
    installed = nexo("plugin", "install", str(tarball), "--yes", "--dest", str(root))
    assert installed.code == 0, installed.stderr

    doctor = _start("doctor", "--dest", str(root), "--json")
    _wait_for(started.exists, "spawned the plugin", doctor)
    removed = nexo("plugin", "remove", "hello", "--yes", "--dest", str(root))
    assert removed.code == 0, removed.stderr
    go.touch()
    out, err = doctor.communicate(timeout=60)

    assert "Traceback" not in err
    findings = [item for item in json.loads(out)["findings"] if item["check"] == "check"]
    assert [(item["severity"], item["id"]) for item in findings] == [("warning", "hello")], findings
    assert "left the root while it was checked" in findings[0]["message"]
    assert doctor.returncode == 0, (out, err)


# Runs `nexo plugin ARGV...` with two other real commands around the upgrade's install step:
# an `install` of the same new version just before it (so the upgrade finds that version
# already in place), then a `hold` right after it (between the upgrade's two locked steps).
AROUND_THE_INSTALL_STEP = textwrap.dedent(
    """
    import subprocess, sys

    from nexo_pkg.install import pipeline

    real = pipeline.install_from

    def nexo(*args):
        command = [sys.executable, "-m", "nexo_pkg", "plugin", *args]
        done = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
        sys.stderr.write(f"{args[0]}: {done.returncode} {done.stderr}")

    def install_from(*args, **kwargs):
        nexo("install", "acme/hello@v2.0.0", "--yes")
        result = real(*args, **kwargs)
        nexo("hold", "hello")
        return result

    pipeline.install_from = install_from
    sys.argv = ["nexo", *sys.argv[1:]]
    from nexo_pkg.cli.main import main
    main()
    """
)


@pytest.mark.daemon_host
def test_a_hold_made_after_an_upgrade_found_its_version_in_place_stands(
    home: Path, server: GitHubServer
) -> None:
    server.publish("acme", "hello", "v2.0.0", release_assets("hello", "2.0.0"))
    wrapped = [sys.executable, "-c", AROUND_THE_INSTALL_STEP]
    upgrade = subprocess.run(
        [*wrapped, "plugin", "upgrade", "hello", "--yes", "--json"],
        check=False,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert "Traceback" not in upgrade.stderr
    # The other commands ran where they were meant to, and `hold` told the operator it held.
    assert "install: 0 " in upgrade.stderr, upgrade.stderr
    assert "hold: 0 hello is held at 2.0.0" in upgrade.stderr, upgrade.stderr
    assert upgrade.returncode == 0, upgrade.stderr
    # Nothing it names was released: the hold came after this upgrade judged holds.
    assert json.loads(upgrade.stdout).get("released_hold") is None, upgrade.stdout
    # The hold the operator was told of stands: the upgrade judged holds before it was made.
    assert _listed(home) == [("2.0.0", True)]
    hold = json.loads((home / "state/plugins/.nexo/holds/hello.json").read_text())
    assert hold["version"] == "2.0.0"


@pytest.mark.daemon_host
def test_a_remove_of_a_plugin_not_there_never_waits_for_another_command(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = home / "state/plugins"
    # Another command holds the root (an install at its confirmation screen, say) and has a
    # removal under way; no other plugin is installed under the id the operator mistyped.
    removal = root / ".nexo/removing/world-1.0.0-0123456789ab/tree"
    removal.mkdir(parents=True)
    (removal / "plugin.toml").write_text("id = 'world'\n")
    monkeypatch.setenv("NEXO_INSTALL_LOCK_TIMEOUT", "20")
    descriptor = os.open(root / ".nexo-install.lock", os.O_RDWR)
    try:
        posix.lock_exclusive(descriptor)
        started = time.monotonic()
        removed = nexo("plugin", "remove", "world", "--yes", "--json")
        took = time.monotonic() - started
    finally:
        os.close(descriptor)

    # Answered at once, as before any removal was left: not installed, nothing touched.
    assert (removed.code, removed.document["kind"]) == (1, "not_installed"), removed.stdout
    assert took < 10, took
    assert (removal / "plugin.toml").read_text() == "id = 'world'\n"
