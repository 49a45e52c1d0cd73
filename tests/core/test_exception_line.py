"""A library's refusal on one line, in words of the document it read: a JSON number longer
than Python converts names the number and the limit, never the Python call that raises it."""

from __future__ import annotations

import json

import pytest

from nexo_pkg.core.errors import exception_line
from nexo_pkg.sbom import SbomError, load_json


def _json_error(text: str) -> ValueError:
    try:
        json.loads(text)
    except ValueError as exc:
        return exc
    raise AssertionError(text)


@pytest.mark.parametrize("digits", [4301, 5000, 100_000])
def test_a_number_too_long_to_read_is_said_in_words(digits: int) -> None:
    line = exception_line(_json_error('{"id": ' + "9" * digits + "}"))
    assert line == f"a number of {digits} digits, more than the 4300 a number may have"


def test_other_json_errors_are_left_as_they_are() -> None:
    assert (
        exception_line(_json_error("[1, 2")) == "Expecting ',' delimiter: line 1 column 6 (char 5)"
    )
    assert exception_line(ValueError("Exceeds the limit (of patience)")) == (
        "Exceeds the limit (of patience)"
    )


def test_a_carried_sbom_holding_such_a_number_is_said_in_words() -> None:
    with pytest.raises(SbomError) as caught:
        load_json(b'{"bomFormat": ' + b"9" * 5000 + b"}")
    assert "sys." not in str(caught.value)
    assert "a number of 5000 digits" in str(caught.value)
