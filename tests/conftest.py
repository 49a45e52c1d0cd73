"""Settings shared by every test: a deterministic hypothesis profile for CI."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci", max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "slow", max_examples=10_000, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("dev", max_examples=100, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))


@pytest.fixture(scope="session")
def wheelhouse() -> Path:
    """A directory holding the real ``nexoai`` wheel, so tests run pip with ``--no-index``.

    ``scripts/test.sh`` fills it before the run (``NEXO_TEST_WHEELHOUSE``); when pytest is run
    directly the wheel is fetched once from the package index into ``.cache/wheelhouse``.
    """
    configured = os.environ.get("NEXO_TEST_WHEELHOUSE")
    if configured:
        return Path(configured)
    cache = Path(__file__).resolve().parent.parent / ".cache" / "wheelhouse"
    if not any(cache.glob("nexoai-*.whl")):
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--quiet",
                "--no-deps",
                "--dest",
                str(cache),
                "nexoai>=0.4",
            ],
            check=True,
        )
    return cache


@pytest.fixture
def offline_pip_env(wheelhouse: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Environment variables that make every ``pip install`` resolve from the wheelhouse only."""
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(wheelhouse))
    monkeypatch.setenv("PIP_DISABLE_PIP_VERSION_CHECK", "1")
    return {
        "PIP_NO_INDEX": "1",
        "PIP_FIND_LINKS": str(wheelhouse),
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    }


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--windows-shim",
        action="store_true",
        help="run nexo_pkg as Windows's CPython would show it the standard library (no "
        "O_NONBLOCK, killpg, SIGKILL, fcntl, dir_fd, ...), in this process and in child "
        "interpreters: tests/support/windows_shim.py",
    )


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("windows_shim"):
        from support import windows_shim

        windows_shim.install()
        windows_shim.child_environment(os.environ)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """``slow`` tests (full-size fuzzing, crash loops, 50 MB answers) run only on request.

    Ask with a marker expression that names them (``pytest -m slow``) or ``NEXO_SLOW=1``.
    """
    if config.getoption("windows_shim") or os.name != "posix":
        posix = pytest.mark.skip(reason="POSIX process semantics: not what Windows gives")
        for item in items:
            if item.get_closest_marker("posix"):
                item.add_marker(posix)
        host = pytest.mark.skip(reason="a daemon host's step: Windows refuses or cannot run it")
        for item in items:
            if item.get_closest_marker("daemon_host"):
                item.add_marker(host)
    if os.environ.get("NEXO_SLOW") == "1" or "slow" in (config.getoption("markexpr") or ""):
        return
    skip = pytest.mark.skip(reason="slow test: run with -m slow or NEXO_SLOW=1")
    for item in items:
        if item.get_closest_marker("slow"):
            item.add_marker(skip)
