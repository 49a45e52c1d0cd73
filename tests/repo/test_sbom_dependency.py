"""The CycloneDX library nexo-pkg declares admits only releases with the API it calls.

``nexo_pkg/sbom/cyclonedx.py`` asks the strict JSON validator for every complaint
(``validate_str(text, all_errors=True)``). cyclonedx-python-lib's
``cyclonedx/validation/json.py`` first takes ``all_errors`` at v10.3.0 (v10.2.0 and v9.x take
``validate_str(self, data)`` only): installed beside an older release, ``sbom`` and ``pack``
would die with a ``TypeError`` traceback, so the declared floor must exclude them.
"""

from __future__ import annotations

import importlib.metadata
import inspect
import tomllib
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[2]
#: The first release whose JSON validator takes ``all_errors`` (cyclonedx-python-lib, tag
#: v10.3.0, cyclonedx/validation/json.py).
FIRST_WITH_ALL_ERRORS = "10.3.0"


def _declared() -> Requirement:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    (line,) = [d for d in project["dependencies"] if d.startswith("cyclonedx-python-lib")]
    return Requirement(line)


def test_the_declared_range_excludes_releases_without_all_errors() -> None:
    specifier = _declared().specifier
    for older in ("9.0.0", "9.1.0", "10.0.0", "10.2.0"):
        assert not specifier.contains(older), older
    assert specifier.contains(FIRST_WITH_ALL_ERRORS)


def test_the_installed_release_is_declared_and_takes_all_errors() -> None:
    from cyclonedx.validation.json import JsonStrictValidator

    assert _declared().specifier.contains(importlib.metadata.version("cyclonedx-python-lib"))
    assert "all_errors" in inspect.signature(JsonStrictValidator.validate_str).parameters
