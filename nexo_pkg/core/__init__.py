"""The ground floor: what every other part of nexo-pkg shares.

Nothing here imports anything else from ``nexo_pkg`` (an import-linter contract in
``pyproject.toml`` keeps it so), so any room may import from here.

* :mod:`nexo_pkg.core.kinds` — :class:`~nexo_pkg.core.kinds.ErrorKind`, every error kind the
  command line can print, with its exit code and description.
"""
