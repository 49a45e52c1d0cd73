"""Imported by the fork server that starts :class:`~nexo_pkg.fleet.pool.CpuPool`'s workers
when the run already has threads (its preload), and by nothing else: the server then ignores
SIGINT before it notes the handlers its children start with, so the workers are born
ignoring it. Otherwise a worker would have Python's SIGINT handler from its fork until it
set its own, and a Ctrl-C to the process group then would kill it with a traceback."""

from __future__ import annotations

import signal

signal.signal(signal.SIGINT, signal.SIG_IGN)
