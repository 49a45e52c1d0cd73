"""Eight installs at once into one ``<dest>``: four of the same plugin, four of others. The
lock serialises them (never two staging directories at a time), every command succeeds, and
the root ends complete: every plugin once, every receipt valid, ``verify`` clean."""

from __future__ import annotations

import json
import subprocess
import threading
import time
from pathlib import Path

from faults.server import FaultyGitHubServer

from .scenario import PLUGIN, Root, assert_complete, leftovers, publish

OTHERS = ("alpha", "bravo", "charlie", "delta")


class StagingWatcher(threading.Thread):
    """Polls ``<dest>`` and records the most staging directories seen at once."""

    def __init__(self, dest: Path) -> None:
        super().__init__(daemon=True)
        self.dest = dest
        self.most = 0
        self.seen = 0
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.is_set():
            try:
                staging = list((self.dest / ".nexo" / "staging").iterdir())
            except OSError:
                staging = []
            self.most = max(self.most, len(staging))
            self.seen += bool(staging)
            time.sleep(0.002)


def test_parallel_installs_into_one_root(server: FaultyGitHubServer, tmp_path: Path) -> None:
    publish(server, PLUGIN, "1.0.0", files=100)
    for name in OTHERS:
        publish(server, name, "1.0.0", files=100)
    root = Root(server, tmp_path / "home")
    root.home.mkdir()
    root.dest.mkdir(parents=True)
    watcher = StagingWatcher(root.dest)
    watcher.start()
    sources = [f"acme/{PLUGIN}@v1.0.0"] * 4 + [f"acme/{name}@v1.0.0" for name in OTHERS]
    processes = [
        subprocess.Popen(
            [*root.spawn_argv("install", source, "--yes")],
            env=root.env(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for source in sources
    ]
    outputs = [process.communicate(timeout=240) for process in processes]
    watcher.done.set()
    watcher.join()
    documents = []
    for process, (stdout, stderr) in zip(processes, outputs, strict=True):
        assert process.returncode == 0, stderr.decode()
        documents.append(json.loads(stdout))
    same = [d for d in documents if d["id"] == PLUGIN]
    assert sorted(d["was_already_present"] for d in same) == [False, True, True, True]
    assert {d["id"] for d in documents} == {PLUGIN, *OTHERS}
    assert watcher.most <= 1, "two installs were staging at the same time"
    listing = root.run("list")
    assert sorted(p["id"] for p in listing.document["plugins"]) == sorted([PLUGIN, *OTHERS])
    assert assert_complete(root, [["1.0.0"]]) == ["1.0.0"]
    for name in [PLUGIN, *OTHERS]:
        receipt = json.loads((root.dest / f"{name}-1.0.0" / ".nexo-install.json").read_text())
        assert receipt["id"] == name
        assert receipt["version"] == "1.0.0"
        assert receipt["files"]
    assert leftovers(root) == []
