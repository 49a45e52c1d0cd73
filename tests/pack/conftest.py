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
    """The most specific wheel tag pip accepts here for the Python a noarch tarball is
    vendored for (such as cp311-cp311-linux_x86_64), whichever Python runs the tests."""
    from pip._vendor.packaging.tags import cpython_tags, platform_tags

    from nexo_pkg.pack.vendor import DEFAULT_PYTHON

    major, minor = DEFAULT_PYTHON.split(".")
    return str(next(iter(cpython_tags((int(major), int(minor)), platforms=platform_tags()))))
