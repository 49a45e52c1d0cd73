"""nexo-pkg: lint, pack, check and install nexo subprocess plugins."""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
