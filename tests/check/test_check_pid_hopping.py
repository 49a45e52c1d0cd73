"""A descendant that keeps changing its pid (fork, the parent exits, the child starts a new
session, over and over, in several chains) does not outlive ``nexo plugin check``.

Each step leaves an orphan of the checking process (its child subreaper); the check must find
every chain's current process although it is a different one at every look. The hopper is
bounded so that it can never exhaust the machine's pids: a few chains, a cap on their steps,
a pause between steps and a lifetime of a few seconds, after which each chain ends itself.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support.cli import clean_env, nexo

from check.check_plugins import toml_string

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="PR_SET_CHILD_SUBREAPER is Linux's"
)

CHAINS = 8
#: Steps per chain, the pause between two steps (ms) and each chain's lifetime (s).
HOPS = 3000
PAUSE_MS = 0
LIFETIME_S = 3

HOP_C = r"""
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

/* hop DIR CHAINS HOPS PAUSE_MS SECONDS */
int main(int argc, char **argv) {
  if (argc != 6) return 2;
  int chains = atoi(argv[2]); long hops = atol(argv[3]);
  int pause = atoi(argv[4]); time_t stop = time(NULL) + atoi(argv[5]);
  int null = open("/dev/null", O_RDWR);
  dup2(null, 0); dup2(null, 1); dup2(null, 2);
  for (int chain = 0; chain < chains; chain++) {
    if (fork() != 0) continue;
    /* Out of the session and the tree: setsid, then a double fork. */
    setsid();
    if (fork() != 0) _exit(0);
    char name[4096];
    snprintf(name, sizeof name, "%s/chain-%d", argv[1], chain);
    int fd = open(name, O_WRONLY | O_CREAT | O_APPEND, 0644);
    for (long n = 0; n < hops && time(NULL) < stop; n++) {
      pid_t child = fork();
      if (child < 0) _exit(1);
      if (child > 0) _exit(0);
      setsid();
      char line[32];
      int k = snprintf(line, sizeof line, "%d\n", (int)getpid());
      if (write(fd, line, k) != k) _exit(1);
      if (pause > 0) usleep(pause * 1000);
    }
    _exit(0);
  }
  return 0;
}
"""

# The plugin: starts the hopper (the compiled one, else the same steps with os.fork), waits
# until every chain has stepped a few times, then answers the handshake and the shutdown.
MAIN_PY = r"""
import json, os, subprocess, sys, time

DIR, HOP, CHAINS, HOPS, PAUSE_MS, LIFETIME = sys.argv[1:7]
CHAINS, HOPS, PAUSE_MS, LIFETIME = int(CHAINS), int(HOPS), int(PAUSE_MS), int(LIFETIME)


def python_hopper():
    stop = time.monotonic() + LIFETIME
    for chain in range(CHAINS):
        if os.fork():
            continue
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        os.setsid()
        if os.fork():
            os._exit(0)
        out = os.open(f"{DIR}/chain-{chain}", os.O_WRONLY | os.O_CREAT | os.O_APPEND)
        for _ in range(HOPS):
            if time.monotonic() > stop:
                break
            if os.fork():
                os._exit(0)
            os.setsid()
            os.write(out, f"{os.getpid()}\n".encode())
            time.sleep(PAUSE_MS / 1000)
        os._exit(0)


if HOP == "-":
    python_hopper()
else:
    subprocess.call([HOP, DIR, str(CHAINS), str(HOPS), str(PAUSE_MS), str(LIFETIME)])
deadline = time.monotonic() + LIFETIME / 2
while time.monotonic() < deadline:
    names = [f"{DIR}/chain-{c}" for c in range(CHAINS)]
    steps = [len(open(name).read().split()) if os.path.exists(name) else 0 for name in names]
    if min(steps) >= 20:
        break
    time.sleep(0.01)
for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("method") == "initialize":
        r = {"server_version": "0.1.0", "manifest": {"plugin": {"id": "hopper"}}, "tools": []}
        print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": r}), flush=True)
    elif msg.get("method") == "shutdown":
        print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": {"ok": True}}), flush=True)
        sys.exit(0)
    elif "id" in msg:
        error = {"code": -32601, "message": "no such method"}
        print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "error": error}), flush=True)
"""


def _hopper(build: Path) -> str:
    """The compiled hopper, or ``-`` (the plugin hops with os.fork) without a C compiler."""
    compiler = shutil.which("cc")
    if compiler is None:
        return "-"
    source = build / "hop.c"
    source.write_text(HOP_C, encoding="utf-8")
    subprocess.run([compiler, "-O1", "-o", str(build / "hop"), str(source)], check=True)
    return str(build / "hop")


def _plugin(root: Path, marks: Path, hopper: str) -> Path:
    root.mkdir()
    (root / "main.py").write_text(MAIN_PY, encoding="utf-8")
    arguments = [str(root / "main.py"), str(marks), hopper]
    arguments += [str(CHAINS), str(HOPS), str(PAUSE_MS), str(LIFETIME_S)]
    (root / "nexo-plugin.toml").write_text(
        f"""[plugin]
id = "hopper"
version = "0.1.0"
name = "Hopper"
description = "Test plugin"
min_nexo_version = ">=0.1.0"

[plugin.entrypoint]
command = {toml_string(sys.executable)}
args = [{", ".join(toml_string(argument) for argument in arguments)}]
""",
        encoding="utf-8",
    )
    return root


def _sizes(marks: Path) -> dict[str, int]:
    return {chain.name: chain.stat().st_size for chain in marks.glob("chain-*")}


def _live_hoppers(marks: Path, hopper: str) -> list[int]:
    """The pids the chains wrote that belong to a running (not zombie) process of the
    hopper (the pid's command line names it, so a reused pid is never counted)."""
    found = []
    for chain in marks.glob("chain-*"):
        for pid in {int(word) for word in chain.read_text(encoding="utf-8").split()}:
            try:
                stat = Path(f"/proc/{pid}/stat").read_bytes()
                command = Path(f"/proc/{pid}/cmdline").read_bytes()
            except OSError:
                continue
            if stat.rsplit(b")", 1)[1].split()[0] != b"Z" and (
                os.fsencode(hopper) in command or os.fsencode(str(marks)) in command
            ):
                found.append(pid)
    return found


def test_a_descendant_that_keeps_changing_its_pid_does_not_outlive_the_check(
    tmp_path: Path,
) -> None:
    marks = tmp_path / "marks"
    marks.mkdir()
    hopper = _hopper(tmp_path)
    root = _plugin(tmp_path / "plugin", marks, hopper)
    try:
        result = nexo("plugin", "check", root, "--json", env=clean_env())
        returned = _sizes(marks)
        assert result.code == 0, result.stderr
        # Every chain stepped while the plugin ran, ...
        assert len(returned) == CHAINS, returned
        assert all(size > 0 for size in returned.values()), returned
        # ... and none steps once the check has returned, nor runs.
        time.sleep(0.5)
        assert _sizes(marks) == returned
        assert _live_hoppers(marks, hopper) == []
    finally:
        # An escaped chain ends by itself within its lifetime: never leave one behind.
        deadline = time.monotonic() + LIFETIME_S + 2
        while _live_hoppers(marks, hopper) and time.monotonic() < deadline:
            time.sleep(0.1)
