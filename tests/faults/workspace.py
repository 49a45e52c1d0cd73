"""One install workspace against the faulty loopback GitHub: ``NEXO_HOME``, the install root
and the download cache, snapshotted before the command so a test can prove that a refused
install wrote nothing anywhere under ``NEXO_HOME``.

:meth:`Setup.install` runs ``nexo plugin install acme/hello --yes --json`` through the real
command line, in-process by default or in a subprocess (``subprocess=True``, needed when a
test measures memory or must survive a client that would hang).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest
from adversarial.harness import Entry, diff, snapshot
from support.cli import CliResult, clean_env, nexo
from support.stderr import without_notes
from support.tarballs import plugin_tarball, release_assets

from nexo_pkg.sources.cache import BlobCache

from .server import FaultyGitHubServer

PLUGIN = "hello"
VERSION = "1.0.0"
TARBALL = f"{PLUGIN}-{VERSION}-noarch.tar.gz"
# Random (incompressible) payload so every tenth of the asset is real bytes on the wire.
PAYLOAD = os.urandom(256 * 1024)

# Runs the command line in a child that reports its own peak RSS on its last stderr line.
# The address-space limit keeps a client that would inflate a bomb from taking the machine.
_MEASURED_MAIN = """
import resource, sys
limit = int(sys.argv.pop(1))
if limit:
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
from nexo_pkg.cli.main import main
try:
    main()
finally:
    # VmHWM is this program's own peak: ru_maxrss would also count the peak of the (large)
    # test process it was started from, which Linux carries across exec.
    with open("/proc/self/status") as status:
        peak = next(line.split()[1] for line in status if line.startswith("VmHWM:"))
    sys.stderr.write(f"\\npeak_rss_kib={peak}\\n")
"""


@dataclass(frozen=True)
class MeasuredResult:
    """A subprocess run of the command line, with the child's peak RSS."""

    result: CliResult
    peak_rss_bytes: int


def run_measured(
    args: list[str], *, env: Mapping[str, str], address_space_limit: int = 0, timeout: float = 120.0
) -> tuple[MeasuredResult, float]:
    """``nexo ARGS`` in a subprocess (under ``address_space_limit`` bytes of address space when
    not 0) that reports its peak RSS; also how long it took."""
    started = time.monotonic()
    completed = subprocess.run(
        [sys.executable, "-c", _MEASURED_MAIN, str(address_space_limit), *args],
        env=dict(env),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        stdin=subprocess.DEVNULL,
    )
    elapsed = time.monotonic() - started
    stderr, _, last = completed.stderr.rstrip("\n").rpartition("\n")
    assert last.startswith("peak_rss_kib="), completed.stderr[-2000:]
    peak = int(last.removeprefix("peak_rss_kib=")) * 1024
    result = CliResult(completed.returncode, completed.stdout, stderr.rstrip("\n"))
    return MeasuredResult(result, peak), elapsed


@dataclass
class Setup:
    server: FaultyGitHubServer
    home: Path
    dest: Path
    cache: Path
    before: Mapping[str, Entry]
    tarball_path: str  # the API path of the tarball asset, to aim faults at it alone

    def env(self, token: str | None = None, **extra: str) -> dict[str, str]:
        env = clean_env(
            NEXO_HOME=str(self.home),
            NEXO_GITHUB_API_BASE=self.server.url,
            NEXO_HTTP_RETRY_BASE_MS="1",
            NO_PROXY="127.0.0.1,localhost",
        )
        if token is not None:
            env["NEXO_GITHUB_TOKEN"] = token
        env.update(extra)
        return env

    def args(self, *extra: str) -> list[str]:
        return [
            "plugin", "install", f"acme/{PLUGIN}", "--dest", str(self.dest), "--yes", "--json",
            *extra,
        ]  # fmt: skip

    def install(
        self, *extra: str, token: str | None = None, env: Mapping[str, str] | None = None
    ) -> tuple[CliResult, float]:
        started = time.monotonic()
        result = nexo(*self.args(*extra), env=self.env(token, **dict(env or {})), in_process=True)
        return result, time.monotonic() - started

    def install_measured(
        self,
        *extra: str,
        env: Mapping[str, str] | None = None,
        address_space_limit: int = 0,
        timeout: float = 120.0,
    ) -> tuple[MeasuredResult, float]:
        """The same install in a subprocess that reports its peak RSS."""
        return run_measured(
            self.args(*extra),
            env=self.env(None, **dict(env or {})),
            address_space_limit=address_space_limit,
            timeout=timeout,
        )

    def assert_untouched(self) -> None:
        after = snapshot(self.home)
        changes = diff(self.before, after)
        assert not any(changes.values()), changes

    def assert_refused(self, result: CliResult, *kinds: str) -> None:
        assert result.exit_code == 1, (result.stdout, result.stderr)
        assert result.document["kind"] in kinds, result.document
        assert "Traceback" not in result.stderr, result.stderr
        # One line on stderr saying what is wrong, beside the one JSON document on stdout.
        assert len(without_notes(result.stderr).strip().splitlines()) == 1, result.stderr
        self.assert_untouched()

    def assert_installed(self, result: CliResult) -> None:
        assert result.exit_code == 0, (result.stdout, result.stderr)
        installed = self.dest / f"{PLUGIN}-{VERSION}"
        assert (installed / "lib" / "plugin" / "data.bin").read_bytes() == PAYLOAD
        assert [p.name for p in self.cache.iterdir()] == []
        assert not [p for p in self.dest.iterdir() if p.name.startswith(".staging-")]


@pytest.fixture
def setup(faulty_server: FaultyGitHubServer, tmp_path: Path) -> Setup:
    data = plugin_tarball(PLUGIN, VERSION, payload=PAYLOAD)
    release = faulty_server.publish(
        "acme", PLUGIN, f"v{VERSION}", release_assets(PLUGIN, VERSION, data=data)
    )
    tarball_path = faulty_server.asset_api_url(release, TARBALL).removeprefix(faulty_server.url)
    home = tmp_path / "home"
    dest = home / "state" / "plugins"
    cache = home / "cache" / "blobs" / "tmp"
    dest.mkdir(parents=True)
    cache.mkdir(parents=True)
    # The shared blob cache exists, as after any earlier install: a refusal must leave it as
    # it was (no blob, no temp file), not merely leave it absent.
    BlobCache(home).prune(max_age=None)
    return Setup(faulty_server, home, dest, cache, snapshot(home), tarball_path)
