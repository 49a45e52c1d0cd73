"""The options and arguments several commands share, declared once so their flags and help
stay in step (an option only one command has is declared beside that command).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

from nexo_pkg.cli.completion import installed_ids
from nexo_pkg.cli.limits import entries_value, size_value
from nexo_pkg.core.errors import UsageError
from nexo_pkg.net.api import DEFAULT_TIMEOUT_SECONDS, SLOW_NOTICE_SECONDS

DEST_HELP = (
    "Install root (default: plugins.discovery.search_paths[0] of the daemon's configuration, "
    "else $NEXO_HOME/state/plugins)."
)
CONFIG_HELP = (
    "The daemon's configuration directory (default: NEXO_CONFIG_DIR, else ./config when it "
    "exists, else $NEXO_HOME/config): plugins/discovery.yaml names the install root, "
    "extensions/trusted_keys.toml is the trust policy."
)


def named_path(option: str, what: str, *, default: bool = True) -> Callable[[str], Path]:
    """The parser of a path option: an empty value (``--dest "$UNSET"``) is a usage error,
    never the current directory. ``default``: leaving the option out has a default to say."""

    def parse(text: str) -> Path:
        if not text:
            rest = f", or leave {option} out for the default" if default else ""
            raise UsageError(f"{option} is empty; name {what}{rest}")
        return Path(text)

    return parse


DestOption = Annotated[
    Path | None,
    typer.Option(
        "--dest", metavar="<path>", help=DEST_HELP, parser=named_path("--dest", "the plugin root")
    ),
]
ConfigOption = Annotated[
    Path | None,
    typer.Option(
        "--config",
        metavar="<path>",
        help=CONFIG_HELP,
        parser=named_path("--config", "the daemon's configuration directory"),
    ),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print one JSON document on stdout.")]
YesOption = Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")]
# On a command that changes state but asks nothing: accepted, so scripts pass -y everywhere.
AcceptedYesOption = Annotated[
    bool,
    typer.Option(
        "--yes",
        "-y",
        help="Accepted for scripts, as on every command that changes state; this one asks nothing.",
    ),
]
TargetOption = Annotated[
    str | None,
    typer.Option(
        "--target",
        help="Target triple instead of this host's (or noarch). Default: NEXO_INSTALL_TARGET, "
        "else this host's.",
    ),
]
UpgradeTargetOption = Annotated[
    str | None,
    typer.Option(
        "--target",
        help="Target triple instead of the one the installed version's receipt records "
        "(a musl install stays musl).",
    ),
]
TrustedKeysOption = Annotated[
    Path | None,
    typer.Option(
        "--trusted-keys",
        metavar="<path>",
        help="Trust policy file (default: extensions/trusted_keys.toml of the daemon's "
        "configuration directory, see --config).",
        parser=named_path("--trusted-keys", "the trust policy file"),
    ),
]
RequireSignatureOption = Annotated[
    bool, typer.Option("--require-signature", help="Refuse assets without a trusted signature.")
]
SkipSignatureOption = Annotated[
    bool, typer.Option("--skip-signature-verify", help="Do not check signatures (unsafe).")
]
GitHubApiOption = Annotated[
    str | None,
    typer.Option(
        "--github-api-url",
        help=(
            "GitHub API base (GitHub Enterprise). Default: NEXO_GITHUB_API_BASE, else GH_HOST "
            "(as gh), else GITHUB_API_URL, else https://api.github.com. Token: "
            "NEXO_GITHUB_TOKEN; then, on a host other than github.com, GH_ENTERPRISE_TOKEN, "
            "GITHUB_ENTERPRISE_TOKEN; then GITHUB_TOKEN, GH_TOKEN; then `gh auth token` "
            "(https only). It is sent to the API host alone."
        ),
    ),
]
TimeoutOption = Annotated[
    float | None,
    typer.Option(
        "--timeout",
        metavar="SECONDS",
        help="Most one HTTP request may take, retries included (default: NEXO_HTTP_TIMEOUT, "
        f"else {DEFAULT_TIMEOUT_SECONDS:g} s). An answer slower than {SLOW_NOTICE_SECONDS:g} s "
        "is noted on stderr.",
    ),
]
# info, search and outdated: one deadline from the start for every request they send.
CommandTimeoutOption = Annotated[
    float | None,
    typer.Option(
        "--timeout",
        metavar="SECONDS",
        help="Most all the command's HTTP requests may take together, retries included: one "
        f"deadline for the whole command (default: NEXO_HTTP_TIMEOUT, else "
        f"{DEFAULT_TIMEOUT_SECONDS:g} s). An answer slower than {SLOW_NOTICE_SECONDS:g} s is "
        "noted on stderr.",
    ),
]
InstallTimeoutOption = Annotated[
    float | None,
    typer.Option(
        "--timeout",
        metavar="SECONDS",
        help="Most the command's HTTP requests may take together, retries included, per "
        f"plugin (default: NEXO_HTTP_TIMEOUT, else {DEFAULT_TIMEOUT_SECONDS:g} s). An answer "
        f"slower than {SLOW_NOTICE_SECONDS:g} s is noted on stderr.",
    ),
]
AllowSignerChangeOption = Annotated[
    bool,
    typer.Option(
        "--allow-signer-change",
        help="Accept a new version signed by another identity than the installed one "
        "(or not signed at all); refused by default (signer_changed).",
    ),
]
DryRunOption = Annotated[bool, typer.Option("--dry-run", help="Run every check, install nothing.")]
RegistryConfigOption = Annotated[
    Path | None,
    typer.Option(
        "--registry-config",
        help="Registry credentials file for oci:// sources (default: $REGISTRY_AUTH_FILE, "
        "~/.docker/config.json).",
        metavar="<path>",
        parser=named_path("--registry-config", "the registry credentials file"),
    ),
]
NexoVersionOption = Annotated[
    str | None,
    typer.Option(
        "--nexo-version",
        metavar="VERSION",
        help="Version of the daemon the plugin is for (default: NEXO_DAEMON_VERSION): a plugin "
        "whose min_nexo_version excludes it is refused (incompatible; install --force "
        "overrides), checked from the release's manifest asset before any download.",
    ),
]
PlainHttpOption = Annotated[
    bool,
    typer.Option("--plain-http", help="HTTP, not HTTPS, for a loopback registry (oci:// sources)."),
]
InstalledIdArgument = Annotated[
    str,
    typer.Argument(metavar="ID", help="Id of an installed plugin.", autocompletion=installed_ids),
]
RegistryReferenceArgument = Annotated[
    str, typer.Argument(metavar="REFERENCE", help="oci://HOST/NS/NAME[:TAG]")
]
TrustTargetArgument = Annotated[str, typer.Argument(metavar="OWNER[/REPO]")]


def jobs_value(text: str) -> int:
    """``--jobs TEXT`` as a number of jobs; anything else, a number out of range as much as
    a word, is the same one-line usage error."""
    from nexo_pkg.core.threads import MAX_JOBS, checked_jobs  # noqa: PLC0415

    try:
        value = int(text, 10)
    except ValueError:
        raise UsageError(f"--jobs takes 1 to {MAX_JOBS}, not {text!r}") from None
    return checked_jobs(value)


JobsOption = Annotated[
    int | None,
    typer.Option(
        "--jobs",
        "-j",
        metavar="<int>",
        parser=jobs_value,
        help="Plugins handled at a time (default 8; 1: one after another).",
    ),
]


# The archive limits (SPEC §5 step 6) of every command that reads a release archive; parsed
# into bytes and entries here, turned into ArchiveLimits by cli.limits.archive_limits.
def _archive_limit(flag: str, metavar: str, parser: Callable[[str], int], help_text: str) -> Any:
    """The declaration of one archive-limit option (left out: the limit's default)."""
    return typer.Option(flag, metavar=metavar, parser=parser, help=help_text)


MaxDownloadSizeOption = Annotated[
    int | None,
    _archive_limit(
        "--max-download-size",
        "SIZE",
        size_value("--max-download-size"),
        "Download limit (default 100M).",
    ),
]
MaxEntriesOption = Annotated[
    int | None,
    _archive_limit(
        "--max-entries",
        "N",
        entries_value,
        "Archive entry limit, directories member names imply included (default 10000).",
    ),
]
MaxTotalSizeOption = Annotated[
    int | None,
    _archive_limit(
        "--max-total-size",
        "SIZE",
        size_value("--max-total-size"),
        "Extracted size limit (default 250M).",
    ),
]
MaxEntrySizeOption = Annotated[
    int | None,
    _archive_limit(
        "--max-entry-size",
        "SIZE",
        size_value("--max-entry-size"),
        "Per-file size limit (default 100M).",
    ),
]
