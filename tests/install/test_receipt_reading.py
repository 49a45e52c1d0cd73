"""Reading a receipt: the quick reading (objects as tuples of pairs, modes looked up) gives
what the careful one (a pairs hook that keeps repeated fields) gives, receipt or refusal
word for word, over receipts as written and receipts damaged in every way the installer
notices."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from nexo_pkg.install import receipts as store
from nexo_pkg.install.receipts import RECEIPT_NAME, Receipt, read_receipt

_FIELDS = {
    "schema_version": "1.0",
    "id": "acme",
    "version": "1.0.0",
    "owner": "acme",
    "repo": "acme",
    "tag": "v1.0.0",
    "target": "x86_64-unknown-linux-gnu",
    "sha256": "ab" * 32,
    "installed_at": "2026-05-07T18:20:42+00:00",
    "source": "github-releases",
}
_OURS = {
    **_FIELDS,
    "signature": {"status": "verified", "scheme": "sigstore", "identity": {"san": ["a", "b"]}},
    "files": {"bin/acme": "cd" * 32, "nexo-plugin.toml": "ef" * 32},
    "modes": {"bin": "0755", "bin/acme": "0755", "nexo-plugin.toml": "0644"},
    "resolved_tag": "v1.0.0",
}


def _text(document: Any) -> str:
    return json.dumps(document, indent=2)


def _replace(key: str, value: Any) -> str:
    return _text({**_OURS, key: value})


def _without(key: str) -> str:
    return _text({name: value for name, value in _OURS.items() if name != key})


_BODY = _text(_OURS)[1:]

CASES = {
    "ours": _text(_OURS),
    "reference": _text(_FIELDS),
    "integer schema": _replace("schema_version", 1),
    "repeated id": '{"id": "other",' + _BODY,
    "repeated id, escaped": '{"\\u0069d": "other",' + _BODY,
    "repeated unknown key": '{"extra": 1, "extra": 2,' + _BODY,
    "repeated key in files": _text(_OURS).replace('"files": {', '"files": {"bin/acme": "00", '),
    "repeated key in the signature": _text(_OURS).replace(
        '"signature": {', '"signature": {"status": "unsigned", '
    ),
    "missing id": _without("id"),
    "missing source": _without("source"),
    "id a number": _replace("id", 7),
    "id null": _replace("id", None),
    "owner an object": _replace("owner", {"a": 1}),
    "tag a list": _replace("tag", ["v1"]),
    "files a list": _replace("files", ["bin/acme"]),
    "files holding a number": _replace("files", {"bin/acme": 1}),
    "files holding an object": _replace("files", {"bin/acme": {"sha256": "00"}}),
    "files null": _replace("files", None),
    "modes as integers": _replace("modes", {"bin": 493}),
    "modes of three digits": _replace("modes", {"bin": "755"}),
    "modes with the setuid bit": _replace("modes", {"bin": "4755"}),
    "modes not octal": _replace("modes", {"bin": "0899"}),
    "modes empty text": _replace("modes", {"bin": ""}),
    "modes holding a list": _replace("modes", {"bin": ["0755"]}),
    "modes a list": _replace("modes", ["0755"]),
    "signature a string": _replace("signature", "verified"),
    "signature holding objects in a list": _replace(
        "signature", {"status": "verified", "chain": [{"a": 1}, {"a": 1, "b": [{}]}]}
    ),
    "a list": "[1, 2]",
    "a string": '"acme"',
    "not JSON": "{",
    "trailing data": _text(_OURS) + "x",
    "empty object": "{}",
}


def _careful(text: str) -> Receipt:
    """The reading with the pairs hook alone (what the quick reading stands in for)."""
    document = json.loads(text, object_pairs_hook=store._JsonObject.of)
    if isinstance(document, store._JsonObject):
        store.reference_receipt_problem(document.pairs)
    return Receipt.from_json(document)


def _outcome(read: Any, argument: Any) -> tuple[str, Any]:
    try:
        receipt = read(argument)
    except ValueError as exc:
        return "refused", str(exc)
    return "read", receipt


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_quick_reading_reads_and_refuses_as_the_careful_one(case: str, tmp_path: Path) -> None:
    text = CASES[case]
    (tmp_path / RECEIPT_NAME).write_text(text)
    expected = _outcome(_careful, text)
    assert _outcome(read_receipt, tmp_path) == expected
    if expected[0] == "read":
        assert expected[1].to_json() == _outcome(read_receipt, tmp_path)[1].to_json()


def test_the_cases_cover_both_readings() -> None:
    """Receipts the quick reading takes itself, and ones it hands to the careful one."""
    taken = {case for case, text in CASES.items() if store._plain_receipt(text) is not None}
    assert {"ours", "reference", "files null", "modes with the setuid bit"} <= taken
    assert not taken & {"repeated id", "repeated id, escaped", "repeated key in files"}
    assert not taken & {"missing id", "integer schema", "modes not octal", "a list"}


@pytest.mark.parametrize(
    "document",
    [
        _OURS,
        _FIELDS,
        {},
        {"files": {}, "modes": {}},
        {"a": [], "b": [1, {"c": "\u00e9\n\u2028"}], "d": {'x"y': "\\", "z": None, "t": True}},
        {"n": {"a": 1.5, "b": -3}, "s": {"k": {"n": {}}}, "\u00e9": "\ud800"},
        {1: {2: "x"}},
        {"a": {1: "x", None: "y", False: 2}},
    ],
)
def test_receipts_are_written_as_json_indents_them(document: dict[str, Any]) -> None:
    assert store.indented_json(document) == json.dumps(document, indent=2, ensure_ascii=False)


def _receipt(**changes: Any) -> Receipt:
    return replace(Receipt.from_json(_OURS), **changes)


@pytest.mark.parametrize(
    "receipt",
    [
        _receipt(),
        _receipt(files=None, modes=None, resolved_tag=None),
        _receipt(files={}, modes={}, registry="oci://127.0.0.1:5000/acme@sha256:" + "ab" * 32),
        _receipt(files={"b": "1", "a": "2", "lib/z": "3"}, modes={"b": 0o755, "a": 0o4755}),
        _receipt(modes={"bin": 0o1777, "bin/acme": 0o2750, "x": 0o10000}),
        _receipt(files={'say "hi"': "x", "back\\slash": "y"}),
        _receipt(files={"tab\there": "x", "ctl\x1f": "y", "del\x7f": "z"}),
        _receipt(files={"caf\u00e9/\u2028": "\u00e9", "\U0001f600": "x"}),
        _receipt(files={"lone\ud800": "x"}, modes={"lone\udfff": 0o644}),
        _receipt(files={"a": 'quote"d'}, owner=None, tag=None, signature={"status": "unsigned"}),
    ],
)
def test_a_receipt_is_written_as_json_indents_it(receipt: Receipt) -> None:
    """The receipt's text (its files and modes joined in C) is the indented JSON of its
    document, character for character, escapes, non-ASCII names and setuid bits included."""
    expected = json.dumps(receipt.to_json(), indent=2, ensure_ascii=False) + "\n"
    assert store.receipt_text(receipt) == expected
