"""atheris harness: ``lint_source`` must turn any bytes into diagnostics without raising.

Run (see docs/fuzzing.md)::

    .venv/bin/python fuzz/fuzz_manifest.py fuzz/corpus/manifest tests/fuzz/seeds -max_total_time=600
"""

from __future__ import annotations

import sys

import atheris

with atheris.instrument_imports():
    from nexo_pkg.lint.engine import lint_source


def test_one_input(data: bytes) -> None:
    """Decode as the CLI does (UTF-8, invalid bytes replaced) and lint; any exception is a bug."""
    text = data.decode("utf-8", errors="replace")
    result = lint_source(text, path="fuzz/nexo-plugin.toml")
    for diagnostic in result.diagnostics:
        if diagnostic.span.start.line < 1 or diagnostic.span.start.column < 1:
            raise AssertionError(f"diagnostic outside the file: {diagnostic}")


def main() -> None:
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
