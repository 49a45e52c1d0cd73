"""``scripts/demo.sh`` runs in a home of its own: the user's ``~/.nexo`` (its configuration,
a trust policy that requires signatures, its cache) is neither read nor written."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from support.tarballs import tree_snapshot

REPO = Path(__file__).resolve().parents[2]


def test_the_demo_leaves_the_user_s_home_alone(tmp_path: Path, wheelhouse: Path) -> None:
    user = tmp_path / "user"
    policy = user / ".nexo" / "config" / "extensions" / "trusted_keys.toml"
    policy.parent.mkdir(parents=True)
    # The setting docs/trust.md recommends: the unsigned demo plugin would be refused here.
    policy.write_text('schema_version = "1.0"\ndefault = "require"\n', encoding="utf-8")
    (user / ".nexo" / "cache").mkdir()
    (user / ".nexo" / "cache" / "keep").write_text("the user's\n", encoding="utf-8")
    before = tree_snapshot(user)
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("NEXO_", "PIP_")) and "proxy" not in key.lower()
    }
    env.update(
        HOME=str(user),
        TMPDIR=str(scratch),
        DEMO_NO_SETUP="1",
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
        PIP_FIND_LINKS=str(wheelhouse),
        NO_COLOR="1",
    )
    done = subprocess.run(
        ["bash", str(REPO / "scripts" / "demo.sh")],
        env=env, capture_output=True, text=True, check=False, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert "check passed for demo" in done.stdout + done.stderr
    assert f"home: {scratch}" in done.stderr
    assert tree_snapshot(user) == before
    assert list(scratch.iterdir()) == []  # the demo's own home went with it
