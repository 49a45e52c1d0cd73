"""Helpers shared by every command: output streams, verbosity, colour, errors, prompts, by
the conventions of docs/cli.md (results on stdout; notes, progress, warnings and errors on
stderr). Every string that came from outside (manifests, release documents, asset names, file
names) is passed through :func:`printable` before it reaches a terminal.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, Protocol, TextIO, TypeVar

from nexo_pkg.core.errors import NexoError, UsageError
from nexo_pkg.core.output import OUTPUT, emit_json, report_error, say
from nexo_pkg.core.terminal import printable

if TYPE_CHECKING:
    from nexo_pkg.install.api import DaemonReach

T = TypeVar("T")


class Documented(Protocol):
    """A command's result that ``--json`` prints as one document."""

    def to_json(self) -> dict[str, Any]: ...


D = TypeVar("D", bound=Documented | dict[str, Any])

COLOR_CHOICES = ("auto", "always", "never")


def plain_options(
    arguments: Sequence[str],
    flags: Mapping[str, str],
    values: Mapping[str, str],
    *,
    repeatable: frozenset[str] = frozenset(),
) -> dict[str, object] | None:
    """A Typer-free fast path's options by field: ``flags`` name the options that take no
    value, ``values`` those that take one (``--opt V`` or ``--opt=V``, never empty, never
    starting with ``-``), ``repeatable`` the value options that gather a list. ``None`` for
    anything Typer should handle and word: an argument, ``--help``, a typo, an option given
    twice, an odd value, a bad ``--color``, ``--quiet`` with ``--verbose``, a shell asking for
    completions."""
    if os.environ.get("_NEXO_COMPLETE"):
        return None
    parsed: dict[str, object] = {}
    rest = iter(arguments)
    for argument in rest:
        name, has_value, inline = argument.partition("=")
        flag = None if has_value else flags.get(name)
        if flag is not None and flag not in parsed:
            parsed[flag] = True
            continue
        field = values.get(name)
        value = inline if has_value else next(rest, "")
        if field is None or not value or value.startswith("-"):
            return None
        gathered = parsed.setdefault(field, []) if name in repeatable else None
        if isinstance(gathered, list):
            gathered.append(value)
        elif field in parsed:
            return None
        else:
            parsed[field] = value
    if parsed.get("color", "auto") not in COLOR_CHOICES or (
        "quiet" in parsed and "verbose" in parsed
    ):
        return None
    return parsed


def set_verbosity(*, quiet: bool | None = None, verbose: bool | None = None) -> None:
    """Record ``--quiet`` / ``--verbose``; both at once is a usage error."""
    if quiet:
        OUTPUT.quiet = True
    if verbose:
        OUTPUT.verbose = True
    if OUTPUT.quiet and OUTPUT.verbose:
        raise UsageError("--quiet and --verbose contradict each other; pass one of them")
    if OUTPUT.verbose:
        import logging  # noqa: PLC0415 - only verbose runs configure logging

        logging.basicConfig(
            stream=sys.stderr,
            level=logging.DEBUG,
            format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        )


def set_color(choice: str) -> None:
    """Record ``--color auto|always|never``; anything else is a usage error."""
    if choice not in COLOR_CHOICES:
        raise UsageError(f"--color {choice!r}: choose one of {', '.join(COLOR_CHOICES)}")
    OUTPUT.color = choice


def colour_enabled(stream: TextIO) -> bool:
    """Whether to paint what goes to ``stream``: ``--color always|never``, else ``NO_COLOR``
    (https://no-color.org) off, else ``FORCE_COLOR`` or ``CLICOLOR_FORCE`` (but ``0``) on,
    else ``CLICOLOR=0`` off (https://bixense.com/clicolors), else only on a terminal that
    is not ``TERM=dumb`` (as ruff's and uv's ``anstyle-query`` and rich decide)."""
    if OUTPUT.color != "auto":
        return OUTPUT.color == "always"
    if os.environ.get("NO_COLOR"):
        return False
    for force in (os.environ.get("FORCE_COLOR"), os.environ.get("CLICOLOR_FORCE")):
        if force is not None and force not in {"", "0"}:
            return True
    if os.environ.get("CLICOLOR") == "0" or os.environ.get("TERM") == "dumb":
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


_PAINTS = {"red": "\x1b[31m", "green": "\x1b[32m", "yellow": "\x1b[33m", "dim": "\x1b[2m"}


def painted(text: str, colour: str) -> str:
    """``text`` in ``colour`` (red, green, yellow, dim) when stdout is to be coloured
    (:func:`colour_enabled`: ``--color``, ``NO_COLOR``, ``FORCE_COLOR``, a terminal): the
    first column of ``verify`` and ``doctor`` tables, as ``check`` colours its own."""
    return f"{_PAINTS[colour]}{text}\x1b[0m" if colour_enabled(sys.stdout) else text


def result_line(message: str) -> None:
    """A line of the command's result (``list`` rows, reports): stdout, even with --quiet."""
    sys.stdout.write(message + "\n")


def fail(error: NexoError, *, json_output: bool = False) -> NoReturn:
    """Render ``error`` (:func:`~nexo_pkg.core.output.report_error`) and exit with its code."""
    raise SystemExit(report_error(error, json_output=json_output))


def say_each_failure(error: NexoError) -> None:
    """The ``error: ID: MESSAGE [KIND]`` line of each plugin a run's failure lists under
    ``failures`` (a ``lock`` of several plugins that could not be locked), before the error's
    own line; with ``--json`` too, as a sync says each plugin's failure."""
    failures = error.details.get("failures")
    for failure in failures if isinstance(failures, list) else ():
        line = f"error: {failure['error']} [{failure['kind']}]"
        sys.stderr.write(printable(line) + "\n")


def guarded(action: Callable[[], T], *, json_output: bool = False) -> T:
    """Run ``action``; a :class:`NexoError` becomes one clear line and its exit code."""
    try:
        return action()
    except NexoError as error:
        fail(error, json_output=json_output)


def answer(
    action: Callable[[], D],
    *,
    json_output: bool,
    show: Callable[[D], object],
    mask: bool = True,
) -> D:
    """Run ``action`` as :func:`guarded` does; with ``--json`` print its result's document
    (the result itself when it is a ``dict``), else hand the result to ``show``. Returns the
    result (for the exit code). ``mask``: the document's texts are shown with the credentials
    of any URL in them masked (a root given as ``https://USER:TOKEN@…``), as every error is;
    the trust commands, whose documents are identities and patterns, print theirs as they are."""
    result = guarded(action, json_output=json_output)
    if json_output:
        document = result if isinstance(result, dict) else result.to_json()
        if mask:
            from nexo_pkg.core.credentials import masked  # noqa: PLC0415

            document = masked(document)
        emit_json(document)
    else:
        show(result)
    return result


def policy_path(config: Path | None, explicit: Path | None = None) -> Path:
    """The trust policy a command reads: ``--trusted-keys`` when given, else the daemon's,
    ``<config dir>/extensions/trusted_keys.toml`` (``--config``); ``ConfigError`` for a
    ``--config`` that names no directory."""
    from nexo_pkg.install import api as install_api  # noqa: PLC0415

    if explicit is not None:
        return explicit.expanduser().absolute()
    return install_api.config_dir(config) / install_api.POLICY_FILE


def daemon_reach(config: Path | None) -> Callable[[], DaemonReach | None]:
    """Where the daemon configured in the configuration directory (``--config``) looks for
    plugins, for an install to be judged against: looked up only when a plugin is about to
    be installed (a sync with nothing to do never loads it), once. A configuration directory
    that cannot be named (a ``NEXO_CONFIG_DIR`` naming nothing, with ``--trusted-keys`` and
    ``--dest`` given, which need none) leaves the install unjudged rather than refused."""
    from functools import cache  # noqa: PLC0415

    @cache
    def reach() -> DaemonReach | None:
        from nexo_pkg.install import api as install_api  # noqa: PLC0415

        try:
            directory = install_api.config_dir(config)
        except NexoError:
            return None
        return install_api.DaemonReach(directory)

    return reach


def interactive() -> bool:
    """A person can answer a question: stdin and stderr are both terminals."""
    return sys.stdin.isatty() and sys.stderr.isatty()


def _wait_for_a_line() -> None:
    """Wait until the terminal has a line (or end of input) for ``readline``, a quarter of a
    second at a time: a signal that comes just before ``read`` starts would otherwise only
    be acted on once the person presses Enter (its handler runs between two waits)."""
    if os.name != "posix":
        return
    import select  # noqa: PLC0415

    try:
        descriptor = sys.stdin.fileno()
    except (AttributeError, OSError, ValueError):
        return
    while True:
        try:
            ready, _, _ = select.select([descriptor], [], [], 0.25)
        except (OSError, ValueError):
            return
        if ready:
            return


def confirm(question: str) -> bool:
    """Ask a yes/no question on stderr; default no, and end of input counts as no. Ctrl-C is
    not caught here: it ends the command like anywhere else (exit 130)."""
    sys.stderr.write(f"{question} [y/N]: ")
    sys.stderr.flush()
    _wait_for_a_line()
    answer = sys.stdin.readline()
    if not answer:
        sys.stderr.write("\n")
        return False
    return answer.strip().lower() in {"y", "yes"}


def confirm_or_refuse(
    yes: bool,
    question: str,
    *,
    no_terminal: str,
    cancelled: str = "nothing was changed",
    shown: Iterable[str] = (),
) -> None:
    """Unless ``--yes``: say the ``shown`` lines and ask ``question``. Without a terminal to
    ask on, a :class:`UsageError` saying ``no_terminal``; a no is ``cancelled`` (exit 1)."""
    if yes:
        return
    if not interactive():
        raise UsageError(no_terminal)
    for line in shown:
        say(line)
    if not confirm(question):
        raise NexoError(cancelled, kind="cancelled")
