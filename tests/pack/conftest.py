"""Fixtures of the pack tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from pack.pack_helpers import ProjectFactory, write_project


@pytest.fixture
def make_project(tmp_path: Path) -> ProjectFactory:
    """``make_project(name="p", **write_project kwargs)`` -> a project under tmp_path."""

    def factory(name: str = "project", **kwargs: object) -> Path:
        return write_project(tmp_path / name, **kwargs)  # type: ignore[arg-type]

    return factory


@pytest.fixture
def host_tag() -> str:
    """The most specific wheel tag pip accepts here (such as cp311-cp311-linux_x86_64)."""
    from pip._vendor.packaging.tags import sys_tags

    return str(next(iter(sys_tags())))
