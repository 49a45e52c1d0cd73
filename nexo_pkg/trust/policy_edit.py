"""Editing ``trusted_keys.toml`` in place with tomlkit: comments and layout survive.

Every edit is validated by :func:`~nexo_pkg.trust.policy.parse_policy` before the file is
replaced (atomically, same directory), so an edit can never leave a policy that installs
would refuse.
"""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nexo_pkg.core.dirs import make_dirs
from nexo_pkg.core.errors import ConfigError, UsageError
from nexo_pkg.core.files import open_regular, read_config_file, write_config_file
from nexo_pkg.trust.policy import (
    GITHUB_ACTIONS_ISSUER,
    MAX_POLICY_BYTES,
    AuthorPolicy,
    TrustPolicy,
    parse_policy,
)


@dataclass(frozen=True)
class EditResult:
    """What an edit did: the policy as written, and how many entries changed (of those, how
    many stayed, with one repository fewer in ``repos``: ``narrowed``)."""

    path: Path
    policy: TrustPolicy
    changed: int
    narrowed: int = 0


def _has_bom(path: Path) -> bool:
    """Whether ``path`` starts with a UTF-8 byte-order mark (an edit writes it back)."""
    try:
        # Read as the policy was (a regular file, a link followed): one that became a FIFO
        # since never blocks the edit, which then refuses to write over it.
        with open_regular(path, follow_links=True) as stream:
            return stream.read(3) == b"\xef\xbb\xbf"
    except OSError:
        return False


def _read_text(path: Path) -> str:
    try:
        raw = read_config_file(path, MAX_POLICY_BYTES, kind="policy_invalid", missing_ok=True)
    except FileNotFoundError:
        return ""
    try:
        # The daemon's TOML parser drops a leading byte-order mark (toml_edit's
        # parser/document.rs at toml-v0.8.23), so a policy saved with one is read alike.
        return raw.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: the trust policy is not UTF-8", kind="policy_invalid") from exc


def _entry_table(author: AuthorPolicy, *, inline: bool = False) -> Any:
    import tomlkit  # noqa: PLC0415 - only editing commands pay for tomlkit

    table = tomlkit.inline_table() if inline else tomlkit.table()
    for key, value in author.entry_items():
        table.add(key, list(value) if isinstance(value, tuple) else value)
    return table


def _dumps(document: Any, original: str) -> str:
    """``document`` as TOML, every line ``original`` holds as it was written: tomlkit writes
    what it adds with LF, which in a policy saved on Windows (mostly CRLF) becomes CRLF; a
    line already there keeps its own ending, whatever the others use."""
    import difflib  # noqa: PLC0415

    import tomlkit  # noqa: PLC0415 - only editing commands pay for tomlkit

    text: str = tomlkit.dumps(document)
    if original.count("\r\n") * 2 <= original.count("\n"):
        return text
    old, new = original.splitlines(keepends=True), text.splitlines(keepends=True)
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    lines: list[str] = []
    for tag, _, _, start, end in matcher.get_opcodes():
        added = new[start:end]
        if tag != "equal":
            added = [re.sub(r"(?<!\r)\n\Z", "\r\n", line) for line in added]
        lines += added
    return "".join(lines)


def _parse(text: str) -> Any:
    """tomlkit's document of ``text``, whose last line ends (``\\r\\n`` in a mostly-CRLF
    policy) so that what an edit appends starts a line of its own: tomlkit appends a table
    right after a last line that has no line break, which is no TOML."""
    import tomlkit  # noqa: PLC0415 - only editing commands pay for tomlkit

    if text and not text.endswith("\n"):
        text += "\r\n" if text.count("\r\n") * 2 > text.count("\n") else "\n"
    return tomlkit.parse(text)


def _write(path: Path, text: str, *, bom: bool = False) -> TrustPolicy:
    """Validate ``text`` as a policy and replace ``path`` with it atomically (with the
    byte-order mark the file started with, ``bom``)."""
    policy = parse_policy(text, path=path)
    text = "\ufeff" + text if bom else text
    # The policy's directory and its missing parents are 0755 whatever the umask: in a
    # directory every user could write, anyone could put another policy in its place.
    make_dirs(path.parent)
    mode = 0o644
    with contextlib.suppress(OSError):
        mode = path.stat().st_mode & 0o777 & ~0o022
    # Replacing a symlinked policy writes a regular file here; the link is not followed.
    write_config_file(path, text.encode("utf-8"), mode=mode)
    return policy


def _same_entry(existing: Any, author: AuthorPolicy) -> bool:
    found = dict(existing.unwrap())
    found.setdefault("oidc_issuer", GITHUB_ACTIONS_ISSUER)
    return found == dict(_entry_table(author).unwrap())


def add_author(path: Path, author: AuthorPolicy) -> EditResult:
    """Append ``author`` as an ``[[authors]]`` table (nothing when an equal entry exists)."""
    import tomlkit  # noqa: PLC0415 - only editing commands pay for tomlkit

    text = _read_text(path)
    before = parse_policy(text, path=path)  # refuse to edit a policy that is already invalid
    document = _parse(text)
    if not text.strip():
        document.add("schema_version", "1.0")
    authors = document.get("authors")
    if authors is None:
        authors = tomlkit.aot()
        if document.as_string().strip() and not document.as_string().endswith(("\n\n", "\n\r\n")):
            document.add(tomlkit.nl())
        document.append("authors", authors)
    if any(_same_entry(existing, author) for existing in authors):
        return EditResult(path, before, 0)
    # `authors = [{...}]` is the same policy to every reader: an inline array gets an inline
    # table (a `[[authors]]` table inside it would not be TOML).
    inline = not isinstance(authors, tomlkit.items.AoT)
    table = _entry_table(author, inline=inline)
    hiding = _hiding_entry(before, author)
    if not inline:
        # A blank line between two entries, as the policy's own examples are written.
        if hiding is not None:
            table.add(tomlkit.nl())
        elif len(authors) and not _blank_line_ends(authors[-1]):
            authors[-1].add(tomlkit.nl())
    if hiding is None:
        authors.append(table)
    else:
        # The first entry for an owner decides: appended after one that covers it, the new
        # entry would be ignored. Limited to its repositories, it goes before it instead.
        authors.insert(hiding, table)
    return EditResult(path, _write(path, _dumps(document, text), bom=_has_bom(path)), 1)


def _blank_line_ends(table: Any) -> bool:
    """Whether ``table``'s body ends with a blank line after its last key (LF or CRLF)."""
    return _trailing_lines(table).strip(" \t").startswith(("\n", "\r\n"))


def _trailing_lines(table: Any) -> str:
    """The comment and blank lines that end ``table``'s body, after its last key, as text."""
    body = table.value.body
    last_key = max((i for i, (key, _) in enumerate(body) if key is not None), default=-1)
    return "".join(item.as_string() for _, item in body[last_key + 1 :])


def _hiding_entry(policy: TrustPolicy, author: AuthorPolicy) -> int | None:
    """The index of the first entry of ``policy`` that would make ``author``, appended, one
    that is never read (:meth:`AuthorPolicy.covers`); ``None`` when there is none. Raises
    :class:`UsageError` when ``author``, put before that entry, would hide it in turn (it
    covers the same repositories or more)."""
    for index, existing in enumerate(policy.authors):
        if not existing.covers(author):
            continue
        if author.covers(existing):
            raise UsageError(
                f"the [[authors]] entry for {existing.owner} at line {existing.line} of "
                f"{policy.source} comes first and decides for the repositories of "
                f"{author.owner} the new entry names, so the new one would be ignored: widen "
                "that entry (one identity_regexp can list alternatives with |), or remove it "
                f"first (nexo plugin trust remove {author.owner}); nothing was written"
            )
        return index
    return None


def remove_authors(path: Path, owner: str, repo: str | None = None) -> EditResult:
    """Remove ``owner``'s entries. With ``repo``, only entries whose ``repos`` lists it: one
    listing several repositories loses ``repo`` from its list, an entry without ``repos``
    (trusting every repository of the owner) is left alone. A removed ``[[authors]]`` table
    takes its own lines; the comment and blank lines after its last key, which TOML counts
    as its part but which stand before the next entry (or end the file), stay."""
    import tomlkit  # noqa: PLC0415 - only editing commands pay for tomlkit

    text = _read_text(path)
    parse_policy(text, path=path)
    document = _parse(text)
    authors = document.get("authors")
    if authors is None:
        return EditResult(path, parse_policy(text, path=path), 0)
    changed = narrowed = 0
    closing = ""
    for index in reversed(range(len(authors))):
        entry = authors[index]
        if str(entry.get("owner", "")).casefold() != owner.casefold():
            continue
        repos = [str(name) for name in entry.get("repos", [])]
        if repo is not None and repo.casefold() not in {r.casefold() for r in repos}:
            continue  # with a repository, only entries limited to it are touched
        if repo is not None and len(repos) > 1:
            entry["repos"] = [r for r in repos if r.casefold() != repo.casefold()]
            narrowed += 1
        else:
            kept = _trailing_lines(entry) if isinstance(authors, tomlkit.items.AoT) else ""
            del authors[index]
            if kept and index < len(authors):
                # Before the next entry's header, where they were.
                following = authors[index].trivia
                following.indent = kept + following.indent
            elif kept:
                closing = kept + closing
        changed += 1
    if not changed:
        return EditResult(path, parse_policy(text, path=path), 0)
    if len(authors) == 0:
        del document["authors"]
    if closing:
        # What followed the last entry (the end of the file): it stays the end of the file.
        document.add(tomlkit.items.Whitespace(closing))
    written = _write(path, _dumps(document, text), bom=_has_bom(path))
    return EditResult(path, written, changed, narrowed)
