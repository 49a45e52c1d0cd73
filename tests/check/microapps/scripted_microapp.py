"""A microapp whose behaviour is chosen by its first argument, for the check tests.

It speaks the extension host's shapes (initialize result {server_version, tools, hooks},
tools/call {name, arguments}) and misbehaves in one way per mode. With FIXTURE_PID_FILE set it
records its pid (and that of any process it starts) there.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

MODE = sys.argv[1] if len(sys.argv) > 1 else "ok"
EXTRA = sys.argv[2] if len(sys.argv) > 2 else ""

TOOLS = [
    {
        "name": "scripted_probe",
        "description": "Reports what the microapp sees",
        "input_schema": {"type": "object"},
    }
]


INITIALIZE: dict[str, Any] = {}

#: What an admin request sent before the initialize reply got (mode admin_early).
EARLY: dict[str, Any] = {}


def record(pid: int) -> None:
    path = os.environ.get("FIXTURE_PID_FILE")
    if path:
        with Path(path).open("a", encoding="utf-8") as handle:
            handle.write(f"{pid}\n")


def write(frame: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(frame) + "\n")
    sys.stdout.flush()


def result(request_id: Any, value: Any) -> None:
    write({"jsonrpc": "2.0", "id": request_id, "result": value})


def probe() -> dict[str, Any]:
    names = ("AGENT_VERSION", "AGENT_EXTENSION_ID", "NEXO_EXTENSION_STATE_ROOT", EXTRA)
    state = os.environ.get("NEXO_EXTENSION_STATE_ROOT", "")
    return {
        "cwd": str(Path.cwd()),
        "env": {name: os.environ.get(name) for name in names if name},
        "state_dir_exists": bool(state) and Path(state).is_dir(),
        "initialize": INITIALIZE,
        "early": EARLY,
        "stderr_writable": stderr_writable() if MODE == "stderr_badutf8" else None,
    }


def stderr_writable() -> bool:
    """Whether a line can still be written to stderr."""
    try:
        sys.stderr.write("[INFO] still logging\n")
        sys.stderr.flush()
    except BrokenPipeError:
        return False
    return True


def admin_call(method: str) -> Any:
    """Send an app: request and wait for the host's answer on stdin."""
    write(
        {
            "jsonrpc": "2.0",
            "id": "app:0b6f3c1e-6b1a-4c47-9a51-2d1f1d7f0c11",
            "method": method,
            "params": {"ping": 1},
        }
    )
    return json.loads(sys.stdin.readline())


def before_initialize_reply() -> None:
    """What a mode does between reading initialize and answering it."""
    if MODE == "hang":
        time.sleep(600)
    if MODE == "slow":
        time.sleep(float(EXTRA))
    if MODE == "badutf8":
        sys.stdout.buffer.write(b"\xff\xfe not utf-8\n")
        sys.stdout.flush()
    if MODE == "stderr_badutf8":
        sys.stderr.buffer.write(b"\xff\xfe not utf-8\n")
        sys.stderr.flush()
        time.sleep(0.5)  # the host reads it meanwhile
    if MODE == "admin_early":
        # An admin request before answering initialize; wait EXTRA s for its answer.
        write({"jsonrpc": "2.0", "id": "app:early", "method": "nexo/admin/echo"})
        ready, _, _ = select.select([sys.stdin], [], [], float(EXTRA))
        EARLY["answer"] = json.loads(sys.stdin.readline()) if ready else None


def swap_state_scratch() -> None:
    """check's temporary directory holds the state root three levels down: move it away and
    leave a link to FIXTURE_VICTIM at its name."""
    scratch = Path(os.environ["NEXO_EXTENSION_STATE_ROOT"]).parents[2]
    scratch.rename(scratch.with_name(scratch.name + ".moved"))
    scratch.symlink_to(os.environ["FIXTURE_VICTIM"], target_is_directory=True)


def at_start() -> None:
    """What a mode does before reading its first request."""
    record(os.getpid())
    if MODE == "swap_state":
        swap_state_scratch()
    if MODE == "child":
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        record(child.pid)
    if MODE in ("escape", "escape_hang"):
        escape()
    if MODE == "escape_hang":
        time.sleep(600)
    if MODE == "stderr_lines":
        # EXTRA is the stderr text ("|" between lines), written before the first request.
        sys.stderr.write("".join(line + "\n" for line in EXTRA.split("|")))
        sys.stderr.flush()


def escape() -> None:
    """Fork a child that starts its own session, forks a grandchild and exits; the grandchild
    becomes ``sleep`` with an empty environment: in no group, tree or environment of ours."""
    read_end, write_end = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - runs in the forked child
        os.close(read_end)
        os.setsid()
        grandchild = os.fork()
        if grandchild == 0:
            os.close(write_end)
            for stream in (0, 1, 2):
                os.dup2(os.open(os.devnull, os.O_RDWR), stream)
            os.execve("/bin/sleep", ["sleep", "600"], {})  # noqa: S606 (a fixed program)
        os.write(write_end, f"{grandchild}\n".encode())
        os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        grandchild_pid = int(pipe.read().decode().strip())
    os.waitpid(child, 0)
    record(grandchild_pid)


def main() -> None:
    at_start()
    for line in sys.stdin:
        request = json.loads(line)
        request_id = request.get("id")
        method = request.get("method")
        params = request.get("params") or {}
        if method is None:
            continue  # the host's answer to an admin request of ours
        if method == "initialize":
            INITIALIZE.update(id=request_id, params=params)
            before_initialize_reply()
            if MODE == "init-error":
                write(
                    {
                        "jsonrpc": "2.0",
                        "id": request_id,
                        "error": {"code": -32603, "message": "no config"},
                    }
                )
                continue
            hooks = ["before_message"] if MODE in ("vote", "hooks") else []
            if MODE == "hook_replies":
                hooks = list(json.loads(EXTRA))
            if MODE == "hooks":
                hooks.append("on_heartbeat")
            if MODE == "drops":
                write({"jsonrpc": "2.0", "method": "nexo/notify/ready", "params": {}})
                write({"jsonrpc": "2.0", "id": "42", "result": {}})
            tools = TOOLS
            if MODE == "raw":
                # The reply as EXTRA spells it (@ID@ and @RESULT@ filled in).
                value = {"server_version": "scripted-0.1.0", "tools": tools, "hooks": hooks}
                raw = EXTRA.replace("@ID@", json.dumps(request_id))
                sys.stdout.write(raw.replace("@RESULT@", json.dumps(value)) + "\n")
                sys.stdout.flush()
                continue
            if MODE == "long":
                long_tool = {"name": "scripted_" + "x" * 60, "description": "d", "input_schema": {}}
                tools = [*TOOLS, long_tool, long_tool]
            result(request_id, {"server_version": "scripted-0.1.0", "tools": tools, "hooks": hooks})
            if MODE == "admin_boot":
                # An admin request at start-up, its answer read by the loop below.
                write({"jsonrpc": "2.0", "id": "app:boot", "method": EXTRA, "params": {}})
        elif method == "tools/list":
            if MODE == "tools_list":
                # EXTRA is the tools/list reply: a result, or {"error": ...}.
                write({"jsonrpc": "2.0", "id": request_id, **json.loads(EXTRA)})
                continue
            result(request_id, {"tools": TOOLS})
        elif MODE == "hook_replies" and method.startswith("hooks/"):
            # EXTRA maps each hook to its reply.
            result(request_id, json.loads(EXTRA)[method.removeprefix("hooks/")])
        elif method == "hooks/before_message":
            result(request_id, {"vote": "deny"} if MODE == "vote" else {"abort": False})
        elif method == "tools/call":
            if MODE == "exit":
                sys.exit(3)
            if MODE == "slow_call":
                time.sleep(float(EXTRA))
            if MODE == "envelope":
                result(request_id, {"output": probe()})
                continue
            if MODE == "admin":
                result(request_id, {"admin": admin_call(EXTRA), "params": params})
                continue
            result(request_id, {**probe(), "params": params})
        else:
            write(
                {
                    "jsonrpc": "2.0",
                    "id": request_id,
                    "error": {"code": -32601, "message": "method not found"},
                }
            )


main()
