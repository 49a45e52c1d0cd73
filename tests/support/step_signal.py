"""A ``sitecustomize`` text that makes a nexo process signal itself right after an exact step.

``signal_after_step(importer, step, signum)`` wraps ``step`` (``module.attribute``) just
before ``importer`` is imported (so that a name ``importer`` takes from ``module`` is the
wrapped one), and the process sends itself ``signum`` as soon as the step's first call has
returned: a test meets a command at a known point, never on a timer. Used with
:func:`support.cli.nexo_with_sitecustomize`.
"""

from __future__ import annotations

import signal

_TEXT = """
import importlib
import os
import sys

IMPORTER = {importer!r}
STEP = {step!r}
SIGNUM = {signum}


class _SignalAfterStep:
    def find_spec(self, name, path=None, target=None):
        if name == IMPORTER:
            sys.meta_path.remove(self)
            module, attribute = STEP.rsplit(".", 1)
            owner = importlib.import_module(module)
            real = getattr(owner, attribute)

            fired = []

            def signalled(*args, **kwargs):
                result = real(*args, **kwargs)
                if not fired:
                    fired.append(True)
                    os.kill(os.getpid(), SIGNUM)
                return result

            setattr(owner, attribute, signalled)
        return None


sys.meta_path.insert(0, _SignalAfterStep())
"""


def signal_after_step(importer: str, step: str, signum: int = signal.SIGINT) -> str:
    """The ``sitecustomize`` text: ``signum`` right after ``step``'s first call returns."""
    return _TEXT.format(importer=importer, step=step, signum=int(signum))
