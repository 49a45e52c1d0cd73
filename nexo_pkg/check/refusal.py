"""Why ``check`` (and ``doctor``'s handshake) does not start a plugin or microapp: its
manifest does not lint.

Both hosts refuse before spawning anything: a manifest the daemon refuses is never spawned by
the daemon either, and one that breaks a rule beyond the daemon's own checks is a risk the
report names instead of running it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from nexo_pkg.manifest.document import ParsedManifest


def lint_refusal(
    manifest: Path,
    nexo_version: str | None,
    parsed: ParsedManifest | None = None,
    *,
    raw: bytes | None = None,
) -> str | None:
    """Why the manifest at ``manifest`` stops the spawn: its first lint error (with the count
    of the others), saying whether the daemon refuses the manifest too or would load it as it
    is (a rule beyond the daemon's own checks); ``None`` when it lints without an error.
    ``nexo_version`` is the daemon version checked against; ``parsed``: the manifest as lint
    already parsed it, not parsed again when it is the file's text; ``raw``: the bytes of the
    manifest as they were read already (then the file is not read again)."""
    from nexo_pkg.core.diagnostics import first_of_errors  # noqa: PLC0415
    from nexo_pkg.core.files import read_regular_bytes  # noqa: PLC0415
    from nexo_pkg.lint.engine import lint_bytes  # noqa: PLC0415
    from nexo_pkg.lint.registry import find_rule  # noqa: PLC0415
    from nexo_pkg.manifest.names import MAX_MANIFEST_BYTES  # noqa: PLC0415
    from nexo_pkg.manifest.options import LintOptions  # noqa: PLC0415

    options = LintOptions(nexo_version=nexo_version, host_net_allowed=True, sandbox_required=False)
    if raw is None:
        try:
            # A regular file (a link followed, as the daemon reads it) up to a byte more than
            # lint reads: a FIFO put there never blocks, a huge file is never read whole.
            raw = read_regular_bytes(manifest, MAX_MANIFEST_BYTES, follow_links=True)
        except OSError:
            return None  # the resolver read it a moment ago; the spawn reports what follows
    errors = lint_bytes(raw, path=str(manifest), options=options, parsed=parsed).errors
    if not errors:
        return None
    first = errors[0]
    where, more = first_of_errors(manifest.name, first.span, len(errors))
    rule = find_rule(first.code)
    verdict = (
        "a rule beyond the daemon's own checks: THE DAEMON WOULD LOAD AND SPAWN IT as it is, "
        "a risk for the plugin's author and the host's operator to see"
        if rule is not None and rule.beyond_daemon
        else "the daemon refuses this manifest too"
    )
    return f"{where}: {first.code} {first.message}{more}; not started ({verdict})"
