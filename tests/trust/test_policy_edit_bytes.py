"""``nexo plugin trust add|remove`` rewrite only the entries they change: a byte-order mark,
a last line without a line break and a line ending unlike the others survive the edit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.cli import nexo

from nexo_pkg.trust.policy import parse_policy

HEAD = 'schema_version = "1.0"\n# our signers\n[[authors]]\nowner = "bob"\nidentity_regexp = "^b$"'


def _trust(*args: str | Path) -> dict[str, object]:
    result = nexo("plugin", "trust", *args, "--yes", "--json")
    assert "Traceback" not in result.stderr
    document = json.loads(result.stdout)
    assert result.code == 0, document
    assert isinstance(document, dict)
    return document


def _add(path: Path) -> None:
    _trust("add", "acme", "--identity-regexp", "^x$", "--trusted-keys", path)


@pytest.mark.parametrize("command", ["add", "remove"])
def test_a_byte_order_mark_stays(tmp_path: Path, command: str) -> None:
    path = tmp_path / "trusted_keys.toml"
    path.write_bytes(b"\xef\xbb\xbf" + f"{HEAD}\n".encode())
    if command == "add":
        _add(path)
    else:
        _trust("remove", "bob", "--trusted-keys", path)
    edited = path.read_bytes()
    assert edited.startswith(b'\xef\xbb\xbfschema_version = "1.0"\n# our signers\n'), edited
    owners = [a.owner for a in parse_policy(edited.decode()[1:], path=path).authors]
    assert owners == (["bob", "acme"] if command == "add" else [])


@pytest.mark.parametrize("eol", ["\n", "\r\n"])
def test_an_entry_is_added_after_a_last_line_without_a_line_break(tmp_path: Path, eol: str) -> None:
    """tomlkit put `[[authors]]` right after the last value, which is no TOML: the edit was
    refused as policy_invalid pointing at a line the file did not have."""
    path = tmp_path / "trusted_keys.toml"
    path.write_bytes(HEAD.replace("\n", eol).encode())
    _add(path)
    edited = path.read_bytes().decode("utf-8")
    assert edited.startswith(HEAD.replace("\n", eol) + eol + eol + "[[authors]]" + eol)
    assert [a.owner for a in parse_policy(edited, path=path).authors] == ["bob", "acme"]
    assert edited.count("\n") == edited.count(eol)


def test_a_line_that_ends_unlike_the_others_keeps_its_ending(tmp_path: Path) -> None:
    """A mostly-CRLF policy got every LF line turned CRLF; only the added lines take CRLF."""
    path = tmp_path / "trusted_keys.toml"
    text = HEAD.replace("\n", "\r\n").replace("# our signers\r\n", "# our signers\n") + "\r\n"
    path.write_bytes(text.encode())
    _add(path)
    edited = path.read_bytes().decode("utf-8")
    assert edited.startswith(text)
    assert edited[len(text) :].count("\n") == edited[len(text) :].count("\r\n") > 0


POLICY = """\
schema_version = "1.0"

[[authors]]
owner = "bob"
identity_regexp = "^b$"

# acme signs with the release workflow
[[authors]]
owner = "acme"
identity_regexp = "^a$"
# end of the signers
"""


@pytest.mark.parametrize(
    ("owner", "expected"),
    [
        ("bob", POLICY.replace('[[authors]]\nowner = "bob"\nidentity_regexp = "^b$"\n', "", 1)),
        ("acme", POLICY.replace('[[authors]]\nowner = "acme"\nidentity_regexp = "^a$"\n', "")),
    ],
)
def test_remove_keeps_the_comments_after_the_entry(
    tmp_path: Path, owner: str, expected: str
) -> None:
    """TOML counts the lines after an entry's last key as the entry's: removing `bob` took
    the comment about `acme` with it, removing `acme` the file's closing comment."""
    path = tmp_path / "trusted_keys.toml"
    path.write_text(POLICY)
    _trust("remove", owner, "--trusted-keys", path)
    assert path.read_text() == expected


def test_entries_are_written_a_blank_line_apart(tmp_path: Path) -> None:
    """An added entry stands a blank line from its neighbours, as the docs write a policy:
    in a new policy, after the last entry, and before the entry it is put in front of."""
    path = tmp_path / "trusted_keys.toml"
    _trust("add", "bob", "--identity-regexp", "^b$", "--trusted-keys", path)
    _add(path)
    _trust("add", "acme/tools", "--identity-regexp", "^t$", "--trusted-keys", path)
    text = path.read_text(encoding="utf-8")
    assert text.startswith('schema_version = "1.0"\n\n[[authors]]\nowner = "bob"\n'), text
    assert text.count("\n\n[[authors]]\n") == 3, text
    assert "\n\n\n" not in text, text
    assert [a.owner for a in parse_policy(text, path=path).authors] == ["bob", "acme", "acme"]


@pytest.mark.parametrize("eol", ["\n", "\r\n"])
def test_a_blank_line_after_the_last_entry_is_not_doubled(tmp_path: Path, eol: str) -> None:
    """A policy whose last entry already stands before a blank line gets the new entry after
    that one blank line, in a CRLF policy too (its blank line is ``\\r\\n``, not ``\\n``)."""
    path = tmp_path / "trusted_keys.toml"
    path.write_bytes(
        f'schema_version = "1.0"\n\n{HEAD.partition(chr(10))[2]}\n\n'.replace("\n", eol).encode()
    )
    _add(path)
    edited = path.read_bytes().decode("utf-8")
    assert f'identity_regexp = "^b$"{eol}{eol}[[authors]]{eol}owner = "acme"' in edited, edited
    assert eol * 3 not in edited, edited
    assert edited.count("\n") == edited.count(eol)
    assert [a.owner for a in parse_policy(edited, path=path).authors] == ["bob", "acme"]
