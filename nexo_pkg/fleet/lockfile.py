"""``nexo-plugins.toml`` (the wanted set) and ``nexo-plugins.lock`` (what it resolved to).

Wanted set::

    [plugins.echo]
    source = "acme/nexo-plugin-echo"            # or "oci://HOST/NS/NAME[:TAG|@sha256:…]"
    version = "^1.2"                              # optional requirement (default: any)
    targets = ["x86_64-unknown-linux-gnu", "noarch"]   # optional (default: every target)

    [registries."registry.example.com"]         # optional: where else its bytes may come from
    mirrors = ["mirror.internal:5000", "cache.internal/registry.example.com"]

Lock (written by ``lock``, sorted by plugin id and target, so it only changes when what it
records changes)::

    lock_version = 1

    [plugins.echo]
    source = "…"            # as wanted
    requirement = "^1.2"    # as wanted ("*" when none)
    targets_wanted = [...]  # the wanted set's `targets` (absent: every target)
    version = "1.2.3"
    resolved = "oci://HOST/NS/NAME@sha256:…"   # or "owner/repo@tag"
    published = "2026-…Z"  # optional; receipts written by sync carry it as installed_at
    github = "owner/repo@tag"   # the original release of a mirrored version (optional)

    [plugins.echo.targets.noarch]  # one table per target, under `target`
    asset = "echo-1.2.3-noarch.tar.gz"
    size = 1234
    sha256 = "…"
    tree = "n1:…"           # the unpacked tree's hash (fleet.treehash)
    sbom = "sha256:…"       # the SBOM the tarball carries (absent: it carries none)
    manifest = "sha256:…"   # OCI sources: the target's manifest digest
    identity = "https://github.com/…"   # signer (absent when unsigned)
    issuer = "https://token.actions.githubusercontent.com"

Errors: ``lock_invalid`` (exit 2) with ``path:line`` for a malformed file.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nexo_pkg.core.errors import ConfigError, NexoError
from nexo_pkg.core.files import read_capped_bytes, write_config_file
from nexo_pkg.core.version import VersionError, parse_version
from nexo_pkg.core.versionreq import VersionReq, parse_version_req
from nexo_pkg.manifest.daemon import id_problem
from nexo_pkg.sources.api import (
    PLUGIN_ID,
    check_copied_from,
    check_locked,
    check_remote,
    pins_manifests,
    timestamp_or_none,
)

WANTED_NAME = "nexo-plugins.toml"
LOCK_NAME = "nexo-plugins.lock"
LOCK_VERSION = 1
ANY = "*"


def lock_command(wanted: Path, lock: Path) -> str:
    """``nexo plugin lock`` as a message tells its reader to run it, naming the wanted set
    (``--file``) unless it is ``./nexo-plugins.toml`` and the lock (``--lock``) unless it is
    beside the wanted set: run as printed, it writes the lock the refusing command reads."""
    import shlex  # noqa: PLC0415 (only on a refusal)

    words = ["nexo", "plugin", "lock"]
    if wanted.absolute() != Path.cwd() / WANTED_NAME:
        words += ["--file", str(wanted.absolute())]
    if lock.absolute() != wanted.absolute().parent / LOCK_NAME:
        words += ["--lock", str(lock.absolute())]
    return shlex.join(words)


_TARGET = re.compile(r"^(?:noarch|[A-Za-z0-9_]+(?:-[A-Za-z0-9_.]+){1,3})$")
_HEX = re.compile(r"^[0-9a-f]{64}$")
_TREE = re.compile(r"^n1:[0-9a-f]{64}$")
_TARGET_KEYS = {"asset", "size", "sha256", "tree", "sbom", "manifest", "identity", "issuer"}
_DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")
HEADER = (
    "This file is written by `nexo plugin lock` from nexo-plugins.toml; do not edit it.",
    "`nexo plugin sync` installs exactly what it names, checking every byte and signer.",
)

# A wanted set or a lock of thousands of plugins stays far below this.
MAX_FILE_BYTES = 16 * 1024 * 1024


def _invalid(path: Path, message: str, kind: str = "lock_invalid") -> ConfigError:
    return ConfigError(f"{path}: {message}", kind=kind, details={"path": str(path)})


@dataclass(frozen=True)
class WantedPlugin:
    """One entry of the wanted set."""

    plugin_id: str
    source: str
    requirement: str = ANY
    targets: tuple[str, ...] | None = None

    @property
    def version_req(self) -> VersionReq | None:
        return None if self.requirement == ANY else parse_version_req(self.requirement)


@dataclass(frozen=True)
class LockedTarget:
    target: str
    asset: str
    size: int
    sha256: str
    manifest: str | None = None
    identity: str | None = None
    issuer: str | None = None
    # The unpacked tree's hash (fleet.treehash, ``n1:…``); absent in earlier locks.
    tree: str | None = None
    # ``sha256:…`` of the SBOM the tarball carries (``sbom.cdx.json``): two locks diff what
    # changed inside a plugin. Absent when it carries none, and in earlier locks.
    sbom: str | None = None


@dataclass(frozen=True)
class LockedPlugin:
    plugin_id: str
    source: str
    requirement: str
    targets_wanted: tuple[str, ...] | None
    version: str
    resolved: str
    targets: dict[str, LockedTarget]
    published: str | None = None
    github: str | None = None

    def matches(self, wanted: WantedPlugin) -> bool:
        """Whether this entry was locked from exactly ``wanted`` (else it is stale)."""
        return (
            self.source == wanted.source
            and self.requirement == wanted.requirement
            and self.targets_wanted == wanted.targets
        )


@dataclass
class Lock:
    plugins: dict[str, LockedPlugin] = field(default_factory=dict)


def _read_text(path: Path) -> str:
    """A fleet file's text: a regular file (a link to one followed) of at most
    :data:`MAX_FILE_BYTES`, never a FIFO waited on; ``OSError``/``ValueError`` otherwise. A
    leading byte-order mark (Notepad's, PowerShell's ``-Encoding utf8``) is dropped, as cargo,
    ``lint`` and the language server read TOML."""
    return read_capped_bytes(path, MAX_FILE_BYTES).decode("utf-8").removeprefix("\ufeff")


def _load_toml(path: Path, kind: str) -> dict[str, Any]:
    try:
        text = _read_text(path)
    except FileNotFoundError as exc:
        how = (
            "write the plugins you want there (docs/fleet.md), or name the file with --file"
            if kind == "wanted_invalid"
            else "write it with `nexo plugin lock`, or name the file with --lock"
        )
        raise ConfigError(
            f"{path} does not exist: {how}", kind=kind, details={"path": str(path)}
        ) from exc
    except OSError as exc:
        raise _invalid(path, f"cannot read it ({exc.strerror or exc})", kind) from exc
    except ValueError as exc:
        raise _invalid(path, f"cannot read it ({exc})", kind) from exc
    try:
        document = tomllib.loads(text)
    except ValueError as exc:
        # The span scanner places the error; a file that parses never needs it.
        from nexo_pkg.core.toml_spans import syntax_error  # noqa: PLC0415

        syntax = syntax_error(text, exc, tomllib.loads)
        where = syntax.span.start
        raise ConfigError(
            f"{path}:{where.line}:{where.column}: not valid TOML ({syntax.message})",
            kind=kind,
            details={"path": str(path), "line": where.line},
        ) from exc
    except RecursionError as exc:
        raise _invalid(path, "not valid TOML (nested too deeply)", kind) from exc
    wide = _wide_integer(document)
    if wide is not None:
        # TOML's integers are 64-bit (Rust's toml, taplo and the schema refuse the others);
        # Python's reader takes any: refused as those readers refuse it, naming its line.
        from nexo_pkg.core.toml_spans import scan_spans  # noqa: PLC0415 - a bad file only

        where = scan_spans(text)[0].locate(wide).start
        named = ".".join(str(part) for part in wide)
        raise ConfigError(
            f"{path}:{where.line}:{where.column}: not valid TOML (`{named}` is an integer "
            "beyond 64 bits)",
            kind=kind,
            details={"path": str(path), "line": where.line},
        )
    return document


#: The range of TOML's integers (64-bit signed, as the TOML specification says).
_I64 = range(-(2**63), 2**63)


def _wide_integer(value: Any, at: tuple[str | int, ...] = ()) -> tuple[str | int, ...] | None:
    """The key path of the first integer in ``value`` outside TOML's 64-bit range, or None."""
    if type(value) is int:
        return None if value in _I64 else at
    items: Any = (
        value.items() if isinstance(value, dict) else enumerate(value)
        if isinstance(value, list) else ()
    )  # fmt: skip
    for key, item in items:
        found = _wide_integer(item, (*at, key))
        if found is not None:
            return found
    return None


def _check_keys(
    path: Path, where: str, table: dict[str, Any], allowed: set[str], kind: str = "lock_invalid"
) -> None:
    unknown = sorted(set(table) - allowed)
    if unknown:
        from difflib import get_close_matches  # noqa: PLC0415 - only needed for typos

        key = unknown[0]
        close = get_close_matches(key, sorted(allowed), n=1, cutoff=0.6)
        hint = f"; did you mean `{close[0]}`?" if close else ""
        named = f"{where}.{key}" if where else key
        raise _invalid(path, f"unknown key `{named}`{hint}", kind)


def validate_source(path: Path, where: str, source: str, kind: str = "lock_invalid") -> None:
    """``kind`` for ``where``'s source in ``path`` unless ``source`` is ``owner/repo[@tag]``
    or an ``oci://`` reference."""
    try:
        check_remote(source)
    except NexoError as error:
        raise _invalid(path, f"`{where}.source`: {error.message}", kind) from error


def read_wanted(path: Path) -> list[WantedPlugin]:
    """Parse the wanted set; ``wanted_invalid`` (exit 2) with the offending key."""
    kind = "wanted_invalid"
    document = _load_toml(path, kind)
    _check_keys(path, "", document, {"plugins", "registries", "schema_version"}, kind)
    _registries(path, document)
    plugins = document.get("plugins", {})
    if not isinstance(plugins, dict):
        raise _invalid(path, "`plugins` must be a table of plugin ids", kind)
    wanted: list[WantedPlugin] = []
    for plugin_id, entry in sorted(plugins.items()):
        where = f"plugins.{plugin_id}"
        if not PLUGIN_ID.fullmatch(plugin_id):
            why = id_problem(plugin_id)
            reason = f": {why}" if why else ""
            raise _invalid(path, f"`{where}`: {plugin_id!r} is not a plugin id{reason}", kind)
        if not isinstance(entry, dict):
            raise _invalid(path, f"`{where}` must be a table", kind)
        _check_keys(path, where, entry, {"source", "version", "targets"}, kind)
        source = entry.get("source")
        if not isinstance(source, str):
            raise _invalid(path, f"`{where}.source` is missing or not a string", kind)
        validate_source(path, where, source, kind)
        requirement = entry.get("version", ANY)
        if not isinstance(requirement, str):
            raise _invalid(path, f'`{where}.version` must be a string such as "^1.2"', kind)
        if requirement != ANY:
            try:
                parse_version_req(requirement)
            except VersionError as error:
                raise _invalid(path, f"`{where}.version`: {error}", kind) from error
        targets = entry.get("targets")
        if targets is not None:
            if (
                not isinstance(targets, list)
                or not targets
                or not all(isinstance(t, str) and _TARGET.fullmatch(t) for t in targets)
            ):
                raise _invalid(
                    path, f"`{where}.targets` must be a non-empty list of target triples", kind
                )
            targets = tuple(sorted(set(targets)))
        wanted.append(WantedPlugin(plugin_id, source, requirement, targets))
    return wanted


def _registries(path: Path, document: dict[str, Any]) -> dict[str, tuple[str, ...]]:
    """The wanted set's ``[registries."HOST"] mirrors = [...]``; ``wanted_invalid`` when
    malformed."""
    from nexo_pkg.sources.api import check_mirror  # noqa: PLC0415 - only when present

    kind = "wanted_invalid"
    table = document.get("registries", {})
    if not isinstance(table, dict):
        raise _invalid(path, "`registries` must be a table of registry hosts", kind)
    found: dict[str, tuple[str, ...]] = {}
    for host, entry in sorted(table.items()):
        where = f'registries."{host}"'
        if not isinstance(entry, dict):
            raise _invalid(path, f"`{where}` must be a table", kind)
        _check_keys(path, where, entry, {"mirrors"}, kind)
        mirrors = entry.get("mirrors", [])
        if not isinstance(mirrors, list) or not all(isinstance(m, str) for m in mirrors):
            raise _invalid(path, f"`{where}.mirrors` must be a list of HOST[:PORT][/PATH]", kind)
        try:
            found[host] = tuple(check_mirror(host, mirror, f"`{where}`")[1] for mirror in mirrors)
        except NexoError as error:
            raise _invalid(path, error.message, kind) from error
    return found


def read_registries(path: Path) -> dict[str, tuple[str, ...]]:
    """The registry mirrors a wanted set names (``{}`` when it names none)."""
    return _registries(path, _load_toml(path, "wanted_invalid"))


def _string(
    path: Path, where: str, table: dict[str, Any], key: str, *, optional: bool = False
) -> Any:
    value = table.get(key)
    if value is None and optional:
        return None
    if not isinstance(value, str) or not value:
        raise _invalid(path, f"`{where}.{key}` is missing or not a string")
    return value


def _timestamp(path: Path, where: str, table: dict[str, Any]) -> str | None:
    value = _string(path, where, table, "published", optional=True)
    if value is not None and timestamp_or_none(value) is None:
        raise _invalid(path, f"`{where}.published` is not an RFC 3339 time (2026-11-23T10:00:00Z)")
    return value  # type: ignore[no-any-return]


def _tree(path: Path, where: str, table: dict[str, Any]) -> str | None:
    value = _string(path, where, table, "tree", optional=True)
    if value is not None and not _TREE.fullmatch(value):
        raise _invalid(path, f"`{where}.tree` is not n1: followed by 64 hex digits")
    return value  # type: ignore[no-any-return]


def _digest(path: Path, where: str, table: dict[str, Any], key: str) -> str | None:
    """An optional ``sha256:<64 lowercase hex>`` (the OCI digest grammar, the schema's)."""
    value = _string(path, where, table, key, optional=True)
    if value is not None and not _DIGEST.fullmatch(value):
        raise _invalid(path, f"`{where}.{key}` is not sha256: followed by 64 lowercase hex digits")
    return value  # type: ignore[no-any-return]


def _requirement(path: Path, where: str, table: dict[str, Any]) -> str:
    """The wanted set's requirement the entry was locked from: ``*`` or one it can hold."""
    value: str = _string(path, where, table, "requirement")
    if value != ANY:
        try:
            parse_version_req(value)
        except VersionError as error:
            raise _invalid(path, f"`{where}.requirement`: {error}") from error
    return value


def _version(path: Path, where: str, table: dict[str, Any]) -> str:
    """The locked version: a semver version (it names the plugin's directory)."""
    value: str = _string(path, where, table, "version")
    try:
        parse_version(value)
    except VersionError as error:
        raise _invalid(path, f"`{where}.version` is not a semver version ({error})") from error
    return value


def _targets_wanted(path: Path, where: str, table: dict[str, Any]) -> tuple[str, ...] | None:
    """The wanted set's ``targets`` the entry was locked from (``None``: every target)."""
    value = table.get("targets_wanted")
    if value is None:
        return None
    if (
        not isinstance(value, list)
        or not value
        or not all(isinstance(t, str) and _TARGET.fullmatch(t) for t in value)
    ):
        raise _invalid(path, f"`{where}.targets_wanted` must be a non-empty list of target triples")
    return tuple(value)


def _row(
    path: Path, at: str, target: str, row: dict[str, Any], entry: tuple[str, str, bool]
) -> LockedTarget:
    """One target's row of the entry ``(plugin id, version, whether its source pins
    manifests)``: the tarball that version has for ``target``, as ``lock`` wrote it."""
    plugin_id, version, registry = entry
    _check_keys(path, at, row, _TARGET_KEYS)
    size = row.get("size")
    # TOML's `true` and `10.0` equal integers in Python: the schema's integer only.
    if type(size) is not int or size < 0:
        raise _invalid(path, f"`{at}.size` is missing or not a byte count (an integer >= 0)")
    sha256 = _string(path, at, row, "sha256")
    if not _HEX.fullmatch(sha256):
        raise _invalid(path, f"`{at}.sha256` is not 64 lowercase hex digits")
    asset = _string(path, at, row, "asset")
    expected = f"{plugin_id}-{version}-{target}.tar.gz"
    if asset != expected:
        raise _invalid(path, f"`{at}.asset` is {asset!r}, not {expected!r}")
    manifest = _digest(path, at, row, "manifest")
    if registry and manifest is None:
        raise _invalid(path, f"`{at}.manifest` is missing: a registry target names its manifest")
    if not registry and manifest is not None:
        raise _invalid(path, f"`{at}.manifest`: a GitHub release has no manifest digest")
    return LockedTarget(
        target=target,
        asset=asset,
        size=size,
        sha256=sha256,
        manifest=manifest,
        **_signer(path, at, row),
        tree=_tree(path, at, row),
        sbom=_digest(path, at, row, "sbom"),
    )


def read_lock(path: Path) -> Lock:
    """Parse a lock file; ``lock_invalid`` (exit 2) when it is not one nexo-pkg wrote: every
    field of every entry is held to what ``lock`` writes, naming the first one that is not,
    so that ``sync`` never reaches a source, nor writes, for an entry it could not trust."""
    document = _load_toml(path, "lock_invalid")
    _check_keys(path, "", document, {"lock_version", "plugins"})
    version = document.get("lock_version")
    # TOML's `true` and `1.0` equal 1 in Python: the schema's integer 1 only.
    if type(version) is not int or version != LOCK_VERSION:
        raise _invalid(path, f"`lock_version` must be {LOCK_VERSION}")
    plugins = document.get("plugins", {})
    if not isinstance(plugins, dict):
        raise _invalid(path, "`plugins` must be a table")
    lock = Lock()
    plugin_keys = {
        "source", "requirement", "targets_wanted", "version", "resolved", "published",
        "github", "targets",
    }  # fmt: skip
    for plugin_id, entry in sorted(plugins.items()):
        where = f"plugins.{plugin_id}"
        if not PLUGIN_ID.fullmatch(plugin_id) or not isinstance(entry, dict):
            raise _invalid(path, f"`{where}` is not a plugin entry")
        _check_keys(path, where, entry, plugin_keys)
        wanted_targets = _targets_wanted(path, where, entry)
        targets_table = entry.get("targets")
        if not isinstance(targets_table, dict) or not targets_table:
            raise _invalid(path, f"`{where}.targets` must hold at least one target")
        source = _string(path, where, entry, "source")
        validate_source(path, where, source)
        resolved = _string(path, where, entry, "resolved")
        try:
            check_locked(source, resolved)
        except NexoError as error:
            raise _invalid(path, f"`{where}.resolved`: {error.message}") from error
        github = _string(path, where, entry, "github", optional=True)
        if github is not None:
            try:
                check_copied_from(source, github)
            except NexoError as error:
                raise _invalid(path, f"`{where}.github`: {error.message}") from error
        requirement = _requirement(path, where, entry)
        plugin_version = _version(path, where, entry)
        if wanted_targets is not None and set(targets_table) != set(wanted_targets):
            raise _invalid(
                path, f"`{where}.targets` must hold exactly the targets of `targets_wanted`"
            )
        registry = pins_manifests(source)
        targets: dict[str, LockedTarget] = {}
        for target, row in sorted(targets_table.items()):
            at = f"{where}.targets.{target}"
            if not _TARGET.fullmatch(target) or not isinstance(row, dict):
                raise _invalid(path, f"`{at}` is not a target entry")
            targets[target] = _row(path, at, target, row, (plugin_id, plugin_version, registry))
        lock.plugins[plugin_id] = LockedPlugin(
            plugin_id=plugin_id,
            source=source,
            requirement=requirement,
            targets_wanted=wanted_targets,
            version=plugin_version,
            resolved=resolved,
            targets=targets,
            published=_timestamp(path, where, entry),
            github=github,
        )
    return lock


def render_lock(lock: Lock) -> str:
    """The lock as TOML text: every table and key in a fixed order."""
    import tomlkit  # noqa: PLC0415 (writing only: sync and install read the lock)

    document = tomlkit.document()
    for line in HEADER:
        document.add(tomlkit.comment(line))
    document.add("lock_version", LOCK_VERSION)
    plugins = tomlkit.table(is_super_table=True)
    for plugin_id in sorted(lock.plugins):
        entry = lock.plugins[plugin_id]
        table = tomlkit.table()
        table.add("source", entry.source)
        table.add("requirement", entry.requirement)
        if entry.targets_wanted is not None:
            table.add("targets_wanted", list(entry.targets_wanted))
        table.add("version", entry.version)
        table.add("resolved", entry.resolved)
        if entry.published:
            table.add("published", entry.published)
        if entry.github:
            table.add("github", entry.github)
        targets = tomlkit.table(is_super_table=True)
        for target in sorted(entry.targets):
            row = entry.targets[target]
            item = tomlkit.table()
            item.add("asset", row.asset)
            item.add("size", row.size)
            item.add("sha256", row.sha256)
            for key in ("tree", "sbom", "manifest", "identity", "issuer"):
                value = getattr(row, key)
                if value:
                    item.add(key, value)
            targets.add(target, item)
        table.add("targets", targets)
        plugins.add(plugin_id, table)
    document.add(tomlkit.nl())
    document.add("plugins", plugins)
    return tomlkit.dumps(document)


def write_if_changed(path: Path, text: str) -> bool:
    """Write ``text`` atomically unless the file already holds it; whether it wrote."""
    try:
        if _read_text(path) == text:
            return False
    except (FileNotFoundError, ValueError):
        pass
    except OSError as exc:
        raise NexoError(f"cannot read {path}: {exc.strerror or exc}", kind="io") from exc
    write_config_file(path, text.encode("utf-8"))
    return True


def stale_entries(wanted: list[WantedPlugin], lock: Lock) -> list[str]:
    """Why the lock does not match the wanted set (empty when it is current)."""
    reasons: list[str] = []
    names = {item.plugin_id for item in wanted}
    for item in wanted:
        entry = lock.plugins.get(item.plugin_id)
        if entry is None:
            reasons.append(f"{item.plugin_id} is wanted but not locked")
        elif not entry.matches(item):
            reasons.append(f"{item.plugin_id} changed in the wanted set since it was locked")
    reasons.extend(
        f"{plugin_id} is locked but no longer wanted"
        for plugin_id in sorted(set(lock.plugins) - names)
    )
    return reasons


def _signer(path: Path, where: str, row: dict[str, Any]) -> dict[str, str | None]:
    """A row's signer, recorded whole (``lock`` writes its identity and issuer, or neither
    for an unsigned artifact): half of one is no signer ``sync`` could hold an artifact to."""
    signer = {key: _string(path, where, row, key, optional=True) for key in ("identity", "issuer")}
    missing = [key for key, value in signer.items() if value is None]
    if len(missing) == 1:
        other = "issuer" if missing[0] == "identity" else "identity"
        raise _invalid(
            path,
            f"`{where}.{missing[0]}` is missing beside its `{other}`: a locked signer is an "
            "identity and its issuer together (neither for an unsigned tarball)",
        )
    return signer
