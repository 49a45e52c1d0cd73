"""``trust add`` reads the trust policy once to edit it and looks at its first bytes again
for a byte-order mark: a policy swapped for a FIFO in between never blocks the command (a
read of a FIFO waits for a writer), which refuses to write over it in one ``io`` line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from support.cli import nexo_with_sitecustomize

# The policy becomes a FIFO right after the editor has read it (a `sitecustomize` hook on the
# configuration reader: the moment is exact, the FIFO is a real one).
SWAP_AFTER_THE_READ = """
import os
import sys
import nexo_pkg.core.files as files

_read = files.read_config_file


def _read_then_swap(path, *args, **kwargs):
    raw = _read(path, *args, **kwargs)
    caller = sys._getframe(1).f_globals.get("__name__")
    if caller == "nexo_pkg.trust.policy_edit" and not os.path.exists(str(path) + ".swapped"):
        open(str(path) + ".swapped", "w").close()
        os.unlink(path)
        os.mkfifo(path)
    return raw


files.read_config_file = _read_then_swap
"""


@pytest.mark.skipif(sys.platform == "win32", reason="FIFOs")
def test_trust_add_never_blocks_on_a_policy_swapped_for_a_fifo(tmp_path: Path) -> None:
    policy = tmp_path / "trusted_keys.toml"
    policy.write_bytes(b'default = "warn"\n')
    try:
        added = nexo_with_sitecustomize(
            tmp_path, SWAP_AFTER_THE_READ,
            "plugin", "trust", "add", "acme", "--identity", "x", "--trusted-keys", str(policy),
            "--yes", "--json",
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        pytest.fail("trust add blocked reading a FIFO")
    assert (tmp_path / "trusted_keys.toml.swapped").exists()  # the swap took place
    assert "Traceback" not in added.stderr, added.stderr
    document = json.loads(added.stdout)
    assert document["kind"] == "io", document
    assert document["error"] == f"cannot write {policy}: is not a regular file"
    assert added.returncode == 1, added.stderr
    assert policy.is_fifo()
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "hook", "trusted_keys.toml", "trusted_keys.toml.swapped",
    ]  # fmt: skip
