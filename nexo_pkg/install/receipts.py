"""Receipts: the ``.nexo-install.json`` of each installed plugin, read and written, and the
listing of an install root's plugins (and kept versions) by their receipts."""

from __future__ import annotations

import contextlib
import json
import os
import re
from dataclasses import dataclass, replace
from itertools import chain, repeat
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nexo_pkg.core.errors import NexoError
from nexo_pkg.core.files import read_capped_bytes, write_file_atomically
from nexo_pkg.install.root import (
    BOOKKEEPING_DIR,
    KEPT_AREA,
    LEGACY_PREFIXES,
    TREE_NAME,
    io_error,
    recover_interrupted,
)
from nexo_pkg.manifest import names as manifest_names

RECEIPT_NAME = manifest_names.RECEIPT_NAME
"""The receipt's file name: :data:`nexo_pkg.manifest.names.RECEIPT_NAME`, the one name every
floor (install, check, fleet) finds installs by."""
RECEIPT_SCHEMA_VERSION = "1.0"
LATEST_TAG = "latest"
"""The ``tag`` of a receipt whose plugin follows the newest release (the reference's word)."""

RECEIPT_UNREADABLE = "receipt unreadable"
"""How a receipt the reference installer cannot deserialise is shown: its plugin is an orphan
to the reference, so ``list`` shows it, ``remove`` removes it and ``verify`` fails on it."""

# The fields of the reference installer's receipt, every one a JSON string.
REFERENCE_RECEIPT_FIELDS = (
    "schema_version",
    "id",
    "version",
    "owner",
    "repo",
    "tag",
    "target",
    "sha256",
    "installed_at",
    "source",
)
MAX_RECEIPT_BYTES = 32 * 1024 * 1024

if TYPE_CHECKING:
    from nexo_pkg.core.version import Version

# Imported where used: `list` reads a thousand receipts and writes none, compares no versions.


def utc_now() -> str:
    import datetime as dt  # noqa: PLC0415

    return dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def _optional_string(document: dict[str, Any], key: str) -> str | None:
    value = document.get(key)
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise ValueError(f"`{key}` is not a string")
    return value


@dataclass(frozen=True)
class Receipt:
    """The ``.nexo-install.json`` of one installed plugin: the reference installer's fields
    first, every one a JSON string (``""`` where a local install has none), so it reads our
    receipts; it ignores ours (``signature``, ``files``, ``modes``). ``files`` is ``None`` for
    a receipt the reference installer wrote: there are no hashes to check."""

    id: str
    version: str
    owner: str | None
    repo: str | None
    tag: str | None
    target: str
    sha256: str
    installed_at: str
    source: str
    signature: dict[str, Any]
    files: dict[str, str] | None
    modes: dict[str, int] | None = None
    schema_version: str = RECEIPT_SCHEMA_VERSION
    # Registry installs: the pinned ``oci://…@sha256:…`` they came from (``upgrade`` asks
    # that repository again). Absent from the JSON otherwise.
    registry: str | None = None
    # Release installs: the tag of the release actually installed. ``tag`` is what was asked
    # for, as the reference installer records it: ``latest``, or the explicit tag that pins
    # upgrades to it. Absent from receipts written before it was recorded.
    resolved_tag: str | None = None

    def origin(self) -> dict[str, Any]:
        """The source object the receipt recorded (its ``type`` and the kind's fields), as
        the route of ``sources`` takes it (``reopen``, ``origin_label``)."""
        return {
            "type": self.source,
            "owner": self.owner,
            "repo": self.repo,
            "tag": self.resolved_tag or self.tag,
            "registry": self.registry,
        }

    @property
    def pinned_tag(self) -> str | None:
        """The explicit tag ``upgrade`` stays on, or ``None`` when it follows the latest
        release: ``tag`` ``latest`` (or empty), and nexo-pkg's receipts from before
        ``resolved_tag`` (which followed the latest release whatever their ``tag``)."""
        if not self.tag or self.tag == LATEST_TAG:
            return None
        if self.resolved_tag is None and self.files is not None:
            return None
        return self.tag

    @property
    def upgradable(self) -> bool:
        """Whether the install has a source ``upgrade`` asks again (a local file has none),
        as the route of ``sources`` answers for its origin."""
        from nexo_pkg.sources.api import upgrades_from  # noqa: PLC0415 (list upgrades nothing)

        return upgrades_from(self.origin())

    @property
    def origin_known(self) -> bool:
        """Whether the receipt names where the install came from as a kind records it (a
        local file, a release's repository, a registry's reference), as the route of
        ``sources`` answers for its origin: not for an unknown or empty ``source``, or a
        kind's without its coordinates (a hand-edited receipt)."""
        from nexo_pkg.sources.api import origin_known  # noqa: PLC0415 (list upgrades nothing)

        return origin_known(self.origin())

    @property
    def binds_upgrade(self) -> bool:
        """Whether the tag and target the receipt recorded bind its ``upgrade`` (a release's
        do; a registry's tag is the release it was mirrored from), as the route of
        ``sources`` answers for its origin."""
        from nexo_pkg.sources.api import pins_upgrade  # noqa: PLC0415 (list upgrades nothing)

        return pins_upgrade(self.origin())

    @property
    def upgrade_pin(self) -> str | None:
        """The explicit tag ``upgrade`` stays on (:attr:`pinned_tag`, when the recorded tag
        binds the upgrade: :attr:`binds_upgrade`), ``None`` when it follows its source."""
        pinned = self.pinned_tag
        return pinned if pinned is not None and self.binds_upgrade else None

    def to_json(self) -> dict[str, Any]:
        document: dict[str, Any] = {
            "schema_version": RECEIPT_SCHEMA_VERSION,
            "id": self.id,
            "version": self.version,
            "owner": self.owner or "",
            "repo": self.repo or "",
            "tag": self.tag or "",
            "target": self.target,
            "sha256": self.sha256,
            "installed_at": self.installed_at,
            "source": self.source,
            "signature": self.signature,
            "files": dict(sorted((self.files or {}).items())),
        }
        if self.registry is not None:
            document["registry"] = self.registry
        if self.resolved_tag is not None:
            document["resolved_tag"] = self.resolved_tag
        if self.modes is not None:
            document["modes"] = {name: f"{mode:04o}" for name, mode in sorted(self.modes.items())}
        return document

    @classmethod
    def from_json(cls, document: Any) -> Receipt:
        """Parse a receipt written by nexo-pkg (now or earlier) or by the reference installer;
        ``ValueError`` when a field is missing or mistyped."""
        if not isinstance(document, dict):
            raise ValueError("not a JSON object")
        for key in ("id", "version", "target", "sha256", "installed_at", "source"):
            if not isinstance(document.get(key), str):
                raise ValueError(f"`{key}` is missing or not a string")
        schema = document.get("schema_version", RECEIPT_SCHEMA_VERSION)
        # nexo-pkg's earlier receipts wrote the integer 1.
        if isinstance(schema, bool) or not isinstance(schema, str | int):
            raise ValueError("`schema_version` is not a string")
        files = document.get("files")
        if files is not None and (
            not isinstance(files, dict)
            # map(): no Python frame per file (a receipt lists every file of its plugin)
            or not all(map(isinstance, files, repeat(str)))
            or not all(map(isinstance, files.values(), repeat(str)))
        ):
            raise ValueError("`files` is not a map of path to sha256")
        signature = document.get("signature")
        return cls(
            id=document["id"],
            version=document["version"],
            owner=_optional_string(document, "owner"),
            repo=_optional_string(document, "repo"),
            tag=_optional_string(document, "tag"),
            target=document["target"],
            sha256=document["sha256"],
            installed_at=document["installed_at"],
            source=document["source"],
            signature=signature if isinstance(signature, dict) else {"status": "unknown"},
            files=dict(files) if files is not None else None,
            modes=_parse_modes(document.get("modes")),
            schema_version=str(schema),
            registry=registry if isinstance(registry := document.get("registry"), str) else None,
            resolved_tag=resolved
            if isinstance(resolved := document.get("resolved_tag"), str)
            else None,
        )


# ``int(text, 8)`` of the permission bits as :meth:`Receipt.to_json` writes them, looked up
# in C (setuid, setgid and sticky bits take the slower way).
_FOUR_DIGIT_MODES = {f"{mode:04o}": mode for mode in range(0o1000)}


def _parse_modes(value: Any) -> dict[str, int] | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise ValueError("`modes` is not a map of path to octal mode")
    try:  # the common case at once: every mode four octal digits, as receipts write them
        # (the names are strings already: those of a JSON object)
        return dict(zip(value, map(_FOUR_DIGIT_MODES.__getitem__, value.values()), strict=True))
    except (KeyError, TypeError):
        pass
    try:  # every mode an octal string
        return {str(name): int(mode, 8) for name, mode in value.items()}
    except (TypeError, ValueError):
        pass  # one by one, to name the one that is not an octal mode (or take an integer)
    modes: dict[str, int] = {}
    for name, mode in value.items():
        try:
            modes[str(name)] = int(mode, 8) if isinstance(mode, str) else int(mode)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"`modes` holds {mode!r} for {name!r}, not an octal mode") from exc
    return modes


@dataclass(frozen=True)
class Installed:
    """One directory under the install root, with its receipt when it has a valid one.

    ``kept`` marks an old version ``upgrade`` kept for ``rollback`` (out of the daemon's sight).
    """

    path: Path
    receipt: Receipt | None
    problem: str | None = None
    kept: bool = False

    @property
    def plugin_id(self) -> str | None:
        return self.receipt.id if self.receipt else None


def has_file_hashes(directory: Path) -> bool:
    """Whether ``directory``'s receipt records its files' hashes (nexo-pkg's do; the
    reference installer's do not), so that ``rollback`` can check the tree before it comes
    back. False for an unreadable receipt."""
    try:
        return read_receipt(directory).files is not None
    except (OSError, ValueError):
        return False


def read_receipt(directory: Path) -> Receipt:
    """Load ``directory/.nexo-install.json``; raises ``ValueError``/``OSError`` when unusable
    (a receipt that is a link, a FIFO or larger than 32 MiB is unusable, never waited on)."""
    # A text path: no Path object made and formatted for it (`list` reads a thousand; the
    # directory's own text is formatted once, and kept for the listing's rows).
    receipt_path = os.path.join(directory, RECEIPT_NAME)  # noqa: PTH118
    raw = read_capped_bytes(receipt_path, MAX_RECEIPT_BYTES, follow_links=False)
    try:
        text = raw.decode("utf-8")
        receipt = _plain_receipt(text)
        if receipt is not None:
            return receipt
        # Anything the quick reading did not take is read again here, so every refusal is
        # worded as before.
        try:
            document = _json_value(text)
        except RecursionError:
            document = _deep_receipt(text)
    except _SerdeConstantError as exc:
        raise ValueError(_serde_constant_problem(text)) from exc
    if isinstance(document, _JsonObject):
        reference_receipt_problem(document.pairs)
    return Receipt.from_json(document)


def _plain_receipt(text: str) -> Receipt | None:
    """The receipt ``text`` holds when it is one the installer takes as it stands: a JSON
    object without a repeated key at any depth, every field of the reference installer
    present once as a string, and :meth:`Receipt.from_json` satisfied; ``None`` for anything
    else, which :func:`read_receipt` reads again to word its refusal. Each object is made a
    dict from its pairs as the parser meets it (:func:`_unrepeated`), so a repeated field is
    seen without a second pass over the document (a receipt lists every file of its
    plugin)."""
    try:
        document = _PLAIN_DECODER.decode(text)
    except (ValueError, RecursionError, _NotPlainError):
        # not JSON, too deep or too long a number for Python, or a repeated key
        return None
    if type(document) is not dict:
        return None
    if not all(map(isinstance, map(document.get, REFERENCE_RECEIPT_FIELDS), repeat(str))):
        return None
    # Every field read above is a string: serde_json refuses a lone surrogate in one, or in a key.
    if _LONE_SURROGATE.search(
        "".join(chain(document, map(document.__getitem__, REFERENCE_RECEIPT_FIELDS)))
    ):
        return None
    try:
        return Receipt.from_json(document)
    except ValueError:
        return None


class _NotPlainError(Exception):
    pass


def _not_plain_constant(_name: str) -> object:
    raise _NotPlainError


# A UTF-16 surrogate left in a decoded string: only a lone ``\uD800``-``\uDFFF`` escape makes
# one (a pair decodes to the character it names).
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
# A JSON string, or a ``NaN``/``Infinity``/``-Infinity`` token outside one.
_STRING_OR_CONSTANT = re.compile(r'"(?:[^"\\]|\\.)*"|-?(?:NaN|Infinity)')


def _serde_constant_problem(text: str) -> str:
    """serde_json's refusal of the first ``NaN``, ``Infinity`` or ``-Infinity`` token in
    ``text``, at the line and byte column serde_json counts. Python's ``json`` reads them;
    serde_json has no such tokens, in ignored values too (serde_json 1.0.149
    ``src/de.rs:1149``: ``ignore_value`` answers ``ExpectedSomeValue`` on the ``N`` or
    ``I``; ``ignore_integer`` answers ``InvalidNumber`` on the ``I`` after a ``-``)."""
    for match in _STRING_OR_CONSTANT.finditer(text):
        token = match.group()
        if token.startswith('"'):
            continue
        negative = token.startswith("-")
        offset = match.start() + negative
        line_start = text.rfind("\n", 0, offset) + 1
        line = text.count("\n", 0, offset) + 1
        column = len(text[line_start : offset + 1].encode("utf-8", "surrogatepass"))
        message = "invalid number" if negative else "expected value"
        return f"{message} at line {line} column {column}"
    return "a NaN or Infinity token, which is not JSON"


# The keys of a receipt something reads: the reference installer's fields and nexo-pkg's own.
_READ_KEYS = frozenset(
    (*REFERENCE_RECEIPT_FIELDS, "files", "modes", "signature", "registry", "resolved_tag")
)
# Nesting Python's ``json`` reads well inside its recursion limit.
_DEPTH_PYTHON_READS = 200
_STRING_READER = json.JSONDecoder()
_JSON_SPACE = re.compile(r"[ \t\n\r]*")
_JSON_ATOM = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?|true|false|null")


def _json_value(text: str) -> Any:
    """``json.loads(text)`` read as serde_json reads a receipt: objects keep their pairs
    (:class:`_JsonObject`), ``NaN``/``Infinity`` refused, integers of any length taken."""
    return json.loads(
        text,
        object_pairs_hook=_JsonObject.of,
        parse_constant=_SerdeConstantError.refuse,
        parse_int=_integer,
    )


def _after_space(text: str, position: int) -> int:
    """``position`` moved past JSON whitespace."""
    space = _JSON_SPACE.match(text, position)
    return space.end() if space is not None else position


def _deep_receipt(text: str) -> _JsonObject:
    """The receipt ``text`` holds when a value in it nests deeper than Python's ``json``
    can follow. serde_json skips the value of a key the reference does not read with
    ``ignore_value`` (1.0.149 ``src/de.rs``), a loop over a stack of its own with no
    recursion limit, so such a value leaves the receipt readable; only its syntax is checked.
    A read key whose value nests that deep is a sequence or map where the reference expects a
    string (:func:`reference_receipt_problem` words it), or one of nexo-pkg's own fields
    that is no longer what nexo-pkg wrote (``ValueError``)."""
    position = _after_space(text, 0)
    if text[position : position + 1] != "{":
        raise ValueError("nested too deeply")
    pairs: list[tuple[str, Any]] = []
    position = _after_space(text, position + 1)
    first = True
    while text[position : position + 1] != "}":
        if not first:
            if text[position : position + 1] != ",":
                raise ValueError(f"expected `,` or `}}` at character {position}")
            position = _after_space(text, position + 1)
        if text[position : position + 1] != '"':
            raise ValueError(f"key must be a string at character {position}")
        key, position = _STRING_READER.raw_decode(text, position)
        first = False
        position = _after_space(text, position)
        if text[position : position + 1] != ":":
            raise ValueError(f"expected `:` at character {position}")
        start = _after_space(text, position + 1)
        position, depth = _skip_value(text, start)
        if depth <= _DEPTH_PYTHON_READS:
            pairs.append((key, _json_value(text[start:position])))
        elif key in REFERENCE_RECEIPT_FIELDS:
            pairs.append((key, [] if text[start] == "[" else _JsonObject.of([])))
        elif key in _READ_KEYS:
            raise ValueError(f"`{key}` is nested too deeply")
        position = _after_space(text, position)
    if _after_space(text, position + 1) != len(text):
        raise ValueError(f"trailing characters at character {position + 1}")
    return _JsonObject.of(pairs)


def _skip_value(text: str, position: int) -> tuple[int, int]:
    """Where the JSON value at ``position`` ends, and how deep it nests; ``ValueError`` for
    what is not JSON. A loop with a stack of its own, as serde_json's ``ignore_value``."""
    stack: list[str] = []
    deepest = 0
    while True:
        position = _after_space(text, position)
        char = text[position : position + 1]
        if char in ("[", "{"):
            stack.append("]" if char == "[" else "}")
            deepest = max(deepest, len(stack))
            position = _after_space(text, position + 1)
            if text[position : position + 1] == stack[-1]:
                stack.pop()
                position += 1
            elif char == "{":
                position = _skip_key(text, position)
                continue
            else:
                continue
        elif char == '"':
            position = _STRING_READER.raw_decode(text, position)[1]
        elif (atom := _JSON_ATOM.match(text, position)) is not None:
            position = atom.end()
        else:
            raise ValueError(f"expected a value at character {position}")
        while stack:
            position = _after_space(text, position)
            char = text[position : position + 1]
            if char == stack[-1]:
                stack.pop()
                position += 1
            elif char == ",":
                position += 1
                if stack[-1] == "}":
                    position = _skip_key(text, _after_space(text, position))
                break
            else:
                raise ValueError(f"expected `,` or `{stack[-1]}` at character {position}")
        else:
            return position, deepest


def _skip_key(text: str, position: int) -> int:
    """Past the ``"key":`` of an object's member at ``position``."""
    if text[position : position + 1] != '"':
        raise ValueError(f"key must be a string at character {position}")
    position = _after_space(text, _STRING_READER.raw_decode(text, position)[1])
    if text[position : position + 1] != ":":
        raise ValueError(f"expected `:` at character {position}")
    return position + 1


class _LongInteger:
    """An integer literal of more digits than Python turns into an ``int`` (4300 by default):
    serde_json skips it in a value the reference ignores (1.0.149 ``src/de.rs``,
    ``ignore_integer`` scans digits without reading their value), so it must not make the
    receipt unreadable."""

    __slots__ = ("digits",)

    def __init__(self, digits: str) -> None:
        self.digits = digits

    def __repr__(self) -> str:
        return f"an integer of {len(self.digits.lstrip('-'))} digits"


def _integer(text: str) -> int | _LongInteger:
    """``int(text)``, or a :class:`_LongInteger` where Python refuses to convert so many
    digits."""
    try:
        return int(text)
    except ValueError:
        return _LongInteger(text)


class _SerdeConstantError(ValueError):
    """Python's ``json`` met ``NaN``, ``Infinity`` or ``-Infinity``."""

    @staticmethod
    def refuse(_name: str) -> object:
        raise _SerdeConstantError


def _unrepeated(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """The JSON object of ``pairs`` as :func:`json.loads` makes it; :class:`_NotPlainError`
    when a key repeats."""
    made = dict(pairs)
    if len(made) != len(pairs):
        raise _NotPlainError
    return made


# ``json.loads(text, object_pairs_hook=_unrepeated)`` without a decoder made for every receipt.
_PLAIN_DECODER = json.JSONDecoder(object_pairs_hook=_unrepeated, parse_constant=_not_plain_constant)


class _JsonObject(dict[str, Any]):
    """A JSON object as a dict (the last duplicate wins) that keeps its ``(key, value)``
    pairs in document order, duplicates included, for :func:`reference_receipt_problem`.
    Built as the parser meets each object, so no second pass over the document is needed
    (a receipt lists every file of its plugin)."""

    __slots__ = ("pairs",)
    pairs: list[tuple[str, Any]]

    @classmethod
    def of(cls, pairs: list[tuple[str, Any]]) -> _JsonObject:
        made = cls(pairs)
        made.pairs = pairs
        return made


def reference_receipt_problem(pairs: list[tuple[str, Any]]) -> None:
    """Raise ``ValueError`` with serde's words when the reference installer could not
    deserialise this receipt (``InstallMetadata`` in its ``plugin_admin.rs``).

    Every one of :data:`REFERENCE_RECEIPT_FIELDS` must be present once, as a JSON string; the
    first problem in document order is reported, a missing field after them. Other keys are
    ignored, as serde does.
    """
    seen: set[str] = set()
    for key, value in pairs:
        if _LONE_SURROGATE.search(key):
            # Each key is read as a field name, a string: serde_json 1.0.149 decodes a ``\uXXXX``
            # escape in ``src/read.rs`` (900-961) and refuses a surrogate not half of a pair.
            raise ValueError(f"key {key!r} holds a lone UTF-16 surrogate escape")
        if key not in REFERENCE_RECEIPT_FIELDS:
            continue
        if key in seen:
            raise ValueError(f"duplicate field `{key}`")
        seen.add(key)
        if not isinstance(value, str):
            raise ValueError(
                f"invalid type: {_json_kind(value)}, expected a string (field `{key}`)"
            )
        if _LONE_SURROGATE.search(value):
            raise ValueError(f"field `{key}` holds a lone UTF-16 surrogate escape")
    for field_name in REFERENCE_RECEIPT_FIELDS:
        if field_name not in seen:
            raise ValueError(f"missing field `{field_name}`")


def _json_kind(value: Any) -> str:
    """How serde names the JSON value it did not expect."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"boolean `{str(value).lower()}`"
    if isinstance(value, int | float):
        return f"integer `{value}`" if isinstance(value, int) else f"floating point `{value}`"
    if isinstance(value, _LongInteger):
        return repr(value)
    return "sequence" if isinstance(value, list) else "map"


def _examine(path: Path, *, kept: bool = False) -> Installed:
    try:
        receipt = read_receipt(path)
    except FileNotFoundError:
        return Installed(path, None, "no install receipt", kept)
    except (OSError, ValueError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        return Installed(path, None, f"{RECEIPT_UNREADABLE}: {reason}", kept)
    return Installed(path, receipt, None, kept)


def scan_installed(dest: Path) -> list[Installed]:
    """Every plugin directory under ``dest``, sorted by name: hidden ones too (the daemon
    discovers them), except nexo-pkg's bookkeeping (``.nexo``, and the ``.staging-*``/
    ``.removing-*`` of earlier versions); a symbolic link is listed with its problem, never
    followed."""
    found: list[Installed] = []
    try:
        with os.scandir(dest) if dest.is_dir() else contextlib.nullcontext(()) as listing:
            # By name: the order of sorted paths of one directory (POSIX compares names).
            children = sorted(listing, key=_entry_order)
    except OSError as exc:
        raise io_error(f"list {dest}", exc) from exc
    for child in children:
        if child.name == BOOKKEEPING_DIR or child.name.startswith(LEGACY_PREFIXES):
            continue
        if child.is_symlink():
            found.append(
                Installed(dest / child.name, None, "is a symbolic link, not a plugin directory")
            )
        elif child.is_dir():
            found.append(_examine(dest / child.name))
    return found


def _entry_order(entry: os.DirEntry[str]) -> Any:
    """How :class:`Path` orders the children of one directory: by name, case-folded where
    the platform's paths are (Windows)."""
    return entry.name if os.name != "nt" else Path(entry.path)


def scan_kept(dest: Path) -> list[Installed]:
    """Old versions ``upgrade`` kept under ``.nexo/kept``, sorted by name. A link anywhere on
    the way (the area, a holder, its tree) is none: it was never made by a run, and what it
    points to (perhaps outside the root) is neither moved in by a rollback nor deleted by a
    prune."""
    area = dest / BOOKKEEPING_DIR / KEPT_AREA
    try:
        linked = area.is_symlink() or area.parent.is_symlink()
        holders = sorted(area.iterdir()) if area.is_dir() and not linked else []
    except OSError as exc:
        raise io_error(f"list {area}", exc) from exc
    return [
        _examine(holder / TREE_NAME, kept=True)
        for holder in holders
        if not holder.is_symlink()
        and (holder / TREE_NAME).is_dir()
        and not (holder / TREE_NAME).is_symlink()
    ]


def kept_links(dest: Path) -> list[Path]:
    """The symbolic links under ``.nexo/kept`` that :func:`scan_kept` skips (the area itself,
    a holder, a holder's tree), sorted: no run makes them and no command reads or deletes
    them."""
    area = dest / BOOKKEEPING_DIR / KEPT_AREA
    try:
        if area.is_symlink():
            return [area]
        holders = sorted(area.iterdir()) if area.is_dir() and not area.parent.is_symlink() else []
    except OSError:
        return []
    found: list[Path] = []
    for holder in holders:
        if holder.is_symlink():
            found.append(holder)
        elif (holder / TREE_NAME).is_symlink():
            found.append(holder / TREE_NAME)
    return found


def scan_roots(roots: tuple[Path, ...], *, kept: bool) -> list[Installed]:
    """Every plugin directory in ``roots`` (and with ``kept`` the versions kept for rollback),
    root by root, each recovered first from an interrupted run."""
    found: list[Installed] = []
    for root in roots:
        recover_interrupted(root)
        found += [*scan_installed(root), *(scan_kept(root) if kept else ())]
    return found


def installed_versions(dest: Path, plugin_id: str) -> list[Installed]:
    """The installs of ``plugin_id``, highest version first (an interrupted replacement is
    finished first, so a plugin whose old tree was moved aside is found)."""
    recover_interrupted(dest)
    matches = [item for item in scan_installed(dest) if item.plugin_id == plugin_id]
    return sorted(matches, key=version_order, reverse=True)


def version_order(item: Installed) -> tuple[bool, Version]:
    """Sort key of an install by its receipt's version, in the daemon's order (build metadata
    counts); a receipt without one, or with one that is not semver (edited by hand), sorts
    lowest instead of failing."""
    from nexo_pkg.core.version import Version, VersionError, parse_version  # noqa: PLC0415

    try:
        return True, parse_version(item.receipt.version if item.receipt is not None else "")
    except VersionError:
        return False, Version(0, 0, 0)


def unreadable_installs(dest: Path, plugin_id: str | None = None) -> list[Installed]:
    """Directories in ``dest`` whose receipt the reference installer cannot read (of
    ``plugin_id`` when given: named ``<id>`` or ``<id>-<version>``, as installs are)."""
    return [
        item
        for item in scan_installed(dest)
        if item.receipt is None
        and (item.problem or "").startswith(RECEIPT_UNREADABLE)
        and (
            plugin_id is None
            or item.path.name == plugin_id
            or item.path.name.startswith(f"{plugin_id}-")
        )
    ]


def require_installed(dest: Path, plugin_id: str) -> list[Installed]:
    """Like :func:`installed_versions`, but an unknown id raises ``not_installed``."""
    matches = installed_versions(dest, plugin_id)
    if not matches:
        raise NexoError(
            f"plugin {plugin_id!r} is not installed in {dest} (see `nexo plugin list`)",
            kind="not_installed",
            details={"id": plugin_id},
        )
    return matches


_FLAT_VALUES = frozenset({str, int, bool, type(None)})


def indented_json(document: dict[str, Any]) -> str:
    """``json.dumps(document, indent=2, ensure_ascii=False)``, the same text, with the maps
    of strings at its first level (a receipt's ``files`` and ``modes``: an entry a file)
    encoded by the C encoder instead of ``json``'s Python one, which ``indent`` otherwise
    takes for every entry."""
    if not document or not all(map(str.__instancecheck__, document)):
        return json.dumps(document, indent=2, ensure_ascii=False)  # keys json turns to text
    entries = [
        f"{json.dumps(key, ensure_ascii=False)}: {_indented_value(value)}"
        for key, value in document.items()
    ]
    return "{\n  " + ",\n  ".join(entries) + "\n}"


def _indented_value(value: Any) -> str:
    """``value`` as ``json.dumps(..., indent=2)`` writes it one level down."""
    if (
        type(value) is dict
        and value
        and all(map(_FLAT_VALUES.__contains__, map(type, value.values())))
    ):
        inner = json.dumps(value, ensure_ascii=False, separators=(",\n    ", ": "))
        return "{\n    " + inner[1:-1] + "\n  }"
    # Newlines are structure only (strings escape theirs): one level down is two spaces more.
    return json.dumps(value, indent=2, ensure_ascii=False).replace("\n", "\n  ")


# What `json` escapes in a string when ``ensure_ascii`` is off (a control character, a quote,
# a backslash): a name or value without any of these is written as it is, between quotes.
_ESCAPED = bytes(range(0x20)) + b'"\\'
# The permission bits as :meth:`Receipt.to_json` writes them, by mode (the common ones).
_MODE_TEXTS = {mode: text for text, mode in _FOUR_DIGIT_MODES.items()}
# A string as ``json.dumps(..., ensure_ascii=False)`` writes it, without a new encoder a call.
_TEXT_ENCODER = json.JSONEncoder(ensure_ascii=False)
_ENTRY_START = '",\n    "'


def _escaped(text: str) -> bool:
    """Whether ``json`` escapes a character of ``text``, looked at in C (in UTF-8, where no
    byte of a character past ASCII is one of those); a text that does not encode (a lone
    surrogate) is the encoder's."""
    try:
        data = text.encode()
    except UnicodeEncodeError:
        return True
    return len(data.translate(None, _ESCAPED)) != len(data)


def _string_map(names: list[str], values: list[str]) -> list[str] | None:
    """The pieces of the map of ``names`` to ``values`` (strings) as :func:`_indented_value`
    writes it, with no Python step per entry; ``None`` when a name or value needs an escape
    (or is not a string): the encoder writes those."""
    if not names:
        return ["{}"]
    try:
        if _escaped("".join(names)) or _escaped("".join(values)):
            return None
    except TypeError:
        return None
    pieces = list(chain.from_iterable(zip(repeat(_ENTRY_START), names, repeat('": "'), values)))
    pieces[0] = '{\n    "'
    pieces.append('"\n  }')
    return pieces


def receipt_text(receipt: Receipt) -> str:
    """``indented_json(receipt.to_json()) + "\\n"``, the same text, with the receipt's
    ``files`` and ``modes`` (an entry a file of the plugin) joined as strings in C rather than
    encoded entry by entry, and the whole joined once."""
    files = receipt.files or {}
    names = sorted(files)
    blocks = {"files": _string_map(names, list(map(files.__getitem__, names)))}
    modes = receipt.modes
    if modes is not None:
        mode_names = sorted(modes)
        try:
            texts = list(map(_MODE_TEXTS.__getitem__, map(modes.__getitem__, mode_names)))
        except KeyError:  # setuid, setgid or sticky bits: the encoder's way
            texts = [f"{modes[name]:04o}" for name in mode_names]
        blocks["modes"] = _string_map(mode_names, texts)
    if any(block is None for block in blocks.values()):
        return indented_json(receipt.to_json()) + "\n"
    # The rest of the document is a few fields: encoded as ever, with the two maps left empty.
    document = replace(receipt, files={}, modes=None if modes is None else {}).to_json()
    text = _TEXT_ENCODER.encode
    pieces = ["{\n  "]
    for key, value in document.items():
        pieces += (text(key), ": ")
        block = blocks.get(key)
        if block is not None:
            pieces += block
        else:
            pieces.append(text(value) if type(value) is str else _indented_value(value))
        pieces.append(",\n  ")
    pieces[-1] = "\n}\n"
    return "".join(pieces)


def write_receipt(directory: Path, receipt: Receipt) -> None:
    """Write the receipt atomically (:func:`~nexo_pkg.core.files.write_file_atomically`), 0644
    whatever the umask: a receipt anyone can rewrite could redirect upgrades. The caller then
    makes the tree durable (:func:`~nexo_pkg.core.durable.sync_tree`) before publishing it.
    Raises ``OSError``."""
    data = receipt_text(receipt)
    path = directory / RECEIPT_NAME
    write_file_atomically(path, data.encode("utf-8"), mode=0o644, durable=False)
