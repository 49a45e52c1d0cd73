"""The Typer application: ``nexo`` and its ``plugin`` commands, registered lazily.

:data:`COMMANDS` names every ``plugin`` command, the module that implements it and its one-line
summary. The ``plugin`` group lists and describes commands from that table alone; the module
behind a command is imported (and its Typer declarations built) only when that command is
resolved, so ``nexo plugin install --help`` does not pay for ``check`` or ``lsp``.

The options every command shares (docs/cli.md, "Quiet, verbose, colour") are declared once
here and added to each command and group as it is loaded. Help is plain text (no rich markup),
so a pattern such as ``^[a-z][a-z0-9_]{0,63}$`` in a help string prints as written.
"""

from __future__ import annotations

import copy
import os
import sys
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

import typer
from typer._click.exceptions import NoArgsIsHelpError, NoSuchOption
from typer._click.exceptions import UsageError as TyperUsageError
from typer.core import TyperGroup

from nexo_pkg import __version__
from nexo_pkg.cli import asks_for_json
from nexo_pkg.cli.common import fail, set_color, set_verbosity
from nexo_pkg.cli.completion import attach_choice_completion, command_names
from nexo_pkg.cli.examples import HELP, ROOT, epilog
from nexo_pkg.core import posix
from nexo_pkg.core.errors import NexoError, UsageError
from nexo_pkg.core.output import emit_json, report_error

if TYPE_CHECKING:
    # Typer 0.28 ships its own copy of click; these names are only annotations.
    from typer import _click as click


CONTEXT_SETTINGS: dict[str, Any] = {"help_option_names": ["-h", "--help"]}
SHELLS = ("bash", "zsh", "fish", "powershell", "pwsh")


@dataclass(frozen=True)
class CommandSpec:
    """Where a ``plugin`` command lives and what ``nexo plugin --help`` says about it."""

    module: str
    summary: str
    #: Manages a daemon's plugin root (locks, ``openat``): refused on Windows (SPEC, Platforms).
    plugin_root: bool = False


COMMANDS: dict[str, CommandSpec] = {
    "lint": CommandSpec("lint", "Lint plugin manifests: syntax, schema and every rule."),
    "schema": CommandSpec("lint", "Print a JSON Schema nexo-pkg ships (manifests by default)."),
    "rule": CommandSpec("lint", "Explain a lint rule, or list every one (--all)."),
    "new": CommandSpec("new", "Create a plugin project that lints, packs and passes its tests."),
    "pack": CommandSpec("pack", "Build a reproducible release tarball and its sidecars."),
    "check": CommandSpec("check", "Spawn a plugin as a minimal nexo host and check its handshake."),
    "install": CommandSpec("install", "Resolve, download, verify and install a plugin.", True),
    "upgrade": CommandSpec("install", "Install the newest release of installed plugins.", True),
    "list": CommandSpec("install", "List installed plugins (one per line on stdout)."),
    "remove": CommandSpec("install", "Remove an installed plugin.", plugin_root=True),
    "verify": CommandSpec("install", "Re-hash installed files against their install receipts."),
    "sbom": CommandSpec("sbom", "Print installed plugins' SBOMs (CycloneDX) for scanners."),
    "outdated": CommandSpec("operate", "Show installed plugins with a newer version available."),
    "rollback": CommandSpec(
        "operate", "Put back the version the last upgrade replaced; hold it.", plugin_root=True
    ),
    "hold": CommandSpec(
        "operate", "Keep a plugin on its installed version (upgrade skips it).", plugin_root=True
    ),
    "unhold": CommandSpec(
        "operate", "Release a plugin's hold: upgrade follows its source again.", plugin_root=True
    ),
    "search": CommandSpec("operate", "Search GitHub for plugin repositories (nexo-plugin topic)."),
    "info": CommandSpec("operate", "Show a release's plugin, targets and verified signer."),
    "doctor": CommandSpec("operate", "Check every installed plugin and the daemon's setup.", True),
    "enable": CommandSpec(
        "operate", "Let the daemon load a plugin (discovery configuration).", plugin_root=True
    ),
    "disable": CommandSpec(
        "operate", "Keep the daemon from loading an installed plugin.", plugin_root=True
    ),
    "lsp": CommandSpec("lsp", "Run the language server for plugin manifests on stdin/stdout."),
    "lock": CommandSpec("fleet", "Resolve nexo-plugins.toml into nexo-plugins.lock.", True),
    "sync": CommandSpec("fleet", "Make the plugin root match nexo-plugins.lock exactly.", True),
    "push": CommandSpec("fleet", "Publish one packed version to an OCI registry."),
    "mirror": CommandSpec("fleet", "Copy a GitHub release and its signatures into a registry."),
    "cache": CommandSpec("fleet", "The shared download cache ($NEXO_HOME/cache/blobs)."),
    "trust": CommandSpec("trust", "Manage the trust policy (trusted_keys.toml)."),
}


def _quiet_callback(value: bool) -> None:
    if value:
        _apply(lambda: set_verbosity(quiet=True))


def _verbose_callback(value: bool) -> None:
    if value:
        _apply(lambda: set_verbosity(verbose=True))


def _color_callback(value: str | None) -> None:
    if value is not None:
        _apply(lambda: set_color(value))


def _apply(action: Any) -> None:
    try:
        action()
    except NexoError as error:
        raise typer.BadParameter(error.message) from error


# -q, -v and --color: declared once, taken by the root (`nexo -v`) and by every command and
# group (`nexo plugin lint -v`); the root's help is shorter, so the help is a parameter.
def _quiet_option() -> Any:
    return typer.Option(
        False,
        "--quiet",
        "-q",
        help="Print only results, warnings and errors.",
        callback=_quiet_callback,
        expose_value=False,
        is_eager=True,
    )


def _verbose_option(help_text: str) -> Any:
    return typer.Option(
        False,
        "--verbose",
        "-v",
        help=help_text,
        callback=_verbose_callback,
        expose_value=False,
        is_eager=True,
    )


def _color_option(help_text: str) -> Any:
    return typer.Option(
        None,
        "--color",
        metavar="[auto|always|never]",
        help=help_text,
        callback=_color_callback,
        expose_value=False,
        is_eager=True,
    )


def _shared_options(
    quiet: bool = _quiet_option(),
    verbose: bool = _verbose_option(
        "Print debug detail on stderr (and the kind and causes of an error)."
    ),
    color: str | None = _color_option(
        "Colour output (default auto: on a terminal, unless NO_COLOR, CLICOLOR=0 or TERM=dumb; "
        "FORCE_COLOR or CLICOLOR_FORCE forces)."
    ),
) -> None:
    """Declaration of the options every command takes (never run)."""


@cache
def _shared_params() -> tuple[click.Parameter, ...]:
    holder = typer.Typer(add_completion=False)
    holder.command()(_shared_options)
    return tuple(typer.main.get_command(holder).params)


def _completion_callback(show: bool) -> Any:
    def callback(ctx: typer.Context, value: str | None) -> None:
        if value is None or ctx.resilient_parsing:
            return
        from typer import _completion_shared as shared  # noqa: PLC0415

        shell = value if value != "auto" else shared._get_shell_name()
        if shell not in SHELLS:
            detected = "" if value != "auto" else " (could not detect it; name it)"
            raise typer.BadParameter(
                f"unsupported shell {shell!r}{detected}; choose one of {', '.join(SHELLS)}"
            )
        if show:
            script = shared.get_completion_script(
                prog_name="nexo", complete_var="_NEXO_COMPLETE", shell=shell
            )
            sys.stdout.write(script.rstrip("\n") + "\n")
        else:
            installed_shell, path = _install_completion(shell)
            sys.stderr.write(
                f"{installed_shell} completion installed in {path}; "
                "it takes effect in a new shell\n"
            )
        raise typer.Exit(0)

    return callback


def _install_completion(shell: str) -> tuple[str, Any]:
    """Typer's installer for ``shell``. PowerShell is asked where its profile is: a shell that
    is not installed, or that fails to answer, is a usage error naming the way by hand."""
    import subprocess  # noqa: PLC0415 - only when installing completion
    from pathlib import Path  # noqa: PLC0415

    from typer import _completion_shared as shared  # noqa: PLC0415

    from nexo_pkg.core.errors import ConfigError, NexoError  # noqa: PLC0415

    by_hand = f"print the script with `nexo --show-completion {shell}` and add it by hand"
    try:
        return shared.install(shell=shell, prog_name="nexo", complete_var="_NEXO_COMPLETE")
    except (FileNotFoundError, PermissionError) as error:
        if error.filename != shell:
            # A profile or completion file in the home directory that cannot be written.
            raise NexoError(
                f"cannot write {error.filename}: {error.strerror}; {by_hand}", kind="io"
            ) from error
        raise typer.BadParameter(
            f"{shell} is not installed here (no `{shell}` on PATH to ask where its profile "
            f"is); install it, or {by_hand}"
        ) from None
    except OSError as error:
        raise NexoError(
            f"cannot write {error.filename or 'the completion files'}: {error.strerror}; {by_hand}",
            kind="io",
        ) from error
    except UnicodeDecodeError as error:
        # Typer reads the profile as text to add its line: one that is not UTF-8 (a Latin-1
        # `.bashrc`) is left as it is, and nothing else is written.
        profile = {"bash": ".bashrc", "zsh": ".zshrc"}.get(shell)
        named = str(Path.home() / profile) if profile else f"the {shell} profile"
        raise NexoError(
            f"cannot add completion to {named}: it is not UTF-8 text ({error.reason} at byte "
            f"{error.start}); {by_hand}",
            kind="io",
        ) from error
    except RuntimeError as error:  # Path.home(): "Could not determine home directory."
        raise ConfigError(
            "cannot find the home directory to install completion into: HOME is unset and "
            f"this user has no entry in the password database; set HOME, or {by_hand}"
        ) from error
    except subprocess.CalledProcessError as error:
        raise typer.BadParameter(
            f"`{shell}` did not say where its profile is (exit {error.returncode}); {by_hand}"
        ) from None


class LazyPluginGroup(TyperGroup):
    """The ``plugin`` group: commands come from :data:`COMMANDS`, imported on first use."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        _add_shared_params(self)
        attach_choice_completion(self)

    def list_commands(self, ctx: click.Context) -> list[str]:
        del ctx
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        del ctx
        spec = COMMANDS.get(cmd_name)
        if spec is None:
            return None
        command = module_command(spec.module, cmd_name)
        if command is not None and spec.plugin_root and not posix.POSIX:
            return _refused_here(command, cmd_name)
        return command

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        """As click, and a mistyped command name gets the closest names (``Did you mean``)."""
        try:
            return super().resolve_command(ctx, args)
        except TyperUsageError as error:
            _suggest(error, args[0] if args else "", list(COMMANDS))
            raise

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        del ctx
        rows = [(name, spec.summary) for name, spec in COMMANDS.items()]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


def usable_everywhere() -> tuple[str, ...]:
    """The commands (and groups, every subcommand of which) that run on Windows too: all
    but those that manage a plugin root (:attr:`CommandSpec.plugin_root`)."""
    return tuple(name for name, spec in COMMANDS.items() if not spec.plugin_root)


def _refused_here(command: click.Command, name: str) -> click.Command:
    """``command`` with its options and ``--help`` intact, refusing to run in one sentence
    (:func:`~nexo_pkg.core.posix.refuse_without_posix`) once its arguments are parsed."""
    refused = copy.copy(command)

    def refuse(**params: Any) -> None:
        try:
            posix.refuse_without_posix(name, usable_everywhere())
        except NexoError as error:
            fail(error, json_output=bool(params.get("json_output")))

    refused.callback = refuse
    return refused


@cache
def _registered(module_name: str) -> typer.Typer:
    """Let ``nexo_pkg.cli.MODULE`` register its commands on a fresh holder (imported at the
    first use of one of them); ``KeyError`` for an unknown module."""
    # Plain imports, one per module, so the import contracts see them.
    if module_name == "lint":
        from nexo_pkg.cli.lint import register  # noqa: PLC0415
    elif module_name == "new":
        from nexo_pkg.cli.new import register  # noqa: PLC0415
    elif module_name == "pack":
        from nexo_pkg.cli.pack import register  # noqa: PLC0415
    elif module_name == "check":
        from nexo_pkg.cli.check import register  # noqa: PLC0415
    elif module_name == "install":
        from nexo_pkg.cli.install import register  # noqa: PLC0415
    elif module_name == "operate":
        from nexo_pkg.cli.operate import register  # noqa: PLC0415
    elif module_name == "lsp":
        from nexo_pkg.cli.lsp import register  # noqa: PLC0415
    elif module_name == "fleet":
        from nexo_pkg.cli.fleet import register  # noqa: PLC0415
    elif module_name == "trust":
        from nexo_pkg.cli.trust import register  # noqa: PLC0415
    elif module_name == "sbom":
        from nexo_pkg.cli.sbom import register  # noqa: PLC0415
    else:
        raise KeyError(module_name)
    holder = typer.Typer(rich_markup_mode=None, add_completion=False)
    register(holder)
    return holder


def _built(holder: typer.Typer) -> dict[str, click.Command]:
    commands = dict(typer.main.get_group(holder).commands)
    for name, command in commands.items():
        _conventions(command, name)
    return commands


@cache
def module_commands(module_name: str) -> dict[str, click.Command]:
    """Every command ``nexo_pkg.cli.MODULE`` registers, by name."""
    return _built(_registered(module_name))


@cache
def module_command(module_name: str, name: str) -> click.Command | None:
    """The command ``name`` of ``nexo_pkg.cli.MODULE``, built alone: a module registers
    several, and building one (its parameters read from its signature) costs milliseconds."""
    # Every command and sub-app (``trust``, ``cache``) is registered under its name.
    holder = _registered(module_name)
    single = typer.Typer(rich_markup_mode=None, add_completion=False)
    single.registered_commands = [info for info in holder.registered_commands if info.name == name]
    single.registered_groups = [info for info in holder.registered_groups if info.name == name]
    return _built(single).get(name)


def _suggest(error: TyperUsageError, typed: str, names: list[str]) -> None:
    """Add ``Did you mean 'x'?`` to a "No such command" ``error`` when a name is close."""
    from difflib import get_close_matches  # noqa: PLC0415 - only on a mistyped command

    matches = get_close_matches(typed, names) if typed else []
    if matches and "Did you mean" not in error.message:
        suggestions = ", ".join(repr(match) for match in matches)
        error.message = f"{error.message.rstrip('.')}. Did you mean {suggestions}?"


def _conventions(command: click.Command, path: str) -> None:
    """Give ``command`` (``nexo plugin PATH``, and the commands of a group) the shared
    options, plain help, its examples and completion of the option values it declares."""
    # Plain help everywhere: rich markup would eat `[a-z]` and costs ~100 ms to import.
    if hasattr(command, "rich_markup_mode"):
        command.rich_markup_mode = None
    command.context_settings = {**CONTEXT_SETTINGS, **command.context_settings}
    _add_shared_params(command)
    attach_choice_completion(command)
    if command.epilog is None:
        command.epilog = epilog(path)
    subcommands: dict[str, click.Command] = getattr(command, "commands", {})
    for name, subcommand in subcommands.items():
        _conventions(subcommand, f"{path} {name}")


def _add_shared_params(command: click.Command) -> None:
    """Accept (and list in the help) the shared options on ``command``, group or not."""
    taken = {option for param in command.params for option in param.opts}
    command.params.extend(param for param in _shared_params() if not taken.intersection(param.opts))


@cache
def build_app() -> tuple[typer.Typer, typer.Typer]:
    """Build the ``nexo`` Typer app and its ``plugin`` sub-app (once per process)."""
    app = typer.Typer(
        name="nexo",
        help="Tooling for nexo subprocess plugins.",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        rich_markup_mode=None,
        context_settings=CONTEXT_SETTINGS,
        epilog=epilog(ROOT),
    )
    plugin_app = typer.Typer(
        cls=LazyPluginGroup,
        help=(
            "Lint, scaffold, pack, check and install nexo plugins.\n\n"
            "Exit codes: 0 success; 1 the answer is no (lint errors, refused install, failed "
            "check); 2 usage or configuration error; 130 interrupted (Ctrl-C), 143 terminated, 129 "
            "hung up."
        ),
        no_args_is_help=True,
        rich_markup_mode=None,
        context_settings=CONTEXT_SETTINGS,
        epilog=epilog(""),
    )
    app.add_typer(plugin_app, name="plugin")

    def show_version(value: bool) -> None:
        if value:
            sys.stdout.write(f"nexo-pkg {__version__}\n")
            raise typer.Exit(0)

    @app.callback()
    def root(  # noqa: PLR0917 - Typer maps each flag to one parameter
        version: bool = typer.Option(
            False,
            "--version",
            "-V",
            help="Print the nexo-pkg version and exit.",
            callback=show_version,
            is_eager=True,
        ),
        # Applied as they are parsed (as on every command), so a bad value is named even
        # when no command follows (`nexo --color bogus`), not hidden by "Missing command".
        quiet: bool = _quiet_option(),
        verbose: bool = _verbose_option("Print debug detail on stderr."),
        color: str | None = _color_option("Colour output (default auto)."),
        install_completion: str | None = typer.Option(
            None,
            "--install-completion",
            metavar="[SHELL]",
            help=f"Install shell completion ({', '.join(SHELLS)}; default: this shell).",
            callback=_completion_callback(show=False),
            expose_value=False,
            is_eager=True,
        ),
        show_completion: str | None = typer.Option(
            None,
            "--show-completion",
            metavar="[SHELL]",
            help="Print the completion script for SHELL, to install it by hand.",
            callback=_completion_callback(show=True),
            expose_value=False,
            is_eager=True,
        ),
    ) -> None:
        """Tooling for nexo subprocess plugins."""
        del version

    del root

    @app.command("help", epilog=epilog(HELP))
    def help_command(
        ctx: typer.Context,
        command: list[str] = typer.Argument(  # noqa: B008 - Typer's declaration style
            None,
            metavar="[COMMAND]...",
            help="The command to describe (e.g. plugin install).",
            autocompletion=command_names,
        ),
    ) -> None:
        """Show the help of nexo or of one of its commands (nexo help plugin install)."""
        sys.stdout.write(_help_text(ctx, list(command or [])) + "\n")

    del help_command
    return app, plugin_app


def _help_text(ctx: click.Context, names: list[str]) -> str:
    """The ``-h`` text of the command ``names`` under the root of ``ctx``; a name that is not
    a command is a usage error with the closest names."""
    current = ctx.find_root()
    for name in names:
        group = current.command if isinstance(current.command, TyperGroup) else None
        found = group.get_command(current, name) if group is not None else None
        if found is None:
            known = list(group.list_commands(current)) if group is not None else []
            error = TyperUsageError(f"No such command {name!r}.", ctx=current)
            _suggest(error, name, known)
            raise error
        current = found.make_context(name, [], parent=current, resilient_parsing=True)
    return current.get_help()


def run(arguments: list[str]) -> int:
    """Run the Typer app on ``arguments``; return the exit code.

    ``--install-completion`` and ``--show-completion`` take an optional shell: alone, they
    mean this shell (detected).

    Usage errors print click's message and exit 2; :class:`NexoError` escaping a command prints
    one line with its exit code; an unanswered prompt (end of input) is "cancelled", exit 1.
    """
    if arguments in (["--install-completion"], ["--show-completion"]):
        arguments = [*arguments, "auto"]
    if os.environ.get("_NEXO_COMPLETE"):
        # A shell asks for completions: teach click the shells Typer supports.
        from typer._completion_classes import completion_init  # noqa: PLC0415

        completion_init()
    command = typer.main.get_command(build_app()[0])
    attach_choice_completion(command)
    json_output = asks_for_json(arguments)
    try:
        outcome = command.main(args=arguments, prog_name="nexo", standalone_mode=False)
    except NoArgsIsHelpError as error:
        # `nexo`, `nexo plugin`, `nexo plugin trust` alone: the help, as written (not folded
        # into one error line), on stderr with the usage error's code, as click, ruff and uv.
        if json_output:
            emit_json(UsageError(f"missing command; run '{error.ctx.command_path} -h'").to_json())
        sys.stderr.write(error.format_message().rstrip("\n") + "\n")
        return error.exit_code
    except typer.TyperException as error:
        # click's usage errors (exit 2) and file errors: one line, as every other failure,
        # naming the help to read instead of click's usage block.
        if isinstance(error, NoSuchOption):
            _suggest_options(error)
        usage = UsageError(error.format_message())
        if json_output:
            emit_json(usage.to_json())
        line = _usage_line(error, _command_path(command, arguments))
        sys.stderr.write(f"error: {line} [{usage.kind}]\n")
        return error.exit_code
    except typer.Abort:
        cancelled = NexoError("cancelled; nothing was changed", kind="cancelled")
        return report_error(cancelled, json_output=json_output)
    except NexoError as error:
        return report_error(error, json_output=json_output)
    return outcome if isinstance(outcome, int) else 0


def _suggest_options(error: NoSuchOption) -> None:
    """The options an unknown long option was likely meant as, judged by their names without
    the dashes every long option shares (click's own guess counts them, and offers
    ``--quiet`` for ``--dest``): none when nothing is close, as ruff and gh say nothing."""
    import difflib  # noqa: PLC0415 - a mistyped option only

    context = error.ctx
    if context is None or not error.option_name.startswith("--"):
        return
    names = {
        option.removeprefix("--"): option
        for parameter in context.command.get_params(context)
        for option in (*parameter.opts, *parameter.secondary_opts)
        if option.startswith("--")
    }
    wanted = error.option_name.removeprefix("--").split("=", 1)[0]
    close = difflib.get_close_matches(wanted, list(names), n=3, cutoff=0.6)
    error.possibilities = [names[name] for name in close]


def _usage_line(error: typer.TyperException, command_path: str) -> str:
    """A click error's message on one line; a usage error also names the help of the
    command it is about (``Run 'nexo plugin lint -h' for help.``): its context's, or
    ``command_path`` for the parser's errors that carry none (an option missing its value)."""
    message = " ".join(error.format_message().split())
    context = getattr(error, "ctx", None)
    if isinstance(error, TyperUsageError):
        if not message.endswith((".", "?", "!")):
            message += "."
        path = context.command_path if context is not None else command_path
        message = f"{message} Run '{path} -h' for help."
    return message


def _command_path(command: click.Command, arguments: list[str]) -> str:
    """The command ``arguments`` name (``nexo plugin lint``): their subcommand names, down
    to a command that is no group. The groups' own options take no value that is a
    command's name (``--color auto``), so the other words are skipped."""
    names = ["nexo"]
    for argument in arguments:
        if argument == "--":
            break
        if not isinstance(command, TyperGroup):
            break
        context = typer.Context(command)
        if argument in command.list_commands(context):
            found = command.get_command(context, argument)
            if found is None:
                break
            command = found
            names.append(argument)
    return " ".join(names)
