"""``--explain`` pages and ``docs/rules.md``, both rendered from the rule registry."""

from __future__ import annotations

from collections.abc import Iterable

from nexo_pkg.core.diagnostics import Rule

__all__ = [
    "BEYOND_DAEMON_NOTE",
    "explain_document",
    "explain_text",
    "rules_markdown",
    "stricter_than_daemon",
]

BEYOND_DAEMON_NOTE = (
    "This rule goes beyond the daemon's own check: the reference daemon accepts some "
    "manifests it reports."
)

SECURITY_ERRORS_NOTE = (
    "An error here although the daemon accepts the manifest: one of the few security checks "
    "nexo-pkg keeps as errors."
)

STRICTER_INTRO = (
    "An error means the daemon (at `--nexo-version`, by default the newest daemon release "
    "nexo-pkg knows) refuses the manifest. Where nexo-pkg is stricter than the daemon it "
    "warns, except for a few security checks. Every such place:"
)

STRICTER_ELSEWHERE = [
    "- **Manifest file names.** The daemon reads `plugin.toml` and `nexo-plugin.toml`; when a "
    "directory holds both, its discovery meets `nexo-plugin.toml` first and ignores a "
    "`plugin.toml` of the same id. `lint`, `pack`, `check` and `install` use the same "
    "precedence and warn about the shadowed file (the daemon only logs a duplicate).",
    "- **Trust policy owners** (`trusted_keys.toml`, not a manifest) match the installed "
    "repository's owner case-insensitively, as GitHub names are; the reference installer "
    "compares them exactly. An entry written `Acme` therefore also applies to `acme/x`, "
    "which can only add a check the reference would skip. Linting a policy also warns where "
    "the reference reads it silently: an `[[authors]]` entry an earlier one for the same "
    "owner hides (NXT012; the first decides, as in the reference) and an unknown "
    "`schema_version` (NXT011; the reference never compares it). An empty (or only "
    "whitespace) `owner`, `identity_regexp`, `oidc_issuer` or `cosign_binary` "
    "is `policy_invalid` (NXT004) where the reference takes any string: such an entry "
    "matches no signer, or no verifier, so it is always a mistake.",
    "- **YAML aliases** in the daemon's config files: a file whose aliases expand to more "
    "than 100,000 values beyond those it writes out is an error (nexo-pkg stops reading it "
    "there, so it cannot say the file is valid), although serde_yaml, which budgets the "
    "aliases it follows per parse event rather than the values they yield, may read it. The "
    "daemon's own limits (128 levels of nesting, 100 alias repetitions per event) are "
    "errors as in the daemon.",
    "- **Channel kinds** are not stricter: the daemon keeps a 32-character limit for "
    "`[[plugin.channels.register]] kind` (NX120) while other ids may have 64.",
]


def _indent(text: str, prefix: str = "    ") -> str:
    return "\n".join(prefix + line if line else line for line in text.rstrip("\n").split("\n"))


# Errors beyond the daemon that are no security check of a manifest's content.
_OTHER_ERROR_NOTES = {
    "NX004": "An error here although the daemon may accept the file: nexo-pkg refuses to read "
    "a file this size at all (`install` lints the manifests of downloaded releases), so it "
    "cannot say the manifest is valid.",
}


def _beyond_daemon(rule: Rule) -> str:
    """The note of a rule marked ``beyond_daemon`` (an error one is a kept security check,
    or says why else it is an error)."""
    if rule.severity != "error":
        return BEYOND_DAEMON_NOTE
    return f"{BEYOND_DAEMON_NOTE} {_OTHER_ERROR_NOTES.get(rule.code, SECURITY_ERRORS_NOTE)}"


def explain_text(rule: Rule) -> str:
    """The ``--explain`` page of ``rule`` as plain text."""
    beyond = f"\n\n{_indent(_beyond_daemon(rule))}" if rule.beyond_daemon else ""
    return (
        f"{rule.code} {rule.name} ({rule.severity})\n\n{rule.summary}\n\n"
        f"What it checks\n{_indent(rule.what)}\n\nWhy\n{_indent(rule.why)}{beyond}\n\n"
        f"Example\n{_indent(rule.example)}\n\nFix\n{_indent(rule.fix)}\n\n"
        f"Documentation: {rule.url}\n"
    )


def explain_document(rule: Rule) -> dict[str, object]:
    """The ``--explain`` page of ``rule`` as JSON fields (``--json``): the same text."""
    return {
        "code": rule.code,
        "name": rule.name,
        "severity": rule.severity,
        "summary": rule.summary,
        "what": rule.what,
        "why": rule.why,
        "beyond_daemon": rule.beyond_daemon,
        "beyond_daemon_note": _beyond_daemon(rule) if rule.beyond_daemon else "",
        "example": rule.example,
        "fix": rule.fix,
        "url": rule.url,
    }


def stricter_than_daemon(rules: Iterable[Rule]) -> list[Rule]:
    """The rules that report manifests the daemon accepts, in code order."""
    return sorted((rule for rule in rules if rule.beyond_daemon), key=lambda rule: rule.code)


def _stricter_section(rules: Iterable[Rule]) -> list[str]:
    lines = ["", "## Where nexo-pkg is stricter than the daemon", "", STRICTER_INTRO, ""]
    for rule in stricter_than_daemon(rules):
        anchor = f"{rule.code.lower()}-{rule.name}"
        why = rule.why.replace("\n", " ")
        lines.append(f"- [{rule.code}](#{anchor}) `{rule.name}` ({rule.severity}): {why}")
    lines += STRICTER_ELSEWHERE
    return lines


def rules_markdown(rules: Iterable[Rule]) -> str:
    """``docs/rules.md``: an index table, then one section per rule (anchors match Rule.url)."""
    ordered = sorted(rules, key=lambda rule: rule.code)
    lines = [
        "# Lint rules\n\n"
        "<!-- Generated by scripts/gen_rules_doc.py from the rule registry; do not edit. -->\n\n"
        "Every diagnostic of `nexo plugin lint` has a stable code and name. "
        "`nexo plugin lint --explain CODE` prints the same text as this page. "
        "Select or ignore rules with `--select`/`--ignore` (codes, code prefixes such as `NX1`, "
        "or names).\n\n"
        "`NX2xx` are the microapp rules: a microapp's `plugin.toml` (checked with the daemon's "
        "extension manifest parser, which also reports missing, unknown and mistyped keys as "
        "`NX010`-`NX014`), its `nexo-plugin.toml` companion, and the daemon's `extensions.yaml` "
        "and `agents.yaml` ([microapps.md](microapps.md#lint)).\n\n"
        "| code | name | severity | summary |\n|---|---|---|---|"
    ]
    for rule in ordered:
        anchor = f"{rule.code.lower()}-{rule.name}"
        summary = rule.summary.replace("|", "\\|")
        lines.append(f"| [{rule.code}](#{anchor}) | `{rule.name}` | {rule.severity} | {summary} |")
    lines += _stricter_section(ordered)
    for rule in ordered:
        beyond = f"\n\n**Beyond the daemon.** {_beyond_daemon(rule)}" if rule.beyond_daemon else ""
        example = rule.example.rstrip("\n")
        lines.append(
            f"\n## {rule.code} {rule.name}\n\nSeverity: {rule.severity}. {rule.summary}\n\n"
            f"**What it checks.** {rule.what}\n\n**Why.** {rule.why}{beyond}\n\n"
            f"**Example.**\n\n```toml\n{example}\n```\n\n**Fix.** {rule.fix}"
        )
    return "\n".join(lines) + "\n"
