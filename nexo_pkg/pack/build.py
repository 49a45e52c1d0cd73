"""``pack``: lint, lay out, vendor, audit, then write the tarball and its sidecars atomically
(docs/pack.md): nothing reaches the output directory until every check has passed, and a
failure never leaves a partial asset behind.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import posixpath
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nexo_pkg.core.diagnostics import FileResult
from nexo_pkg.core.errors import EXIT_USAGE
from nexo_pkg.core.files import link_leading_nowhere, read_regular_bytes, sha256_file
from nexo_pkg.lint.engine import lint_bytes
from nexo_pkg.manifest.document import MAX_MANIFEST_BYTES
from nexo_pkg.manifest.microapp import (
    COMPANION_MANIFEST_NAME,
    MICROAPP_MANIFEST_NAME,
    is_extension_shape,
)
from nexo_pkg.manifest.model import ManifestModelError, PluginManifest, manifest_from_text
from nexo_pkg.manifest.names import (
    RELEASE_MANIFEST_NAME,
    find_manifest,
    no_manifest_problem,
    shadowed_message,
)
from nexo_pkg.manifest.read import ManifestTOMLError, read_manifest
from nexo_pkg.pack.archive import ArchiveEntry, complete_entries, write_tar_gz
from nexo_pkg.pack.audit import Distribution, audit_noarch, audit_target, find_distributions
from nexo_pkg.pack.binary import binary_mismatch
from nexo_pkg.pack.epoch import SourceDateEpoch, resolve_source_date_epoch
from nexo_pkg.pack.errors import (
    ManifestLintError,
    PackError,
    io_error,
    layout_error,
    manifest_error,
    usage_error,
)
from nexo_pkg.pack.layout import (
    KNOWN_TARGETS,
    LAUNCHER,
    MODES_ON_DISK,
    NOARCH,
    TreeWalk,
    asset_name,
    collect_tree,
    git_modes,
    stored_names,
)
from nexo_pkg.pack.vendor import (
    DEFAULT_PYTHON,
    VendorTarget,
    executable_files,
    vendor_requirements,
)
from nexo_pkg.sbom import SBOM_MEMBER, sbom_name
from nexo_pkg.sbom.inventory import Inventory, InventoryError, apply_report, files_digest, read_tree

#: pip's console-script wrappers carry the absolute path of the packing interpreter: useless
#: on the operator's host and different on every machine, so they stay out of lib/. pip
#: --target leaves them in ``bin/`` on POSIX and in ``Scripts/`` (``.exe``) on Windows.
_VENDOR_SKIPPED = frozenset({"bin", "Scripts"})


@dataclass(frozen=True)
class PackOptions:
    """Inputs of one pack (the CLI flags)."""

    project: Path = Path()
    out: Path | None = None
    target: str = NOARCH
    binary: Path | None = None
    requirements: Path | None = None
    source_date_epoch: int | str | None = None
    #: The Python (X.Y) a Python plugin's requirements are resolved for.
    python_version: str = DEFAULT_PYTHON
    #: Called with a short note as each long step starts (vendoring, writing the archive).
    progress: Callable[[str], None] = field(default=lambda _note: None, compare=False)


@dataclass(frozen=True)
class PackedAsset:
    """One file written to the output directory."""

    path: Path
    sha256: str
    size: int

    def to_json(self) -> dict[str, Any]:
        return {"path": str(self.path), "sha256": self.sha256, "size": self.size}


@dataclass(frozen=True)
class ArchiveStats:
    """The size of a packed tree as install measures it."""

    entries: int
    total_size: int
    largest_file: int


def archive_stats(entries: list[ArchiveEntry]) -> ArchiveStats:
    """Count members and file bytes (sizes of files on disk are read with ``stat``)."""
    sizes = [
        len(entry.data)
        if entry.data is not None
        else (entry.source.stat().st_size if entry.source is not None else 0)
        for entry in entries
        if not entry.is_dir
    ]
    return ArchiveStats(len(entries), sum(sizes), max(sizes, default=0))


@dataclass(frozen=True)
class PackResult:
    """The outcome of a successful pack; ``lint`` keeps the manifest's warnings."""

    plugin_id: str
    version: str
    target: str
    epoch: SourceDateEpoch
    assets: tuple[PackedAsset, ...]
    lint: FileResult = field(repr=False)
    #: Warnings about the project beyond lint findings (a shadowed manifest).
    notes: tuple[str, ...]
    #: What install's archive limits look at: member count, unpacked bytes, largest file.
    stats: ArchiveStats

    @property
    def tarball(self) -> PackedAsset:
        return self.assets[0]

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": True,
            "id": self.plugin_id,
            "version": self.version,
            "target": self.target,
            "source_date_epoch": self.epoch.value,
            "assets": [asset.to_json() for asset in self.assets],
            "warnings": list(self.notes),
        }


def _check_flags(options: PackOptions) -> None:
    VendorTarget(options.python_version)  # raises usage for a malformed version
    if not options.target.strip():
        # `--target "$TARGET"` with the variable unset: not a request for noarch.
        raise usage_error(
            "--target is empty; name noarch or a target triple such as "
            "x86_64-unknown-linux-gnu, or leave --target out for the default"
        )
    if options.target == NOARCH:
        if options.binary is not None:
            raise usage_error("--binary needs --target TRIPLE (a noarch tarball has no binary)")
        return
    if options.target not in KNOWN_TARGETS:
        known = ", ".join(sorted(KNOWN_TARGETS))
        raise usage_error(f"unknown target {options.target!r}; use noarch or one of: {known}")
    if options.binary is None:
        if not (options.project / "src" / "main.py").exists():
            raise usage_error(
                f"--target {options.target} needs --binary PATH (the compiled plugin), or "
                f"src/main.py in {options.project} for a Python plugin"
            )
        # A Python plugin for this triple: its requirements are vendored for that platform
        # (usage error for a triple the daemon does not run on).
        VendorTarget(options.python_version, options.target)
        return
    if options.requirements is not None:
        raise usage_error(
            "--requirements only applies to Python plugins (a compiled plugin's --binary is "
            "packed alone)"
        )
    if not options.binary.is_file():
        raise usage_error(f"--binary {options.binary} is not a file")
    if not os.access(options.binary, os.X_OK):
        raise usage_error(f"--binary {options.binary} is not executable (chmod +x it)")


@dataclass(frozen=True)
class _ProjectManifest:
    """The manifest of a project, its bytes and lint result, the notes about it and the
    companion files packed beside it (a microapp's ``nexo-plugin.toml``)."""

    path: Path
    data: bytes
    lint: FileResult
    notes: tuple[str, ...] = ()
    companions: tuple[tuple[str, bytes], ...] = ()
    shipped_name: str = RELEASE_MANIFEST_NAME
    """The manifest's name in the tarball and in DIST: ``nexo-plugin.toml`` for a plugin,
    whatever the project calls it; a microapp's extension manifest keeps ``plugin.toml``."""


def _read_project_manifest(project: Path) -> _ProjectManifest:
    """A microapp's extension-shaped ``plugin.toml`` with its companion ``nexo-plugin.toml``
    (both linted, both packed), else the manifest the daemon reads in ``project``, with a note
    per manifest it shadows (that file stays out of the tarball)."""
    extension = project / MICROAPP_MANIFEST_NAME
    if _is_extension_file(extension):
        # The microapp's rules: the extension parser's for plugin.toml, the companion's for
        # nexo-plugin.toml beside it.
        data, result = _linted(extension)
        companion = project / COMPANION_MANIFEST_NAME
        companions = ((companion.name, _linted(companion)[0]),) if companion.is_file() else ()
        return _ProjectManifest(
            extension, data, result, companions=companions, shipped_name=extension.name
        )
    if not project.is_dir():
        raise PackError(
            f"{project} is not a directory; pass the plugin project directory",
            kind="manifest_missing",
            exit_code=EXIT_USAGE,
        )
    lookup = find_manifest(project)
    if lookup.path is None:
        problem = no_manifest_problem(project)
        raise PackError(
            f"no plugin.toml or nexo-plugin.toml in {project}; run `nexo plugin new` or pass "
            "the project directory"
            if problem is None
            else f"{problem}; a plugin's manifest is a regular file",
            kind="manifest_missing",
            exit_code=EXIT_USAGE,
        )
    notes = tuple(shadowed_message(lookup.path.name, other.name) for other in lookup.shadowed)
    return _ProjectManifest(lookup.path, *_linted(lookup.path), notes=notes)


def _is_extension_file(path: Path) -> bool:
    try:
        raw = read_regular_bytes(path, MAX_MANIFEST_BYTES, follow_links=True)
    except OSError:
        return False
    try:
        return len(raw) <= MAX_MANIFEST_BYTES and is_extension_shape(read_manifest(raw))
    except ManifestTOMLError:
        return False


def _linted(manifest: Path) -> tuple[bytes, FileResult]:
    """``manifest``'s bytes and lint result (the file decides the rules: a microapp's
    extension-shaped plugin.toml and its companion get the microapp's, anything else the
    plugin's); raises ``ManifestLintError`` when it has errors."""
    try:
        # Once, as a regular file (a link followed, as the daemon reads it) and no further than
        # lint reads (a byte past the limit is enough for it to say "too large"): the bytes
        # linted are the bytes packed, a FIFO put there never blocks, a huge file is not read.
        raw = read_regular_bytes(manifest, MAX_MANIFEST_BYTES, follow_links=True)
    except OSError as exc:
        raise io_error(f"cannot read {manifest}: {exc.strerror}") from exc
    result = lint_bytes(raw, path=str(manifest))
    if not result.success:
        raise ManifestLintError(result)
    return raw, result


def _identity(raw: bytes, manifest: Path) -> tuple[str, str]:
    """``(plugin.id, plugin.version)`` of the linted manifest ``raw``, by the manifest model;
    raises ``manifest_invalid`` when the model refuses it."""
    try:
        model = manifest_from_text(raw.decode("utf-8"), max_bytes=MAX_MANIFEST_BYTES)
    except UnicodeDecodeError as exc:
        raise manifest_error(f"{manifest} is not valid UTF-8 TOML: {exc}") from exc
    except ManifestModelError as exc:
        raise manifest_error(f"{manifest}: {exc.message}") from exc
    return model.id, model.version


def _noarch_entries(
    project: Path,
    requirements: Path | None,
    scratch: Path,
    out: Path,
    *,
    progress: Callable[[str], None],
    vendor_for: VendorTarget,
) -> tuple[list[ArchiveEntry], list[Distribution], Inventory, Any]:
    src = project / "src"
    main = src / "main.py"
    if src.is_symlink() and not src.resolve().is_relative_to(project.resolve()):
        # Every file below it would come from outside the project: the rule for a symlink
        # inside src/ holds for src/ itself.
        raise layout_error(
            f"{src} is a symlink pointing outside {project} (to {src.resolve()}); "
            "move the code into the project",
            path=str(src),
        )
    if not main.is_file():
        if main.is_dir():
            problem = "is a directory, not a file"
        elif main.is_symlink() and not main.exists():
            problem = "is a symlink that never reaches a file"
        elif os.path.lexists(main):
            problem = "is not a regular file"
        else:
            problem = "is missing"
        raise layout_error(
            f"{main} {problem}; a Python plugin runs src/main.py (or pack a compiled plugin "
            "with --target TRIPLE --binary PATH)"
        )
    # An output directory inside src/ must not swallow earlier tarballs into the next one;
    # src/ itself cannot be left out, so it cannot be the output directory.
    if out.resolve() == src.resolve():
        raise usage_error(
            f"--out {out} is the plugin's src/, which is packed as lib/plugin/: the next pack "
            "would put this one's tarball into lib/plugin/; choose another directory "
            "(default: DIR/dist)"
        )
    # Where files carry no execute bit, git's index says which are executable, and which
    # plain files are symlinks checked out without symlink support.
    recorded = None if MODES_ON_DISK else git_modes(project)
    walk = TreeWalk(
        "lib/plugin",
        containment_root=project,
        exclude=frozenset({out.resolve()}),
        executables=None if recorded is None else recorded.executables,
        links={} if recorded is None else recorded.links,
    )
    entries = collect_tree(src, walk)
    entries.append(ArchiveEntry("lib/plugin", is_dir=True))
    distributions: list[Distribution] = []
    inventory, environment = Inventory(), None
    if requirements is not None:
        vendor_dir = scratch / "lib"
        progress(f"vendoring {requirements.name} with pip ...")
        report = vendor_requirements(requirements, vendor_dir, cwd=project, vendor_for=vendor_for)
        # Where files carry no execute bit, the bits pip took from the wheels say.
        marked = executable_files(vendor_dir)
        if vendor_dir.is_dir():
            if any(vendor_dir.iterdir()):
                # What the tree was resolved for, whichever interpreter packed it.
                entries.append(ArchiveEntry(VENDOR_RECORD, data=vendor_for.record()))
            if (vendor_dir / "plugin").exists():
                raise layout_error(
                    "a vendored requirement installs a top-level `plugin` package, which "
                    "would collide with lib/plugin/ (the plugin's own code)"
                )
            vendored = TreeWalk(
                "lib",
                containment_root=vendor_dir,
                skip_top=_VENDOR_SKIPPED,
                executables=None if MODES_ON_DISK else (marked or frozenset()),
            )
            entries += collect_tree(vendor_dir, vendored)
            distributions = find_distributions(vendor_dir, "lib")
        inventory, environment = _inventory(vendor_dir, report, requirements)
    return entries, distributions, inventory, environment


def _inventory(vendor_dir: Path, report: Any, requirements: Path) -> tuple[Inventory, Any]:
    """What pip vendored, from the tree's ``*.dist-info`` and pip's report (``vendor_failed``
    naming the file that does not add up); the report's marker environment."""
    try:
        inventory = apply_report(
            read_tree(vendor_dir), report, f"(pip install --report of {requirements.name})"
        )
    except InventoryError as exc:
        raise PackError(
            f"cannot list what {requirements.name} vendored: {exc}", kind="vendor_failed"
        ) from exc
    environment = report.get("environment") if isinstance(report, dict) else None
    return inventory, environment if isinstance(environment, dict) else None


def _entry_digests(entries: list[ArchiveEntry]) -> dict[str, str]:
    """The sha256 of every file entry (read again from disk: the tarball is written later)."""
    digests: dict[str, str] = {}
    for entry in entries:
        if entry.is_dir:
            continue
        if entry.data is not None:
            digests[entry.name] = hashlib.sha256(entry.data).hexdigest()
        elif entry.source is not None:
            try:
                digests[entry.name] = sha256_file(entry.source)
            except OSError as exc:
                raise io_error(f"cannot read {entry.source}: {exc.strerror}") from exc
    return digests


def _sbom_entry(
    entries: list[ArchiveEntry],
    identity: tuple[str, str, str],
    inventory: Inventory,
    environment: Any,
    epoch: int,
) -> ArchiveEntry:
    """The SBOM member (docs/pack.md, "SBOM"): built from ``inventory``, its serial number
    derived from the digest of every other file of the tarball."""
    from nexo_pkg.sbom.cyclonedx import PluginSbom, write_sbom  # noqa: PLC0415

    plugin_id, version, target = identity
    sbom = PluginSbom(
        plugin_id,
        version,
        target,
        inventory.packages,
        epoch=epoch,
        files_sha256=files_digest(_entry_digests(entries)),
        environment=environment,
    )
    return ArchiveEntry(SBOM_MEMBER, data=write_sbom(sbom))


#: The tarball member recording the interpreter the vendored tree was resolved for.
VENDOR_RECORD = "lib/nexo-vendor.json"


def _requirements_for(options: PackOptions, project: Path) -> Path | None:
    if options.requirements is not None:
        if not options.requirements.is_file():
            raise usage_error(f"--requirements {options.requirements} is not a file")
        return options.requirements.resolve()
    default = project / "requirements.txt"
    if default.is_file():
        return default.resolve()
    if os.path.lexists(default):
        # Present but unreadable as a file: packing on would ship the plugin without the
        # dependencies the author listed, and the daemon would find out at its first import.
        if default.is_dir():
            what = "a directory"
        elif default.is_symlink() and not default.exists():
            what = "a symlink that never reaches a file"
        else:
            what = "not a regular file"
        raise io_error(
            f"{default} is {what}, so nothing could be vendored from it; make it the "
            "requirements file, or remove it to pack without vendored dependencies"
        )
    return None


def _make_out(out: Path) -> list[Path]:
    """Create ``out`` and its missing parents, top down; the directories this call created
    (deepest first). One made meanwhile by another process (the ``mkdir`` finds it there)
    is not this call's: it is never removed."""
    missing: list[Path] = []
    for parent in (out, *out.parents):
        if parent.is_dir():
            break
        missing.append(parent)
    created: list[Path] = []
    try:
        for path in reversed(missing):
            try:
                path.mkdir()
            except FileExistsError:
                if path == out and not path.is_dir():
                    raise
                continue  # another's (or a file: the next mkdir says what is wrong)
            created.insert(0, path)
    except OSError:
        _remove_created(created)
        raise
    return created


def _remove_created(created: list[Path]) -> None:
    """Remove the directories ``created`` (deepest first) that are still empty; anything
    else, or a directory something was put in, stays."""
    for path in created:
        with contextlib.suppress(OSError):
            path.rmdir()


def _write_assets(
    out: Path,
    name: str,
    *,
    entries: list[ArchiveEntry],
    manifest_name: str,
    manifest_bytes: bytes,
    sbom_bytes: bytes,
    epoch: int,
) -> tuple[PackedAsset, ...]:
    """Stage the tarball, sidecar, manifest copy and SBOM in a temporary directory in ``out``, then
    rename each over its namesake: a failure before the renames (a source file that vanished,
    a full disk) leaves ``out`` as it was, and the directories this call created for it
    (``out`` and missing parents) are removed again while they are empty."""
    try:
        created = _make_out(out)
    except OSError as exc:
        raise io_error(f"cannot create output directory {out}: {exc.strerror}") from exc
    sidecar_name = f"{name}.sha256"
    names = (name, sidecar_name, manifest_name, sbom_name(name))
    try:
        with tempfile.TemporaryDirectory(prefix=".nexo-pack-", dir=out) as scratch:
            staged = [Path(scratch, final) for final in names]
            with staged[0].open("wb") as stream:
                written = write_tar_gz(entries, stream, mtime=epoch)
            sidecar_bytes = f"{written.sha256}  {name}\n".encode()
            staged[1].write_bytes(sidecar_bytes)
            staged[2].write_bytes(manifest_bytes)
            staged[3].write_bytes(sbom_bytes)
            for path in staged:
                path.chmod(0o644)
            for final in names:
                # A directory in the way would stop the renames halfway, the tarball replaced
                # and its SBOM not: refused before the first one.
                if (out / final).is_dir() and not (out / final).is_symlink():
                    raise IsADirectoryError(errno.EISDIR, "Is a directory", str(out / final))
            for path, final in zip(staged, names, strict=True):
                path.replace(out / final)
    except BaseException as exc:
        # A failure (or a signal) before the renames: nothing of this run is left in ``out``.
        _remove_created(created)
        if not isinstance(exc, OSError):
            raise
        where = exc.filename or out
        raise io_error(f"cannot pack: {where}: {exc.strerror or exc}") from exc
    copies = (
        (sidecar_name, sidecar_bytes),
        (manifest_name, manifest_bytes),
        (names[3], sbom_bytes),
    )
    return (
        PackedAsset(out / name, written.sha256, written.size),
        *(
            PackedAsset(out / final, hashlib.sha256(data).hexdigest(), len(data))
            for final, data in copies
        ),
    )


def pack(options: PackOptions, *, environ: Mapping[str, str] | None = None) -> PackResult:
    """Build the tarball, its ``.sha256`` and a manifest copy in the output directory.

    Raises :class:`PackError` (``usage``, ``io``, ``manifest_missing``,
    ``manifest_invalid``, ``layout_invalid``, ``vendor_failed``, ``native_code``); the
    output directory is left as it was on any failure.
    """
    _check_flags(options)
    project = options.project
    out = options.out if options.out is not None else project / "dist"
    read = _read_project_manifest(project)
    plugin_id, version = _identity(read.data, read.path)
    name = asset_name(plugin_id, version, options.target)
    if out.exists() and not out.is_dir():
        raise usage_error(f"output directory {out} exists and is not a directory")
    # (`realpath`: `Path.resolve` raises RuntimeError on a link loop before Python 3.13.)
    if read.path.name != read.shipped_name and os.path.realpath(out) == os.path.realpath(project):
        # The copy would shadow the project's own manifest for the daemon, lint and every
        # later pack, which would then ship it instead of the edited one.
        raise usage_error(
            f"--out {out} is the project itself: the manifest copy {read.shipped_name} would "
            f"shadow its {read.path.name}; choose another directory (default: DIR/dist)"
        )
    nowhere = link_leading_nowhere(out)
    if nowhere is not None:
        fix = "remove it" if nowhere.loops else "create that directory"
        raise usage_error(
            f"output directory {out} is {nowhere.what}; {fix}, or name another with --out"
        )
    python = options.binary is None
    requirements = _requirements_for(options, project) if python else None
    epoch = resolve_source_date_epoch(
        options.source_date_epoch, os.environ if environ is None else environ, project
    )
    with tempfile.TemporaryDirectory(prefix="nexo-pack-") as scratch:
        entries: list[ArchiveEntry] = [ArchiveEntry(read.shipped_name, data=read.data)]
        entries += [ArchiveEntry(name, data=data) for name, data in read.companions]
        inventory, environment = Inventory(), None
        if python:
            tree, distributions, inventory, environment = _noarch_entries(
                project,
                requirements,
                Path(scratch),
                out,
                progress=options.progress,
                vendor_for=VendorTarget(options.python_version, options.target),
            )
            if options.target == NOARCH:
                audit_noarch(tree, distributions)
            else:
                audit_target(tree, options.target)
            entries.append(
                ArchiveEntry(f"bin/{plugin_id}", executable=True, data=LAUNCHER.encode())
            )
            entries += tree
        else:
            entries.append(ArchiveEntry(f"bin/{plugin_id}", executable=True, source=options.binary))
        try:
            entries = stored_names(complete_entries(entries))
            # The SBOM is made for the names as stored, then added as the last member.
            sbom = _sbom_entry(
                entries, (plugin_id, version, options.target), inventory, environment, epoch.value
            )
            entries = complete_entries([*entries, sbom])
        except ValueError as exc:
            raise layout_error(f"cannot lay out the tarball: {exc}") from exc
        stats = archive_stats(entries)
        options.progress(f"writing {name} ({stats.entries} members, {stats.total_size} bytes) ...")
        assets = _write_assets(
            out,
            name,
            entries=entries,
            manifest_name=read.shipped_name,
            manifest_bytes=read.data,
            sbom_bytes=sbom.data or b"",
            epoch=epoch.value,
        )
    notes = (
        *read.notes,
        *([epoch.note] if epoch.note else []),
        *_command_note(read, entries, plugin_id),
        *_binary_note(options),
        *_bom_note(read, python=python),
        *inventory.warnings,
        *_unhashed(inventory),
    )
    return PackResult(plugin_id, version, options.target, epoch, assets, read.lint, notes, stats)


def _binary_note(options: PackOptions) -> list[str]:
    """A note when ``--binary`` is not an executable for ``--target`` (format or CPU)."""
    if options.binary is None:
        return []
    mismatch = binary_mismatch(options.binary, options.target)
    return [] if mismatch is None else [mismatch]


def _command_note(read: _ProjectManifest, entries: list[ArchiveEntry], plugin_id: str) -> list[str]:
    """A note when the manifest's command is a relative path (``./run.sh``) that names no
    executable file of the tarball, so an installed plugin or microapp would not start. A
    plugin's ``[plugin.entrypoint] command`` is run as written (``Command::new(&command)``,
    nexo_plugin_registry/subprocess.rs:190), not ``bin/<id>``; a microapp's ``[transport]
    command`` is run in the directory of its ``plugin.toml`` (``stdio.rs:676-688``,
    ``src/main.rs:6623-6626``), the tarball's root. Absolute paths and bare names looked up on
    PATH are not the tarball's to hold; a path climbing out with ``..`` is lint's (NX108)."""
    launcher = f"bin/{plugin_id}"
    if read.shipped_name == RELEASE_MANIFEST_NAME:
        command = _entrypoint_command(read.data)
        what, runs = (
            "the manifest's [plugin.entrypoint] command",
            "the daemon runs the manifest's command",
        )
        kind, key = "plugin", "command"
    elif read.shipped_name == MICROAPP_MANIFEST_NAME:
        command = _transport_command(read.data)
        what = f"{MICROAPP_MANIFEST_NAME}'s [transport] command"
        runs = (
            f"the daemon runs it in the directory of {MICROAPP_MANIFEST_NAME}, the tarball's root"
        )
        kind, key = "microapp", "[transport] command"
    else:
        return []
    if command is None or "/" not in command or posixpath.isabs(command):
        return []
    member = posixpath.normpath(command)
    if member == ".." or member.startswith("../"):
        return []
    found = next((entry for entry in entries if entry.name == member), None)
    if command.endswith("/"):
        # A trailing slash names a directory (the kernel refuses to run `./bin/demo/`), which
        # normpath would have dropped.
        state = "ends in a slash, so it names no file of"
    elif found is not None and not found.is_dir and found.executable:
        return []
    else:
        state = "is not executable in" if found is not None and not found.is_dir else "is not in"
    return [
        f"{what} `{command}` {state} the tarball, which ships {launcher} to run the {kind}: "
        f'{runs}, so the installed {kind} would not start; set {key} = "./{launcher}"'
    ]


def _entrypoint_command(data: bytes) -> str | None:
    try:
        model = manifest_from_text(data.decode("utf-8"), max_bytes=MAX_MANIFEST_BYTES)
    except (UnicodeDecodeError, ManifestModelError):
        return None
    return model.plugin.entrypoint.command if isinstance(model, PluginManifest) else None


def _transport_command(data: bytes) -> str | None:
    try:
        transport = read_manifest(data).get("transport")
    except ManifestTOMLError:
        return None
    command = transport.get("command") if isinstance(transport, dict) else None
    return command if isinstance(command, str) else None


def _bom_note(read: _ProjectManifest, *, python: bool) -> list[str]:
    """A note when a Python plugin's manifest starts with a UTF-8 byte-order mark: the daemon
    (``toml_edit``) and ``install`` read past it, Python's ``tomllib``, which the ``nexoai``
    SDK reads the manifest with at start-up, refuses it."""
    if not python or not read.data.startswith(b"\xef\xbb\xbf"):
        return []
    return [
        f"{read.path.name} starts with a byte-order mark: the daemon reads past it, but "
        "Python's tomllib (the nexoai SDK's manifest reader) refuses it and the plugin would "
        "fail at start-up; save the file as UTF-8 without BOM"
    ]


def _unhashed(inventory: Inventory) -> list[str]:
    """A note per vendored package not from a package index (its SBOM entry has no
    ``pkg:pypi`` purl) or not installed from an archive (its SBOM entry has no sha256)."""
    notes = []
    for package in inventory.packages:
        lacks = [] if package.purl is not None else ["no pkg:pypi purl"]
        lacks += [] if package.sha256 is not None else ["no sha256"]
        if not lacks:
            continue
        how = (
            "was installed from a direct reference (a local directory, a file: URL, a VCS "
            "checkout), not from a package index"
            if package.direct
            else "was not installed from a wheel or sdist (a local directory or VCS checkout?)"
        )
        notes.append(
            f"{package.name} {package.version} {how}: its SBOM entry has {' and '.join(lacks)}"
        )
    return notes
