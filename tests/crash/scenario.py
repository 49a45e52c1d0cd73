"""A loopback GitHub with a slow, sizeable plugin, and checks of an install root's state.

The tarball asset is streamed at a throttled rate and holds a few hundred files plus a
random payload, so an interrupted command can die while resolving, downloading, verifying,
extracting into staging, writing the receipt, renaming, or removing the old version.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from faults.server import FaultyGitHubServer
from support.cli import CliResult, clean_env, nexo
from support.daemon_walk import assert_one_per_id, discovered_versions
from support.tarballs import directory, file, plugin_members, release_assets, targz

PLUGIN = "hello"
OWNER = "acme"
THROTTLE_BYTES_PER_SECOND = 4 * 1024 * 1024


def slow_plugin_tarball(plugin_id: str, version: str, *, files: int = 300) -> bytes:
    """A valid plugin with ``files`` small files and 1.5 MiB of random bytes."""
    members = plugin_members(plugin_id, version, payload=os.urandom(1536 * 1024))
    members.append(directory("lib/plugin/many"))
    members.extend(
        file(f"lib/plugin/many/f{index:04d}.py", f"X = {index}\n") for index in range(files)
    )
    return targz(members)


def publish(
    server: FaultyGitHubServer,
    plugin_id: str,
    version: str,
    *,
    latest: bool = True,
    files: int = 300,
) -> str:
    """Publish ``plugin_id`` ``version`` under ``acme/<id>``; return the tarball's API path."""
    data = slow_plugin_tarball(plugin_id, version, files=files)
    release = server.publish(
        OWNER,
        plugin_id,
        f"v{version}",
        release_assets(plugin_id, version, data=data),
        latest=latest,
    )
    name = f"{plugin_id}-{version}-noarch.tar.gz"
    return server.asset_api_url(release, name).removeprefix(server.url)


@dataclass
class Root:
    """One NEXO_HOME and install root served by one loopback GitHub."""

    server: FaultyGitHubServer
    home: Path

    @property
    def dest(self) -> Path:
        return self.home / "state" / "plugins"

    @property
    def cache(self) -> Path:
        return self.home / "cache" / "blobs" / "tmp"

    def env(self) -> dict[str, str]:
        return clean_env(
            NEXO_HOME=str(self.home),
            NEXO_GITHUB_API_BASE=self.server.url,
            NEXO_HTTP_RETRY_BASE_MS="1",
            NO_PROXY="127.0.0.1,localhost",
        )

    def args(self, command: str, *rest: str) -> list[str]:
        return ["plugin", command, *rest, "--dest", str(self.dest), "--json"]

    def run(self, command: str, *rest: str) -> CliResult:
        """Run a command in-process (the checks after a crash)."""
        return nexo(*self.args(command, *rest), env=self.env(), in_process=True)

    def spawn_argv(self, command: str, *rest: str) -> list[str]:
        return [sys.executable, "-m", "nexo_pkg", *self.args(command, *rest)]

    def spawn(self, command: str, *rest: str) -> subprocess.Popen[bytes]:
        """Start a command in its own process, to be killed."""
        return subprocess.Popen(
            self.spawn_argv(command, *rest),
            env=self.env(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    def timed_run(self, command: str, *rest: str) -> float:
        """Seconds an uninterrupted subprocess run of the command takes (to spread kills)."""
        started = time.monotonic()
        process = self.spawn(command, *rest)
        assert process.wait(timeout=120) == 0
        return time.monotonic() - started


def kill_after(process: subprocess.Popen[bytes], delay: float) -> bool:
    """SIGKILL ``process`` after ``delay`` s; ``False`` if it had already finished."""
    try:
        process.wait(timeout=delay)
    except subprocess.TimeoutExpired:
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
        return True
    return False


def installed_versions(root: Root, plugin_id: str = PLUGIN) -> list[str]:
    """Versions ``list`` reports for ``plugin_id``, after checking the listing is clean."""
    listing = root.run("list", "--include-orphan")
    assert listing.exit_code == 0, listing.stderr
    document = listing.document
    # A directory without a receipt would be a partial install made visible.
    assert document["orphans"] == [], document["orphans"]
    # Versions kept by `upgrade --keep-old` are listed too, out of the daemon's sight.
    return sorted(
        p["version"] for p in document["plugins"] if p["id"] == plugin_id and not p["kept"]
    )


def assert_complete(root: Root, allowed: Sequence[Sequence[str]]) -> list[str]:
    """``list`` shows one of the ``allowed`` version sets and ``verify`` passes for all; the
    daemon would never meet an id twice, and after ``list`` (which finishes an interrupted
    replacement) it would load the newest listed version."""
    assert_one_per_id(root.dest)
    versions = installed_versions(root)
    assert versions in [sorted(a) for a in allowed], versions
    discovered = discovered_versions(root.dest).get(PLUGIN)
    assert discovered == (versions[-1] if versions else None), (discovered, versions)
    if versions:
        verified = root.run("verify")
        assert verified.exit_code == 0, verified.stdout
        assert all(p["ok"] for p in verified.document["plugins"])
    return versions


def leftovers(root: Root) -> list[str]:
    """Staging and removal trees and replacement journals in ``<dest>``."""
    if not root.dest.exists():
        return []
    prefixes = (".staging-", ".removing-")
    found = [p.name for p in root.dest.iterdir() if p.name.startswith(prefixes)]
    for area in ("staging", "removing", "journal"):
        path = root.dest / ".nexo" / area
        if path.is_dir():
            found.extend(f".nexo/{area}/{child.name}" for child in path.iterdir())
    return sorted(found)


def cache_leftovers(root: Root) -> list[str]:
    """Temp files in the download cache."""
    return sorted(p.name for p in root.cache.iterdir()) if root.cache.exists() else []


def wait_for(predicate: Callable[[], bool], timeout: float) -> bool:
    """Poll ``predicate`` every 5 ms until it holds or ``timeout`` s pass."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.005)
    return False
