"""A real microapp on disk: scaffolded by `nexo plugin new --kind microapp`, packed and
installed through the console's commands, for tests of what the operator commands say about
an installed microapp."""

from __future__ import annotations

import os
from functools import partial
from pathlib import Path

from support.cli import nexo

plugin = partial(nexo, "plugin", in_process=True)


def install_scaffolded_microapp(tmp_path: Path) -> Path:
    """The microapp `greeter`, scaffolded in ``tmp_path``, packed, and installed into
    ``tmp_path/ext`` (returned), with ``HOME`` and ``NEXO_HOME`` under ``tmp_path``."""
    env = {**os.environ, "HOME": str(tmp_path / "home"), "NEXO_HOME": str(tmp_path / "nexo")}
    created = plugin(
        "new", "greeter", "--kind", "microapp", "--lang", "python", env=env, cwd=tmp_path
    )
    assert created.code == 0, created.stderr
    packed = plugin("pack", env=env, cwd=tmp_path / "greeter")
    assert packed.code == 0, packed.stderr
    [tarball] = (tmp_path / "greeter" / "dist").glob("*.tar.gz")
    dest = tmp_path / "ext"
    done = plugin("install", str(tarball), "--dest", str(dest), env=env, cwd=tmp_path)
    assert done.code == 0, done.stderr
    return dest
