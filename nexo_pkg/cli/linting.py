"""``nexo plugin lint``'s run, shared by its Typer command (:mod:`nexo_pkg.cli.lint`) and by
:func:`fast_lint`.

:func:`run_lint` does the work. :func:`fast_lint` is a small argument parser that
:func:`nexo_pkg.cli.main.main` uses for ``plugin lint`` so a cold run does not pay for
importing Typer: nothing here imports it. Anything the fast parser does not understand
(``--help``, a bad option) falls through to Typer, which gives the usual help and usage errors.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from nexo_pkg.core.errors import EXIT_FAILURE, EXIT_OK, ConfigError, NexoError, UsageError
from nexo_pkg.core.output import OUTPUT, report_error, write_document
from nexo_pkg.lint.reporters import REPORTERS
from nexo_pkg.manifest.options import LintOptions

if TYPE_CHECKING:
    from nexo_pkg.core.diagnostics import FileResult
    from nexo_pkg.lint.config import LintSettings
    from nexo_pkg.lint.discovery import FoundManifest


FORMATS = tuple(REPORTERS)  # the reporter registry names the formats


@dataclass
class LintRequest:
    """The parsed options of one ``nexo plugin lint`` run."""

    paths: list[str] = field(default_factory=list)
    # None: not given (text); an explicit `--format text` with `--json` is a usage error.
    output_format: str | None = None
    stdin: bool = False
    stdin_filename: str | None = None
    strict: bool = False
    select: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)
    nexo_version: str | None = None
    explain: str | None = None
    exclude: list[str] = field(default_factory=list)
    fix: bool = False
    unsafe_fixes: bool = False
    config: str | None = None
    daemon_config: bool = False
    force_exclude: bool = False
    # Set by `--fix -`: the fixed source, printed on stdout instead of the report.
    fixed_stdin: bytes | None = None
    # `--json`, as on every other command: `--format json`.
    json_output: bool = False


def _collect(request: LintRequest, settings: LintSettings) -> list[FileResult]:
    from nexo_pkg.lint.discovery import Walked, discover_manifests  # noqa: PLC0415
    from nexo_pkg.lint.engine import STDIN_NAME, lint_bytes  # noqa: PLC0415
    from nexo_pkg.manifest.document import MAX_MANIFEST_BYTES  # noqa: PLC0415
    from nexo_pkg.manifest.names import listed_directories  # noqa: PLC0415

    if request.paths == ["-"]:
        request.stdin, request.paths = True, []  # `-` names standard input, as in most tools
    elif "-" in request.paths:
        raise UsageError(
            "`-` (standard input) cannot be combined with other PATHs; lint standard input in "
            "a run of its own (a file named `-` is `./-`)"
        )
    if request.stdin:
        if request.paths:
            raise UsageError("--stdin reads one manifest from standard input; drop the PATHs")
        name = request.stdin_filename or STDIN_NAME
        # Settings follow the name the editor gives the buffer, as ruff's --stdin-filename.
        where = Path(name)
        options = settings.options_for(where)
        # One byte past the cap is enough to report NX004: never more, whatever stdin is.
        raw = sys.stdin.buffer.read(MAX_MANIFEST_BYTES + 1)
        if request.fix:
            request.fixed_stdin = raw  # as ruff: the source goes back out, fixed or not
        if request.force_exclude and request.stdin_filename and settings.excluded(where):
            return []
        result = lint_bytes(raw, path=name, options=options)
        fixed = _fixed_text(result, unsafe=request.unsafe_fixes) if request.fix else None
        if fixed is not None:
            request.fixed_stdin = _encoded(fixed[0], like=raw)
            _note_fixed(fixed[1], name)
            result = lint_bytes(request.fixed_stdin, path=name, options=options)
        return [_noted_shadowed(result, request.stdin_filename, options)]
    if request.stdin_filename is not None:
        raise UsageError("--stdin-filename only applies with --stdin")
    daemon_files = _daemon_config_files(request)
    given = request.paths or ([] if daemon_files else ["."])
    named = {Path(path).resolve() for path in [*given, *daemon_files] if _is_file(Path(path))}
    walked = Walked()
    # What the directory search saw answers the lookups after it (settings, companions).
    with listed_directories(walked.files):
        found_manifests = discover_manifests([*given, *daemon_files], walked)
        settings.know(walked.resolved)
        return [
            *_unreadable_config(request),
            *_skipped_drop_ins(request, settings),
            *_lint_found(request, settings, found_manifests, named),
        ]


def _is_file(path: Path) -> bool:
    """Whether ``path`` is a file; one that cannot be looked at counts as a named file (its
    reading is what reports it)."""
    try:
        return path.is_file()
    except OSError:
        return True


def _noted_shadowed(
    result: FileResult, stdin_filename: str | None, options: LintOptions | None
) -> FileResult:
    """``result`` for standard input, plus the warning the file it is named after would get
    (``NX006``) when the daemon reads another manifest beside it."""
    from nexo_pkg.lint.discovery import shadowing_manifest  # noqa: PLC0415
    from nexo_pkg.lint.engine import note_shadowed  # noqa: PLC0415

    used = None if stdin_filename is None else shadowing_manifest(Path(stdin_filename))
    return result if used is None else note_shadowed(result, used, options)


def _lint_found(
    request: LintRequest, settings: LintSettings, manifests: list[FoundManifest], named: set[Path]
) -> list[FileResult]:
    from nexo_pkg.core.files import read_config_bytes  # noqa: PLC0415
    from nexo_pkg.lint.engine import lint_bytes, note_shadowed, unreadable_file  # noqa: PLC0415
    from nexo_pkg.manifest.document import MAX_MANIFEST_BYTES  # noqa: PLC0415

    results: list[FileResult] = []
    for found in manifests:
        path = found.path
        # Files named on the command line are linted even when excluded, unless
        # --force-exclude (as ruff: a pre-commit hook passes every staged file by name).
        named_here = bool(named) and (found.resolved or path.resolve()) in named
        # Below a directory PATH, only what lies under it is matched against `exclude`
        # (`lint vendor` lints vendor/ even when `vendor` is excluded), unless
        # --force-exclude, which also applies `exclude` to the PATH itself.
        below = None if request.force_exclude else found.searched
        if (request.force_exclude or not named_here) and settings.excluded(
            path, found.resolved, below=below
        ):
            continue
        file_options = settings.options_for(path, found.resolved)
        if found.unlisted is not None:
            results.append(unreadable_file(path, found.unlisted, file_options, directory=True))
            continue
        try:
            # A FIFO or a device named on the command line is refused, not read without end.
            raw = read_config_bytes(path, MAX_MANIFEST_BYTES)
        except OSError as error:
            # As ruff's E902: a finding for this file; the others are still linted.
            results.append(unreadable_file(path, error, file_options))
            continue
        result = lint_bytes(raw, path=str(path), options=file_options)
        if request.fix:
            result = _fix(path, result, file_options, unsafe=request.unsafe_fixes)
        if found.shadowed_by is not None:
            result = note_shadowed(result, found.shadowed_by, file_options)
        results.append(result)
    return results


def _unreadable_config(request: LintRequest) -> list[FileResult]:
    """With ``--config DIR``: a finding (``NX008``) for each entry of the daemon's
    configuration directory that its loader cannot read, which stops its boot."""
    if request.config is None and not request.daemon_config:
        return []
    from nexo_pkg.lint.daemon_files import unreadable_config_files  # noqa: PLC0415
    from nexo_pkg.lint.engine import unreadable_file  # noqa: PLC0415

    return [
        unreadable_file(Path(_as_named(path)), OSError(0, why))
        for path, why in unreadable_config_files(_config_directory(request))
    ]


def _skipped_drop_ins(request: LintRequest, settings: LintSettings) -> list[FileResult]:
    """With ``--config DIR``: ``NX235`` (and only it) for each file of ``agents.d`` named as
    YAML that the daemon skips for its name (``x.yml``, ``x.YAML``), whatever it holds."""
    if request.config is None and not request.daemon_config:
        return []
    from nexo_pkg.core.files import read_config_bytes  # noqa: PLC0415
    from nexo_pkg.lint.daemon_files import skipped_drop_ins  # noqa: PLC0415
    from nexo_pkg.lint.engine import lint_config_source, unreadable_file  # noqa: PLC0415
    from nexo_pkg.manifest.document import MAX_MANIFEST_BYTES  # noqa: PLC0415

    results: list[FileResult] = []
    for path in skipped_drop_ins(_config_directory(request)):
        named = Path(_as_named(path))
        options = settings.options_for(named, None)
        try:
            raw = read_config_bytes(path, MAX_MANIFEST_BYTES)
        except OSError as error:
            results.append(unreadable_file(named, error, options))
            continue
        text = raw.decode("utf-8", errors="replace")
        result = lint_config_source(text, path=str(named), options=options, kind="agents")
        if result is not None:
            results.append(result)
    return results


def _as_named(path: Path) -> str:
    """``path`` relative to the working directory when it lies under it, as ruff names the
    files it finds (and as a GitHub annotation's ``file`` wants it); else as it is."""
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def _daemon_config_files(request: LintRequest) -> list[str]:
    """With ``--config DIR`` or ``--daemon-config``: the daemon's config files about microapps
    in its configuration directory (found as the daemon finds it) and the microapp manifests
    they make it discover. Raises :class:`ConfigError` (``config``, exit 2) when the directory
    does not exist."""
    if request.config is None and not request.daemon_config:
        return []
    from nexo_pkg.lint.daemon_files import daemon_config_files  # noqa: PLC0415

    return [_as_named(path) for path in daemon_config_files(_config_directory(request))]


def _config_directory(request: LintRequest) -> Path:
    """The daemon's configuration directory ``--config`` or ``--daemon-config`` names; a
    :class:`ConfigError` (``config``, exit 2) when it is no directory."""
    from nexo_pkg.manifest.daemon_config import config_dir  # noqa: PLC0415

    config = request.config
    if config == "":
        # `--config "$UNSET"`: never the current directory, as on every other command.
        raise UsageError(
            "--config is empty; name the daemon's configuration directory, or leave --config "
            "out for the default"
        )
    directory = Path(config).expanduser().absolute() if config is not None else config_dir(None)
    if not directory.is_dir():
        why = "is not a directory" if directory.exists() else "does not exist"
        # The kind every command gives a --config that names no directory.
        raise ConfigError(f"the daemon's configuration directory {directory} {why}")
    return directory


def _fixed_text(result: FileResult, *, unsafe: bool) -> tuple[str, int] | None:
    """The source of ``result`` with its safe fixes (and unsafe ones with ``unsafe``) applied
    and how many, or ``None`` when nothing changes (or the fixed text would not parse, or not
    be the same TOML document, comments kept)."""
    from nexo_pkg.lint.fixes import apply_fixes, parses_after  # noqa: PLC0415

    if not result.diagnostics or not result.source:
        return None
    fixed, count = apply_fixes(result.source, result.diagnostics, unsafe=unsafe)
    if not count or fixed == result.source or not parses_after(fixed, ()):
        return None
    import tomlkit  # noqa: PLC0415 - only --fix pays for it
    from tomlkit.exceptions import TOMLKitError  # noqa: PLC0415

    try:
        # tomlkit keeps comments and layout: the fixed text must still be a document whose
        # own rendering is byte-for-byte the text we write.
        if tomlkit.parse(fixed).as_string() != fixed:
            return None
    except TOMLKitError:
        return None
    return fixed, count


_BOM = b"\xef\xbb\xbf"


def _encoded(fixed: str, *, like: bytes) -> bytes:
    """``fixed`` as UTF-8, with the byte-order mark the original bytes (``like``, or their
    start) began with: a fix changes the findings' characters, nothing else of the file."""
    return (_BOM if like.startswith(_BOM) else b"") + fixed.encode("utf-8")


def _fix(path: Path, result: FileResult, options: LintOptions, *, unsafe: bool) -> FileResult:
    """Apply the fixes to ``path`` (atomically) and lint it again."""
    from nexo_pkg.lint.engine import lint_bytes  # noqa: PLC0415

    outcome = _fixed_text(result, unsafe=unsafe)
    if outcome is None:
        return result
    fixed, count = outcome
    from nexo_pkg.core.files import write_file_atomically  # noqa: PLC0415

    try:
        with path.open("rb") as original:
            content = _encoded(fixed, like=original.read(len(_BOM)))
        # Into the file a link names, as ruff writes: the link stays, the file is fixed.
        target = path.resolve(strict=True) if path.is_symlink() else path
        write_file_atomically(target, content, mode=target.stat().st_mode & 0o7777)
    except OSError as error:
        raise UsageError(f"cannot write {path}: {error.strerror or error}") from error
    _note_fixed(count, str(path))
    return lint_bytes(content, path=str(path), options=options)


def _note_fixed(count: int, name: str) -> None:
    """Say on stderr how many findings were fixed in ``name`` (a file, or standard input)."""
    if not OUTPUT.quiet:  # a note: `-q` is silent on success, as `ruff check --fix -q`
        sys.stderr.write(f"fixed {count} finding{'s' if count != 1 else ''} in {name}\n")


def run_lint(request: LintRequest) -> int:
    """Run one lint, write the report and return the exit code (0 clean, 1 findings); raises
    :class:`NexoError` (exit 2) for bad options and unreadable paths."""
    if request.json_output:
        if request.output_format not in {None, "json"}:
            raise UsageError(
                f"--json is --format json; it cannot go with --format {request.output_format}"
            )
        request.output_format = "json"
    if request.explain is not None:
        from nexo_pkg.lint.explain import explain_document, explain_text  # noqa: PLC0415
        from nexo_pkg.lint.registry import find_rule  # noqa: PLC0415

        rule = find_rule(request.explain)
        if rule is None:
            raise UsageError(
                f"unknown rule `{request.explain}`; `nexo plugin rule --all` lists every code"
            )
        if request.output_format == "json":
            from nexo_pkg.core.output import emit_json  # noqa: PLC0415

            emit_json({"ok": True, "rules": [explain_document(rule)]})
        else:
            sys.stdout.write(explain_text(rule))
        return EXIT_OK
    if request.output_format is None:
        request.output_format = "text"
    if request.output_format not in FORMATS:
        raise UsageError(
            f"unknown --format {request.output_format!r}; choose one of {', '.join(FORMATS)}"
        )
    if request.nexo_version is not None:
        from nexo_pkg.core.version import Version, VersionError  # noqa: PLC0415

        try:
            Version.parse(request.nexo_version)
        except VersionError as error:
            raise UsageError(
                f"--nexo-version {request.nexo_version!r} is not a version like 0.3.1: {error}"
            ) from error
    from nexo_pkg.lint.config import LintSettings  # noqa: PLC0415

    settings = LintSettings(
        Path.cwd(),
        select=request.select,
        ignore=request.ignore,
        exclude=request.exclude,
        nexo_version=request.nexo_version,
    )
    results = _collect(request, settings)

    from nexo_pkg.lint.registry import rules_for_codes  # noqa: PLC0415
    from nexo_pkg.lint.reporters import ReportContext  # noqa: PLC0415

    rules = rules_for_codes({d.code for result in results for d in result.diagnostics})
    # Every format is the report itself, so all of them go to stdout (as ruff and flake8 do);
    # stderr keeps notes and errors about the run.
    if not results and not request.stdin:
        # As ruff does: nothing to lint is worth a note, not a failure.
        sys.stderr.write(
            "warning: no manifest (plugin.toml or nexo-plugin.toml) found under "
            f"{', '.join(request.paths or ['.'])}\n"
        )
    # `--fix -` prints the fixed source on stdout (as ruff); the report then goes to stderr.
    report_stream = sys.stdout if request.fixed_stdin is None else sys.stderr
    if request.output_format == "text":
        from nexo_pkg.cli.common import colour_enabled  # noqa: PLC0415
        from nexo_pkg.core.terminal import escaping_encoding  # noqa: PLC0415

        context = ReportContext(
            colour=colour_enabled(report_stream),
            rules=rules,
            summary=not OUTPUT.quiet,
            unsafe_fixes=request.unsafe_fixes,
            encoding=escaping_encoding(report_stream),
        )
    else:
        context = ReportContext(colour=False, rules=rules, unsafe_fixes=request.unsafe_fixes)
    if request.fixed_stdin is not None:
        sys.stdout.buffer.write(request.fixed_stdin)
        sys.stdout.flush()
    write_document(report_stream, REPORTERS[request.output_format](results, context))
    failed = any(result.errors or (request.strict and result.warnings) for result in results)
    return EXIT_FAILURE if failed else EXIT_OK


_VALUE_FLAGS = {
    "--format": "output_format",
    "--stdin-filename": "stdin_filename",
    "--select": "select",
    "--ignore": "ignore",
    "--nexo-version": "nexo_version",
    "--explain": "explain",
    "--color": "color",
    "--exclude": "exclude",
    "--config": "config",
}
_BOOL_FLAGS = {
    "--json": "json_output",
    "--stdin": "stdin",
    "--strict": "strict",
    "--fix": "fix",
    "--unsafe-fixes": "unsafe_fixes",
    "--daemon-config": "daemon_config",
    "--force-exclude": "force_exclude",
}
# The options every command shares (nexo_pkg.cli.app), applied as they are parsed.
_SHARED_BOOL_FLAGS = {"--quiet": "quiet", "-q": "quiet", "--verbose": "verbose", "-v": "verbose"}


def _parse_fast(arguments: Sequence[str], shared: list[tuple[str, str]]) -> LintRequest | None:
    """Parse ``plugin lint`` arguments (``--quiet``, ``--verbose`` and ``--color`` collected in
    ``shared``), or ``None`` for anything Typer should handle."""
    request = LintRequest()
    index = 0
    only_paths = False
    while index < len(arguments):
        argument = arguments[index]
        index += 1
        if only_paths or not argument.startswith("-") or argument == "-":
            request.paths.append(argument)
            continue
        if argument == "--":
            only_paths = True
            continue
        name, has_value, inline = argument.partition("=")
        if name in _SHARED_BOOL_FLAGS and not has_value:
            shared.append((_SHARED_BOOL_FLAGS[name], ""))
            continue
        if name in _BOOL_FLAGS and not has_value:
            setattr(request, _BOOL_FLAGS[name], True)
            continue
        if name not in _VALUE_FLAGS:
            return None  # --help, a typo, a short option: Typer explains
        if has_value:
            value = inline
        elif index < len(arguments):
            value = arguments[index]
            index += 1
        else:
            return None
        attribute = _VALUE_FLAGS[name]
        if attribute == "color":
            shared.append(("color", value))
            continue
        if attribute in {"select", "ignore", "exclude"}:
            getattr(request, attribute).append(value)
        else:
            setattr(request, attribute, value)
    return request


def fast_lint(arguments: Sequence[str]) -> int | None:
    """Run ``nexo plugin lint ARGUMENTS`` without Typer; ``None`` means "let Typer do it"."""
    shared: list[tuple[str, str]] = []
    request = _parse_fast(arguments, shared)
    if request is None:
        return None
    from nexo_pkg.cli.common import COLOR_CHOICES, set_color, set_verbosity  # noqa: PLC0415

    named = {name for name, _ in shared}
    if {"quiet", "verbose"} <= named or any(
        name == "color" and value not in COLOR_CHOICES for name, value in shared
    ):
        return None  # a shared option used wrongly: Typer says it as for every other command

    try:
        for name, value in shared:
            if name == "color":
                set_color(value)
            else:
                set_verbosity(**{name: True})
        return run_lint(request)
    except NexoError as error:
        return report_error(
            error, json_output=request.json_output or request.output_format == "json"
        )
