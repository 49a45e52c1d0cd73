"""A minimal plugin host: spawn the child, exchange newline-delimited frames, always clean up.

The host runs the plugin in its own session (``start_new_session=True``) so that the whole
process group, including anything the plugin forked, can be killed with one signal. A
descendant can leave that group (``setsid()``, ``setpgid()``) and even the process tree (a
double fork), so the host also marks the plugin's environment with a per-session token and,
where ``/proc`` exists, kills every process carrying the token or descending from the plugin.
All I/O is multiplexed with :mod:`selectors` on non-blocking pipes in the calling thread: reading
stdout and stderr and writing stdin happen in the same loop, so neither side can dead-lock on
a full pipe and every wait has a deadline. Works on Linux and macOS; on Windows, where
``select`` takes sockets only, the pipes are relayed through socket pairs
(:func:`nexo_pkg.core.posix.selectable_pipes`) and the plugin alone is killed.

Nothing here interprets JSON: the host hands raw stdout lines (bytes, without the newline) to
the caller, together with transport events (end of stream, over-long line).
"""

from __future__ import annotations

import codecs
import collections
import contextlib
import functools
import math
import os
import secrets
import selectors
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Literal

from nexo_pkg.check.text import short
from nexo_pkg.core import posix
from nexo_pkg.core.posix import become_subreaper, kill_and_reap
from nexo_pkg.core.threads import stopping
from nexo_pkg.manifest.rust_text import rust_trim

#: The SDKs' ``MAX_FRAME_BYTES`` (1 MiB): the largest frame the written contract allows. The
#: host still reads longer lines (the daemon's reader takes lines of any length); the checks
#: warn about them.
MAX_FRAME_BYTES = 1 << 20

#: Largest stdout line the host buffers (64 MiB), a memory cap far above any real frame. A
#: longer line is reported and discarded as it streams in, never buffered whole.
MAX_LINE_BYTES = 64 << 20

#: How many stderr lines are kept for the report (a ring buffer: older lines are dropped).
STDERR_TAIL_LINES = 50

#: A single stderr line longer than this is cut, so a plugin spewing one endless stderr line
#: cannot grow the buffer without bound.
MAX_STDERR_LINE_BYTES = 4096

#: How much of a stderr line that is not UTF-8 :attr:`PluginProcess.stderr_stopped` keeps.
_STOPPED_LINE_BYTES = 80

_READ_CHUNK = 64 * 1024

# Stdout lines read but not yet taken by the caller are capped too: past this many bytes the
# host stops reading stdout (the plugin then blocks on its pipe) until the caller catches up.
_QUEUE_LIMIT_BYTES = 4 * MAX_FRAME_BYTES

#: How often a wait for stdout checks whether the plugin has exited.
EXIT_PROBE_SECONDS = 0.1

# Polling interval used only while waiting for the process to exit with no pipe left open.
_EXIT_POLL_SECONDS = 0.01

#: Environment variable carrying the session token every descendant inherits.
SESSION_ENV = "NEXO_PLUGIN_CHECK_SESSION"

# Kill rounds: a descendant may fork while the previous round is being killed.
_KILL_ROUNDS = 5

# How long a wait for the plugin goes, at most, before it asks whether the run it works for
# was interrupted (`doctor --jobs`: the signal lands in the main thread, not in this one).
_STOP_PROBE_SECONDS = 0.1

# How often, at most, a running plugin's orphans that have exited are reaped.
_REAP_EVERY_SECONDS = 0.05

# Freezing rounds that find a process not yet stopped: a descendant that keeps changing its pid
# (fork, the parent exits) is caught within a few rounds once the rounds are fast, so this
# bound is never reached by such a chain; it only ends a flood that outruns the rounds.
_FREEZE_ROUNDS = 2000

# How long rounds that find nothing new may wait for signalled processes to stop, and how long
# the killed ones are waited for to be reaped.
_CONTAIN_SECONDS = 1.0

_PROC = Path("/proc")


@dataclass(frozen=True)
class StdoutEvent:
    """One thing that happened on the plugin's stdout.

    ``kind`` is ``"line"`` (``data`` holds the line without its newline), ``"oversize"``
    (a line longer than the cap was dropped; ``size`` is how many bytes it had when the
    host gave up on it, at least the cap) or ``"eof"`` (the plugin closed stdout).
    """

    kind: Literal["line", "oversize", "eof"]
    data: bytes = b""
    size: int = 0


class Stopped(BaseException):
    """The run a plugin was spawned for was interrupted (Ctrl-C, SIGTERM in another thread):
    the wait ends at once and leaving the ``with`` block kills everything the plugin started.
    A :class:`BaseException`, so that no check reports it as the plugin's failure."""


class PluginProcess:
    """A running plugin child process with non-blocking pipes.

    Use as a context manager: leaving the block (normally, on an exception, or on
    ``KeyboardInterrupt``) kills the process group and reaps the child, so no zombie or
    orphan is left behind. Methods never raise on plugin misbehaviour; they report it
    through their return values. Spawning raises ``OSError`` when the program cannot be
    executed.
    """

    def __init__(
        self,
        argv: Sequence[str],
        *,
        cwd: Path,
        env: Mapping[str, str],
        max_frame_bytes: int = MAX_LINE_BYTES,
        trim_stderr: bool = False,
    ) -> None:
        self._max_frame_bytes = max_frame_bytes
        # The plugin host's stderr reader trims each line (Rust `trim`) and skips the blank
        # ones before its tail keeps it (subprocess.rs:314-317); the microapp host's logs
        # each line as written (stdio.rs:930-944).
        self._trim_stderr = trim_stderr
        self._session_token = secrets.token_hex(16)
        with _REAPING.lock:
            _REAPING.start()
            try:
                self._popen = subprocess.Popen(
                    list(argv),
                    cwd=cwd,
                    env={**env, SESSION_ENV: self._session_token},
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    bufsize=0,
                    start_new_session=True,
                    close_fds=True,
                )
            except BaseException:
                _REAPING.stop()
                raise
            _REAPING.live.add(self._popen.pid)
        self.pid = self._popen.pid
        # Orphans started before the plugin are not its descendants (see `_Reaping`).
        self._born = _start_ticks(self.pid) or 0
        self.started_at = time.monotonic()
        self._reaped_at = self.started_at
        self._exit_code: int | None = None
        try:
            self._setup_pipes()
        except BaseException:
            # Never leave a running child behind, even if setting up the pipes fails.
            posix.kill_process_group(self.pid)
            self._popen.kill()
            self._reap()
            for stream in (self._popen.stdin, self._popen.stdout, self._popen.stderr):
                if stream is not None:
                    stream.close()
            _REAPING.finish(self.pid, self._born)
            raise
        self.stderr_tail: collections.deque[str] = collections.deque(maxlen=STDERR_TAIL_LINES)
        #: The first stderr line that is not UTF-8 (its first bytes), at which the host stopped
        #: reading stderr and closed the pipe, as the daemon's line reader does; else None.
        self.stderr_stopped: bytes | None = None
        #: Whether the child wrote anything on stdout (a wrapper such as bwrap never does).
        self.stdout_seen = False
        self.killed = False
        self._closed = False
        #: Bytes of the last :meth:`send` still unwritten when its deadline passed (0: all
        #: written, or the pipe was closed).
        self.unsent = 0

    def _setup_pipes(self) -> None:
        """Make the pipes non-blocking and register them with the selector."""
        self._stdin: IO[bytes] | None
        self._stdout: IO[bytes] | None
        self._stderr: IO[bytes] | None
        self._stdin, self._stdout, self._stderr = posix.selectable_pipes(self._popen)
        self._selector = selectors.DefaultSelector()
        for stream, name in ((self._stdout, "stdout"), (self._stderr, "stderr")):
            if stream is not None:
                self._selector.register(stream, selectors.EVENT_READ, name)
        self._stdout_buffer = bytearray()
        # While discarding an over-long line: how many bytes of it were seen so far.
        self._discarding: int | None = None
        self._stdout_events: collections.deque[StdoutEvent] = collections.deque()
        self._queued_bytes = 0
        self._stdout_paused = False
        self._stdout_closed = False
        self._stderr_buffer = bytearray()
        self._stderr_truncating = False
        # Judges each whole stderr line as UTF-8, however long (the tail keeps only its start).
        self._stderr_utf8 = codecs.getincrementaldecoder("utf-8")()

    def __enter__(self) -> PluginProcess:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def send(self, data: bytes, *, deadline: float) -> bool:
        """Write ``data`` to the plugin's stdin before ``deadline`` (a ``time.monotonic()``).

        Output is drained while waiting, so a plugin that writes while we write cannot
        dead-lock us. Returns False when the plugin closed stdin (it exited) or the
        deadline passed with bytes still unwritten (:attr:`unsent` says how many: a plugin
        that stops reading its stdin, and leaves the pipe full, is still running).
        """
        self.unsent = 0
        if self._stdin is None:
            return False
        view = memoryview(data)
        stdin = self._stdin
        self._selector.register(stdin, selectors.EVENT_WRITE, "stdin")
        try:
            while view:
                try:
                    written = stdin.write(view)
                    if written is not None:
                        view = view[written:]
                        continue
                except BlockingIOError:
                    pass
                except (BrokenPipeError, ConnectionResetError):
                    return False
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    self.unsent = len(view)
                    return False
                self._poll(remaining)
            return True
        finally:
            with contextlib.suppress(KeyError, ValueError):
                self._selector.unregister(stdin)

    def close_stdin(self) -> None:
        """Close the plugin's stdin (end of input); idempotent."""
        self._forget(self._stdin)
        self._stdin = None

    def _forget(self, stream: IO[bytes] | None) -> None:
        """Unregister and close one pipe."""
        if stream is not None:
            with contextlib.suppress(KeyError, ValueError):
                self._selector.unregister(stream)
            with contextlib.suppress(OSError):
                stream.close()

    def next_stdout_event(self, *, deadline: float) -> StdoutEvent | None:
        """The next stdout event, or None if nothing arrived before ``deadline``.

        After ``"eof"`` has been returned once, every later call returns ``"eof"`` at once.
        """
        if not self._poll_until(lambda: bool(self._stdout_events) or self._stdout_closed, deadline):
            return None
        if not self._stdout_events:
            return StdoutEvent("eof")
        event = self._stdout_events.popleft()
        self._queued_bytes -= len(event.data)
        if self._stdout_paused and self._queued_bytes <= _QUEUE_LIMIT_BYTES // 2:
            self._stdout_paused = False
            if self._stdout is not None:
                self._selector.register(self._stdout, selectors.EVENT_READ, "stdout")
        return event

    def await_stdout(self, deadline: float) -> StdoutEvent | None:
        """The next stdout event, None once ``deadline`` has passed, and ``"eof"`` once the
        plugin closed stdout or exited leaving nothing to read.

        The exit is probed every :data:`EXIT_PROBE_SECONDS`: a process the plugin started
        may hold stdout open after the plugin died, so end-of-stream alone is not enough.
        """
        while time.monotonic() < deadline:
            wake_up = min(deadline, time.monotonic() + EXIT_PROBE_SECONDS)
            event = self.next_stdout_event(deadline=wake_up)
            if event is None and self.has_exited():
                self.drain(EXIT_PROBE_SECONDS / 2)
                event = self.next_stdout_event(deadline=time.monotonic()) or StdoutEvent("eof")
            if event is not None:
                return event
        return None

    def _poll_until(
        self, done: Callable[[], bool], deadline: float, step: float = math.inf
    ) -> bool:
        """Handle pipe activity (waiting ``step`` seconds at most at a time) until ``done()``
        or ``deadline``; whether ``done()`` came true."""
        while not done():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            self._poll(min(remaining, step))
        return True

    def _poll(self, timeout: float) -> None:
        """Wait up to ``timeout`` seconds for pipe activity and handle what is ready; raise
        :class:`Stopped` once the run this plugin is spawned for was interrupted."""
        if stopping():
            raise Stopped
        timeout = min(timeout, _STOP_PROBE_SECONDS)
        now = time.monotonic()
        if now - self._reaped_at >= _REAP_EVERY_SECONDS:
            # Each orphan that exits while the plugin runs (a descendant changing its pid
            # leaves one per step) is reaped now, so closing never has thousands to judge.
            self._reaped_at = now
            with _REAPING.lock:
                _REAPING.reap_exited(self._born)
        if not self._selector.get_map():
            # Every pipe is closed: nothing can arrive, but the caller is waiting for a
            # deadline (or the exit), so sleep a little instead of spinning.
            time.sleep(min(timeout, _EXIT_POLL_SECONDS))
            return
        for key, _mask in self._selector.select(timeout):
            if key.data == "stdout":
                self._read_stdout()
            elif key.data == "stderr":
                self._read_stderr()
            # "stdin" ready to write: the caller's loop retries the write.

    def _read_stdout(self) -> None:
        chunk = _read_chunk(self._stdout)
        if chunk is None:
            return
        if not chunk:
            if self._discarding is not None or self._stdout_buffer:
                # A last line without its newline still counts as a line.
                self._end_line(terminated=False)
            self._stdout_closed = True
            self._forget(self._stdout)
            self._stdout = None
            return
        self.stdout_seen = True
        start = 0
        while start < len(chunk):
            newline = chunk.find(b"\n", start)
            piece = chunk[start:] if newline < 0 else chunk[start:newline]
            if self._discarding is not None:
                self._discarding += len(piece)
            else:
                self._stdout_buffer += piece
                if len(self._stdout_buffer) > self._max_frame_bytes:
                    # Over the cap: stop buffering and skip to the end of this line.
                    self._discarding = len(self._stdout_buffer)
                    self._stdout_buffer.clear()
            if newline < 0:
                break
            self._end_line(terminated=True)
            start = newline + 1
        if self._queued_bytes > _QUEUE_LIMIT_BYTES and not self._stdout_paused:
            self._stdout_paused = True
            if self._stdout is not None:
                self._selector.unregister(self._stdout)

    def _end_line(self, *, terminated: bool) -> None:
        """Queue the line that just ended (a terminated one loses a trailing ``\r``), or the
        size of the over-long line being discarded."""
        if self._discarding is not None:
            self._stdout_events.append(StdoutEvent("oversize", size=self._discarding))
            self._discarding = None
            return
        line = bytes(self._stdout_buffer)
        self._stdout_buffer.clear()
        if terminated and line.endswith(b"\r"):
            line = line[:-1]
        self._stdout_events.append(StdoutEvent("line", data=line))
        self._queued_bytes += len(line)

    def _read_stderr(self) -> None:
        chunk = _read_chunk(self._stderr)
        if chunk is None:
            return
        if not chunk:
            self._end_stderr_line(b"", final=True)
            self._flush_stderr_line()
            self._stop_stderr()
            return
        lines = chunk.split(b"\n")
        for index, piece in enumerate(lines):
            if not self._stderr_truncating:
                room = MAX_STDERR_LINE_BYTES - len(self._stderr_buffer)
                self._stderr_buffer += piece[: max(room, 0)]
                if len(piece) > room:
                    self._stderr_truncating = True
            if not self._end_stderr_line(piece, final=index < len(lines) - 1):
                # The daemon's stderr reader (tokio `lines()`) fails on this line and ends,
                # dropping the pipe: the rest is never read, later writes get EPIPE.
                self._flush_stderr_line()
                self._stop_stderr()
                return
            if index < len(lines) - 1:
                self._flush_stderr_line()

    def _end_stderr_line(self, piece: bytes, *, final: bool) -> bool:
        """Feed ``piece`` of the current stderr line to its UTF-8 check (``final``: the line
        ends with it); False once the line is not UTF-8, noted in :attr:`stderr_stopped`."""
        try:
            self._stderr_utf8.decode(piece, final=final)
        except UnicodeDecodeError:
            if self.stderr_stopped is None:
                self.stderr_stopped = bytes(self._stderr_buffer[:_STOPPED_LINE_BYTES])
            return False
        if final:
            self._stderr_utf8.reset()
        return True

    def stderr_stopped_detail(self, reader: str) -> str | None:
        """What a report says of :attr:`stderr_stopped` (``reader``: where the daemon's stderr
        reader is, file:line), or None when every stderr line was UTF-8."""
        if self.stderr_stopped is None:
            return None
        return (
            f"a stderr line is not UTF-8 ({short(self.stderr_stopped)}): the daemon's stderr "
            f"reader fails on it and ends ({reader}: tokio's `lines()`), closing the pipe, so "
            "nothing later is logged and every later write to stderr fails (EPIPE; SIGPIPE "
            "kills a program that does not ignore it); so here"
        )

    def _stop_stderr(self) -> None:
        """Stop reading stderr and close the pipe."""
        self._forget(self._stderr)
        self._stderr = None

    def _flush_stderr_line(self) -> None:
        if self._stderr_buffer or self._stderr_truncating:
            text = self._stderr_buffer.decode("utf-8", "replace").rstrip("\r")
            if self._trim_stderr:
                text = rust_trim(text)
            if self._stderr_truncating:
                text += " [...]"
            if text:
                self.stderr_tail.append(text)
        self._stderr_buffer.clear()
        self._stderr_truncating = False

    def drain(self, seconds: float) -> None:
        """Keep reading output for ``seconds`` (used to collect stderr after a failure)."""
        self._poll_until(lambda: not self._selector.get_map(), time.monotonic() + seconds)

    def has_exited(self) -> bool:
        """Whether the child has exited, without reaping it.

        The child stays a zombie until :meth:`close`, which keeps its pid (the process group
        id) reserved, so killing the group later can never hit an unrelated process.
        """
        return self.peek_exit_code() is not None

    def wait_exit(self, seconds: float) -> bool:
        """Wait up to ``seconds`` for the child to exit, draining its output meanwhile."""
        return self._poll_until(self.has_exited, time.monotonic() + seconds, step=0.05)

    @property
    def exit_code(self) -> int | None:
        """The exit status once reaped by :meth:`close` (negative: killed by that signal)."""
        return self._exit_code if self._closed else None

    def peek_exit_code(self) -> int | None:
        """The exit status of an exited (not yet reaped) child, or None while it runs."""
        if self._exit_code is not None:
            return self._exit_code
        waitid = getattr(os, "waitid", None)
        if waitid is None:  # pragma: no cover - macOS before Python 3.13
            # Without waitid(2) the only portable probe reaps the child; the group is still
            # killed afterwards, which reaches any descendants left in it.
            self._exit_code = self._popen.poll()
            return self._exit_code
        try:
            info = waitid(os.P_PID, self.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            # Already reaped elsewhere; Popen knows the code.
            code = self._popen.poll()
            self._exit_code = code if code is not None else -1
            return self._exit_code
        if info is None:
            return None
        status = int(info.si_status)
        return status if info.si_code == os.CLD_EXITED else -status

    def exit_code_by(self, deadline: float) -> int | None:
        """For a plugin that closed its pipes: wait for its exit (a second at most, and not
        past ``deadline``), then its status, or None while it still runs."""
        self.wait_exit(max(0.0, min(deadline - time.monotonic(), 1.0)))
        return self.peek_exit_code()

    def kill(self) -> None:
        """SIGKILL the plugin, its process group and every descendant (idempotent, never
        raises)."""
        self.killed = self.killed or not self.has_exited()
        posix.kill_process_group(self.pid)
        if self._popen.returncode is None:
            # The leader may have left the group (setpgid); kill it directly too. Only while
            # it is unreaped: after that its pid may belong to someone else.
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(self.pid, posix.KILL_SIGNAL)
        self._kill_descendants()

    def _kill_descendants(self) -> None:
        """Kill the processes that left the group: those carrying the session token in their
        environment and those descending from the plugin. Linux only (needs ``/proc``)."""
        if not _PROC.is_dir():  # pragma: no cover - macOS: the process group is all we have
            return
        # Under the lock a plugin is spawned under: a plugin another thread has just forked is
        # a child of this process too, and it counts as running (not an orphan) only once its
        # spawn has recorded it. The plugin's own pid is walked only while it is unreaped
        # (until then no other process can have it).
        with _REAPING.lock:
            _REAPING.contain(self._born, self.pid if self._popen.returncode is None else None)
        for _ in range(_KILL_ROUNDS):
            strays = _session_processes(self.pid, self._session_token.encode())
            if not strays:
                return
            for pid in strays:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, posix.KILL_SIGNAL)

    def _reap(self) -> None:
        """Wait for the killed plugin to exit, then reap it and drop its pid from the running
        plugins in one step under :attr:`_Reaping.lock`. Until then the pid counts as a running
        plugin (never reaped as an orphan behind its ``Popen``, whose ``wait()`` would then say
        0); from then on it may be another process's, maybe a descendant's or another
        plugin's, and must not count as this one's any more."""
        deadline = time.monotonic() + 5
        while not self.has_exited():
            if time.monotonic() > deadline:  # pragma: no cover - SIGKILL cannot be ignored
                self._popen.kill()
                deadline = time.monotonic() + 5
            time.sleep(0.001)
        with _REAPING.lock:
            self._popen.wait()
            _REAPING.live.discard(self.pid)

    def close(self) -> None:
        """Kill the process group, reap the child and close every pipe; idempotent, and safe
        from ``finally`` on any path (``KeyboardInterrupt`` included)."""
        if self._closed:
            return
        try:
            # Kill the group before reaping the leader: while the leader is an unreaped
            # zombie its pid cannot be reused, so the signal reaches only our processes.
            self.kill()
            self._reap()
            if self._stderr is not None and not stopping():
                # The group is dead; collect what it wrote to stderr before dying. A
                # descendant that escaped the group may hold the pipe open, hence the cap.
                self.drain(0.2)
        finally:
            self._closed = True
            if self._popen.returncode is None:
                # Cut short (a signal) before the plugin was reaped: kill and reap it all the
                # same (its pid is still ours, so the signal can reach no one else).
                posix.kill_process_group(self.pid)
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(self.pid, posix.KILL_SIGNAL)
                self._reap()
            # Descendants re-parented here when their parents died are killed and reaped.
            _REAPING.finish(self.pid, self._born)
            self._exit_code = self._popen.returncode
            for stream in (self._stdin, self._stdout, self._stderr):
                self._forget(stream)
            self._stdin = self._stdout = self._stderr = None
            with contextlib.suppress(Exception):
                self._selector.close()


class _Reaping:
    """This process as the child subreaper of the plugins it runs (Linux): a descendant whose
    parent dies (a double fork after ``setsid()``, an ``execve`` with an empty environment:
    out of the group, the tree and the token's reach) is re-parented here instead of to
    init, so it can be found, killed and reaped when its plugin is done.

    The subreaper flag is set while at least one plugin runs and cleared after the last, so
    the rest of the process (a test run, a command) keeps the usual re-parenting. An orphan
    is a child of this process that is not a running plugin itself and started after the
    plugin being closed did (``/proc`` start times), which is never a process this one had
    already started for its own use; with handshakes running side by side, an orphan
    escaping one plugin can be ended when another one finishes. Without ``/proc`` or the
    call (macOS), nothing here runs: the process group is all there is (docs/security.md).
    """

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.live: set[int] = set()
        self.active = False

    def start(self) -> None:
        """Called under :attr:`lock` before a plugin is spawned."""
        if not self.live and not self.active:
            self.active = become_subreaper()

    def stop(self) -> None:
        """Called under :attr:`lock` when no plugin is left."""
        if not self.live and self.active:
            become_subreaper(enable=False)
            self.active = False

    def _children(self) -> Callable[[int], list[int]]:
        """How to list a process's children for one round: the kernel's per-thread
        ``children`` files where it has them, else one scan of ``/proc``."""
        if _children_files():
            return _children
        tree: dict[int, list[int]] = collections.defaultdict(list)
        with contextlib.suppress(OSError):
            for entry in os.scandir(_PROC):
                if entry.name.isdigit() and (stat := _stat(int(entry.name))) is not None:
                    tree[stat[1]].append(int(entry.name))
        return lambda pid: tree.get(pid, [])

    def _orphans(self, born: int) -> list[tuple[int, bytes]]:
        """(pid, state) of the children of this process that are no running plugin and
        started at tick ``born`` or later (a child this process started for its own use
        before the plugin never is one)."""
        found: list[tuple[int, bytes]] = []
        for pid in self._children()(os.getpid()):
            stat = _stat(pid)
            if stat is not None and pid not in self.live and stat[2] >= born:
                found.append((pid, stat[0]))
        return found

    def reap_exited(self, born: int) -> None:
        """Called under :attr:`lock` while a plugin runs: reap its orphans that have exited
        (never a plugin's own process, which its ``Popen`` reaps)."""
        if not self.active:
            return
        for pid, state in self._orphans(born):
            if state == b"Z":
                posix.reap(pid)

    def contain(self, born: int, plugin: int | None) -> bool:
        """Called under :attr:`lock`: stop, then kill and reap, every orphan started at tick
        ``born`` or later and every process descending from one (or from ``plugin``, the
        plugin's unreaped pid). False if some may be left.

        Freezing first: each round SIGSTOPs every living process it finds that is not
        stopped yet and walks the children of each (a stopped process cannot fork, so its
        children stay where the walk finds them); a process that changes its pid is found
        again as the orphan its step leaves, and stopped. Rounds go on while they find new
        processes (at most :data:`_FREEZE_ROUNDS`) and, once they find none, for at most
        :data:`_CONTAIN_SECONDS` while signalled processes have not stopped yet. Then every
        stopped process is killed, and the orphans are killed and reaped until none is left
        (for at most :data:`_CONTAIN_SECONDS`)."""
        if not self.active or not _PROC.is_dir():
            return True
        own = os.getpid()
        frozen: dict[int, int] = {}
        try:
            self._freeze(own, born, plugin, frozen)
        finally:
            # Also when a signal cuts the freezing short: nothing is left stopped for ever.
            for pid, start in frozen.items():
                stat = _stat(pid)
                # The same process (a stopped one cannot exit; its pid is still its own).
                if stat is not None and stat[2] == start:
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.kill(pid, posix.KILL_SIGNAL)
        deadline = time.monotonic() + _CONTAIN_SECONDS
        while left := [pid for pid, _ in self._orphans(born)]:
            kill_and_reap(left)
            if time.monotonic() > deadline:
                return False
            time.sleep(0.001)
        return True

    def _freeze(self, own: int, born: int, plugin: int | None, frozen: dict[int, int]) -> None:
        """The freezing rounds of :meth:`contain`, recording in ``frozen`` (pid: start ticks)
        each process signalled."""
        quiet_since: float | None = None
        for _ in range(_FREEZE_ROUNDS):
            new, pending = self._freeze_round(own, born, plugin, frozen)
            if new:
                quiet_since = None
                continue
            if not pending:
                break
            now = time.monotonic()
            quiet_since = now if quiet_since is None else quiet_since
            if now - quiet_since > _CONTAIN_SECONDS:
                break
            time.sleep(0.001)

    def finish(self, pid: int, born: int) -> None:
        """The plugin ``pid`` is reaped: stop, kill and reap its orphans (:meth:`contain`)."""
        with self.lock:
            self.live.discard(pid)
            self.contain(born, None)
            self.stop()

    def _freeze_round(
        self, own: int, born: int, plugin: int | None, frozen: dict[int, int]
    ) -> tuple[bool, bool]:
        """One freezing round (see :meth:`contain`): whether it signalled a process not seen
        before, and whether one signalled earlier has not stopped yet."""
        children = self._children()
        new = pending = False
        queue = [pid for pid in children(own) if pid not in self.live]
        if plugin is not None:
            queue += children(plugin)
        seen: set[int] = set()
        while queue:
            pid = queue.pop()
            if pid in seen or pid == own or pid in self.live:
                continue
            seen.add(pid)
            stat = _stat(pid)
            if stat is None or stat[2] < born:
                continue
            state, parent, start = stat
            if state == b"Z":
                if parent == own:
                    posix.reap(pid)  # an orphan of ours: its pid cannot be anyone else's
                continue
            if frozen.get(pid) != start:
                frozen[pid] = start
                new = True
                posix.stop(pid)
            elif state not in {b"T", b"t"}:
                pending = True
                posix.stop(pid)  # not stopped yet, or continued since by another one
            queue += children(pid)
        return new, pending


_REAPING = _Reaping()


def _start_ticks(pid: int) -> int | None:
    """When ``pid`` started, in clock ticks since boot (``/proc/<pid>/stat`` field 22)."""
    stat = _stat(pid)
    return None if stat is None else stat[2]


@functools.cache
def _children_files() -> bool:
    """Whether the kernel lists each thread's children (``/proc/<pid>/task/<tid>/children``)."""
    return (_PROC / "self" / "task" / str(threading.get_native_id()) / "children").exists()


def _children(pid: int) -> list[int]:
    """The children of every thread of ``pid`` (none if it is gone)."""
    found: list[int] = []
    try:
        tasks = list((_PROC / str(pid) / "task").iterdir())
    except OSError:
        return found
    for task in tasks:
        with contextlib.suppress(OSError, ValueError):
            found += map(int, (task / "children").read_bytes().split())
    return found


def _read_chunk(stream: IO[bytes] | None) -> bytes | None:
    """What one read of a non-blocking pipe gives: None when nothing is ready (or the pipe is
    gone), ``b""`` at end of stream or on a read error."""
    if stream is None:
        return None
    try:
        return stream.read(_READ_CHUNK)
    except BlockingIOError:
        return None
    except OSError:
        return b""


def _stat(pid: int) -> tuple[bytes, int, int] | None:
    """(state, parent pid, start ticks) of a process from one read of ``/proc/<pid>/stat``,
    or None if it is gone."""
    try:
        raw = (_PROC / str(pid) / "stat").read_bytes()
        fields = raw[raw.rindex(b")") + 2 :].split()
        return fields[0], int(fields[1]), int(fields[19])
    except (OSError, ValueError, IndexError):
        return None


def _carries(pid: int, marker: bytes) -> bool:
    try:
        environment = (_PROC / str(pid) / "environ").read_bytes()
    except OSError:
        return False
    return marker in environment.split(b"\0")


def _session_processes(root_pid: int, token: bytes) -> set[int]:
    """Live processes (zombies excluded) that carry ``token`` or descend from ``root_pid``."""
    marker = SESSION_ENV.encode() + b"=" + token
    own = {os.getpid(), os.getppid()}
    parents: dict[int, int] = {}
    found: set[int] = set()
    with contextlib.suppress(OSError):
        for entry in os.scandir(_PROC):
            if not entry.name.isdigit() or int(entry.name) in own:
                continue
            pid = int(entry.name)
            stat = _stat(pid)
            if stat is None or stat[0] == b"Z":
                continue
            parents[pid] = stat[1]
            if _carries(pid, marker):
                found.add(pid)
    children: dict[int, list[int]] = collections.defaultdict(list)
    for pid, parent in parents.items():
        children[parent].append(pid)
    pending = [root_pid]
    while pending:
        for child in children.get(pending.pop(), ()):
            if child not in found:
                found.add(child)
                pending.append(child)
    found.discard(root_pid)
    return found
