"""The worker processes ``lock`` hashes tarball trees in and ``sync`` extracts them in
(:class:`nexo_pkg.fleet.pool.CpuPool`, :func:`nexo_pkg.sources.extract.extraction_workers`)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import tarfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from support.tarballs import Member, file, plugin_members, targz, tree_snapshot

from nexo_pkg.core.errors import NexoError
from nexo_pkg.fleet import pool as pool_module
from nexo_pkg.fleet.pool import CpuPool
from nexo_pkg.fleet.treehash import hash_tarball
from nexo_pkg.sources.archive import ArchiveLimits
from nexo_pkg.sources.extract import extract_archive, extraction_workers

SEVERAL_CORES = (os.cpu_count() or 1) > 1


@pytest.mark.skipif(not SEVERAL_CORES, reason="one core: the pool runs steps in-process")
def test_a_pool_of_several_jobs_runs_steps_in_other_processes_with_the_same_result(
    tmp_path: Path,
) -> None:
    tarball = tmp_path / "echo.tar.gz"
    tarball.write_bytes(targz(plugin_members("echo", "1.2.3", payload=b"data")))
    limits = ArchiveLimits()
    with CpuPool(4) as pool:
        assert pool.workers == min(4, os.cpu_count() or 1)
        assert pool.call(os.getpid) != os.getpid()
        assert pool.call(hash_tarball, tarball, "echo", limits) == hash_tarball(
            tarball, "echo", limits
        )


def test_one_job_runs_steps_in_the_calling_process() -> None:
    with CpuPool(1) as pool:
        assert pool.workers == 1
        assert pool.call(os.getpid) == os.getpid()


@pytest.mark.parametrize("jobs", [1, 4])
def test_a_failing_step_is_raised_with_its_kind_and_message(tmp_path: Path, jobs: int) -> None:
    bogus = tmp_path / "bogus.tar.gz"
    bogus.write_bytes(b"not gzip at all")
    with CpuPool(jobs) as pool, pytest.raises(NexoError) as caught:
        pool.call(hash_tarball, bogus, "echo", ArchiveLimits())
    assert caught.value.kind == "archive_invalid"
    assert "not gzip-compressed" in caught.value.message


@pytest.mark.skipif(not SEVERAL_CORES, reason="one core: the pool runs steps in-process")
def test_extraction_in_a_worker_writes_the_tree_and_listing_of_one_in_process(
    tmp_path: Path,
) -> None:
    tarball = tmp_path / "echo.tar.gz"
    members = plugin_members("echo", "1.2.3", payload=b"data")
    tarball.write_bytes(targz([*members, file("lib/plugin/run.sh", "#!/bin/sh\n", 0o755)]))
    here, there = tmp_path / "here", tmp_path / "there"
    here.mkdir()
    there.mkdir()
    limits = ArchiveLimits()
    expected = extract_archive(tarball, here, limits)
    with CpuPool(4, per_core=False) as pool, extraction_workers(pool):
        assert pool.workers == 4
        listing = extract_archive(tarball, there, limits)
    assert listing == expected
    assert tree_snapshot(there) == tree_snapshot(here)
    assert (there / "lib/plugin/run.sh").stat().st_mode & 0o777 == 0o755


@pytest.mark.skipif(not SEVERAL_CORES, reason="one core: the pool runs steps in-process")
def test_a_hostile_archive_refused_in_a_worker_leaves_its_staging_tree_empty(
    tmp_path: Path,
) -> None:
    """A member that escapes the tree is refused in the worker as it would be here, with its
    kind, and what the worker wrote before it is removed again."""
    tarball = tmp_path / "evil.tar.gz"
    members = plugin_members("echo", "1.2.3", payload=b"data")
    link = Member("lib/plugin/escape", kind=tarfile.SYMTYPE, linkname="/etc/passwd")
    tarball.write_bytes(targz([*members, link]))
    staging = tmp_path / "staging"
    staging.mkdir()
    with (
        CpuPool(4, per_core=False) as pool,
        extraction_workers(pool),
        pytest.raises(NexoError) as caught,
    ):
        extract_archive(tarball, staging, ArchiveLimits())
    assert caught.value.kind == "archive_unsafe"
    assert "symbolic link" in caught.value.message
    assert list(staging.iterdir()) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["evil.tar.gz", "staging"]


@pytest.mark.skipif(not SEVERAL_CORES, reason="one core: the pool runs steps in-process")
def test_entering_a_pool_forks_its_workers_without_waiting_for_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The workers are forked on entry, but the run goes on while they set themselves up:
    here each waits (up to half a minute) for a file the test writes once the pool is entered,
    and says whether it came."""
    release = tmp_path / "entered"
    real_setup = pool_module._quiet_worker

    def held_setup(parent: int | None) -> None:
        for _ in range(300):
            if release.exists():
                break
            time.sleep(0.1)
        (tmp_path / f"worker-{os.getpid()}").write_text(str(release.exists()))
        real_setup(parent)

    monkeypatch.setattr(pool_module, "_quiet_worker", held_setup)
    # Forked (threads an earlier test left behind would make it a fork server's children,
    # which do not see the patched set-up).
    monkeypatch.setattr(threading, "active_count", lambda: 1)
    with CpuPool(2, per_core=False) as pool:
        release.write_text("")
        assert pool.call(os.getpid) != os.getpid()
    reports = [path.read_text() for path in tmp_path.glob("worker-*")]
    assert reports == ["True", "True"]


def _die() -> None:
    os._exit(3)


@pytest.mark.skipif(not SEVERAL_CORES, reason="one core: the pool runs steps in-process")
def test_a_worker_that_dies_fails_its_own_step_only() -> None:
    """A worker killed under a step fails that step (``io``, naming it); the steps after it
    go to the workers left, and once none is left they run in the calling process."""
    with CpuPool(2, per_core=False) as pool:
        with pytest.raises(NexoError) as caught:
            pool.call(_die)
        assert caught.value.kind == "io"
        assert "_die" in caught.value.message
        assert "exit code 3" in caught.value.message
        survivor = pool.call(os.getpid)
        assert survivor != os.getpid()
        assert pool.call(os.getpid) == survivor
        with pytest.raises(NexoError):
            pool.call(_die)
        assert pool.call(os.getpid) == os.getpid()


@pytest.mark.skipif(not SEVERAL_CORES, reason="one core: the pool runs steps in-process")
def test_threads_share_the_workers_and_each_gets_its_own_answer() -> None:
    """Many threads calling at once get their own answers (no answer crosses to another
    caller), every step in one of the pool's processes, and the pool's exit ends them."""
    answers: dict[int, tuple[int, int]] = {}

    def caller(number: int) -> None:
        answers[number] = (pool.call(abs, -number), pool.call(os.getpid))

    with CpuPool(2, per_core=False) as pool:
        workers = {worker.process.pid or 0 for worker in pool._started}
        threads = [threading.Thread(target=caller, args=(n,)) for n in range(16)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert {n: answer for n, (answer, _) in answers.items()} == {n: n for n in range(16)}
    assert {pid for _, pid in answers.values()} <= workers
    for pid in workers:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


_FAILING_STEPS_THEN_COLLECT = """
import gc
from nexo_pkg.fleet.pool import CpuPool

def run():
    with CpuPool(2, per_core=False) as pool:
        for _ in range(3):
            try:
                pool.call(int, "not a number")
            except ValueError:
                pass

run()
gc.collect()
print("collected")
"""


@pytest.mark.skipif(not SEVERAL_CORES, reason="one core: the pool runs steps in-process")
def test_steps_that_raise_leave_nothing_the_collector_chokes_on(tmp_path: Path) -> None:
    """A step's exception, raised again in the caller, keeps the caller's frame in a cycle
    until the collector runs: nothing in that frame may be a view of a BytesIO (Python 3.12
    crashes collecting it, 3.13 prints "Exception ignored" for each one)."""
    done = subprocess.run(
        [sys.executable, "-c", _FAILING_STEPS_THEN_COLLECT],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
        cwd=tmp_path,
        timeout=60,
        check=False,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "collected\n", "")


def _die_after(seconds: float) -> None:
    time.sleep(seconds)
    os._exit(3)


def _note_pid(path: Path, seconds: float) -> int:
    time.sleep(seconds)
    with path.open("a") as handle:
        handle.write(f"{os.getpid()}\n")
    return os.getpid()


@pytest.mark.skipif(not SEVERAL_CORES, reason="one core: the pool runs steps in-process")
def test_a_call_queued_behind_a_dying_step_runs_elsewhere_once(tmp_path: Path) -> None:
    """The call written to a worker's pipe behind the step it dies under never started
    there: it runs in the other worker, once, and succeeds; only the dying step fails."""
    notes = tmp_path / "notes"
    outcomes: dict[str, object] = {}

    def run(name: str, function: Callable[..., object], *args: object) -> None:
        try:
            outcomes[name] = pool.call(function, *args)
        except NexoError as error:
            outcomes[name] = error.kind

    with CpuPool(2, per_core=False) as pool:
        first, second = (worker.process.pid for worker in pool._started)
        threads = [
            threading.Thread(target=run, args=("dies", _die_after, 0.5)),
            threading.Thread(target=run, args=("busy", _note_pid, notes, 0.2)),
            threading.Thread(target=run, args=("queued", _note_pid, notes, 0.0)),
        ]
        for thread in threads:  # written in this order: dies to one, busy to the other,
            thread.start()  # queued behind dies (both workers hold a call)
            time.sleep(0.1)
        for thread in threads:
            thread.join()
    assert outcomes == {"dies": "io", "busy": second, "queued": second}
    assert notes.read_text().split() == [str(second), str(second)]
    assert first != second


@pytest.mark.skipif(not SEVERAL_CORES, reason="one core: the pool runs steps in-process")
def test_the_workers_end_once_the_calls_expected_are_answered() -> None:
    """After the calls the run said it would make (one extraction per plugin fetched), the
    workers end while the run goes on; a call after that runs in the calling process."""
    with CpuPool(2, per_core=False) as pool:
        processes = [worker.process for worker in pool._started]
        pool.expect(3)
        answers = [pool.call(os.getpid) for _ in range(2)]
        assert all(process.is_alive() for process in processes)
        answers.append(pool.call(abs, -7))
        for process in processes:
            process.join(timeout=30)
        assert [process.exitcode for process in processes] == [0, 0]
        assert answers[2] == 7
        assert os.getpid() not in answers[:2]
        assert pool.call(os.getpid) == os.getpid()


@pytest.mark.skipif(not SEVERAL_CORES, reason="one core: the pool runs steps in-process")
@pytest.mark.skipif(not hasattr(signal, "pthread_sigmask"), reason="no signal masks here")
def test_a_ctrl_c_while_a_worker_sets_itself_up_does_not_kill_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Ctrl-C goes to the whole foreground process group, the workers included, and may come
    while a worker is still between its fork and ignoring SIGINT (where it has the run's own
    handler): it must not die there (with a traceback on the run's stderr), but serve."""
    ready_r, ready_w = os.pipe()
    go_r, go_w = os.pipe()
    real_setup = pool_module._quiet_worker

    def held_setup(parent: int | None) -> None:
        os.write(ready_w, b"r")
        os.read(go_r, 1)
        real_setup(parent)

    monkeypatch.setattr(pool_module, "_quiet_worker", held_setup)
    monkeypatch.setattr(threading, "active_count", lambda: 1)  # forked, as a sync's are
    try:
        with CpuPool(2, per_core=False) as pool:
            workers = [worker.process for worker in pool._started]
            assert [os.read(ready_r, 1) for _ in workers] == [b"r", b"r"]
            for process in workers:
                os.kill(process.pid or 0, signal.SIGINT)
            os.write(go_w, b"gg")
            assert {pool.call(os.getpid) for _ in range(4)} <= {p.pid for p in workers}
            assert all(process.is_alive() for process in workers)
        assert [process.exitcode for process in workers] == [0, 0]
    finally:
        for descriptor in (ready_r, ready_w, go_r, go_w):
            os.close(descriptor)


@pytest.mark.skipif(not SEVERAL_CORES, reason="one core: the pool runs steps in-process")
def test_a_pool_entered_again_starts_afresh() -> None:
    """A pool left with calls it expected still to come is entered again: new workers, and
    nothing of the earlier run's expectation, so they serve every call."""
    pool = CpuPool(2, per_core=False)
    with pool:
        pool.expect(3)
        assert pool.call(os.getpid) != os.getpid()
    assert pool.call(os.getpid) == os.getpid()  # after exit: in the calling process
    with pool:
        workers = {worker.process.pid for worker in pool._started}
        assert {pool.call(os.getpid) for _ in range(4)} <= workers


def _killed() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


@pytest.mark.skipif(not SEVERAL_CORES, reason="one core: the pool runs steps in-process")
def test_a_worker_killed_by_a_signal_is_said_so() -> None:
    with CpuPool(2, per_core=False) as pool, pytest.raises(NexoError) as caught:
        pool.call(_killed)
    assert caught.value.kind == "io"
    assert caught.value.message == "a worker process ended during _killed (killed by SIGKILL)"


_RUN_WITH_THREADS = """
import os, sys, threading
from nexo_pkg.fleet.pool import CpuPool


def hold(path):
    os.read(os.open(path, os.O_RDWR), 1)  # a FIFO nobody writes to: waits for good


if __name__ == "__main__":
    # Another thread runs: the pool's workers come from a fork server, not from a fork.
    threading.Thread(target=threading.Event().wait, daemon=True).start()
    with CpuPool(2, per_core=False) as pool:
        print(" ".join(str(worker.process.pid) for worker in pool._started), flush=True)
        pool.call(hold, sys.argv[1])
"""


@pytest.mark.skipif(not SEVERAL_CORES, reason="one core: the pool runs steps in-process")
@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")
def test_workers_from_a_fork_server_end_with_a_killed_run_even_mid_step(tmp_path: Path) -> None:
    """A run killed with SIGKILL while a worker started by a fork server runs a step: that
    worker has no death signal tied to the run, yet it ends (mid-step) rather than finish
    the step behind the back of whatever runs next."""
    script = tmp_path / "run.py"
    script.write_text(_RUN_WITH_THREADS, encoding="utf-8")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    run = subprocess.Popen(
        [sys.executable, str(script), str(fifo)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert run.stdout is not None
    workers = [int(pid) for pid in run.stdout.readline().split()]
    assert len(workers) == 2

    def waiting_on_the_fifo(pid: int) -> bool:
        try:
            return any(
                str(link.readlink()) == str(fifo) for link in Path(f"/proc/{pid}/fd").iterdir()
            )
        except OSError:
            return False

    try:
        deadline = time.monotonic() + 60
        while not any(waiting_on_the_fifo(pid) for pid in workers):
            assert time.monotonic() < deadline, "no worker took the step"
            time.sleep(0.01)
        run.kill()
        run.wait(timeout=60)
        deadline = time.monotonic() + 30
        while any(_running(pid) for pid in workers) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert not [pid for pid in workers if _running(pid)], "a worker outlived the run"
    finally:
        for pid in workers:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        run.kill()
        run.wait(timeout=60)
        run.stdout.close()


def _running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


_CTRL_C_AT_START = """
import os, signal, threading
from nexo_pkg.fleet.pool import CpuPool

if __name__ == "__main__":
    # Another thread runs: the pool's workers come from a fork server, not from a fork.
    threading.Thread(target=threading.Event().wait, daemon=True).start()
    signal.signal(signal.SIGINT, lambda signum, frame: None)  # the run's own handler
    with CpuPool(2, per_core=False) as pool:
        workers = [worker.process for worker in pool._started]
        for process in workers:  # a Ctrl-C while they are still setting themselves up
            os.kill(process.pid, signal.SIGINT)
        served = {pool.call(os.getpid) for _ in range(4)}
        alive = all(process.is_alive() for process in workers)
        print(alive and served <= {process.pid for process in workers}, flush=True)
    print([process.exitcode for process in workers], flush=True)
"""


@pytest.mark.skipif(not SEVERAL_CORES, reason="one core: the pool runs steps in-process")
def test_workers_from_a_fork_server_are_born_ignoring_ctrl_c(tmp_path: Path) -> None:
    """The fork server's children start with Python's SIGINT handler until they ignore
    SIGINT themselves: a Ctrl-C to the process group then would kill them with a
    KeyboardInterrupt traceback. They are born ignoring it."""
    script = tmp_path / "run.py"
    script.write_text(_CTRL_C_AT_START, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert (done.returncode, done.stdout) == (0, "True\n[0, 0]\n"), done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.skipif(not SEVERAL_CORES, reason="one core: the pool runs steps in-process")
def test_a_step_that_cannot_be_sent_or_answered_fails_alone_with_io() -> None:
    """A call whose arguments, or whose answer, do not pickle fails that step (``io``) as a
    NexoError, which a run reports as that plugin's failure; the pool goes on."""
    with CpuPool(2, per_core=False) as pool:
        with pytest.raises(NexoError) as sent:
            pool.call(id, threading.Lock())
        assert sent.value.kind == "io"
        assert sent.value.message.startswith("id cannot be sent to a worker process: ")
        with pytest.raises(NexoError) as answered:
            pool.call(threading.Lock)
        assert answered.value.kind == "io"
        assert "cannot be sent back" in answered.value.message
        assert pool.call(os.getpid) != os.getpid()


_WORKER_SET_UP = """
import signal
from nexo_pkg.cli.main import install_signal_handlers
from nexo_pkg.fleet import pool
install_signal_handlers()
pool._quiet_worker(None)
print(signal.getsignal(signal.SIGHUP).name)
"""


@pytest.mark.skipif(not hasattr(signal, "SIGHUP"), reason="no SIGHUP on this platform")
@pytest.mark.parametrize(
    ("started_with", "expected"), [(signal.SIG_DFL, "SIG_DFL"), (signal.SIG_IGN, "SIG_IGN")]
)
def test_a_forked_worker_does_not_keep_the_run_s_hang_up_handler(
    started_with: signal.Handlers, expected: str
) -> None:
    """The run unwinds on a hang-up (cli.main); a worker forked from it dies of SIGHUP as
    before instead of raising the run's interruption, and under nohup keeps ignoring it."""
    run = subprocess.run(
        [sys.executable, "-c", _WORKER_SET_UP],
        capture_output=True,
        text=True,
        check=False,
        preexec_fn=lambda: signal.signal(signal.SIGHUP, started_with),
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == expected


_WORKER_HANDLERS = """
import signal
from nexo_pkg.cli.main import install_signal_handlers
from nexo_pkg.fleet import pool
install_signal_handlers()
pool._quiet_worker(None)
print(sorted(int(n) for n in signal.valid_signals() if callable(signal.getsignal(n))))
"""


@pytest.mark.skipif(not hasattr(signal, "SIGUSR1"), reason="no SIGUSR1 on this platform")
def test_a_forked_worker_keeps_none_of_the_run_s_unwinding_handlers() -> None:
    """The run unwinds on SIGQUIT, SIGUSR1, a real-time signal, ... (cli.main); a worker
    forked from it takes their default action instead of raising the run's interruption."""
    run = subprocess.run(
        [sys.executable, "-c", _WORKER_HANDLERS], capture_output=True, text=True, check=False
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[]"
