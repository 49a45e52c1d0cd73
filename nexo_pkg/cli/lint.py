"""CLI for ``nexo plugin lint``, ``schema`` and ``rule``: each command a module-level
function :func:`register` attaches.

A lint runs in :mod:`nexo_pkg.cli.linting`, which :func:`lint_command` and the Typer-free fast
path of :func:`nexo_pkg.cli.main.main` share; this module imports Typer, so the fast path never
imports it.
"""

from __future__ import annotations

import sys

import typer

from nexo_pkg.cli.linting import FORMATS, LintRequest, run_lint
from nexo_pkg.core.errors import NexoError, UsageError
from nexo_pkg.core.output import report_error, write_document

# `nexo plugin schema --kind`: every JSON Schema shipped in nexo_pkg/schemas, and what it is.
SCHEMAS = {
    "plugin": ("nexo-plugin.schema.json", "plugin.toml / nexo-plugin.toml"),
    "microapp": ("microapp-manifest.schema.json", "a microapp's plugin.toml"),
    "extensions": ("extensions.schema.json", "the daemon's extensions.yaml"),
    "wanted": ("nexo-plugins.schema.json", "nexo-plugins.toml"),
    "lock": ("nexo-plugins.lock.schema.json", "nexo-plugins.lock"),
    "trusted-keys": ("trusted-keys.schema.json", "trusted_keys.toml"),
    "lint-report": ("lint-report.schema.json", "lint --format json"),
}
SCHEMA_KINDS_HELP = (
    "Which schema: " + "; ".join(f"{name}: {what}" for name, (_, what) in SCHEMAS.items()) + "."
)


def lint_command(  # noqa: PLR0917  # typer maps each flag to one parameter
    paths: list[str] = typer.Argument(  # noqa: B008 - Typer's declaration style
        None,
        help="Manifest files (any name) or directories searched for plugin.toml and "
        "nexo-plugin.toml. "
        "Default: the current directory.",
        show_default=False,
    ),
    output_format: str | None = typer.Option(
        None,
        "--format",
        metavar=f"[{'|'.join(FORMATS)}]",
        help=f"Report format: {', '.join(FORMATS)} (default text). The report goes to stdout.",
    ),
    stdin: bool = typer.Option(False, "--stdin", help="Lint one manifest read from stdin."),
    stdin_filename: str | None = typer.Option(
        None, "--stdin-filename", help="File name to report for --stdin input."
    ),
    strict: bool = typer.Option(False, "--strict", help="Warnings also fail (exit 1)."),
    select: list[str] = typer.Option(  # noqa: B008
        [],
        "--select",
        help="Only report these rules: comma-separated codes, code prefixes or names.",
    ),
    ignore: list[str] = typer.Option(  # noqa: B008
        [], "--ignore", help="Do not report these rules (codes, code prefixes or names)."
    ),
    nexo_version: str | None = typer.Option(
        None,
        "--nexo-version",
        help="Check min_nexo_version against this daemon version (X.Y.Z).",
    ),
    explain: str | None = typer.Option(
        None, "--explain", help="Print the documentation of a rule (code or name) and exit."
    ),
    exclude: list[str] = typer.Option(  # noqa: B008
        [],
        "--exclude",
        metavar="GLOB",
        help="Skip matching files and directories in the directory search (repeatable).",
    ),
    fix: bool = typer.Option(
        False,
        "--fix",
        help="Apply the safe fixes in place, keeping comments (`[*]` in the report marks "
        "what --fix would change). With `-`, print the fixed source on stdout (the report "
        "goes to stderr).",
    ),
    unsafe_fixes: bool = typer.Option(
        False,
        "--unsafe-fixes",
        help="Count unsafe fixes as fixable too: those that change behaviour, such as "
        "renaming a tool or a NEXO_ variable the plugin's code also uses. "
        "`--fix --unsafe-fixes` applies them.",
    ),
    force_exclude: bool = typer.Option(
        False,
        "--force-exclude",
        help="Apply exclude (config and --exclude) to files named on the command line "
        "too, as a pre-commit hook needs.",
    ),
    config: str | None = typer.Option(
        None,
        "--config",
        metavar="DIR",
        help="Also lint the daemon's configuration in DIR: extensions.yaml, agents.yaml, "
        "agents.d/*.yaml, and the microapps they make the daemon discover.",
    ),
    daemon_config: bool = typer.Option(
        False,
        "--daemon-config",
        help="As --config, with the directory found as the daemon finds it: "
        "NEXO_CONFIG_DIR, ./config, $NEXO_HOME/config.",
    ),
    json_output: bool = typer.Option(
        False, "--json", help="Print one JSON document on stdout (as --format json)."
    ),
) -> None:
    """Lint plugin manifests (plugin.toml, nexo-plugin.toml): syntax, schema and every rule.

    PATH `-` reads one manifest from standard input. Each manifest takes its settings from
    the nearest .nexo.toml ([lint]) or pyproject.toml ([tool.nexo.lint]) above it: select,
    ignore, per-file-ignores, exclude. A `# nexo: ignore[CODE]` comment silences that finding
    on its line; a bare `# nexo: ignore` silences every finding on its line. With --quiet
    a clean run prints nothing.

    Exit codes: 0 clean; 1 errors (or warnings with --strict); 2 bad usage, unreadable path.
    """
    request = LintRequest(
        paths=list(paths or []),
        output_format=output_format,
        stdin=stdin,
        stdin_filename=stdin_filename,
        strict=strict,
        select=list(select),
        ignore=list(ignore),
        nexo_version=nexo_version,
        explain=explain,
        exclude=list(exclude),
        fix=fix,
        unsafe_fixes=unsafe_fixes,
        config=config,
        daemon_config=daemon_config,
        force_exclude=force_exclude,
        json_output=json_output,
    )
    try:
        code = run_lint(request)
    except NexoError as error:
        code = report_error(error, json_output=json_output or output_format == "json")
    raise typer.Exit(code)


def schema_command(
    kind: str = typer.Option(
        "plugin",
        "--kind",
        metavar=f"[{'|'.join(SCHEMAS)}]",
        help=SCHEMA_KINDS_HELP,
    ),
) -> None:
    """Print a JSON Schema nexo-pkg ships (Draft 2020-12): by default the one of plugin
    manifests (plugin.toml / nexo-plugin.toml); --kind names the others."""
    from nexo_pkg.manifest.schema import MANIFEST_SCHEMA_FILE  # noqa: PLC0415

    if kind not in SCHEMAS:
        report_error(UsageError(f"--kind {kind!r}: choose one of {', '.join(SCHEMAS)}"))
        raise typer.Exit(2)
    # Written whole under a signal, as every other document on stdout.
    write_document(sys.stdout, (MANIFEST_SCHEMA_FILE.parent / SCHEMAS[kind][0]).read_text("utf-8"))


def rule_command(
    code: str | None = typer.Argument(
        None, metavar="[CODE]", help="A rule's code or name (NX113, tool-namespace-violation)."
    ),
    every: bool = typer.Option(False, "--all", help="List every rule: code, name, severity."),
    json_output: bool = typer.Option(False, "--json", help="Print one JSON document."),
) -> None:
    """Explain a lint rule, or list every one with --all (as `ruff rule`), from the rules
    of this installed nexo-pkg: no documentation file is needed.

    Exit codes: 0 shown; 2 unknown rule, or neither CODE nor --all.
    """
    from nexo_pkg.core.output import emit_json  # noqa: PLC0415
    from nexo_pkg.lint.explain import explain_document, explain_text  # noqa: PLC0415
    from nexo_pkg.lint.registry import every_rule, find_rule  # noqa: PLC0415

    if (code is None) == (not every):
        error = UsageError("name one rule CODE, or pass --all (not both)")
        raise typer.Exit(report_error(error, json_output=json_output))
    if every:
        rules = list(every_rule().values())
    else:
        found = find_rule(str(code))
        if found is None:
            error = UsageError(f"unknown rule `{code}`; `nexo plugin rule --all` lists them")
            raise typer.Exit(report_error(error, json_output=json_output))
        rules = [found]
    if json_output:
        emit_json({"ok": True, "rules": [explain_document(rule) for rule in rules]})
    elif every:
        for rule in rules:
            sys.stdout.write(f"{rule.code:<8} {rule.name:<40} {rule.severity:<8} {rule.summary}\n")
    else:
        sys.stdout.write(explain_text(rules[0]))
    sys.stdout.flush()


def register(app: typer.Typer) -> None:
    """Attach ``lint``, ``schema`` and ``rule`` to the ``plugin`` sub-app."""
    app.command("lint")(lint_command)
    app.command("schema")(schema_command)
    app.command("rule")(rule_command)
