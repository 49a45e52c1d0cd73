"""atheris harness: ``lint_source`` must turn any bytes into diagnostics without raising, and
the manifest model must raise only ``ManifestModelError``, never for a manifest that lints clean.

Run (see docs/fuzzing.md)::

    .venv/bin/python fuzz/fuzz_manifest.py fuzz/corpus/manifest tests/fuzz/seeds -max_total_time=600
"""

from __future__ import annotations

import sys

import atheris

with atheris.instrument_imports():
    from nexo_pkg.lint.engine import lint_source
    from nexo_pkg.manifest.document import MAX_MANIFEST_BYTES
    from nexo_pkg.manifest.model import ManifestModelError, manifest_from_text


def test_one_input(data: bytes) -> None:
    """Decode as the CLI does (UTF-8, invalid bytes replaced) and lint; any exception is a bug."""
    text = data.decode("utf-8", errors="replace")
    result = lint_source(text, path="fuzz/nexo-plugin.toml")
    for diagnostic in result.diagnostics:
        if diagnostic.span.start.line < 1 or diagnostic.span.start.column < 1:
            raise AssertionError(f"diagnostic outside the file: {diagnostic}")
    try:
        manifest_from_text(text, max_bytes=MAX_MANIFEST_BYTES)
    except ManifestModelError as error:
        if result.success:
            raise AssertionError(
                f"the model refuses a manifest that lints clean: {error}"
            ) from error


def main() -> None:
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
