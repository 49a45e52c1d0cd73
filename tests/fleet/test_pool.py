"""The worker processes ``lock`` hashes tarball trees in (:class:`nexo_pkg.fleet.pool.CpuPool`)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from support.tarballs import plugin_members, targz

from nexo_pkg.core.errors import NexoError
from nexo_pkg.fleet.pool import CpuPool
from nexo_pkg.fleet.treehash import hash_tarball
from nexo_pkg.sources.archive import ArchiveLimits

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
