"""Parse the SOURCE argument of ``nexo plugin install``: ``owner/repo[@tag]`` or a local tarball.

The grammar is strict on purpose: owner, repo and tag end up in URL paths and file names, so
anything outside GitHub's own character set is refused up front with ``source_invalid``
instead of being quoted and sent.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nexo_pkg.core.credentials import bare_url
from nexo_pkg.core.errors import EXIT_USAGE, NexoError

# GitHub allows these characters in user, organisation and repository names.
_NAME = re.compile(r"^[A-Za-z0-9._-]+$")
# Tags name a semver version (optionally prefixed with `v`), so the semver alphabet suffices.
# Path-like tags (release-plz's ``nexo-plugin-google/v0.2.0``) are git refs GitHub releases
# take, and the reference installer passes them through: ``/`` between non-empty parts.
_TAG = re.compile(r"^[A-Za-z0-9._+-]+(?:/[A-Za-z0-9._+-]+)*$")
MAX_OWNER_LENGTH = 39
MAX_REPO_LENGTH = 100
MAX_TAG_LENGTH = 128
LOCAL_SUFFIXES = (".tar.gz", ".tgz")
# https://github.com/OWNER/REPO, optionally .git, /releases, /releases/tag/TAG, /tree/...
_GITHUB_URL = re.compile(
    r"^(?:https?://|git@)(?:www\.)?github\.com[/:]"
    r"(?P<owner>[A-Za-z0-9._-]+)/(?P<repo>[A-Za-z0-9._-]+?)(?:\.git)?"
    r"(?:/releases(?:/tag/(?P<tag>[A-Za-z0-9._+-]+))?)?(?:[/?#].*)?$"
)


@dataclass(frozen=True)
class GitHubSource:
    """A plugin published as GitHub release assets; ``tag`` ``None`` means the latest release."""

    owner: str
    repo: str
    tag: str | None = None

    def display(self) -> str:
        base = f"{self.owner}/{self.repo}"
        return f"{base}@{self.tag}" if self.tag else base


def release_label(origin: Mapping[str, Any], *, exact: bool) -> str | None:
    """How a person reads a release origin (a receipt's source object): ``owner/repo``, or
    ``exact``, ``owner/repo@tag`` (the release installed; ``owner/repo`` when the origin
    names no tag, as a hand-edited receipt may); ``None`` without a repository."""
    owner, repo, tag = origin.get("owner"), origin.get("repo"), origin.get("tag")
    if not (owner and repo):
        return None
    return f"{owner}/{repo}@{tag}" if exact and tag else f"{owner}/{repo}"


@dataclass(frozen=True)
class LocalSource:
    """A release tarball on disk; its sidecars (``.sha256``, signatures) sit next to it."""

    path: Path

    def display(self) -> str:
        return str(self.path)


Source = GitHubSource | LocalSource


def _invalid(text: str, why: str, *, hint: str | None = None, label: str = "source") -> NexoError:
    """``source_invalid``: a usage error (exit 2), as a malformed argument is. A URL is shown
    without its credentials (:func:`~nexo_pkg.core.credentials.bare_url`: no user,
    password, query string or fragment)."""
    advice = hint or "expected owner/repo[@tag] or a path to a .tar.gz"
    shown = bare_url(text) if "://" in text else text
    return NexoError(
        f"invalid {label} {shown!r}: {why}; {advice}",
        kind="source_invalid",
        exit_code=EXIT_USAGE,
        details={"source": shown},
    )


def _url_hint(text: str) -> str:
    match = _GITHUB_URL.match(text)
    if match is None:
        return "name a GitHub release as owner/repo[@tag], or give a path to a .tar.gz"
    suggestion = f"{match['owner']}/{match['repo']}"
    if match["tag"]:
        suggestion += f"@{match['tag']}"
    return f"write the repository as owner/repo[@tag]: nexo plugin install {suggestion}"


def _looks_local(text: str) -> bool:
    if text.endswith(LOCAL_SUFFIXES) or text.startswith(("/", "./", "../", "~")):
        return True
    try:
        path = Path(text)
        # A directory named without a '/' between two names (`dist`, `dist/`) cannot be
        # owner/repo: it is a path, said to be a directory.
        return path.is_file() or ((text.count("/") == 0 or text.endswith("/")) and path.is_dir())
    except OSError:
        # A name too long for the file system is not a local file; the owner/repo checks
        # that follow explain what is wrong with it.
        return False


def validate_name(
    value: str,
    *,
    what: str,
    max_length: int,
    text: str,
    label: str = "source",
    hint: str | None = None,
) -> None:
    """Check one owner or repo name against GitHub's alphabet; raise ``source_invalid``
    (``invalid {label} {text!r}: …; {hint}``)."""
    why = None
    if not value:
        why = f"the {what} is empty"
    elif len(value) > max_length:
        why = f"the {what} is longer than {max_length} characters"
    elif not _NAME.fullmatch(value):
        why = f"the {what} may only use letters, digits, '.', '_' and '-'"
    elif value in {".", ".."} or ".." in value:
        why = f"the {what} may not contain '..' or be '.'"
    elif value.startswith("-"):
        why = f"the {what} may not start with '-'"
    if why is not None:
        raise _invalid(text, why, hint=hint, label=label)


def parse_owner_repo(text: str, *, label: str = "OWNER[/REPO]") -> tuple[str, str | None]:
    """``OWNER`` or ``OWNER/REPO`` (what the trust commands name), checked with the rules of
    an install source's owner and repo; ``source_invalid`` (a usage error) saying what is
    wrong and what was expected. A trailing ``/`` names the owner alone."""
    hint = "expected OWNER or OWNER/REPO as GitHub names them (e.g. acme or acme/nexo-plugin-x)"
    owner, _, repo = text.partition("/")
    if "/" in repo:
        raise _invalid(text, "it has more than one '/'", hint=hint, label=label)
    validate_name(owner, what="owner", max_length=MAX_OWNER_LENGTH, text=text, label=label,
                  hint=hint)  # fmt: skip
    if repo:
        validate_name(repo, what="repo", max_length=MAX_REPO_LENGTH, text=text, label=label,
                      hint=hint)  # fmt: skip
    return owner, repo or None


def validate_tag(tag: str, *, text: str, label: str = "source", hint: str | None = None) -> None:
    """Check a release tag: semver alphabet and ``/`` between parts (as git refs), no
    ``..``, no part starting with ``.``, no leading ``-``; raise ``source_invalid``
    (``invalid {label} {text!r}: …; {hint}``)."""
    why = None
    if not tag:
        why = "the tag after '@' is empty"
    elif len(tag) > MAX_TAG_LENGTH:
        why = f"the tag is longer than {MAX_TAG_LENGTH} characters"
    elif not _TAG.fullmatch(tag):
        why = "the tag may only use letters, digits, '.', '_', '+' and '-', and '/' between them"
    elif ".." in tag:
        why = "the tag may not contain '..'"
    elif tag.startswith((".", "-")):
        why = f"the tag may not start with {tag[0]!r}"
    elif "/." in tag:
        why = "no part of the tag may start with '.'"
    if why is not None:
        raise _invalid(text, why, hint=hint, label=label)


def parse_source(text: str) -> Source:
    """Turn SOURCE into a :class:`GitHubSource` or :class:`LocalSource`.

    Raises :class:`NexoError` ``source_invalid`` for anything else: URLs, control characters,
    whitespace, percent-escapes, ``..``, too many or too few path parts, over-long names, or a
    local path that is not an existing file.
    """
    if any(ord(char) < 0x20 or ord(char) == 0x7F for char in text):
        raise _invalid(text, "it contains control characters")
    if not text.strip():
        # Path("") is the working directory: an empty SOURCE (an unset shell variable) is
        # said to be empty, not taken for a directory.
        raise _invalid(text, "it is empty")
    if "://" in text or text.startswith(("http:", "https:", "git@")):
        raise _invalid(text, "URLs are not accepted", hint=_url_hint(text))
    if _looks_local(text):
        try:
            path = Path(text).expanduser()
            is_file = path.is_file()
        except (RuntimeError, OSError) as error:
            # `~unknown-user/...` cannot be expanded; a name too long for the OS cannot exist.
            raise _invalid(text, f"cannot use this path ({error})") from error
        if not is_file:
            if path.is_dir():
                raise _invalid(
                    text,
                    "it is a directory",
                    hint="give the release .tar.gz inside it (`nexo plugin pack` writes "
                    "DIR/dist/ID-VERSION-TARGET.tar.gz)",
                )
            if path.exists():
                # A FIFO, a device or a socket: reading it could block or never end.
                raise _invalid(
                    text, "not a regular file", hint="give the path of a release .tar.gz file"
                )
            raise _invalid(
                text, "no such file", hint="give the path of an existing release .tar.gz"
            )
        if not path.name.endswith(LOCAL_SUFFIXES):
            raise _invalid(
                text,
                "a local file must be a release tarball",
                hint="give a .tar.gz made by `nexo plugin pack`",
            )
        return LocalSource(path.resolve())
    if any(char.isspace() for char in text):
        raise _invalid(text, "it contains whitespace")
    if "%" in text:
        raise _invalid(text, "percent-escapes are not accepted")
    name_part, at, tag = text.partition("@")
    parts = name_part.split("/")
    if len(parts) != 2:
        raise _invalid(text, "it must have exactly one '/' between owner and repo")
    owner, repo = parts
    validate_name(owner, what="owner", max_length=MAX_OWNER_LENGTH, text=text)
    validate_name(repo, what="repo", max_length=MAX_REPO_LENGTH, text=text)
    if at:
        validate_tag(tag, text=text)
    return GitHubSource(owner, repo, tag if at else None)


_TIMESTAMP = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-]\d{2}:\d{2})")


def timestamp_or_none(value: object) -> str | None:
    """``value`` when it is an RFC 3339 timestamp (``2026-11-23T10:00:00Z``), else ``None``:
    a publication time a release or registry gives goes into receipts only in that shape."""
    if isinstance(value, str) and _TIMESTAMP.fullmatch(value):
        return value
    return None
