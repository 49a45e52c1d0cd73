"""Every command line SPEC.md writes out parses as written, and every flag it names is there.

The synopses and flag lists are copied here from SPEC.md (sections 1-8), not read from the
CLI's own tables: the generated command reference in docs/cli.md follows the code, so a flag
dropped or renamed in the code would only regenerate the reference. The behaviour of each flag
is held by the tests of its command; this file holds the contract's spelling.
"""

from __future__ import annotations

import shlex
from typing import Any

import pytest
import typer
from typer import _click as click
from typer.core import TyperGroup

from nexo_pkg.cli.app import build_app
from nexo_pkg.core.output import OUTPUT

# Command lines as SPEC.md writes them (with a value where it names a placeholder).
SYNOPSES = [
    # §2
    "lint a.toml b --format text --stdin --stdin-filename plugin.toml --strict --select NX001 "
    "--ignore NX002 --nexo-version 0.1.0",
    "lint --format json",
    "lint --format github",
    "lint --format sarif",
    "lint --explain NX001",
    # §3
    "new demo --lang python --dest d --description text --owner acme --force",
    "new demo --kind microapp --lang python",
    "pack d --out dist --target noarch --requirements requirements.txt "
    "--source-date-epoch 0 --json",
    "pack --target x86_64-unknown-linux-gnu --binary path/to/exe",
    # §4
    "check d --timeout-ms 5000 --nexo-version 0.1.0 --invoke demo_echo --args {} --json",
    "check demo --strict",
    # §5
    "install acme/nexo-plugin-x --dest d --target x86_64-unknown-linux-gnu "
    "--trusted-keys k.toml --require-signature --github-api-url http://127.0.0.1:1 "
    "--force --yes --dry-run --json",
    "install acme/nexo-plugin-x@v1.0.0 --skip-signature-verify",
    "install ./demo-0.1.0-noarch.tar.gz",
    "upgrade demo --allow-downgrade --keep-old",
    "upgrade demo --no-keep-old",
    "upgrade demo@v1.0.0",
    "rollback demo",
    "list --json --include-orphan",
    "remove demo --yes",
    "verify",
    "verify demo",
    # §6
    "trust add acme",
    "trust add acme/nexo-plugin-x",
    "trust list",
    "trust remove acme",
    "trust verify a.tar.gz --owner acme --repo acme/x "
    "--signer-workflow acme/x/.github/workflows/x.yml",
    # §8
    "lock",
    "lock --upgrade",
    "lock --upgrade demo",
    "sync --lock nexo-plugins.lock --dest d --prune --frozen",
    "sync --dry-run --json",
    "install oci://127.0.0.1:5000/ns/demo:1.0.0 --registry-config c.json --plain-http",
    "push dist oci://127.0.0.1:5000/ns/demo:1.0.0",
    "mirror acme/nexo-plugin-x@v1.0.0 oci://127.0.0.1:5000/ns/x",
    "mirror oci://127.0.0.1:5000/a/x oci://127.0.0.1:5001/b/x",
    "verify --lock nexo-plugins.lock",
    "schema",
    "lsp",
]

# Every flag SPEC.md names for a command (§1-§8), with `--verbose` for all of them (§1).
FLAGS = {
    "lint": "--format --stdin --stdin-filename --strict --select --ignore --nexo-version --explain",
    "new": "--lang --kind --dest --description --owner --force",
    "pack": "--out --target --binary --requirements --source-date-epoch --json",
    "check": "--timeout-ms --nexo-version --invoke --args --json --strict",
    "install": "--dest --target --trusted-keys --require-signature --skip-signature-verify "
    "--github-api-url --force --yes --dry-run --json --registry-config --plain-http "
    "--max-download-size --max-entries --max-total-size --max-entry-size",
    "upgrade": "--allow-downgrade --keep-old --no-keep-old",
    "list": "--json --include-orphan",
    "remove": "--yes",
    "verify": "--lock",
    "lock": "--upgrade --registry-config --plain-http",
    "sync": "--lock --dest --prune --frozen --dry-run --json --registry-config --plain-http",
    "push": "--registry-config --plain-http",
    "mirror": "--registry-config --plain-http",
    "trust verify": "--owner --repo --signer-workflow",
}


@pytest.fixture(autouse=True)
def _restore_output() -> Any:
    """Parsing runs the shared options' callbacks (``-q``, ``--color``): undo them."""
    saved = (OUTPUT.quiet, OUTPUT.verbose, OUTPUT.color)
    yield
    OUTPUT.quiet, OUTPUT.verbose, OUTPUT.color = saved


def _command(words: list[str]) -> tuple[click.Command, list[str]]:
    """The ``nexo plugin`` command ``words`` start with, and the words left for it."""
    root = typer.main.get_command(build_app()[0])
    command: click.Command = root.commands["plugin"]  # type: ignore[attr-defined]
    context = command.make_context("plugin", [], resilient_parsing=True)
    rest = list(words)
    while isinstance(command, TyperGroup) and rest and not rest[0].startswith("-"):
        found = command.get_command(context, rest[0])
        assert found is not None, f"no command `nexo plugin {' '.join(words)}`"
        command = found
        context = command.make_context(rest.pop(0), [], parent=context, resilient_parsing=True)
    return command, rest


@pytest.mark.parametrize("line", SYNOPSES)
def test_every_command_line_the_spec_writes_parses(line: str) -> None:
    command, args = _command(shlex.split(line))
    # Parsing only (no callback runs): a flag or argument the command lacks fails here.
    command.make_context(line, args, resilient_parsing=False)


@pytest.mark.parametrize("path", sorted(FLAGS))
def test_every_flag_the_spec_names_is_an_option(path: str) -> None:
    command, left = _command(path.split())
    assert left == []
    names = {name for param in command.params for name in (*param.opts, *param.secondary_opts)}
    missing = [flag for flag in [*FLAGS[path].split(), "--verbose"] if flag not in names]
    assert missing == [], f"nexo plugin {path} lacks {missing}"
