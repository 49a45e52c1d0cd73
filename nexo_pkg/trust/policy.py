"""The ``trusted_keys.toml`` trust policy: parsing, validation with positions, and lint.

The policy file says which signers are trusted for which GitHub owners and how strictly
signatures are enforced (SPEC §6). Parsing is done with :mod:`tomllib`; a small line scanner
recovers where each key sits so that every problem points at ``path:line:column``. One
validator serves :func:`parse_policy` (a :class:`TrustPolicy`, or ``policy_invalid``, exit 2)
and :func:`lint_policy_source` (every finding as an ``NXT…`` lint diagnostic).
"""

from __future__ import annotations

import contextlib
import functools
import re
import stat
import tomllib
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from nexo_pkg.core.errors import ConfigError, exception_line
from nexo_pkg.core.files import read_capped_bytes, read_config_file
from nexo_pkg.core.terminal import toml_string
from nexo_pkg.trust.identity_pattern import (
    compile_identity_pattern,
    full_match,
    rust_regex_problem,
)

if TYPE_CHECKING:
    from nexo_pkg.core.diagnostics import Diagnostic, FileResult, Rule, Span
    from nexo_pkg.core.toml_spans import SpanMap

    POLICY_RULES: dict[str, Rule]

Mode = Literal["ignore", "warn", "require"]
MODES: tuple[Mode, ...] = ("ignore", "warn", "require")

GITHUB_ACTIONS_ISSUER = "https://token.actions.githubusercontent.com"
SUPPORTED_SCHEMA_VERSIONS = ("1.0",)
POLICY_FILE_NAME = "trusted_keys.toml"

# GitHub's character set for owner and repository names (SPEC §5, `source_invalid`).
_GITHUB_NAME = re.compile(r"^[A-Za-z0-9._-]+$")


def _is_github_name(name: str) -> bool:
    """An owner or repository name as SPEC §5 takes it: GitHub's characters, no ``..``, not
    ``.`` (the rules of an install source's owner and repo)."""
    return _GITHUB_NAME.fullmatch(name) is not None and ".." not in name and name != "."


_TOP_LEVEL_KEYS = ("schema_version", "default", "cosign_binary", "trusted_root", "authors")
_AUTHOR_KEYS = (
    "owner",
    "identity_regexp",
    "identity",
    "oidc_issuer",
    "repos",
    "mode",
    "signer_workflow",
    "predicate_type",
    "source_ref",
    "allow_republish",
)

# The predicate type `actions/attest-build-provenance` writes, accepted unless an author says
# otherwise.
SLSA_PROVENANCE_V1 = "https://slsa.dev/provenance/v1"

# A policy file larger than this is refused before parsing (a policy is a few kilobytes).
MAX_POLICY_BYTES = 1024 * 1024


def _is_escaped(pattern: str, index: int) -> bool:
    backslashes = 0
    while index - 1 - backslashes >= 0 and pattern[index - 1 - backslashes] == "\\":
        backslashes += 1
    return backslashes % 2 == 1


def _class_end(pattern: str, index: int) -> int:
    """Where the character class opening at ``pattern[index]`` (``[``) ends (just past its
    ``]``), as RE2 reads it: a ``]`` first (after ``^``) is a member, ``[:alpha:]`` nests."""
    i = index + 1
    if pattern.startswith("^", i):
        i += 1
    if pattern.startswith("]", i):
        i += 1
    while i < len(pattern):
        if pattern[i] == "\\":
            i += 2
        elif pattern.startswith("[:", i) and (close := pattern.find(":]", i + 2)) >= 0:
            i = close + 2
        elif pattern[i] == "]":
            return i + 1
        else:
            i += 1
    return len(pattern)


def _alternatives(pattern: str) -> tuple[list[str], bool]:
    """The top-level alternatives of ``pattern`` (split at each ``|`` outside groups,
    classes, escapes and ``\\Q…\\E``), and whether it ends inside an unclosed ``\\Q``."""
    parts: list[str] = []
    depth = start = i = 0
    while i < len(pattern):
        char = pattern[i]
        if pattern.startswith("\\Q", i):
            close = pattern.find("\\E", i + 2)
            if close < 0:
                parts.append(pattern[start:])
                return parts, True
            i = close + 2
            continue
        if char == "\\":
            i += 2
            continue
        if char == "[":
            i = _class_end(pattern, i)
            continue
        if char == "(":
            depth += 1
        elif char == ")":
            depth = max(depth - 1, 0)
        elif char == "|" and depth == 0:
            parts.append(pattern[start:i])
            start = i + 1
        i += 1
    parts.append(pattern[start:])
    return parts, False


_FLAG_GROUP = re.compile(r"\(\?([imsU]*)(?:-[imsU]*)?[:)]")
_WIDENING_FLAGS = {
    # Matched whole, `(?m)^a$` still refuses `a\nb`; searched, as cosign and the reference
    # installer run a pattern, it accepts it; and a mid-pattern `(?m)$` or `^` widens both.
    "m": "`^` and `$` also match at a line break, so the pattern can accept {what} "
    "holding one (cosign and the reference installer, which search, accept `x\\nevil` "
    "for `(?m)^x$`)",
    "s": "`.` also matches a line break, so the pattern can accept {what} holding one",
}


def widening_flag(pattern: str, what: str = "an identity") -> str | None:
    """Why ``pattern`` is refused as an identity pattern (``None`` when it is not): it turns on
    an inline flag, ``(?m)`` or ``(?s)`` (``(?ms:…)`` too), under which it can match
    ``what`` (an identity, a ref) with a line break in it. ``(?i)``, ``(?U)`` and flags
    turned off change no such thing; ``(?x)`` does not compile in RE2. Flags inside a class,
    an escape or ``\\Q…\\E`` are text."""
    i = 0
    while i < len(pattern):
        if pattern.startswith("\\Q", i):
            close = pattern.find("\\E", i + 2)
            if close < 0:
                return None
            i = close + 2
        elif pattern[i] == "\\":
            i += 2
        elif pattern[i] == "[":
            i = _class_end(pattern, i)
        else:
            group = _FLAG_GROUP.match(pattern, i)
            for flag, effect in _WIDENING_FLAGS.items():
                if group is not None and flag in group.group(1):
                    return (
                        f"{_quoted(pattern)} turns on the inline flag `{flag}` "
                        f"(`{group.group(0)}`), under which {effect.format(what=what)}; "
                        "remove the flag"
                    )
            i += 1
    return None


# Inline flags that leave ``^`` a start-of-text anchor (``m`` would make it a line start).
_LEADING_FLAGS = re.compile(r"(?:\(\?[isU]*(?:-[imsU]*)?\))*")


def _anchored_at(alternative: str) -> tuple[bool, bool]:
    """Whether ``alternative`` starts with ``^``/``\\A`` (after inline flags such as ``(?i)``)
    and ends with ``$``/``\\z``."""
    flags = _LEADING_FLAGS.match(alternative)
    starts = alternative.startswith(("^", "\\A"), flags.end() if flags else 0)
    ends = (alternative.endswith("$") and not _is_escaped(alternative, len(alternative) - 1)) or (
        alternative.endswith("\\z") and not _is_escaped(alternative, len(alternative) - 2)
    )
    return starts, ends


def anchored_form(pattern: str) -> str | None:
    """The pattern cosign would read as we do, or ``None`` when it is anchored already:
    cosign and the reference installer search (``^`` and ``$`` only when written) where we
    match the whole identity, so an unanchored pattern trusts more identities there. Every
    top-level alternative must be anchored: ``^a|b$`` is ``(?:^a)|(?:b$)``, which a search
    reads as "starts with a, or ends with b"."""
    alternatives, quoted = _alternatives(pattern)
    if quoted:
        # A `$` in an unclosed `\Q` is a dollar sign: close the quote, then anchor.
        pattern += "\\E"
        alternatives[-1] += "\\E"
    anchors = [_anchored_at(alternative) for alternative in alternatives]
    if all(starts and ends for starts, ends in anchors):
        return None
    if len(alternatives) > 1:
        return f"^(?:{pattern})$"
    starts, ends = anchors[0]
    return ("" if starts else "^") + pattern + ("" if ends else "$")


@dataclass(frozen=True)
class AuthorPolicy:
    """One ``[[authors]]`` entry: which signer is trusted for the GitHub ``owner``.

    Exactly one of ``identity_regexp`` (RE2, full match of the certificate SAN or starting
    workflow) and ``identity`` (equality) is set. ``repos`` (when not ``None``) limits the
    entry to those repositories of the owner. ``signer_workflow``
    (``owner/repo/.github/workflows/x.yml``) names the workflow that must have signed,
    ``source_ref`` (RE2, full match) the ref it must have run for, ``predicate_type`` the
    attestation predicate accepted (SLSA provenance v1 by default). ``allow_republish`` lets a
    signature made in one repository vouch for a copy published by another repository of the
    owner; without it the signing repository must be the one installed from.
    ``line`` is where the entry starts in the policy file (0 when built in code).
    """

    owner: str
    identity_regexp: str | None = None
    identity: str | None = None
    oidc_issuer: str = GITHUB_ACTIONS_ISSUER
    repos: tuple[str, ...] | None = None
    mode: Mode | None = None
    line: int = 0
    signer_workflow: str | None = None
    predicate_type: str | None = None
    source_ref: str | None = None
    allow_republish: bool = False

    def __post_init__(self) -> None:
        if (self.identity is None) == (self.identity_regexp is None):
            raise ValueError("exactly one of identity and identity_regexp must be set")

    def covers(self, other: AuthorPolicy) -> bool:
        """Whether this entry, written earlier, makes ``other`` one the reference never reads
        (it takes the first entry whose owner matches); entries limited by ``repos`` (which
        only nexo-pkg reads) coexist when this one does not cover all of ``other``'s."""
        if self.owner.casefold() != other.owner.casefold():
            return False
        if self.repos is None:
            return True
        return other.repos is not None and {name.casefold() for name in other.repos} <= {
            name.casefold() for name in self.repos
        }

    def identity_matches(self, san: str) -> bool:
        """True when ``san`` (a SAN or the starting workflow: one of the signer's identity
        candidates) is this author's identity: equal to ``identity``, or matched whole by the
        regex."""
        if self.identity is not None:
            return san == self.identity
        # fullmatch, whatever anchors the author wrote: `^…` alone must not accept a suffix.
        return full_match(self.identity_regexp or "", san)

    def source_ref_matches(self, ref: str) -> bool:
        """True when ``source_ref`` is unset or matches the whole ``ref``."""
        return self.source_ref is None or full_match(self.source_ref, ref)

    @property
    def attestation_predicate_type(self) -> str:
        """The in-toto predicate type this entry accepts in an attestation."""
        return self.predicate_type or SLSA_PROVENANCE_V1

    def describe_identity(self) -> str:
        """The expected identity as a user would read it in an error message."""
        # As a TOML literal string shows it (what the policy file holds), not as Python's
        # repr would: `\.` in a pattern stays `\.`, never `\\.`.
        if self.identity is not None:
            return f"identity {_quoted(self.identity)}"
        return f"identity_regexp {_quoted(str(self.identity_regexp))}"

    def entry_items(self) -> list[tuple[str, Any]]:
        """The keys its ``[[authors]]`` table sets, in the order they are written; a key at
        its default (no ``repos``, no ``allow_republish``) is left out."""
        values: dict[str, Any] = {
            "owner": self.owner,
            "identity_regexp": self.identity_regexp,
            "identity": self.identity,
            "oidc_issuer": self.oidc_issuer,
            "repos": self.repos or None,
            "signer_workflow": self.signer_workflow,
            "source_ref": self.source_ref,
            "predicate_type": self.predicate_type,
            "allow_republish": self.allow_republish or None,
            "mode": self.mode,
        }
        return [(key, value) for key, value in values.items() if value is not None]


@dataclass(frozen=True)
class TrustPolicy:
    """A parsed ``trusted_keys.toml`` (or the built-in default when the file is missing);
    ``trusted_root`` is a private Sigstore instance's (``None``: the public-good instance)."""

    default: Mode = "warn"
    authors: tuple[AuthorPolicy, ...] = ()
    source: Path | None = None
    schema_version: str = "1.0"
    trusted_root: Path | None = None
    cosign_binary: str | None = None
    warnings: tuple[str, ...] = ()
    #: Where the policy file is read from, or would be written (``source`` is ``None`` when
    #: it does not exist yet).
    location: Path | None = None
    #: Registry repositories bound to a GitHub owner (``registry_owners.toml`` beside the
    #: policy file, which only nexo-pkg reads).
    registry_bindings: tuple[RegistryBinding, ...] = ()

    def registry_owner(self, repository: str) -> str | None:
        """The GitHub owner whose entries judge copies in registry ``repository``
        (``host/path``), as bound in ``registry_owners.toml``; ``None`` when unbound."""
        wanted = repository_key(repository)
        return next(
            (b.owner for b in self.registry_bindings if repository_key(b.repository) == wanted),
            None,
        )

    def authors_for(self, owner: str | None) -> tuple[AuthorPolicy, ...]:
        """The entries that decide for GitHub ``owner`` (case-insensitive, as GitHub names are):
        as in the reference installer, the first entry for the owner decides and later ones
        it covers are ignored (:meth:`AuthorPolicy.covers`; lint warns, NXT012)."""
        if owner is None:
            return ()
        wanted = owner.casefold()
        return tuple(a for a in self.deciding_authors() if a.owner.casefold() == wanted)

    def deciding_authors(self) -> tuple[AuthorPolicy, ...]:
        """Every entry that decides for its owner: the entries an earlier one for the same
        owner covers are left out (:meth:`authors_for`), whatever artifact is judged — a
        local tarball's signer is trusted by the entries that would trust its release."""
        found: list[AuthorPolicy] = []
        for author in self.authors:
            if not any(earlier.covers(author) for earlier in found):
                found.append(author)
        return tuple(found)


def default_policy_path(nexo_home: Path) -> Path:
    """``$NEXO_HOME/config/extensions/trusted_keys.toml``."""
    return nexo_home / "config" / "extensions" / "trusted_keys.toml"


def resolve_mode(
    policy: TrustPolicy,
    owner: str | None,
    *,
    require_signature: bool,
    skip_verify: bool,
    repo: str | None = None,
) -> Mode:
    """Flags win, then the ``mode`` of the first entry deciding for the owner that sets one
    (:meth:`TrustPolicy.authors_for`) and applies to ``repo`` (an entry limited by ``repos``
    to other repositories of the owner sets theirs, not this one's), then the policy
    ``default``."""
    if skip_verify:
        return "ignore"
    if require_signature:
        return "require"
    for author in policy.authors_for(owner):
        elsewhere = (
            repo is not None
            and author.repos is not None
            and repo.casefold() not in {name.casefold() for name in author.repos}
        )
        if author.mode is not None and not elsewhere:
            return author.mode
    return policy.default


# --- rules -------------------------------------------------------------------------------------

_POLICY_DOCS_URL = "https://github.com/nexo-pkg/nexo-pkg/blob/main/docs/trust.md"

# The rules, the findings' spans and the diagnostics they become are built when a policy file
# is read or linted, and load the diagnostic model with them: a run that finds no policy file
# (most syncs) goes on to its first request without it.


def __getattr__(name: str) -> Any:
    # POLICY_RULES: the policy's lint rules by code, built when first asked for.
    if name == "POLICY_RULES":
        return _policy_rules()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@functools.cache
def _policy_rules() -> dict[str, Rule]:
    from nexo_pkg.core.diagnostics import Rule  # noqa: PLC0415

    rules = (
        Rule(
            "NXT001",
            "policy-toml-syntax",
            "error",
            "the trust policy is not valid TOML",
            "Parses the file as TOML 1.0.",
            "Nothing else can be checked, and installs refuse to run with a broken policy.",
            'default = "warn',
            "Fix the syntax at the reported position.",
        ),
        Rule(
            "NXT002",
            "policy-unknown-key",
            "error",
            "a key the trust policy does not define",
            "Every key must be one of the documented ones.",
            "A misspelt key (`identity_regex`, `repo`) would otherwise be ignored silently and "
            "trust more than intended.",
            '[[authors]]\nowner = "acme"\nidentity_regex = "…"',
            "Correct the spelling or remove the key.",
        ),
        Rule(
            "NXT003",
            "policy-wrong-type",
            "error",
            "a value of the wrong type",
            "Checks each value's TOML type (string, array of strings, array of tables).",
            "A value of another type cannot mean what was intended.",
            "repos = \"one\"  # must be an array: ['one']",
            "Use the documented type.",
        ),
        Rule(
            "NXT004",
            "policy-invalid-value",
            "error",
            "a value outside what the key accepts",
            "Checks modes (`ignore`, `warn`, `require`), the schema version, owner and "
            "repository names (GitHub's character set) and that strings are not empty.",
            "An unknown mode or name can never match and hides a mistake.",
            'default = "strict"',
            "Use one of the accepted values.",
        ),
        Rule(
            "NXT005",
            "policy-missing-key",
            "error",
            "an author entry lacks `owner` or an identity",
            "Each `[[authors]]` entry needs `owner` and one of `identity_regexp`/`identity`.",
            "Without an identity the entry cannot say whom it trusts.",
            '[[authors]]\nowner = "acme"',
            "Add the missing key.",
        ),
        Rule(
            "NXT006",
            "policy-conflicting-identity",
            "error",
            "both `identity` and `identity_regexp` are set",
            "An author entry uses exactly one identity form.",
            "With both, it is unclear which one must match.",
            '[[authors]]\nowner = "acme"\nidentity = "…"\nidentity_regexp = "…"',
            "Keep one of them.",
        ),
        Rule(
            "NXT007",
            "policy-invalid-regexp",
            "error",
            "`identity_regexp` does not compile",
            "Compiles `identity_regexp` and `source_ref` in RE2's dialect, that of cosign and "
            "of the reference installer: `\\p{L}` and `[[:alnum:]]` work, look-arounds and "
            "back-references do not. `identity_regexp` must also compile in the reference "
            "installer's Rust `regex`, which refuses a few patterns RE2 takes: `\\Q…\\E`, "
            "`\\C`, octal escapes, and a `{` that starts no counted repetition (write `\\{`).",
            "A pattern that does not compile can never match a signer, and one that only "
            "Python's `re` (or only RE2) accepts makes the reference installer refuse the "
            "whole policy file.",
            'identity_regexp = "^https://github.com/acme/[^/+/"',
            "Fix the pattern; remember it must match the whole certificate identity.",
        ),
        Rule(
            "NXT008",
            "policy-trusted-root-missing",
            "error",
            "`trusted_root` names no readable Sigstore trusted root",
            "Resolves `trusted_root` relative to the policy file, checks the file exists, is a "
            "regular file that can be read, and holds a JSON object with the fields every "
            "Sigstore trusted root has (`mediaType`, `tlogs`, `ctlogs`, "
            "`certificateAuthorities`). Signatures are still checked against it in full by "
            "sigstore-python when a bundle is verified.",
            "Without the trusted root no signature of the private instance can verify.",
            'trusted_root = "missing.json"',
            "Point `trusted_root` at the instance's `trusted_root.json`.",
        ),
        Rule(
            "NXT009",
            "policy-unused-cosign-binary",
            "warning",
            "`cosign_binary` is accepted but unused",
            "Notes that `cosign_binary` has no effect.",
            "Verification is native; no cosign binary is ever run.",
            'cosign_binary = "/usr/local/bin/cosign"',
            "Remove the key.",
        ),
        Rule(
            "NXT010",
            "policy-unanchored-regexp",
            "warning",
            "`identity_regexp` lacks `^` or `$`",
            "Looks for an identity pattern that is not anchored at both ends, in each "
            "top-level alternative (`^a|b$` is `^a` or `b$`).",
            "nexo-pkg always matches the whole identity, but cosign and the reference "
            "installer search for the pattern anywhere in it: unanchored, the same policy "
            "trusts more signers there (`github.com/acme/` also matches "
            "`https://github.com/evil/x?github.com/acme/`).",
            'identity_regexp = "https://github.com/acme/.*"',
            "Write the anchored form shown in the message.",
        ),
        Rule(
            "NXT011",
            "policy-unknown-schema-version",
            "warning",
            "`schema_version` is not a version nexo-pkg knows",
            'Compares `schema_version` with the versions nexo-pkg knows (`"1.0"`).',
            "The reference installer reads any string there without comparing it, so the "
            "policy still applies; a value other than 1.0 is probably a typo or meant for a "
            "newer tool.",
            'schema_version = "2.0"',
            'Write `schema_version = "1.0"`, or remove the key.',
        ),
        Rule(
            "NXT012",
            "policy-duplicate-author",
            "warning",
            "an `[[authors]]` entry that an earlier entry for the same owner hides",
            "Reports an entry for an owner that an earlier entry already covers (the same owner "
            "with no `repos`, or `repos` including all of this entry's).",
            "The reference installer takes the first entry whose owner matches and ignores the "
            "rest, and nexo-pkg does the same: the later entry's identity and mode never apply.",
            '[[authors]]\nowner = "acme"\nidentity_regexp = "^a$"\n\n'
            '[[authors]]\nowner = "acme"\nidentity_regexp = "^b$"',
            "Merge the entries into the first one (one `identity_regexp` can list alternatives "
            "with `|`), or delete the later one.",
        ),
        Rule(
            "NXT013",
            "policy-email-identity",
            "warning",
            "an `identity` that is an e-mail address, which can never be trusted",
            "Looks for an `[[authors]]` entry whose `identity` is an e-mail address (keyless "
            "signing with a personal account).",
            "An entry vouches only for artifacts built in its owner's repositories: the "
            "certificate's source repository must belong to `owner`. A certificate issued to "
            "an e-mail address names no source repository, so nothing binds it to the owner "
            "and the entry trusts no signature at all.",
            '[[authors]]\nowner = "acme"\nidentity = "release@acme.example"\n'
            'oidc_issuer = "https://accounts.google.com"',
            "Sign releases in the owner's GitHub Actions and trust that workflow: "
            "`identity_regexp` for its identity (`nexo plugin trust add OWNER/REPO` reads it "
            "from the newest signed release), with the default `oidc_issuer`.",
        ),
        Rule(
            "NXT014",
            "policy-pattern-line-break",
            "warning",
            "an `identity_regexp` or `source_ref` that turns on the inline flag `(?m)` or `(?s)`",
            "Looks for an inline flag group that turns on `m` or `s` (`(?m)`, `(?s)`, "
            "`(?ms:…)`) outside classes and escapes. `(?i)`, `(?U)` and flags turned off are "
            "not reported.",
            "Under `(?s)` a `.` also matches a line break, and under `(?m)` `^` and `$` match "
            "at one: the pattern then accepts a value holding a line break (cosign and the "
            "reference installer, which search rather than match whole, accept `x\\nevil` for "
            "`(?m)^x$`). Certificates name URIs, which hold no line break, so the pattern "
            "still works as written; `nexo plugin trust add` refuses to write one.",
            '[[authors]]\nowner = "acme"\nidentity_regexp = "(?s)^https://github.com/acme/.*$"',
            "Remove the flag.",
        ),
    )
    # The policy's rules are documented with the trust policy, not with the manifest rules.
    return {rule.code: replace(rule, docs=_POLICY_DOCS_URL) for rule in rules}


def _is_file(path: Path) -> bool:
    """``Path.is_file`` that answers ``False`` for names the OS rejects (too long, ...)."""
    try:
        return path.is_file()
    except OSError:
        return False


def _exists(path: Path) -> bool:
    """Whether anything (a directory, a FIFO, a device) is at ``path``."""
    try:
        return path.exists()
    except OSError:
        return False


MAX_TRUSTED_ROOT_BYTES = 8 * 1024 * 1024
"""The most bytes a ``trusted_root`` file may hold."""

_ROOT_FIELDS = (
    ("mediaType", "media_type"),
    ("tlogs", "tlogs"),
    ("ctlogs", "ctlogs"),
    ("certificateAuthorities", "certificate_authorities"),
)
"""The fields sigstore-python's trusted-root model requires, in both JSON spellings."""


def _trusted_root_problem(path: Path) -> str | None:
    """Why the regular file ``path`` is no Sigstore trusted root (``None``: it may be one).
    Only what sigstore-python's models would refuse in any case: unreadable, not JSON, not an
    object, a required field missing or of the wrong type. No Sigstore code is loaded here;
    the full check is sigstore-python's when a bundle is verified."""
    import json  # noqa: PLC0415

    try:
        document = json.loads(read_capped_bytes(path, MAX_TRUSTED_ROOT_BYTES))
    except (OSError, ValueError, RecursionError) as exc:
        return f"is not a usable Sigstore trusted root ({path}): {exception_line(exc)}"
    if not isinstance(document, dict):
        return f"is not a usable Sigstore trusted root ({path}): not a JSON object"
    problems = []
    for camel, snake in _ROOT_FIELDS:
        value = document.get(camel, document.get(snake))
        wanted, what = (str, "a string") if camel == "mediaType" else (list, "an array")
        if value is None:
            problems.append(f"`{camel}` is missing")
        elif not isinstance(value, wanted):
            problems.append(f"`{camel}` is not {what}")
    if problems:
        return f"is not a usable Sigstore trusted root ({path}): {'; '.join(problems)}"
    return None


# --- validation --------------------------------------------------------------------------------


@functools.cache
def _start() -> Span:
    """Where a finding without a key of its own points: the file's first character."""
    from nexo_pkg.core.diagnostics import Position, Span  # noqa: PLC0415

    return Span(Position(1, 1), Position(1, 2))


@dataclass(frozen=True)
class _Finding:
    code: str
    message: str
    key_path: str
    span: Span


class _Validator:
    """Walks the parsed document once, collecting findings and the policy it describes."""

    def __init__(self, data: dict[str, Any], spans: SpanMap, base_dir: Path | None) -> None:
        self.data = data
        self.spans = spans
        self.base_dir = base_dir
        self.findings: list[_Finding] = []

    def add(self, code: str, message: str, key_path: str, span: Span | None) -> None:
        self.findings.append(_Finding(code, message, key_path, span or _start()))

    def top_span(self, key: str) -> Span | None:
        return self._key_span((key,))

    def author_span(self, index: int, key: str | None) -> Span | None:
        if key is not None and (found := self._key_span(("authors", index, key))) is not None:
            return found
        return self._key_span(("authors", index)) or self.top_span("authors")

    def _key_span(self, path: tuple[str | int, ...]) -> Span | None:
        return self.spans.key_span(path) if self.spans.has(path) else None

    def string(self, value: Any, key_path: str, span: Span | None) -> str | None:
        if not isinstance(value, str):
            self.add("NXT003", f"`{key_path}` must be a string", key_path, span)
            return None
        if not value.strip():
            self.add("NXT004", f"`{key_path}` must not be empty", key_path, span)
            return None
        return value

    def mode(self, value: Any, key_path: str, span: Span | None) -> Mode | None:
        text = self.string(value, key_path, span)
        if text is not None and text not in MODES:
            self.add(
                "NXT004",
                f"`{key_path}` must be one of ignore, warn, require (got {text!r})",
                key_path,
                span,
            )
            return None
        return text

    def unknown_keys(
        self, table: dict[str, Any], known: tuple[str, ...], index: int | None = None
    ) -> None:
        """``NXT002`` for each key of ``table`` (the root, or ``authors[index]``) not in
        ``known``."""
        within = "" if index is None else f" in authors[{index}]"
        for key in table:
            if key not in known:
                self.add(
                    "NXT002",
                    f"unknown key `{key}`{within} (expected one of {', '.join(known)})",
                    key if index is None else f"authors[{index}].{key}",
                    self.top_span(key) if index is None else self.author_span(index, key),
                )

    def run(self) -> TrustPolicy | None:
        data = self.data
        self.unknown_keys(data, _TOP_LEVEL_KEYS)

        def text(key: str) -> str | None:
            return self.string(data[key], key, self.top_span(key)) if key in data else None

        schema_version = "1.0"
        if "schema_version" in data:
            span = self.top_span("schema_version")
            value = data["schema_version"]
            if not isinstance(value, str):
                self.add("NXT003", "`schema_version` must be a string", "schema_version", span)
            else:
                schema_version = value
                if value not in SUPPORTED_SCHEMA_VERSIONS:
                    self.add(
                        "NXT011",
                        f"schema_version {value!r} is not one nexo-pkg knows (known: "
                        f"{', '.join(SUPPORTED_SCHEMA_VERSIONS)}); the policy is read as "
                        f"{SUPPORTED_SCHEMA_VERSIONS[-1]}, as the reference installer reads it",
                        "schema_version",
                        span,
                    )

        default: Mode | None = "warn"
        if "default" in data:
            default = self.mode(data["default"], "default", self.top_span("default"))

        cosign_binary = text("cosign_binary")
        if cosign_binary is not None:
            self.add(
                "NXT009",
                "`cosign_binary` is ignored: signatures are verified natively",
                "cosign_binary",
                self.top_span("cosign_binary"),
            )

        trusted_root: Path | None = None
        root_text = text("trusted_root")
        if root_text is not None:
            trusted_root = Path(root_text)
            # `~user` naming no known user stays as written, and is then not found.
            with contextlib.suppress(RuntimeError):
                trusted_root = trusted_root.expanduser()
            if self.base_dir is not None:
                trusted_root = self.base_dir / trusted_root
                if not _is_file(trusted_root):
                    problem: str | None = (
                        f"is not a regular file ({trusted_root})"
                        if _exists(trusted_root)
                        else f"does not exist (looked for {trusted_root})"
                    )
                else:
                    problem = _trusted_root_problem(trusted_root)
                if problem is not None:
                    self.add(
                        "NXT008",
                        f"trusted_root {root_text!r} {problem}",
                        "trusted_root",
                        self.top_span("trusted_root"),
                    )

        authors: list[AuthorPolicy] = []
        raw_authors = data.get("authors", [])
        if not isinstance(raw_authors, list) or not all(
            isinstance(entry, dict) for entry in raw_authors
        ):
            self.add(
                "NXT003",
                "`authors` must be an array of tables ([[authors]])",
                "authors",
                self.top_span("authors"),
            )
        else:
            for index, entry in enumerate(raw_authors):
                author = self.author(index, entry)
                if author is not None:
                    self.shadowed(index, author, authors)
                    authors.append(author)

        if default is None or self.error_count():
            return None
        return TrustPolicy(
            default=default,
            authors=tuple(authors),
            schema_version=schema_version,
            trusted_root=trusted_root,
            cosign_binary=cosign_binary,
        )

    def author(self, index: int, entry: dict[str, Any]) -> AuthorPolicy | None:
        prefix = f"authors[{index}]"
        errors_before = self.error_count()
        self.unknown_keys(entry, _AUTHOR_KEYS, index)

        def where(key: str) -> tuple[str, Span | None]:
            return f"{prefix}.{key}", self.author_span(index, key)

        def text(key: str) -> str | None:
            return self.string(entry[key], *where(key)) if key in entry else None

        owner = text("owner")
        if "owner" not in entry:
            self.add("NXT005", f"{prefix} has no `owner`", prefix, self.author_span(index, None))
        elif owner is not None and not _is_github_name(owner):
            self.add(
                "NXT004",
                f"{prefix}.owner {owner!r} is not a GitHub owner name ([A-Za-z0-9._-])",
                *where("owner"),
            )

        identity: str | None = None
        identity_regexp: str | None = None
        if "identity" in entry and "identity_regexp" in entry:
            self.add(
                "NXT006",
                f"{prefix} sets both `identity` and `identity_regexp`; keep exactly one",
                *where("identity"),
            )
        elif "identity" not in entry and "identity_regexp" not in entry:
            self.add(
                "NXT005",
                f"{prefix} has no identity: set `identity_regexp` or `identity`",
                prefix,
                self.author_span(index, None),
            )
        else:
            identity = text("identity")
            if identity is not None and is_email_identity(identity):
                self.add(
                    "NXT013",
                    f"{prefix}.identity {identity!r} is an e-mail address: its certificates "
                    "name no source repository, so nothing binds them to the entry's owner "
                    "and this entry trusts no signature; trust the "
                    "owner's release workflow instead (identity_regexp, as `nexo plugin trust "
                    "add OWNER/REPO` writes it)",
                    *where("identity"),
                )
            identity_regexp = text("identity_regexp")
            if identity_regexp is not None and self.pattern(
                identity_regexp, *where("identity_regexp")
            ):
                anchored = anchored_form(identity_regexp)
                if anchored is not None:
                    self.add(
                        "NXT010",
                        f"{prefix}.identity_regexp is not anchored: cosign and the reference "
                        "installer would accept any identity containing a match; write "
                        f"identity_regexp = {toml_string(anchored)}",
                        *where("identity_regexp"),
                    )

        oidc_issuer = text("oidc_issuer") or GITHUB_ACTIONS_ISSUER
        repos: tuple[str, ...] | None = None
        if "repos" in entry:
            raw_repos = entry["repos"]
            if not isinstance(raw_repos, list) or not all(isinstance(r, str) for r in raw_repos):
                self.add("NXT003", f"{prefix}.repos must be an array of strings", *where("repos"))
            elif not raw_repos:
                self.add(
                    "NXT004",
                    f"{prefix}.repos is empty and would trust no repository; "
                    "omit it to trust every repository of the owner",
                    *where("repos"),
                )
            elif bad := [n for n in raw_repos if not _is_github_name(n)]:
                self.add(
                    "NXT004",
                    f"{prefix}.repos has names that are not GitHub repository names: "
                    f"{', '.join(repr(name) for name in bad)} (use the bare name, no owner)",
                    *where("repos"),
                )
            else:
                repos = tuple(raw_repos)

        mode = self.mode(entry["mode"], *where("mode")) if "mode" in entry else None

        signer_workflow = text("signer_workflow")
        if signer_workflow is not None and not _WORKFLOW_PATH.fullmatch(signer_workflow):
            self.add(
                "NXT004",
                f"{prefix}.signer_workflow {signer_workflow!r} is not "
                "OWNER/REPO/.github/workflows/FILE.yml",
                *where("signer_workflow"),
            )
            signer_workflow = None

        predicate_type = text("predicate_type")
        source_ref = text("source_ref")
        if source_ref is not None and not self.pattern(source_ref, *where("source_ref")):
            source_ref = None

        allow_republish = entry.get("allow_republish", False)
        if not isinstance(allow_republish, bool):
            self.add(
                "NXT003",
                f"{prefix}.allow_republish must be true or false",
                *where("allow_republish"),
            )

        if self.error_count() > errors_before or owner is None:
            return None
        header = self._key_span(("authors", index))
        return AuthorPolicy(
            owner=owner,
            identity_regexp=identity_regexp,
            identity=identity,
            oidc_issuer=oidc_issuer,
            repos=repos,
            mode=mode,
            line=header.start.line if header else 0,
            signer_workflow=signer_workflow,
            predicate_type=predicate_type,
            source_ref=source_ref,
            allow_republish=allow_republish,
        )

    def shadowed(self, index: int, author: AuthorPolicy, earlier: list[AuthorPolicy]) -> None:
        """Warn (NXT012) when an earlier entry covers ``author``: that entry never applies."""
        for first in earlier:
            if first.covers(author):
                self.add(
                    "NXT012",
                    f"authors[{index}] for owner {author.owner!r} is ignored: the entry at "
                    f"line {first.line} comes first for that owner and decides, as in the "
                    "reference installer",
                    f"authors[{index}]",
                    self.author_span(index, None),
                )
                return

    def pattern(self, pattern: str, key_path: str, span: Span | None) -> bool:
        """Compile ``pattern`` in RE2's dialect; add ``NXT007`` and return False if it fails.
        A pattern that turns on an inline flag that lets a line break in
        (:func:`widening_flag`) gets the warning ``NXT014``."""
        try:
            compile_identity_pattern(pattern)
        except ValueError as exc:
            self.add("NXT007", f"{key_path} does not compile (RE2 syntax): {exc}", key_path, span)
            return False
        # The reference reads `identity_regexp` only (`source_ref` is nexo-pkg's own).
        refused = None if key_path.endswith("source_ref") else rust_regex_problem(pattern)
        if refused is not None:
            self.add("NXT007", f"{key_path} does not compile: {refused}", key_path, span)
            return False
        what = "a ref" if key_path.endswith("source_ref") else "an identity"
        widening = widening_flag(pattern, what)
        if widening is not None:
            # The reference installer reads the pattern as written: a warning, not a refusal.
            self.add("NXT014", f"{key_path} {widening}", key_path, span)
        return True

    def error_count(self) -> int:
        return sum(1 for f in self.findings if _policy_rules()[f.code].severity == "error")


_WORKFLOW_PATH = re.compile(r"^[A-Za-z0-9._-]+/[A-Za-z0-9._-]+/\.github/workflows/[^/@]+$")


# A local part as written bare, or quoted (RFC 5321: then it may hold spaces, `@`, `:` and `/`).
_EMAIL = re.compile(r'^(?:[^@\s/:"]+|"(?:[^"\\]|\\.)+")@[^@\s/:]+$')


def is_email_identity(identity: str) -> bool:
    """Whether ``identity`` is an e-mail address (a personal account's keyless signature),
    not a workflow or other URI: such certificates name no source repository, so no
    ``[[authors]]`` entry can ever trust them (the owner is always bound)."""
    return _EMAIL.fullmatch(identity.strip()) is not None


def is_workflow_path(text: str) -> bool:
    """Whether ``text`` is ``OWNER/REPO/.github/workflows/FILE``, as ``signer_workflow`` says."""
    return _WORKFLOW_PATH.fullmatch(text) is not None


def _syntax_finding(text: str, exc: ValueError) -> _Finding:
    from nexo_pkg.core.toml_spans import syntax_error  # noqa: PLC0415 - see _validate

    syntax = syntax_error(text, exc, tomllib.loads)
    return _Finding("NXT001", f"invalid TOML: {syntax.message}", "", syntax.span)


def _validate(text: str, base_dir: Path | None) -> tuple[TrustPolicy | None, list[_Finding]]:
    # The span scanner is loaded with a file to read: a command that finds no policy (the
    # default applies) never loads it.
    from nexo_pkg.core.toml_spans import scan_spans  # noqa: PLC0415

    try:
        data = tomllib.loads(text)
    except ValueError as exc:
        return None, [_syntax_finding(text, exc)]
    except RecursionError:
        # tomllib recurses once per level of nested arrays and inline tables.
        return None, [_Finding("NXT001", "invalid TOML: values nested too deeply", "", _start())]
    validator = _Validator(data, scan_spans(text)[0], base_dir)
    policy = validator.run()
    ordered = sorted(validator.findings, key=lambda f: (f.span.start, f.code))
    return policy, ordered


def _diagnostic(finding: _Finding) -> Diagnostic:
    rule = _policy_rules()[finding.code]
    return rule.diagnostic(finding.message, finding.key_path, finding.span, rule.fix)


def parse_policy(text: str, *, path: Path) -> TrustPolicy:
    """Parse and validate the policy ``text`` read from ``path`` (``trusted_root`` relative
    to its directory). Any error (of :data:`POLICY_RULES`) raises :class:`ConfigError`
    ``policy_invalid`` (exit 2) whose message starts with ``path:line:column``, every error
    listed in ``details["diagnostics"]``."""
    policy, findings = _validate(text, path.parent)
    errors = [f for f in findings if _policy_rules()[f.code].severity == "error"]
    if errors:
        first = errors[0]
        from nexo_pkg.core.diagnostics import first_of_errors  # noqa: PLC0415

        where, more = first_of_errors(path, first.span, len(errors))
        raise ConfigError(
            f"{where}: invalid trust policy: {first.message}{more}",
            kind="policy_invalid",
            details={
                "path": str(path),
                "line": first.span.start.line,
                "diagnostics": [_diagnostic(f).to_json() for f in errors],
            },
        )
    if policy is None:  # unreachable: the validator builds a policy whenever it found no error
        raise ConfigError(f"{path}: invalid trust policy", kind="policy_invalid")
    return replace(
        policy,
        source=path,
        location=path,
        warnings=tuple(
            f"WARNING: {path}:{f.span.start.line}:{f.span.start.column}: {f.message}"
            for f in findings
            if f.code in _READ_WARNINGS
        ),
    )


_READ_WARNINGS = frozenset({"NXT011", "NXT012"})
"""Policy lint warnings also shown whenever the policy is read: they change what it means."""


def file_warnings(path: Path) -> tuple[str, ...]:
    """Warnings about where the policy lives: a symlink, or a file others may write to;
    either lets someone other than the policy's owner change whom it trusts."""
    found: list[str] = []
    try:
        if path.is_symlink():
            found.append(
                f"WARNING: the trust policy {path} is a symbolic link (to {path.readlink()}); "
                "whoever can change the link or its target decides whom installs trust"
            )
        mode = path.stat().st_mode
    except OSError:
        return tuple(found)
    if mode & stat.S_IWOTH:
        found.append(
            f"WARNING: the trust policy {path} is writable by every user "
            f"(mode {stat.S_IMODE(mode):o}); run chmod o-w on it"
        )
    return tuple(found)


def _read_policy_text(path: Path, what: str) -> str:
    """The text of the policy file (``what``) at ``path``: ``FileNotFoundError`` when it does
    not exist; ``policy_invalid`` when it is no regular file, cannot be read, is over
    :data:`MAX_POLICY_BYTES` or is not UTF-8."""
    raw = read_config_file(path, MAX_POLICY_BYTES, kind="policy_invalid", missing_ok=True)
    try:
        # The daemon's TOML parser drops a leading byte-order mark (toml_edit's
        # parser/document.rs at toml-v0.8.23), so a policy saved with one is read alike.
        return raw.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"{path}:1:1: invalid {what}: not UTF-8 text",
            kind="policy_invalid",
            details={"path": str(path), "line": 1},
        ) from exc


def missing_named_policy(path: Path) -> ConfigError:
    """``policy_invalid`` (exit 2) for a policy named by ``--trusted-keys`` that does not
    exist: a typo, never read as the default policy or as one without entries."""
    return ConfigError(
        f"{path}: trust policy does not exist (named by --trusted-keys)",
        kind="policy_invalid",
        details={"path": str(path)},
    )


def load_policy(path: Path, *, explicit: bool = False) -> TrustPolicy:
    """Read and parse the policy at ``path``, with :func:`file_warnings`. A missing file gives
    the built-in default (``warn``, no authors) unless ``explicit`` (named by
    ``--trusted-keys``): then it is ``policy_invalid`` (exit 2), as is an unreadable,
    non-UTF-8, oversized or invalid file (``path:line`` in the message)."""
    try:
        text = _read_policy_text(path, "trust policy")
    except FileNotFoundError as exc:
        if explicit:
            raise missing_named_policy(path) from exc
        return with_registry_bindings(TrustPolicy(location=path))
    policy = parse_policy(text, path=path)
    return with_registry_bindings(
        replace(policy, warnings=(*policy.warnings, *file_warnings(path)))
    )


def lint_policy_source(text: str, *, path: str) -> FileResult:
    """Lint trust-policy ``text`` (from ``path``) and return its diagnostics; never raises.
    ``trusted_root`` is looked for only when ``path``'s directory exists (an editor buffer)."""
    parent = Path(path).parent
    try:
        base_dir = parent if parent.is_dir() else None
    except OSError:  # a name the OS rejects: lint the text without the file-system check
        base_dir = None
    _, findings = _validate(text, base_dir)
    from nexo_pkg.core.diagnostics import FileResult  # noqa: PLC0415

    return FileResult(path, tuple(_diagnostic(f) for f in findings), text)


# --- registry bindings -------------------------------------------------------------------------

REGISTRY_OWNERS_FILE = "registry_owners.toml"
"""Beside the policy file: which GitHub owner's entries judge a registry repository's copies.

A separate file because the daemon reads ``trusted_keys.toml`` with serde's
``deny_unknown_fields`` on the root and on ``[[authors]]`` (``crates/ext-installer/src/
trusted_keys.rs``): a new key there would make the daemon refuse the whole policy, and it never
reads this file."""

_REGISTRY_TABLE = "registries"
_BINDING_KEYS = ("repository", "owner")
_REPOSITORY_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
_REPOSITORY = re.compile(
    r"^(?P<host>(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*"
    r"[A-Za-z0-9])?)*|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?)"
    rf"/(?P<path>{_REPOSITORY_COMPONENT}(?:/{_REPOSITORY_COMPONENT})*)$"
)


@dataclass(frozen=True)
class RegistryBinding:
    """One ``[[registries]]`` entry: copies in ``repository`` (``host/path``, no scheme, tag
    or digest) are judged by ``owner``'s ``[[authors]]`` entries, as a GitHub release of that
    owner would be. ``line`` is where the entry starts (0 when built in code)."""

    repository: str
    owner: str
    line: int = 0


def repository_key(repository: str) -> str:
    """``host/path`` compared as registries compare it: the host case-insensitively."""
    host, _, rest = repository.partition("/")
    return f"{host.lower()}/{rest}"


def parse_registry_bindings(
    text: str, *, path: Path, policy: TrustPolicy
) -> tuple[tuple[RegistryBinding, ...], tuple[str, ...]]:
    """Validate the bindings ``text`` read from ``path``: ``[[registries]]`` entries, each a
    ``repository`` (``host/path``) and a GitHub ``owner``, no repository bound twice. Returns
    the bindings and warnings (an owner ``policy`` has no ``[[authors]]`` entry for: its
    copies get the default mode); anything else raises :class:`ConfigError`
    ``policy_invalid`` (exit 2) naming ``path:line:column``."""

    def invalid(line: int, column: int, message: str) -> ConfigError:
        return ConfigError(
            f"{path}:{line}:{column}: invalid registry bindings: {message}",
            kind="policy_invalid",
            details={"path": str(path), "line": line},
        )

    def refuse(message: str, key_path: tuple[str | int, ...]) -> ConfigError:
        span = spans.locate(key_path, "key")
        return invalid(span.start.line, span.start.column, message)

    try:
        data = tomllib.loads(text)
    except ValueError as exc:
        finding = _syntax_finding(text, exc)
        start = finding.span.start
        raise invalid(start.line, start.column, finding.message) from exc
    except RecursionError as exc:
        raise invalid(1, 1, "invalid TOML: values nested too deeply") from exc
    from nexo_pkg.core.toml_spans import scan_spans  # noqa: PLC0415 - see _validate

    spans, _ = scan_spans(text)
    for key in data:
        if key != _REGISTRY_TABLE:
            raise refuse(f"unknown key `{key}` (expected [[{_REGISTRY_TABLE}]])", (key,))
    entries = data.get(_REGISTRY_TABLE, [])
    if not isinstance(entries, list) or not all(isinstance(item, dict) for item in entries):
        raise refuse(f"`{_REGISTRY_TABLE}` must be an array of tables", (_REGISTRY_TABLE,))
    bindings: list[RegistryBinding] = []
    seen: dict[str, int] = {}
    warnings: list[str] = []
    for index, entry in enumerate(entries):
        at: tuple[str | int, ...] = (_REGISTRY_TABLE, index)
        prefix = f"{_REGISTRY_TABLE}[{index}]"
        for key in entry:
            if key not in _BINDING_KEYS:
                raise refuse(
                    f"unknown key `{key}` in {prefix} (expected one of {', '.join(_BINDING_KEYS)})",
                    (*at, key),
                )
        for key in _BINDING_KEYS:
            if key not in entry:
                raise refuse(f"{prefix} has no `{key}`", at)
            if not isinstance(entry[key], str):
                raise refuse(f"`{prefix}.{key}` must be a string", (*at, key))
        repository, owner = entry["repository"], entry["owner"]
        if not _REPOSITORY.fullmatch(repository):
            raise refuse(
                f"{prefix}.repository {repository!r} is not a registry repository: write "
                "host/path (`registry.example.com/plugins/echo`), without oci://, tag or digest",
                (*at, "repository"),
            )
        if not _is_github_name(owner):
            raise refuse(
                f"{prefix}.owner {owner!r} is not a GitHub owner name ([A-Za-z0-9._-])",
                (*at, "owner"),
            )
        line = spans.locate(at, "key").start.line
        key = repository_key(repository)
        if key in seen:
            raise refuse(
                f"{prefix} binds {repository} again (first bound at line {seen[key]}); one "
                "owner per repository",
                (*at, "repository"),
            )
        seen[key] = line
        if not policy.authors_for(owner):
            warnings.append(
                f"WARNING: {path}:{line}: {repository} is bound to owner {owner!r}, which has no "
                "[[authors]] entry in the trust policy: its copies get the default mode"
            )
        bindings.append(RegistryBinding(repository, owner, line))
    return tuple(bindings), tuple(warnings)


def with_registry_bindings(policy: TrustPolicy) -> TrustPolicy:
    """``policy`` with the bindings of the ``registry_owners.toml`` beside its location (none
    when that file does not exist). Raises :class:`ConfigError` ``policy_invalid`` when the
    file cannot be read (not a regular file, over :data:`MAX_POLICY_BYTES`, not UTF-8) or is
    invalid (:func:`parse_registry_bindings`)."""
    if policy.location is None:
        return policy
    path = policy.location.parent / REGISTRY_OWNERS_FILE
    try:
        text = _read_policy_text(path, "registry bindings")
    except FileNotFoundError:
        return policy
    bindings, warnings = parse_registry_bindings(text, path=path, policy=policy)
    return replace(
        policy,
        registry_bindings=bindings,
        warnings=(*policy.warnings, *warnings, *file_warnings(path)),
    )


def _quoted(text: str) -> str:
    """``text`` between single quotes as a TOML literal string writes it, or as ``repr``
    writes it when it holds a quote or a control character (no literal string can)."""
    if "'" in text or any(ord(char) < 0x20 or ord(char) == 0x7F for char in text):
        return repr(text)
    return f"'{text}'"
