"""Every command that takes ``--jobs`` prints, writes and exits as ``--jobs 1`` does, whatever
the number of jobs: the same stdout, stderr (timing figures aside), exit code and plugin root,
in text and in JSON, when the plugins' answers come back in another order than they were
asked. One plugin's failure (its source rate-limited, its download refused, its handshake
never answered) marks that plugin alone.

One host for every row: six plugins installed from the GitHub stand-in, each with a newer
release, the newest of three needing a newer daemon than the one named; a wanted set and its
lock beside it. Each run starts from the same copy of the host, so the runs see the same
paths; the first plugin's answers are slow, so that the plugins after it finish first."""

from __future__ import annotations

import hashlib
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from support.cli import nexo
from support.github_server import GitHubServer
from support.registry_env import write_wanted
from support.stand_in import use_stand_in
from support.tarballs import file, manifest_text, plugin_members, sidecar_line, targz

IDS = ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot")
# Their newest release (2.0.0) needs a newer daemon than DAEMON: 1.1.0 is the one for it.
NEEDING = ("alpha", "charlie", "echo")
DAEMON = "0.2.1"
SCRIPTED = Path(__file__).resolve().parent.parent / "fixtures" / "plugins" / "scripted.py"
JOBS = ("1", "2", "6")
RESET = 1_900_000_000

# Figures that say when, not what: the seconds a slow answer has left, the moment a version
# was installed, and the random name of the directory a replaced version is kept in.
TIMINGS = (
    (re.compile(r"giving up in \d+ s"), "giving up in N s"),
    (re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"), "<time>"),
    (re.compile(r"(/kept/[\w.-]+?-\d+\.\d+\.\d+)-[0-9a-f]{12}"), r"\1-<kept>"),
)


def _assets(
    plugin_id: str, version: str, *, mode: str = "ok", needs: str = ">=0.1.0"
) -> dict[str, bytes]:
    """A release as ``pack`` makes it, whose plugin is the scripted test plugin in ``mode``
    and whose manifest asks ``needs`` of the daemon."""
    manifest = manifest_text(plugin_id, version).replace('">=0.1.0"', f'"{needs}"')
    source = SCRIPTED.read_text().replace(
        'MODE = sys.argv[1] if len(sys.argv) > 1 else "ok"', f"MODE = {mode!r}"
    )
    members = [
        file(member.name, source) if member.name == "lib/plugin/main.py" else member
        for member in plugin_members(plugin_id, version, manifest=manifest)
    ]
    data = targz(members)
    name = f"{plugin_id}-{version}-noarch.tar.gz"
    return {
        name: data,
        f"{name}.sha256": sidecar_line(data, name).encode(),
        "nexo-plugin.toml": manifest.encode(),
    }


@dataclass
class Host:
    site: Path
    snapshot: Path
    root: Path
    server: GitHubServer

    def restore(self) -> None:
        """The host as it was built (the site itself stays: it is the working directory)."""
        for entry in self.site.iterdir():
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry)
            else:
                entry.unlink()
        shutil.copytree(self.snapshot, self.site, symlinks=True, dirs_exist_ok=True)


@pytest.fixture
def host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, server: GitHubServer) -> Host:
    site = tmp_path / "site"
    site.mkdir()
    home = use_stand_in(monkeypatch, site, server)
    root = home / "state" / "plugins"
    (home / "config" / "plugins").mkdir(parents=True)
    (home / "config" / "plugins" / "discovery.yaml").write_text(
        f"discovery:\n  search_paths: [{root}]\n"
    )
    for plugin_id in IDS:
        # foxtrot never answers its handshake.
        mode = "silent" if plugin_id == "foxtrot" else "ok"
        server.publish("acme", plugin_id, "v1.0.0", _assets(plugin_id, "1.0.0", mode=mode))
        installed = nexo("plugin", "install", f"acme/{plugin_id}", "--yes", in_process=True)
        assert installed.code == 0, installed.stderr
    for plugin_id in IDS:
        server.publish("acme", plugin_id, "v1.1.0", _assets(plugin_id, "1.1.0"))
        needs = ">=9.0" if plugin_id in NEEDING else ">=0.1.0"
        server.publish("acme", plugin_id, "v2.0.0", _assets(plugin_id, "2.0.0", needs=needs))
    wanted = write_wanted(site / "nexo-plugins.toml", {p: f"acme/{p}" for p in IDS})
    locked = nexo("plugin", "lock", "-f", str(wanted), "--nexo-version", DAEMON, in_process=True)
    assert locked.code == 0, locked.stderr
    # Nothing downloaded yet: every run fetches what it installs.
    shutil.rmtree(home / "cache")
    snapshot = tmp_path / "snapshot"
    shutil.copytree(site, snapshot, symlinks=True)
    return Host(site, snapshot, root, server)


def _tarball_paths(server: GitHubServer, plugin_id: str, tag: str) -> tuple[str, str]:
    """The paths the tarball of ``plugin_id``'s release ``tag`` is downloaded from: the API's
    and the release page's."""
    for release in server.releases[("acme", plugin_id)]:
        if release.tag == tag:
            (asset,) = [a for a in release.assets if a.name.endswith(".tar.gz")]
            return f"/releases/assets/{asset.id}", f"/releases/download/{tag}/{asset.name}"
    raise KeyError(tag)


def _first_is_slow(server: GitHubServer) -> None:
    server.slow(0.4, path_contains="/acme/alpha/")


def _limited_midway(server: GitHubServer) -> None:
    """GitHub's rate limit spent when charlie and echo are asked; its answers come late, so
    that the plugins after charlie are answered first when they are asked side by side."""
    _first_is_slow(server)
    for plugin_id in ("charlie", "echo"):
        server.slow(0.6, path_contains=f"/acme/{plugin_id}/")
        server.rate_limit(reset=RESET, times=None, path_contains=f"/acme/{plugin_id}/")


def _download_refused(plugin_id: str, tag: str) -> Callable[[GitHubServer], None]:
    def faults(server: GitHubServer) -> None:
        _first_is_slow(server)
        for path in _tarball_paths(server, plugin_id, tag):
            server.fail(500, times=None, path_contains=path)

    return faults


def _nothing(server: GitHubServer) -> None:
    del server


@dataclass(frozen=True)
class Row:
    args: tuple[str, ...]
    faults: Callable[[GitHubServer], None]
    code: int
    # What the --jobs 1 run must show (so that a row cannot pass by failing alike).
    shows: tuple[str, ...]


ROWS = {
    # The notes saying which older release is locked come in the wanted set's order.
    "lock, older releases for the daemon": Row(
        ("lock", "--nexo-version", DAEMON, "--lock", "again.lock"),
        _first_is_slow,
        0,
        tuple(f"acme/{p} (v2.0.0) needs a newer daemon" for p in NEEDING),
    ),
    # One at a time, the lookups after charlie's rate-limit answer ask nothing.
    "outdated, rate limit spent midway": Row(
        ("outdated",), _limited_midway, 1, ("(4 plugin(s) not checked) [rate_limited]",)
    ),
    "outdated, newest needing a newer daemon": Row(
        ("outdated", "--nexo-version", DAEMON), _first_is_slow, 0, ("needs nexo >=9.0",)
    ),
    "upgrade --all, rate limit spent midway": Row(
        ("upgrade", "--all", "--yes"), _limited_midway, 1, ("not upgraded) [rate_limited]",)
    ),
    # delta's download fails: delta alone is not upgraded.
    "upgrade --all, one download refused": Row(
        ("upgrade", "--all", "--yes", "--nexo-version", DAEMON),
        _download_refused("delta", "v2.0.0"),
        1,
        ("error: delta: ", "Upgraded foxtrot to 2.0.0"),
    ),
    # bravo's download fails: bravo alone is not synced.
    "sync, one download refused": Row(
        ("sync", "--frozen"),
        _download_refused("bravo", "v2.0.0"),
        1,
        ("error: bravo: ", "delta 1.0.0 \u2192 2.0.0: upgraded"),
    ),
    # foxtrot never answers its handshake: foxtrot alone fails its check.
    "doctor, one handshake never answered": Row(
        ("doctor", "--timeout-ms", "4000"),
        _nothing,
        1,
        ("ERROR  check      foxtrot: initialize: no reply to initialize: no reply within",),
    ),
}


def _shown(text: str) -> str:
    for pattern, replacement in TIMINGS:
        text = pattern.sub(replacement, text)
    return text


def _root(root: Path) -> dict[str, tuple[int, str]]:
    """Every entry under ``root``: its mode and contents (timings as :func:`_shown`)."""
    found: dict[str, tuple[int, str]] = {}
    for path in sorted(root.rglob("*")):
        info = path.lstat()
        data = "" if path.is_dir() or path.is_symlink() else path.read_bytes()
        if isinstance(data, bytes):
            data = _shown(data.decode(errors="replace")) if path.suffix == ".json" else (
                hashlib.sha256(data).hexdigest()
            )  # fmt: skip
        found[_shown(path.relative_to(root).as_posix())] = (info.st_mode, data)
    return found


@pytest.mark.parametrize("row", list(ROWS), ids=list(ROWS))
def test_every_jobs_count_prints_and_writes_what_one_job_does(host: Host, row: str) -> None:
    chosen = ROWS[row]
    runs = {}
    for output in ((), ("--json",)):
        for jobs in JOBS:
            host.restore()
            host.server.clear_faults()
            chosen.faults(host.server)
            result = nexo("plugin", *chosen.args, *output, "--jobs", jobs, in_process=True)
            runs[output, jobs] = (
                result.code,
                _shown(result.stdout),
                _shown(result.stderr),
                _root(host.root),
                {
                    p.name: hashlib.sha256(p.read_bytes()).hexdigest()
                    for p in host.site.iterdir()
                    if p.is_file()
                },
            )
        one = runs[output, "1"]
        assert one[0] == chosen.code, one[2]
        if not output:
            for words in chosen.shows:
                assert words in one[1] + one[2], (words, one[2])
        for jobs in JOBS[1:]:
            assert runs[output, jobs] == one, (output, jobs)
