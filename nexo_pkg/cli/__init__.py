"""The Typer command line. It parses options, calls the library and sets the exit code.

What every command shares lives here rather than in :mod:`nexo_pkg.cli.main`, which imports
the commands: how a signal stops a run (:class:`Interrupted`, raised by the handlers
:func:`nexo_pkg.cli.main.install_signal_handlers` installs; the language server ends at once
with the same line and exit code). It is imported by ``nexo --version`` too: nothing more here.
"""

from __future__ import annotations

import signal

SIGNAL_EXIT = {signal.SIGINT: 130, signal.SIGTERM: 143}
SIGNAL_WORDS = {signal.SIGINT: "interrupted", signal.SIGTERM: "terminated"}


class Interrupted(BaseException):
    """Raised in the main thread by SIGINT or SIGTERM.

    A ``BaseException`` that is not ``KeyboardInterrupt``: cleanup written as ``finally`` or
    ``except BaseException`` runs, while nothing in Typer, click's prompts or a library turns it
    into "Aborted!" or a silent exit code.
    """

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum

    @property
    def exit_code(self) -> int:
        return SIGNAL_EXIT.get(signal.Signals(self.signum), 128 + self.signum)

    @property
    def line(self) -> str:
        return SIGNAL_WORDS.get(signal.Signals(self.signum), f"stopped by signal {self.signum}")
