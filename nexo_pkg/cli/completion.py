"""Shell completion of option values and installed plugin ids (docs/cli.md, "Shell
completion"); click completes commands and option names.

An option completes the choices it declares, a ``click.Choice`` type or a ``[a|b|c]`` metavar
(:func:`attach_choice_completion` wires every such option, so a new option only declares its
choices); an id argument completes the plugins installed in the root the command would use
(:func:`installed_ids`). A completer never fails: a root that cannot be read completes nothing.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from typer import _click as click


# `[a|b|c]`, `[only]` or `a|b`: lower-case words (an upper-case metavar such as `[ID]` or
# `GLOB` names a placeholder, not a choice).
_WORDS = r"[a-z0-9_.-]+(?:\|[a-z0-9_.-]+)"
_METAVAR_CHOICES = re.compile(rf"^(?:\[({_WORDS}*)\]|({_WORDS}+))$")


def declared_choices(param: click.Parameter) -> tuple[str, ...]:
    """The values ``param`` declares: its ``Choice`` type's, else those of a ``[a|b]`` metavar."""
    choices = getattr(param.type, "choices", None)
    if choices:
        return tuple(str(getattr(choice, "value", choice)) for choice in choices)
    match = _METAVAR_CHOICES.match(param.metavar or "")
    return tuple((match.group(1) or match.group(2)).split("|")) if match else ()


def _choice_completer(
    choices: tuple[str, ...],
) -> Callable[[click.Context, click.Parameter, str], list[Any]]:
    def complete(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[Any]:
        del ctx, param
        from typer._click.shell_completion import CompletionItem  # noqa: PLC0415

        return [CompletionItem(choice) for choice in choices if choice.startswith(incomplete)]

    return complete


def attach_choice_completion(command: click.Command) -> None:
    """Make every option of ``command`` that declares its choices complete them."""
    for param in command.params:
        if param.param_type_name != "option" or getattr(param, "is_flag", False):
            continue
        if getattr(param, "_custom_shell_complete", None) is not None:
            continue
        choices = declared_choices(param)
        if choices:
            # click's own hook for a parameter's completer (what `shell_complete=` sets).
            param._custom_shell_complete = _choice_completer(choices)


def installed_ids(ctx: Any, incomplete: str) -> list[str]:
    """Ids of the plugins installed under the roots the command would use (``--dest``, else
    every search path of the daemon's configuration, as ``list``; Typer
    ``autocompletion``); nothing when no root can be found or read."""
    params = getattr(ctx, "params", {}) or {}
    dest = params.get("dest")
    config = params.get("config")
    try:
        from nexo_pkg.install import api as install_api  # noqa: PLC0415

        directory = install_api.config_dir(
            Path(config) if config is not None else None, announce=False
        )
        roots = (
            (install_api.install_root(Path(dest)),)
            if dest is not None
            else install_api.load_daemon_config(directory).plugin_roots()
        )
        found = [item for root in roots for item in install_api.scan_installed(root)]
    except Exception:  # noqa: BLE001 - completion must never break the shell
        return []
    ids = {item.plugin_id for item in found if item.plugin_id and not item.kept}
    return sorted(plugin_id for plugin_id in ids if plugin_id.startswith(incomplete))


def command_names(ctx: Any, incomplete: str) -> list[str]:
    """The commands ``nexo help`` can describe next, after the words already typed
    (``nexo help plugin in`` offers ``info``, ``install``), as ``gh help`` and ``uv help``
    complete; nothing past a command that has no subcommands."""
    try:
        current = ctx.find_root()
        for name in (getattr(ctx, "params", {}) or {}).get("command") or ():
            found = current.command.get_command(current, name)
            if found is None:
                return []
            current = found.make_context(name, [], parent=current, resilient_parsing=True)
        names = current.command.list_commands(current)
    except Exception:  # noqa: BLE001 - completion must never break the shell
        return []
    return [name for name in names if name.startswith(incomplete)]
