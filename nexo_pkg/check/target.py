"""Turn the TARGET of ``nexo plugin check`` into a command line to spawn.

A target is one of:

* a plugin directory in the packed layout (``nexo-plugin.toml`` and ``bin/<id>``);
* a plugin project directory whose manifest has a ``[plugin.entrypoint] command``;
* a manifest file (its directory is the plugin root);
* a release tarball (``.tar.gz`` / ``.tgz``), checked and extracted to a temporary directory;
* the id of an installed plugin, found as ``<dest>/<id>-<version>/`` with an install receipt.

Every way of not finding something runnable is a
:class:`~nexo_pkg.check.microapp_target.TargetError` (exit 2); a manifest the daemon refuses
is its subclass
:class:`~nexo_pkg.check.microapp_target.ManifestRefusedError`, which ``check`` reports as a
failed check instead.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nexo_pkg.check.microapp_target import (
    ManifestRefusedError,
    MicroappTarget,
    TargetError,
    find_microapp,
)
from nexo_pkg.check.scratch import scratch_directory
from nexo_pkg.core import posix
from nexo_pkg.core.errors import EXIT_USAGE, NexoError, UsageError
from nexo_pkg.core.files import read_capped_bytes, read_regular_bytes
from nexo_pkg.core.version import Version, VersionError, parse_version
from nexo_pkg.manifest.daemon import is_valid_id
from nexo_pkg.manifest.daemon_config import nexo_home_from_env
from nexo_pkg.manifest.model import ManifestModelError, PluginManifest, plugin_manifest_from_data
from nexo_pkg.manifest.names import (
    MAX_MANIFEST_BYTES,
    RECEIPT_NAME,
    find_manifest,
    no_manifest_problem,
    shadowed_message,
)
from nexo_pkg.manifest.read import ManifestTOMLError, read_manifest_text
from nexo_pkg.sources.api import safe_extract

if TYPE_CHECKING:
    from nexo_pkg.manifest.document import ParsedManifest
    from nexo_pkg.sources.api import ArchiveLimits

    #: A manifest as a caller already read it: its path, its bytes and lint's parse of them.
    KnownManifest = tuple[Path, bytes, ParsedManifest]

RESERVED_ENV_PREFIX = "NEXO_"
#: Entrypoint values of a type the daemon does not read, in the order they are refused.
_ENTRYPOINT_PROBLEMS = (
    ("plugin.entrypoint", "must be a table"),
    ("plugin.entrypoint.command", "must be a string"),
    ("plugin.entrypoint.args", "must be an array of strings"),
    ("plugin.entrypoint.env", "must be a table of strings"),
)


def _raw_id(manifest: dict[str, object]) -> str:
    """``plugin.id`` as written, when it is a string (else empty)."""
    plugin = manifest.get("plugin")
    raw = plugin.get("id") if isinstance(plugin, dict) else None
    return raw if isinstance(raw, str) else ""


@dataclass(frozen=True)
class ResolvedPlugin:
    """What the host needs to spawn a plugin and judge its answers."""

    root: Path
    #: The plugin manifest's model; ``None`` for a microapp (see :attr:`microapp`).
    model: PluginManifest | None
    plugin_id: str
    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)
    source: str = "directory"
    #: Things worth a warning found while resolving (a shadowed manifest).
    notes: tuple[str, ...] = ()
    #: Set when the target is a microapp (an extension-shaped ``plugin.toml``).
    microapp: MicroappTarget | None = None
    #: The manifest as the caller already read and parsed it (:data:`KnownManifest`), used
    #: again where its bytes are still the file's.
    known: KnownManifest | None = None
    #: The manifest file :attr:`model` was read from and the bytes it held then: what the
    #: lint and the sandbox plan judge too, never the file read again (it may have changed).
    manifest_file: tuple[Path, bytes] | None = None

    @property
    def declared_tools(self) -> list[str]:
        """``[plugin.extends].tools`` (empty when absent or malformed)."""
        return list(self.model.plugin.extends.tools) if self.model is not None else []


def known_parse(known: KnownManifest | None, manifest_path: Path) -> ParsedManifest | None:
    """The manifest ``known`` holds parsed, when it is the one at ``manifest_path`` and the
    file still holds exactly its bytes; else ``None`` (the caller reads and parses it)."""
    if known is None:
        return None
    path, raw, parsed = known
    try:
        if path.resolve() != manifest_path.resolve() or _manifest_bytes(manifest_path) != raw:
            return None
    except OSError:
        return None
    return parsed


def default_install_root() -> Path:
    """``$NEXO_HOME/state/plugins`` (``NEXO_HOME`` defaults to ``~/.nexo``; a ``~`` in it is
    expanded, as install expands it)."""
    return nexo_home_from_env() / "state" / "plugins"


@contextlib.contextmanager
def resolve_target(
    target: str | Path,
    *,
    dest: Path | None = None,
    installed_root: Callable[[], Path] = default_install_root,
    known: KnownManifest | None = None,
    limits: ArchiveLimits | None = None,
) -> Iterator[ResolvedPlugin]:
    """Resolve ``target`` to a spawnable plugin; temporary files live as long as the block.
    ``known``: a directory target's manifest as the caller already read and parsed it
    (``doctor``'s lint), not parsed again while the file holds the same bytes. ``limits``: those
    a release tarball is extracted within (default: SPEC §5's); nothing else reads them.

    A bare id is looked up under ``dest`` when given, else under ``installed_root()`` (called
    only when an id needs looking up: the CLI passes the daemon configuration's root).

    Raises :class:`TargetError` when nothing runnable is found, :class:`UsageError` for a
    ``dest`` that is a file, and the archive errors of the extraction
    (``archive_invalid`` / ``archive_unsafe``) for a bad tarball.
    """
    text = str(target)
    path = Path(target)
    if dest is not None and dest.exists() and not dest.is_dir():
        raise UsageError(f"--dest {dest} is a file, not a directory; name a plugin root")
    if dest is not None and is_valid_id(text):
        # `check ID --dest D` means the installed plugin, whatever ./ID is.
        yield _resolve_installed(text, dest)
        return
    if path.is_dir():
        if is_valid_id(text) and _installed_candidates(text, root := installed_root()):
            raise UsageError(
                f"{text} is ambiguous: both the directory ./{text} and the plugin installed "
                f"under {root} match; write ./{text} for the directory, or --dest {root} for "
                "the installed plugin"
            )
        resolved = _resolve_directory(path, source="directory", known=known)
        yield resolved if resolved.model is None else replace(resolved, known=known)
        return
    if path.is_file():
        if path.name.endswith((".tar.gz", ".tgz")):
            _require_gzip(path)
            with scratch_directory("nexo-check-") as scratch:
                root = scratch / "plugin"
                root.mkdir()
                safe_extract(path, root, limits)
                yield _resolve_extracted(path, root)
            return
        if path.name.endswith(".toml"):
            yield _resolve_directory(path.parent, source="directory", manifest_path=path)
            return
        raise _not_a_target(text)
    if path.exists():  # a device, a FIFO or a socket: nothing to read a plugin from
        raise _not_a_target(text)
    if is_valid_id(text):
        yield _resolve_installed(text, installed_root())
        return
    raise TargetError(
        f"{text}: no such file or directory (and not a plugin id to look up among installed "
        "plugins)"
    )


def _not_a_target(text: str) -> TargetError:
    return TargetError(
        f"{text}: not a plugin directory, manifest or .tar.gz; "
        "pass a directory with plugin.toml or nexo-plugin.toml, a release tarball or an "
        "installed plugin id"
    )


def _resolve_extracted(tarball: Path, root: Path) -> ResolvedPlugin:
    """The plugin in ``root``, where ``tarball`` was extracted; a :class:`TargetError` names
    the tarball and the member, never the temporary directory (gone when the command ends)."""
    try:
        return _resolve_directory(root, source="tarball")
    except TargetError as error:
        where = str(root.resolve())
        message = error.message.replace(where + os.sep, "").replace(where, "its root")
        if isinstance(error, ManifestRefusedError):
            raise ManifestRefusedError(
                f"{tarball}: {message}",
                root=tarball,
                plugin_id=error.plugin_id,
                refusal=error.refusal,
            ) from error
        raise TargetError(f"{tarball}: {message}") from error


def _require_gzip(path: Path) -> None:
    """A local file named ``.tar.gz`` that is not gzip at all is the wrong argument, not a
    refused archive: ``archive_invalid`` with exit 2. Raises it when the magic bytes differ
    or the file cannot be read."""
    try:
        with path.open("rb") as stream:
            magic = stream.read(2)
    except OSError as error:
        raise TargetError(f"{path}: cannot read it ({error.strerror or error})") from error
    if magic != b"\x1f\x8b":
        raise NexoError(
            f"{path}: not a .tar.gz archive (the file is not gzip-compressed); pass a "
            "release tarball built by `nexo plugin pack`",
            kind="archive_invalid",
            exit_code=EXIT_USAGE,
        )


def _known_document(parsed: ParsedManifest | None) -> dict[str, Any] | None:
    """The document of ``parsed`` when it parsed (lint reads the bytes with the one manifest
    reader, as :func:`_read_document` does); else ``None``."""
    if parsed is None or not parsed.ok:
        return None
    return parsed.data


def _manifest_bytes(manifest_path: Path) -> bytes:
    """Up to a byte more than a manifest may hold of the regular file ``manifest_path`` (a link
    followed, as the daemon reads it): a FIFO put there never blocks, a huge file is never read
    whole (a byte past the limit is enough for lint to say "too large")."""
    return read_regular_bytes(manifest_path, MAX_MANIFEST_BYTES, follow_links=True)


def _read_document(manifest_path: Path) -> tuple[bytes, dict[str, Any]]:
    """The bytes of the manifest at ``manifest_path`` and its document, read as the daemon
    reads it; raises
    :class:`TargetError` when it cannot be read, ``ManifestRefusedError`` when it is no TOML."""
    try:
        raw = _manifest_bytes(manifest_path)
        if len(raw) > MAX_MANIFEST_BYTES:
            raise ManifestRefusedError.linted(
                f"{manifest_path}: larger than {MAX_MANIFEST_BYTES:,} bytes; run `nexo plugin "
                "lint` for details",
                manifest=manifest_path,
                root=manifest_path.parent.resolve(),
                plugin_id="",
            )
        text = raw.decode("utf-8")
    except FileNotFoundError as error:
        raise TargetError(f"{manifest_path}: no such manifest") from error
    except (OSError, UnicodeDecodeError) as error:
        raise TargetError(f"{manifest_path}: cannot read the manifest ({error})") from error
    try:
        return raw, read_manifest_text(text)
    except ManifestTOMLError as error:
        raise ManifestRefusedError.linted(
            f"{manifest_path}: not valid TOML ({error}); run `nexo plugin lint` for details",
            manifest=manifest_path,
            root=manifest_path.parent.resolve(),
            plugin_id="",
        ) from error


def load_manifest(
    manifest_path: Path, *, known: KnownManifest | None = None
) -> tuple[PluginManifest, bytes]:
    """Parse the manifest and return its model and the bytes it was read from (``known``: the
    manifest as the caller already parsed it, used when it is the document of the bytes the
    file holds).

    Raises :class:`TargetError` when the file is missing, unreadable, not TOML, has no valid
    ``plugin.id`` or a ``plugin.version`` the daemon does not parse (run ``nexo plugin lint``
    for the full diagnosis).
    """
    manifest = _known_document(known_parse(known, manifest_path))
    if manifest is not None and known is not None:
        raw = known[1]
    else:
        raw, manifest = _read_document(manifest_path)

    def refused(message: str) -> ManifestRefusedError:
        return ManifestRefusedError.linted(
            f"{manifest_path}: {message}; run `nexo plugin lint` for details",
            manifest=manifest_path,
            root=manifest_path.parent.resolve(),
            plugin_id=_raw_id(manifest),
        )

    try:
        model = plugin_manifest_from_data(manifest)
    except ManifestModelError as error:
        # The id is judged first, as `plugin.id` is what a check needs.
        if error.plugin_id is None or not is_valid_id(error.plugin_id):
            raise refused("missing or invalid `plugin.id`") from error
        raise refused(error.message) from error
    if not is_valid_id(model.id):
        raise refused("missing or invalid `plugin.id`")
    return model, raw


def _resolve_directory(
    root: Path,
    *,
    source: str,
    manifest_path: Path | None = None,
    known: KnownManifest | None = None,
) -> ResolvedPlugin:
    root = root.resolve()
    # A microapp's plugin.toml has the extension shape; its host is another one.
    microapp = find_microapp(root, manifest_path)
    if microapp is not None:
        argv = [microapp.command, *microapp.args]
        return ResolvedPlugin(
            microapp.root, None, microapp.extension_id, argv, source=source, microapp=microapp
        )
    notes: tuple[str, ...] = ()
    if manifest_path is None:
        lookup = find_manifest(root)
        if lookup.path is None:
            problem = no_manifest_problem(root)
            raise TargetError(
                f"{root}: no plugin.toml or nexo-plugin.toml found; is this a plugin directory?"
                if problem is None
                else f"{problem}; a plugin's manifest is a regular file"
            )
        manifest_path = lookup.path
        notes = tuple(shadowed_message(lookup.path.name, other.name) for other in lookup.shadowed)
    model, raw = load_manifest(manifest_path, known=known)
    read = (manifest_path, raw)
    plugin_id = model.id
    entrypoint = model.plugin.entrypoint

    def refused(message: str) -> ManifestRefusedError:
        return ManifestRefusedError.linted(
            f"{root}: {message}", manifest=manifest_path, root=root, plugin_id=plugin_id
        )

    for key, problem in _ENTRYPOINT_PROBLEMS:
        if key in model.invalid:
            raise refused(f"`{key}` {problem}")
    args = list(entrypoint.args)
    reserved = sorted(key for key in entrypoint.env if key.startswith(RESERVED_ENV_PREFIX))
    if reserved:
        raise refused(
            f"`plugin.entrypoint.env` sets {', '.join(reserved)}; names beginning "
            f"with {RESERVED_ENV_PREFIX} are reserved for the daemon, which refuses to spawn "
            "it (NX106)"
        )
    env = dict(entrypoint.env)
    command = entrypoint.command
    launcher = root / "bin" / plugin_id
    if launcher.is_file():
        # Packed layout: bin/<id> is what runs once installed. The manifest's args belong to
        # its command, so they are passed only when that command is this launcher.
        launcher_args = args if _names_launcher(command, root, launcher) else []
        notes = (*notes, *_unpacked_command(command, root, launcher, source))
        if not posix.POSIX and is_script(launcher):
            argv, env, note = python_entry_instead(root, launcher, env)
            argv += launcher_args
            return ResolvedPlugin(
                root,
                model,
                plugin_id,
                argv,
                env,
                source=source,
                notes=(*notes, note),
                manifest_file=read,
            )
        _require_executable(launcher, root)
        argv = [str(launcher), *launcher_args]
        return ResolvedPlugin(
            root, model, plugin_id, argv, env, source=source, notes=notes, manifest_file=read
        )
    if command is None:
        raise TargetError(
            f"{root}: nothing to run: no bin/{plugin_id} and no [plugin.entrypoint] command "
            "in the manifest"
        )
    if not command.strip():
        raise TargetError(f"{root}: `plugin.entrypoint.command` must be a non-empty string")
    program = _resolve_command(command, root, env)
    return ResolvedPlugin(
        root,
        model,
        plugin_id,
        [program, *args],
        env,
        source=source,
        notes=notes,
        manifest_file=read,
    )


#: The Python entries a ``#!`` launcher runs, with the directory it puts on ``PYTHONPATH``:
#: a packed plugin's (docs/pack.md, layout), then a scaffolded project's development launcher
#: (the active environment's packages).
PYTHON_ENTRIES: tuple[tuple[str, str | None], ...] = (
    ("lib/plugin/main.py", "lib"),
    ("src/main.py", None),
)


def is_script(launcher: Path) -> bool:
    """Whether ``launcher`` starts with ``#!`` (a script for a POSIX shell or interpreter)."""
    try:
        with launcher.open("rb") as stream:
            return stream.read(2) == b"#!"
    except OSError as error:
        raise TargetError(f"{launcher}: cannot read it ({error.strerror or error})") from error


def python_entry_instead(
    root: Path, launcher: Path, env: dict[str, str]
) -> tuple[list[str], dict[str, str], str]:
    """On Windows, which runs no ``#!`` script: the Python entry the launcher (a file of
    ``root``: a plugin's ``bin/<id>``, a microapp's ``[transport] command``) runs (see
    :data:`PYTHON_ENTRIES`), started with this interpreter. Raises :class:`TargetError`
    naming what to do when there is none."""
    name = launcher.relative_to(root).as_posix()
    for relative, path_dir in PYTHON_ENTRIES:
        entry = root.joinpath(*relative.split("/"))
        if not entry.is_file():
            continue
        note = (
            f"{name} is a shell script, which Windows cannot run: checking "
            f"{relative} run by {sys.executable}"
        )
        if path_dir is not None:
            env = {**env, "PYTHONPATH": str(root / path_dir)}
            note += f" with {path_dir}/ on PYTHONPATH"
        note += ", as the launcher runs it on Linux and macOS, where the daemon runs"
        return [sys.executable, str(entry)], env, note
    raise TargetError(
        f"{root}: {name} is a script Windows cannot run and there is no "
        f"{' or '.join(relative for relative, _ in PYTHON_ENTRIES)} to run with Python "
        "instead; check this plugin on Linux or macOS, where the daemon runs it"
    )


def _unpacked_command(command: str | None, root: Path, launcher: Path, source: str) -> list[str]:
    """A note when a packed layout's manifest command is a relative path (``./run.sh``) naming
    no executable file of the tree. check runs ``bin/<id>`` (SPEC §4 step 1); the daemon runs
    the manifest's command as written (``Command::new(&command)``,
    nexo_plugin_registry/subprocess.rs:190), so the installed plugin would not start."""
    if command is None or "/" not in command or Path(command).is_absolute():
        return []
    program = Path(os.path.normpath(root / command))
    if not program.is_relative_to(root):
        return []  # climbs out of the plugin root: lint's NX108
    trailing = command.endswith("/")  # names a directory: execve refuses it (ENOTDIR)
    if not trailing and program.is_file() and os.access(program, os.X_OK):
        return []
    where = "the tarball" if source == "tarball" else "the plugin directory"
    if trailing:
        state = "ends in a slash, so it names no file of"
    else:
        state = "is not executable in" if program.is_file() else "is not in"
    name = launcher.relative_to(root).as_posix()
    return [
        f"the manifest's [plugin.entrypoint] command `{command}` {state} {where}: check runs "
        f"{name}, but the daemon runs the manifest's command, so the installed plugin would "
        f'not start; set command = "./{name}"'
    ]


def _names_launcher(command: str | None, root: Path, launcher: Path) -> bool:
    if command is None or "/" not in command:
        return False
    return (root / command).resolve() == launcher.resolve()  # an absolute command stays as it is


def _resolve_command(command: str, root: Path, env: dict[str, str]) -> str:
    """An absolute path, a ``./``-relative path inside ``root``, or a name on PATH."""
    if Path(command).is_absolute():
        program = Path(command)
    elif "/" in command:
        program = (root / command).resolve()
        if not program.is_relative_to(root):
            raise TargetError(
                f"{root}: entrypoint command {command!r} points outside the plugin directory"
            )
    else:
        search_path = env.get("PATH", os.environ.get("PATH", os.defpath))
        found = shutil.which(command, path=search_path)
        if found is None:
            raise TargetError(f"{root}: entrypoint command {command!r} was not found on PATH")
        return found
    if not program.is_file():
        hint = ""
        if program.parent == root / "bin":
            hint = " (no launcher yet: run `nexo plugin pack` and check the tarball)"
        raise TargetError(f"{root}: entrypoint command {command!r} does not exist{hint}")
    _require_executable(program, root)
    return str(program)


def _require_executable(program: Path, root: Path) -> None:
    if not os.access(program, os.X_OK):
        raise TargetError(
            f"{root}: {program} is not executable (chmod +x it, as `nexo plugin pack` does)"
        )


#: The most a receipt may hold (as the installer reads one).
_RECEIPT_LIMIT = 32 * 1024 * 1024


def _read_receipt(path: Path) -> object:
    """The JSON of the receipt ``path``, a regular file: a FIFO planted there raises
    :class:`~nexo_pkg.core.files.NotRegularFileError` instead of blocking the command."""
    return json.loads(read_capped_bytes(path, _RECEIPT_LIMIT, follow_links=False))


def _installed_candidates(plugin_id: str, dest: Path) -> list[tuple[_VersionKey, str, Path]]:
    """Every installed ``<dest>/<id>-<version>/`` with a receipt naming ``plugin_id``."""
    candidates: list[tuple[_VersionKey, str, Path]] = []
    if dest.is_dir():
        for entry in dest.glob(f"{plugin_id}-*"):
            receipt_path = entry / RECEIPT_NAME
            try:
                if not entry.is_dir() or not receipt_path.is_file():
                    continue
            except OSError as error:
                # A plugin directory that cannot be looked into cannot be checked.
                raise TargetError(f"{entry}: cannot read it ({error.strerror or error})") from error
            try:
                receipt = _read_receipt(receipt_path)
            except (OSError, ValueError, RecursionError):
                continue
            if not isinstance(receipt, dict) or receipt.get("id") != plugin_id:
                continue
            version = str(receipt.get("version", entry.name[len(plugin_id) + 1 :]))
            candidates.append((_version_key(version), entry.name, entry))
    return candidates


def _resolve_installed(plugin_id: str, dest: Path) -> ResolvedPlugin:
    """The installed ``<dest>/<id>-<version>/`` with a receipt; the newest version wins."""
    candidates = _installed_candidates(plugin_id, dest)
    if not candidates:
        raise TargetError(
            f"{plugin_id}: not a directory or tarball, and no installed plugin with that id "
            f"under {dest} (use --dest to look elsewhere){_closest_ids(plugin_id, dest)}"
        )
    return _resolve_directory(max(candidates)[2], source="installed")


def _closest_ids(plugin_id: str, dest: Path) -> str:
    """``. Did you mean 'weather'?`` naming the installed ids closest to a mistyped one, as
    every other command taking an installed id says it (only read on this error)."""
    from difflib import get_close_matches  # noqa: PLC0415

    known: set[str] = set()
    with contextlib.suppress(OSError):
        for receipt_path in dest.glob(f"*/{RECEIPT_NAME}"):
            with contextlib.suppress(OSError, ValueError, RecursionError):
                receipt = _read_receipt(receipt_path)
                known_id = receipt.get("id") if isinstance(receipt, dict) else None
                if isinstance(known_id, str) and is_valid_id(known_id):
                    known.add(known_id)
    close = get_close_matches(plugin_id, sorted(known))
    return f". Did you mean {', '.join(repr(each) for each in close)}?" if close else ""


#: How installed versions are ordered: a SemVer version above anything that is not one.
_VersionKey = tuple[int, Version | None]


def _version_key(version: str) -> _VersionKey:
    """Order installed versions as the ``semver`` crate orders them (pre-releases by their
    identifiers, ``beta.10`` above ``beta.2``; build metadata last, as the crate's ``Ord``
    does); a version that does not parse sorts first."""
    try:
        return (1, parse_version(version))
    except VersionError:
        return (0, None)
