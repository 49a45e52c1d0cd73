"""Every error kind the command line can print, with its exit code and what it means.

A kind is the ``kind`` of a ``--json`` failure document (``{"ok": false, "kind", "error",
...}``) and of :class:`~nexo_pkg.core.errors.NexoError`. :class:`ErrorKind` is a ``StrEnum``: a
member compares equal to its string, so ``kind="io"`` and ``kind=ErrorKind.IO`` are the same
kind, and a member serialises to JSON as its plain value. ``docs/errors.md`` is generated from
this table (``scripts/gen_errors_doc.py``); a test fails when code raises a kind that is not
listed here.

The exit code of a kind is the one a failure of that kind ends the command with when the raise
site names none: 1 when the command ran and the answer is "no", 2 for a usage or configuration
error. Where a raise site deliberately differs, the description says so.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Self

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2
_EXIT_SIGINT = 130


class ErrorKind(StrEnum):
    """One error kind: its ``--json`` name (the value), exit code and one-line description."""

    exit_code: int
    description: str

    def __new__(cls, value: str, exit_code: int, description: str) -> Self:
        member = str.__new__(cls, value)
        member._value_ = value
        member.exit_code = exit_code
        member.description = description
        return member

    # The kinds SPEC.md names for install, upgrade, list, remove and verify.
    SOURCE_INVALID = (
        "source_invalid",
        EXIT_FAILURE,
        "The source cannot be used: exit 2 for a malformed `owner/repo[@tag]`, path or "
        "`oci://` reference; exit 1 when a well-formed source does not fit the operation.",
    )
    RELEASE_NOT_FOUND = (
        "release_not_found",
        EXIT_FAILURE,
        "No release, tag or registry reference of that name exists.",
    )
    ASSET_NOT_FOUND = (
        "asset_not_found",
        EXIT_FAILURE,
        "The release has no asset for the target (or no asset of the name asked for).",
    )
    NETWORK = (
        "network",
        EXIT_FAILURE,
        "A server could not be reached, timed out, or answered with something unusable.",
    )
    RATE_LIMITED = (
        "rate_limited",
        EXIT_FAILURE,
        "The GitHub API refused the request for its rate limit (set a token or wait), or a "
        "registry still answered `429 Too Many Requests` after the retries (wait, or sign in "
        "to it).",
    )
    CHECKSUM_MISSING = (
        "checksum_missing",
        EXIT_FAILURE,
        "No checksum covers the asset, and nothing else lets it be verified.",
    )
    CHECKSUM_MISMATCH = (
        "checksum_mismatch",
        EXIT_FAILURE,
        "The downloaded bytes do not match their published or locked digest.",
    )
    SIGNATURE_MISSING = (
        "signature_missing",
        EXIT_FAILURE,
        "The trust policy requires a signature and the release carries none.",
    )
    SIGNATURE_INVALID = (
        "signature_invalid",
        EXIT_FAILURE,
        "The signature material is malformed or does not verify against the asset.",
    )
    SIGNER_UNTRUSTED = (
        "signer_untrusted",
        EXIT_FAILURE,
        "The signature verifies, but its signer is not trusted by the policy for this repo.",
    )
    POLICY_INVALID = (
        "policy_invalid",
        EXIT_USAGE,
        "The trust policy (`trusted_keys.toml`) is invalid; the message names the line.",
    )
    ARCHIVE_INVALID = (
        "archive_invalid",
        EXIT_FAILURE,
        "The archive cannot be read as a plugin: not a gzip tar, truncated, or no launcher. "
        "Exit 2 when `check` is given a `.tar.gz` that is not gzip at all (the wrong "
        "argument, not a refused archive).",
    )
    ARCHIVE_UNSAFE = (
        "archive_unsafe",
        EXIT_FAILURE,
        "An archive member escapes the target, is a link or device, or breaks a size cap.",
    )
    MANIFEST_INVALID = (
        "manifest_invalid",
        EXIT_FAILURE,
        "The plugin manifest is missing from the archive, unreadable, or fails lint.",
    )
    MANIFEST_MISMATCH = (
        "manifest_mismatch",
        EXIT_FAILURE,
        "The archive's manifest names another id or version than the asset's name does.",
    )
    ALREADY_INSTALLED = (
        "already_installed",
        EXIT_FAILURE,
        "The plugin is already installed there (same version, a link, or another copy); "
        "exit 0, with `was_already_present: true`, when it is the same archive.",
    )
    DOWNGRADE_REFUSED = (
        "downgrade_refused",
        EXIT_FAILURE,
        "The new version is older than the installed one; `--allow-downgrade` permits it.",
    )
    IO = (
        "io",
        EXIT_FAILURE,
        "A file or directory could not be read or written (exit 2 when `pack` cannot read "
        "its input or write its output).",
    )
    CANCELLED = (
        "cancelled",
        EXIT_FAILURE,
        "The confirmation was answered no (or not at all); nothing was changed.",
    )

    # Usage and configuration.
    ERROR = (
        "error",
        EXIT_FAILURE,
        "A failure with no more specific kind (the base kind of every error).",
    )
    USAGE = (
        "usage",
        EXIT_USAGE,
        "Bad flags or arguments, or input that cannot be used as given.",
    )
    CONFIG = (
        "config",
        EXIT_USAGE,
        "A configuration file (such as the daemon's discovery configuration) is invalid.",
    )
    CONFIG_INVALID = (
        "config_invalid",
        EXIT_USAGE,
        "The lint configuration (`.nexo.toml` or `[tool.nexo]`) is invalid.",
    )

    # Installed plugins and their receipts.
    NOT_INSTALLED = (
        "not_installed",
        EXIT_FAILURE,
        "No plugin of that id is installed in the root the command uses.",
    )
    SIGNER_CHANGED = (
        "signer_changed",
        EXIT_FAILURE,
        "The new version is signed by another signer than the installed one.",
    )
    INCOMPATIBLE = (
        "incompatible",
        EXIT_FAILURE,
        "The plugin's `min_nexo_version` excludes the daemon it would run under.",
    )
    CHECK_FAILED = (
        "check_failed",
        EXIT_FAILURE,
        "`install --check`: the plugin was installed, then failed its handshake checks.",
    )
    NOT_TRUSTED = (
        "not_trusted",
        EXIT_FAILURE,
        "`trust remove`: the policy has no entry for that owner or repository.",
    )

    # Fleets: lock files, wanted sets and OCI registries.
    LOCK_INVALID = (
        "lock_invalid",
        EXIT_USAGE,
        "The lock file is unreadable or malformed, or an entry lacks what sync needs.",
    )
    LOCK_STALE = (
        "lock_stale",
        EXIT_FAILURE,
        "`--frozen`: the lock file no longer matches the wanted set.",
    )
    SYNC_FAILED = (
        "sync_failed",
        EXIT_FAILURE,
        "`sync --json`: some plugins failed (each one's own kind is in `plugins`); the others "
        "were synced.",
    )
    WANTED_INVALID = (
        "wanted_invalid",
        EXIT_USAGE,
        "The wanted set (`nexo-plugins.toml`) is unreadable or malformed.",
    )
    REGISTRY_CONFIG = (
        "registry_config",
        EXIT_USAGE,
        "The registry credentials file (`--registry-config`, docker's config) is invalid.",
    )
    REGISTRY_AUTH = (
        "registry_auth",
        EXIT_FAILURE,
        "The registry refused the credentials, or asked for credentials there are none of.",
    )
    REGISTRY_INVALID = (
        "registry_invalid",
        EXIT_FAILURE,
        "The registry answered with a manifest, index or blob that breaks the OCI rules.",
    )

    # new, pack and check.
    INVALID_ID = (
        "invalid_id",
        EXIT_USAGE,
        "`new`: the plugin id breaks the slug rule.",
    )
    DESTINATION_EXISTS = (
        "destination_exists",
        EXIT_USAGE,
        "`new`: the destination exists and is not empty.",
    )
    PACK_FAILED = (
        "pack_failed",
        EXIT_FAILURE,
        "`pack` could not build the tarball (the base kind of pack's errors).",
    )
    MANIFEST_MISSING = (
        "manifest_missing",
        EXIT_USAGE,
        "`pack`: the project is not a directory, or has no plugin manifest.",
    )
    LAYOUT_INVALID = (
        "layout_invalid",
        EXIT_FAILURE,
        "`pack`: the project does not have the shape a plugin tarball needs.",
    )
    NATIVE_CODE = (
        "native_code",
        EXIT_FAILURE,
        "`pack`: a noarch tarball would carry native code; every offender is listed.",
    )
    VENDOR_FAILED = (
        "vendor_failed",
        EXIT_FAILURE,
        "`pack`: vendoring the requirements with pip failed, or pip is missing or older than "
        "24.2, or pip's installation report (what the SBOM is built from) is unreadable or "
        "does not match the vendored tree.",
    )
    VERIFY_FAILED = (
        "verify_failed",
        EXIT_FAILURE,
        "`sbom`: an installed plugin's files do not match its install receipt (as `verify` "
        "reports), so what it holds cannot be vouched for.",
    )
    SBOM_INVALID = (
        "sbom_invalid",
        EXIT_FAILURE,
        "`sbom`: the SBOM an installed plugin carries is unreadable, is not valid CycloneDX "
        "1.6, or does not describe the installed files; or its vendored tree cannot be read.",
    )
    TARGET_INVALID = (
        "target_invalid",
        EXIT_USAGE,
        "`check`: the target names nothing checkable (no manifest, nothing runnable).",
    )

    # A failure nothing above describes: a bug of nexo-pkg's own.
    INTERNAL = (
        "internal",
        EXIT_FAILURE,
        "Something went wrong that no other kind describes: a bug in nexo-pkg. The line names "
        "the exception; `--verbose` prints its traceback, to report with the command that "
        "met it.",
    )

    # A run cut short.
    INTERRUPTED = (
        "interrupted",
        _EXIT_SIGINT,
        "Stopped by Ctrl-C (exit 130), SIGTERM (exit 143), a hang-up (SIGHUP, exit 129) or "
        "another signal that ends a process, such as SIGQUIT or SIGUSR1 (exit 128 + its number), "
        "after undoing what it started.",
    )


_BY_VALUE: dict[str, ErrorKind] = {member.value: member for member in ErrorKind}


def exit_code_of(kind: str) -> int | None:
    """The exit code of ``kind``, or ``None`` for a string that names no :class:`ErrorKind`."""
    member = _BY_VALUE.get(str(kind))
    return None if member is None else member.exit_code


def errors_markdown() -> str:
    """``docs/errors.md``: the failure document, then one table row per kind, in enum order."""
    lines = [
        "# Error kinds",
        "",
        "<!-- Generated by scripts/gen_errors_doc.py from nexo_pkg/core/kinds.py; do not edit. -->",
        "",
        "A command that fails prints one line on stderr, `error: MESSAGE [KIND]`, its kind the "
        "`kind` of the document that `--json` prints on stdout, for every failure:",
        "",
        "```json",
        "{",
        '  "ok": false,',
        '  "kind": "not_installed",',
        '  "error": "plugin \'wether\' is not installed in /srv/nexo/plugins '
        "(see `nexo plugin list`). Did you mean 'weather'?\",",
        '  "id": "wether",',
        '  "suggestions": [',
        '    "weather"',
        "  ]",
        "}",
        "```",
        "",
        "`ok` is `false`; `kind` is one of the kinds below, stable across releases, for scripts "
        "to branch on; `error` is the message of the stderr line; further keys depend on "
        "the kind (the path of a bad file with its `line`, the `diagnostics` of an invalid "
        "trust policy, the `source` that could not be used, …) and never replace `ok`, `kind` "
        "or `error`.",
        "",
        'The exit code is the kind\'s: `1` when the command ran and the answer is "no", `2` for '
        "a usage or configuration error (see [cli.md](cli.md#exit-codes)). Where one kind "
        "ends with another code, its description says when.",
        "",
        "Commands that exist to report on something (`lint`, `check`, `verify`, `doctor`, "
        '`outdated --exit-code`, `upgrade --all`, `sync`) answer "no" with their own report '
        "instead: exit 1 and, with `--json`, the report's document with `ok: false` where it "
        "has an `ok` (`sync` adds `kind: sync_failed`), each item saying what is wrong with "
        "it, as the command's page describes. They print the failure document above when they "
        "cannot make the report at all: a usage error, an unreadable lock or policy, a root "
        "that cannot be read.",
        "",
        "| kind | exit | meaning |",
        "|---|---|---|",
    ]
    for kind in ErrorKind:
        description = kind.description.replace("|", "\\|")
        lines.append(f"| `{kind.value}` | {kind.exit_code} | {description} |")
    return "\n".join(lines) + "\n"
