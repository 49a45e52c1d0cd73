"""``python -m nexo_pkg`` runs the ``nexo`` command line."""

from __future__ import annotations

from nexo_pkg.cli.main import main

if __name__ == "__main__":
    main()
