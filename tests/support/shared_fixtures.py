"""Fixtures taken from public repositories, read in place from the shared fixtures directory.

They live beside the project (``../shared/fixtures`` from its root), never copied into it;
``NEXO_TEST_FIXTURES`` points elsewhere. When the directory is absent, the tests that need it
are skipped with a reason saying where they looked.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

PROJECT_ROOT = Path(__file__).resolve().parents[2]


def shared_fixtures_dir() -> Path:
    """``$NEXO_TEST_FIXTURES``, else ``../shared/fixtures`` relative to the project root."""
    configured = os.environ.get("NEXO_TEST_FIXTURES")
    if configured:
        return Path(configured)
    return PROJECT_ROOT.parent / "shared" / "fixtures"


def shared_fixture(*parts: str) -> Path:
    """The path of a shared fixture (it may not exist; see :func:`require_shared_fixture`)."""
    return shared_fixtures_dir().joinpath(*parts)


def missing_reason(*parts: str) -> str:
    """Why a test needing ``parts`` is skipped."""
    return (
        f"shared fixtures not found at {shared_fixture(*parts)}; set NEXO_TEST_FIXTURES to the "
        "directory holding them"
    )


def require_shared_fixture(*parts: str) -> Path:
    """The path of a shared fixture; skips the calling test when it is absent."""
    path = shared_fixture(*parts)
    if not path.exists():
        pytest.skip(missing_reason(*parts))
    return path


def shared_files(pattern: str, *parts: str) -> list[Path]:
    """Files under a shared fixture directory matching ``pattern``, sorted; empty if absent."""
    directory = shared_fixture(*parts)
    return sorted(directory.glob(pattern)) if directory.is_dir() else []


def skip_unless_present(*parts: str) -> pytest.MarkDecorator:
    """A mark that skips a test (or module: ``pytestmark``) when the fixture is absent."""
    return pytest.mark.skipif(not shared_fixture(*parts).exists(), reason=missing_reason(*parts))
