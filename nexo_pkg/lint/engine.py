"""Lint entry points used by the CLI, ``pack``, ``install``, ``check`` and the language server,
in the order docs/lint.md ("How it works") describes. Nothing here prints; bad input of any
kind is a diagnostic, and only an unreadable path raises (``OSError``).
"""

from __future__ import annotations

import errno
import re
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nexo_pkg.core.diagnostics import Diagnostic, FileResult, Position, Span
from nexo_pkg.lint.suppression import unsuppressed
from nexo_pkg.manifest.core_rules import UNPARSED_CODES
from nexo_pkg.manifest.document import ParsedManifest, decode_manifest, parse_manifest
from nexo_pkg.manifest.options import LintOptions

if TYPE_CHECKING:
    from nexo_pkg.lint.daemon_files import ConfigKind

__all__ = [
    "STDIN_NAME",
    "lint_bytes",
    "lint_bytes_keeping",
    "lint_config_source",
    "lint_file",
    "lint_source",
    "note_shadowed",
    "unreadable_file",
]

TRUST_POLICY_FILENAME = "trusted_keys.toml"
STDIN_NAME = "<stdin>"
"""How standard input is named when ``--stdin-filename`` gives it no name: it names no file,
so nothing is judged by where such a file would be."""
FLEET_FILES = {
    "nexo-plugins.toml": ("nexo-plugins.schema.json", "fleet-wanted-set"),
    "nexo-plugins.lock": ("nexo-plugins.lock.schema.json", "fleet-lock"),
}
"""A fleet's wanted set and lock, by file name: the JSON Schema each is checked against (they
have no rules of their own) and the parser the report names."""


def diagnostic_matches(diagnostic: Diagnostic, selectors: Iterable[str]) -> bool:
    """Whether a ``--select``/``--ignore`` selector names this diagnostic.

    A selector is a full code (``NX011``), a code prefix (``NX1`` = every ``NX1xx``), a rule
    name (``unknown-key``) or a name prefix (``sandbox-``); codes are case-insensitive.
    """
    code = diagnostic.code.upper()
    return any(
        code.startswith(selector.upper()) or diagnostic.name.startswith(selector.lower())
        for selector in selectors
    )


def _filtered(diagnostics: Iterable[Diagnostic], options: LintOptions | None) -> list[Diagnostic]:
    """``diagnostics`` that ``options`` selects (every one without options), in file order.

    A finding that the file could not be parsed (:data:`UNPARSED_CODES`) is always kept: the
    daemon refuses such a file whatever rules a run selects."""
    options = options or LintOptions()
    kept = [
        diagnostic
        for diagnostic in diagnostics
        if diagnostic.code in UNPARSED_CODES
        or (
            (not options.select or diagnostic_matches(diagnostic, options.select))
            and not diagnostic_matches(diagnostic, options.ignore)
        )
    ]
    kept.sort(key=lambda d: (d.span.start, d.span.end, d.code))
    return kept


def _related(first: str, second: str) -> bool:
    """Whether two dotted key paths are equal or one contains the other."""
    if first == second:
        return True
    shorter, longer = sorted((first, second), key=len)
    return longer.startswith(shorter) and longer[len(shorter)] in ".["


def lint_parsed(parsed: ParsedManifest, options: LintOptions | None = None) -> list[Diagnostic]:
    """All findings of a parsed manifest, filtered by ``options`` and sorted in file order."""
    options = options or LintOptions()
    if parsed.syntax_errors:
        return _filtered(parsed.syntax_errors, options)
    data: dict[str, Any] = parsed.data
    from nexo_pkg.manifest import rules  # noqa: PLC0415 - keeps `import engine` cheap

    if "transport" in data:
        # A legacy v1 document gets one diagnostic describing the v2 shape, nothing else.
        legacy = rules.detect_legacy_v1(data, parsed.locate)
        if legacy is not None:
            return _filtered([legacy], options)

    from nexo_pkg.manifest.schema import (  # noqa: PLC0415 - keeps `import engine` cheap
        VALUE_CONSTRAINT_KEYWORDS,
        schema_diagnostics,
    )

    structural = schema_diagnostics(data, lambda: parsed.spans)
    semantic = list(rules.check_semantics(data, parsed.locate, options, lambda: parsed.spans))
    # One diagnostic per real problem: a value constraint the schema restates (a pattern, a
    # length) gives way to the semantic rule that explains it, and a semantic finding on a
    # value of the wrong type gives way to the type error.
    semantic_paths = [diagnostic.key_path for diagnostic in semantic]
    kept = [
        diagnostic
        for keyword, diagnostic in structural
        if keyword not in VALUE_CONSTRAINT_KEYWORDS
        or not any(_related(diagnostic.key_path, path) for path in semantic_paths)
    ]
    mistyped = {diagnostic.key_path for keyword, diagnostic in structural if keyword == "type"}
    kept.extend(diagnostic for diagnostic in semantic if diagnostic.key_path not in mistyped)
    return _filtered(kept, options)


def _lint_by_parser(
    parsed: ParsedManifest, path: str, options: LintOptions | None
) -> tuple[str, list[Diagnostic]]:
    """The parser whose rules apply to ``parsed`` (see :mod:`nexo_pkg.lint.microapp`) and its
    findings."""
    maybe_microapp = "transport" in parsed.data or "capabilities" in parsed.data
    if parsed.syntax_errors and Path(path).name == "nexo-plugin.toml":
        from nexo_pkg.lint import microapp  # noqa: PLC0415 - keeps `import engine` cheap

        sibling = microapp.companion_of(path)
        if sibling is not None:
            # A microapp's companion the host cannot parse is skipped, as for any parse error.
            found = microapp.lint_companion_syntax(parsed, sibling)
            return "companion-manifest", _filtered(found, options or LintOptions())
    if parsed.syntax_errors or not (maybe_microapp or Path(path).name == "nexo-plugin.toml"):
        return "plugin-manifest", lint_parsed(parsed, options)
    from nexo_pkg.lint import microapp  # noqa: PLC0415 - keeps `import engine` cheap

    parser = microapp.manifest_parser(parsed.data, path)
    options = options or LintOptions()
    if parser == "extension-manifest":
        return parser, _filtered(microapp.lint_microapp(parsed, options), options)
    sibling = microapp.companion_of(path) if parser == "companion-manifest" else None
    if sibling is not None:
        return parser, _filtered(microapp.lint_companion(parsed, sibling), options)
    return "plugin-manifest", lint_parsed(parsed, options)


def lint_source(
    text: str,
    *,
    path: str = "nexo-plugin.toml",
    options: LintOptions | None = None,
    keep: list[ParsedManifest] | None = None,
    parsed: ParsedManifest | None = None,
    bom: bool = True,
) -> FileResult:
    """Lint manifest ``text``; never raises for bad input. The file decides whose rules apply
    (:mod:`nexo_pkg.lint.microapp`); the result's ``parser`` says which. ``keep`` receives
    the parsed manifest, for a caller that reads the document too; ``parsed``: one a caller
    kept, used when it is of this very text (else the text is parsed). A leading byte-order
    mark is dropped, as :func:`lint_file` and the daemon's TOML parser (``toml_edit``) drop it;
    ``bom=False``: the caller already dropped it, so a second one is the TOML's (an error, as
    the daemon reads it)."""
    if bom:
        text = text.removeprefix("\ufeff")
    if parsed is None or parsed.text != text:
        parsed = parse_manifest(text)
    if keep is not None:
        keep.append(parsed)
    parser = "plugin-manifest"
    try:
        parser, diagnostics = _lint_by_parser(parsed, path, options)
    except RecursionError:
        # Deeply nested values that the parser accepted can still exhaust a validator.
        from nexo_pkg.manifest import core_rules  # noqa: PLC0415 - rare path

        diagnostics = [
            core_rules.NESTING_TOO_DEEP.diagnostic(
                "arrays or inline tables are nested too deeply to check",
                "",
                parsed.spans.root_span(),
                "no manifest key needs more than a few levels of nesting",
            )
        ]
    result = FileResult(path, tuple(unsuppressed(text, diagnostics)), text, parser)
    if not result.diagnostics:
        return result  # nothing to fix: a clean manifest never loads the fixers
    from nexo_pkg.lint.fixes import with_fixes  # noqa: PLC0415

    return with_fixes(result)


def lint_config_source(
    text: str,
    *,
    path: str,
    options: LintOptions | None = None,
    kind: ConfigKind | None = None,
    bom: bool = False,
) -> FileResult | None:
    """Lint one of the daemon's config files (``extensions.yaml``, ``agents.yaml``,
    ``agents.d/*.yaml``), of ``kind`` when given, else of the kind its name says; ``None``
    when ``path``/``text`` is none of them. ``bom``: the file started with a byte-order mark
    dropped from ``text``. Never raises."""
    from nexo_pkg.lint import daemon_files  # noqa: PLC0415 - only config files pay for it

    kind = kind or daemon_files.config_kind(path, text)
    if kind is None:
        return None
    version = options.nexo_version if options is not None else None
    found = daemon_files.lint_config_text(text, path=path, kind=kind, nexo_version=version, bom=bom)
    diagnostics = _filtered(found, options)
    return FileResult(
        path, tuple(unsuppressed(text, diagnostics)), text, daemon_files.PARSER_NAMES[kind]
    )


def lint_bytes(
    raw: bytes,
    *,
    path: str = "nexo-plugin.toml",
    options: LintOptions | None = None,
    keep: list[ParsedManifest] | None = None,
    parsed: ParsedManifest | None = None,
) -> FileResult:
    """Lint raw file content: decoding problems (not UTF-8, binary, too large) are findings. A
    daemon config file or a trust policy (docs/lint.md, ``PATH``) gets its own linter.
    ``keep`` receives the parsed manifest when the content was linted as one; ``parsed``: a
    manifest kept so from these bytes before, not parsed again."""
    if _skipped_drop_in(path):
        text = raw.decode("utf-8", errors="replace")
        skipped = lint_config_source(text, path=path, options=options, kind="agents")
        if skipped is not None:
            return skipped
    text, problems = decode_manifest(raw, yaml=_yaml_named(path))
    if any(problem.severity == "error" for problem in problems):
        return FileResult(path, tuple(_filtered(problems, options)), text)
    result = _lint_text(text, path, options, keep, parsed, bom=raw.startswith(b"\xef\xbb\xbf"))
    if not problems:
        return result
    found = (*_filtered(problems, options), *result.diagnostics)
    return FileResult(result.path, found, result.source)


def lint_bytes_keeping(
    raw: bytes, *, path: str, options: LintOptions | None = None
) -> tuple[FileResult, ParsedManifest | None]:
    """:func:`lint_bytes`, and the manifest it parsed (``None`` when the content was not
    linted as a manifest): a caller that needs the document too does not parse it again."""
    kept: list[ParsedManifest] = []
    result = lint_bytes(raw, path=path, options=options, keep=kept)
    return result, kept[0] if kept else None


def _skipped_drop_in(path: str) -> bool:
    """Whether ``path`` is a file of a daemon's ``agents.d/`` that its loader skips for its name
    (anything but ``*.yaml``: ``x.yml``, ``README.md``, ``x.txt``), and that is no TOML file
    lint reads (a manifest, a fleet file or a trust policy of any name ends in ``.toml``).
    Whatever it holds, the daemon never reads it: ``NX235`` alone says so. Standard input
    without a name (:data:`STDIN_NAME`) is no file of any directory."""
    named = Path(path)
    return (
        path != STDIN_NAME
        and named.absolute().parent.name == "agents.d"  # daemon_files.AGENTS_DROP_IN_DIR
        and named.suffix != ".yaml"
        and not named.name.lower().endswith(".toml")
        and named.name not in FLEET_FILES
    )


def _yaml_named(path: str) -> bool:
    """Whether ``path`` names a YAML file: ``.yaml`` or ``.yml`` in any case (``x.YAML``)."""
    return path.lower().endswith((".yaml", ".yml"))


def _lint_text(
    text: str,
    path: str,
    options: LintOptions | None,
    keep: list[ParsedManifest] | None = None,
    parsed: ParsedManifest | None = None,
    *,
    bom: bool = False,
) -> FileResult:
    """Lint decoded ``text`` as the daemon config, fleet file or trust policy its name (or,
    for a policy, its content) says it is, else as a manifest; ``bom``: a byte-order mark
    that started the file was dropped (a daemon config file's YAML reader keeps it)."""
    if _yaml_named(path):
        config_result = lint_config_source(text, path=path, options=options, bom=bom)
        if config_result is not None:
            return config_result
    fleet = FLEET_FILES.get(Path(path).name)
    if fleet is not None:
        return _lint_fleet_file(text, path, options, *fleet)
    if Path(path).name == TRUST_POLICY_FILENAME or _looks_like_trust_policy(text, path):
        from nexo_pkg.trust.policy import lint_policy_source  # noqa: PLC0415 - rare path

        policy = lint_policy_source(text, path=path)
        kept = _filtered(policy.diagnostics, options)
        return FileResult(policy.path, tuple(kept), policy.source, "trust-policy")
    # decode_manifest dropped the one byte-order mark the daemon skips.
    return lint_source(text, path=path, options=options, keep=keep, parsed=parsed, bom=False)


def _lint_fleet_file(
    text: str, path: str, options: LintOptions | None, schema: str, parser: str
) -> FileResult:
    """Lint a fleet's ``nexo-plugins.toml`` or lock against its schema (not as a manifest)."""
    from nexo_pkg.manifest.schema_lint import lint_against_schema  # noqa: PLC0415 - rare path

    found = _filtered(lint_against_schema(text, schema, path=path).diagnostics, options)
    return FileResult(path, tuple(unsuppressed(text, found)), text, parser)


_POLICY_ROOT_KEY = re.compile(r"^\s*(?:schema_version\s*=|\[\[\s*authors\s*\]\])", re.MULTILINE)
_PLUGIN_TABLE = re.compile(r"^\s*(?:\[\s*plugin\b|plugin\s*[.=])", re.MULTILINE)


def _looks_like_trust_policy(text: str, path: str) -> bool:
    """An explicitly named file of another name holding ``schema_version`` or
    ``[[authors]]`` and no ``[plugin]`` table is a trust policy (a copy or a renamed one)."""
    from nexo_pkg.manifest.names import is_manifest_name  # noqa: PLC0415 - rare path

    if is_manifest_name(Path(path).name):
        return False
    return bool(_POLICY_ROOT_KEY.search(text)) and not _PLUGIN_TABLE.search(text)


def lint_file(path: Path, *, options: LintOptions | None = None) -> FileResult:
    """Lint the manifest at ``path``; an unreadable file raises :class:`OSError`."""
    return lint_bytes(path.read_bytes(), path=str(path), options=options)


def unreadable_file(
    path: Path, error: OSError, options: LintOptions | None = None, *, directory: bool = False
) -> FileResult:
    """The finding for a manifest that cannot be read (``NX008``), as ruff's E902: the run
    goes on with the other files and fails at the end. With ``directory``, ``path`` is a
    directory the search could not list (the manifests it may hold were not linted)."""
    from nexo_pkg.manifest.core_rules import UNREADABLE_FILE  # noqa: PLC0415 - rare path

    reason = error.strerror or type(error).__name__
    if error.errno == errno.ENOENT and path.is_symlink() and not path.exists():
        reason = "dangling symlink (its target does not exist)"
    start = Position(1, 1)
    if directory:
        message = f"cannot list directory {path.name}: {reason} (manifests in it were not linted)"
        fix = "make the directory readable, or exclude it (`exclude` or --exclude)"
    else:
        message = f"cannot read {path.name}: {reason}"
        fix = "make the file readable, repair the symlink, or remove it"
    finding = UNREADABLE_FILE.diagnostic(message, "", Span(start, start), fix)
    return FileResult(str(path), tuple(_filtered([finding], options)), "")


def note_shadowed(result: FileResult, used: Path, options: LintOptions | None = None) -> FileResult:
    """``result`` plus the warning that the daemon reads ``used``, a manifest in the same
    directory, instead of this file (subject to ``--select``/``--ignore``)."""
    from nexo_pkg.manifest.core_rules import SHADOWED_MANIFEST  # noqa: PLC0415 - rare path
    from nexo_pkg.manifest.names import shadowed_message  # noqa: PLC0415

    start = Position(1, 1)
    warning = SHADOWED_MANIFEST.diagnostic(
        shadowed_message(used.name, Path(result.path).name),
        "",
        Span(start, start),
        f"delete one of {used.name} and {Path(result.path).name}",
    )
    kept = _filtered([warning, *result.diagnostics], options)
    return replace(result, diagnostics=tuple(kept))
