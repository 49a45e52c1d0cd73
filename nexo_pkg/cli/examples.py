"""The ``Examples:`` that close each command's ``--help``: the common invocations, as
``gh`` and ``uv`` show theirs, so the help teaches by showing as well as by listing options.

Keys are command paths below ``nexo plugin`` (``"trust add"``; ``""`` is ``nexo plugin``
itself, :data:`ROOT` is ``nexo``, :data:`HELP` ``nexo help``); each example is a command line
and what it does. The test suite runs ``--help`` of every command and checks each one it shows
parses (tests/cli/test_help_examples.py).
"""

from __future__ import annotations

# The keys of ``nexo`` itself and of ``nexo help`` (no command path below ``nexo plugin`` has
# a space in front).
ROOT = " nexo"
HELP = " nexo help"

EXAMPLES: dict[str, tuple[tuple[str, str], ...]] = {
    ROOT: (
        ("nexo plugin lint", "lint every manifest under the current directory"),
        ("nexo help plugin install", "the help of one command"),
    ),
    HELP: (
        ("nexo help plugin install", "the same text as nexo plugin install -h"),
        ("nexo help plugin trust", "a group's commands"),
    ),
    "": (
        ("nexo plugin lint", "lint every manifest under the current directory"),
        ("nexo plugin install acme/nexo-plugin-weather", "install a plugin's newest release"),
        ("nexo plugin list", "what is installed"),
    ),
    "lint": (
        ("nexo plugin lint", "every manifest under the current directory"),
        ("nexo plugin lint nexo-plugin.toml --format json", "one file, as JSON"),
        ("nexo plugin lint --fix", "apply the safe fixes in place"),
        ("nexo plugin lint --format github", "in GitHub Actions: annotations on the diff"),
        (
            "nexo plugin lint - --stdin-filename plugins/w/nexo-plugin.toml",
            "an editor's unsaved buffer, piped in, reported under its file name",
        ),
    ),
    "schema": (
        ("nexo plugin schema > nexo-plugin.schema.json", "the manifest's JSON Schema"),
        ("nexo plugin schema --kind lock", "the schema of nexo-plugins.lock"),
    ),
    "rule": (
        ("nexo plugin rule --all", "every lint code"),
        ("nexo plugin rule NX100", "explain one rule"),
    ),
    "new": (
        ("nexo plugin new weather --lang python", "a plugin project in ./weather"),
        ("nexo plugin new notes --kind microapp", "a microapp project"),
    ),
    "pack": (
        ("nexo plugin pack", "pack the project here into ./dist"),
        ("nexo plugin pack ./weather --json", "another project, the result as JSON"),
    ),
    "check": (
        ("nexo plugin check", "the project here, spawned and checked"),
        ("nexo plugin check dist/weather-0.1.0-noarch.tar.gz", "a packed tarball"),
        ("nexo plugin check weather", "an installed plugin"),
    ),
    "install": (
        ("nexo plugin install acme/nexo-plugin-weather", "the latest release"),
        ("nexo plugin install acme/nexo-plugin-weather@v0.2.0", "one tag (pins it)"),
        ("nexo plugin install ./dist/weather-0.2.0-noarch.tar.gz", "a local tarball"),
        ("nexo plugin install acme/nexo-plugin-weather --dry-run", "show, install nothing"),
    ),
    "upgrade": (
        ("nexo plugin upgrade weather", "to its source's newest release"),
        ("nexo plugin upgrade weather@v0.3.0", "to a named release (ends a hold)"),
        ("nexo plugin upgrade --all --yes", "every installed plugin"),
    ),
    "list": (
        ("nexo plugin list", "one line per plugin"),
        ("nexo plugin list --json", "as one JSON document"),
        ("nexo plugin list --include-orphan", "with directories that have no receipt"),
    ),
    "remove": (
        ("nexo plugin remove weather", "asks first on a terminal"),
        ("nexo plugin remove weather --yes", "in a script"),
    ),
    "verify": (
        ("nexo plugin verify", "every installed plugin against its receipt"),
        ("nexo plugin verify weather --json", "one plugin, as JSON"),
        ("nexo plugin verify --lock nexo-plugins.lock", "the root against a fleet lock"),
    ),
    "sbom": (
        ("nexo plugin sbom weather", "one plugin's CycloneDX SBOM"),
        ("nexo plugin sbom --all -o sbom.json", "every plugin, into a file"),
    ),
    "outdated": (
        ("nexo plugin outdated", "what has a newer release"),
        ("nexo plugin outdated --exit-code", "exit 1 when something is outdated (cron, CI)"),
        ("nexo plugin outdated --nexo-version 0.4.2", "hold newer versions to that daemon"),
    ),
    "rollback": (
        ("nexo plugin rollback weather --dry-run", "say what would be put back"),
        ("nexo plugin rollback weather", "put back the version replaced, and hold it"),
    ),
    "hold": (("nexo plugin hold weather", "upgrade leaves it on this version"),),
    "unhold": (("nexo plugin unhold weather", "upgrade follows its source again"),),
    "search": (
        ("nexo plugin search weather", "repositories with the nexo-plugin topic"),
        ("nexo plugin search weather --limit 5 --json", "the first five, as JSON"),
    ),
    "info": (
        ("nexo plugin info acme/nexo-plugin-weather", "what install would install"),
        ("nexo plugin info acme/nexo-plugin-weather@v0.2.0 --json", "one release, as JSON"),
    ),
    "doctor": (
        ("nexo plugin doctor", "every plugin and the daemon's plugin configuration"),
        ("nexo plugin doctor --nexo-version 0.2.1 --no-check", "for that daemon, no spawning"),
    ),
    "enable": (("nexo plugin enable weather", "the daemon loads it at its next start"),),
    "disable": (("nexo plugin disable weather", "the daemon skips it at its next start"),),
    "lsp": (("nexo plugin lsp", "serve an editor over stdin/stdout"),),
    "lock": (
        ("nexo plugin lock", "nexo-plugins.toml into nexo-plugins.lock"),
        ("nexo plugin lock --check", "exit 1 when the lock is stale (CI)"),
    ),
    "sync": (
        ("nexo plugin sync --dry-run", "show what would change"),
        ("nexo plugin sync --yes", "make the root match nexo-plugins.lock"),
    ),
    "push": (
        ("nexo plugin push oci://registry.example.com/acme/weather", "./dist, tagged its version"),
    ),
    "mirror": (
        (
            "nexo plugin mirror acme/nexo-plugin-weather@v0.2.0 "
            "oci://registry.example.com/acme/weather:0.2.0",
            "a release and its signatures, copied",
        ),
    ),
    "cache": (
        ("nexo plugin cache dir", "where the download cache is"),
        ("nexo plugin cache prune --yes", "drop blobs unused for 30 days"),
    ),
    "cache dir": (("nexo plugin cache dir", "where the download cache is"),),
    "cache size": (("nexo plugin cache size", "how much it holds"),),
    "cache clean": (("nexo plugin cache clean --yes", "empty it"),),
    "cache prune": (("nexo plugin cache prune --older-than-days 7 --yes", "unused a week"),),
    "trust": (
        ("nexo plugin trust list", "who is trusted"),
        ("nexo plugin trust add acme/nexo-plugin-weather", "trust that repository's signer"),
    ),
    "trust list": (("nexo plugin trust list --json", "the policy, as JSON"),),
    "trust add": (
        ("nexo plugin trust add acme/nexo-plugin-weather", "the signer of its newest release"),
        (
            "nexo plugin trust add acme --identity-regexp "
            "'^https://github\\.com/acme/[^/]+/\\.github/workflows/release\\.yml@refs/tags/v.*$'"
            " --yes",
            "a signer named for every repository of an owner",
        ),
    ),
    "trust remove": (("nexo plugin trust remove acme --yes", "trust the owner no more"),),
    "trust verify": (
        (
            "nexo plugin trust verify dist/weather-0.2.0-noarch.tar.gz",
            "check a file's signature against the policy",
        ),
    ),
}


def epilog(path: str) -> str | None:
    """The ``Examples:`` section of ``nexo plugin PATH --help`` (kept as written: ``\\b``)."""
    examples = EXAMPLES.get(path)
    if not examples:
        return None
    rows = [f"  # {what}\n  {line}" for line, what in examples]
    return "\b\nExamples:\n" + "\n".join(rows)
