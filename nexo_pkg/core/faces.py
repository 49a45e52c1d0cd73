"""Lazy faces: a package's ``api`` module whose names each load their own module when first
asked for, so importing the face costs nothing and a command pays only for what it uses.

A face lists where each name lives (``{"hold": "read_hold release_hold", ...}``: module of the
package, then its names) and hands :func:`lazy_getattr`'s function to Python as its module
``__getattr__``; for type checkers it imports the same names under ``TYPE_CHECKING``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def homes(modules: dict[str, str]) -> dict[str, str]:
    """Each name of ``modules`` (module: space-separated names) and the module it lives in."""
    return {name: module for module, names in modules.items() for name in names.split()}


def lazy_getattr(
    package: str, where: dict[str, str], namespace: dict[str, Any]
) -> Callable[[str], object]:
    """A module ``__getattr__`` for the face of ``package`` (its ``namespace``): a name of
    ``where`` loads ``package.<module>``; the value is kept, so later lookups are plain."""
    face = namespace["__name__"]

    def getattr_(name: str) -> object:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {face!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{module}"), name)
        namespace[name] = value
        return value

    return getattr_
