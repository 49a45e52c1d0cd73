"""docs/trust.md's "Which signing schemes are verified" table names every scheme a receipt
can record, side by side with ``gh attestation verify``, ``cosign verify-blob`` and aqua."""

from __future__ import annotations

import typing
from pathlib import Path

from nexo_pkg.trust.base import Scheme

PAGE = Path(__file__).parents[2] / "docs" / "trust.md"
HEADING = "## Which signing schemes are verified"


def _table() -> list[list[str]]:
    """The rows of the table under :data:`HEADING`, cells stripped, header first."""
    text = PAGE.read_text(encoding="utf-8")
    assert HEADING in text.splitlines(), f"{PAGE} has no {HEADING!r} section"
    section = text.split(HEADING, 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("|")]
    cells = [[cell.strip() for cell in row.strip("|").split("|")] for row in rows]
    return [row for row in cells if not all(set(cell) <= {"-", ":"} for cell in row)]


def test_the_table_compares_with_gh_cosign_and_aqua() -> None:
    header = _table()[0]
    assert "`gh attestation verify`" in header
    assert "`cosign verify-blob`" in header
    assert "aqua" in header


def test_the_table_has_a_row_for_every_scheme_a_receipt_records() -> None:
    schemes = set(typing.get_args(Scheme))
    named = {row[0].split()[0].strip("`") for row in _table()[1:]}
    assert schemes <= named, schemes - named
    # The scheme a checksums file verifies by names the files it is read from.
    (checksums,) = [row for row in _table()[1:] if row[0].startswith("`checksums-file`")]
    for name in ("checksums.txt", "SHA256SUMS", "_checksums.txt"):
        assert name in checksums[1], checksums
