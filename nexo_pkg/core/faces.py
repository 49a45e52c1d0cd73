"""Lazy faces: a package's ``api`` module whose names each load their own module when first
asked for, so importing the face costs nothing and a command pays only for what it uses.

A face lists where each name lives (``{"hold": "read_hold release_hold", ...}``: module of the
package, then its names), loads a module of its package with a plain import (so the import
contracts see it), and hands :func:`lazy_getattr`'s function to Python as its module
``__getattr__``; for type checkers it imports the same names under ``TYPE_CHECKING``.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any


def homes(modules: dict[str, str]) -> dict[str, str]:
    """Each name of ``modules`` (module: space-separated names) and the module it lives in."""
    return {name: module for module, names in modules.items() for name in names.split()}


def lazy_getattr(
    where: dict[str, str], load: Callable[[str], ModuleType], namespace: dict[str, Any]
) -> Callable[[str], object]:
    """A module ``__getattr__`` for a face (its ``namespace``): a name of ``where`` is read
    from the module ``load`` gives for its home; the value is kept, so later lookups are
    plain."""
    face = namespace["__name__"]

    def getattr_(name: str) -> object:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {face!r} has no attribute {name!r}")
        value = getattr(load(module), name)
        namespace[name] = value
        return value

    return getattr_
