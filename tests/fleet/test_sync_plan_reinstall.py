"""The plan's ``reinstall``: the locked version is installed, but not the locked bytes (a
receipt whose tarball hash is not the lock's, as after a tag pushed again). ``--dry-run``
says so without a write, and the run does what the plan said."""

from __future__ import annotations

import json
from pathlib import Path

from support.cli import nexo
from support.registry import Registry
from support.tarballs import tree_snapshot

from .conftest import LINUX, MakeDist, push_dist


def test_a_dry_run_plans_a_reinstall_of_other_bytes_and_the_run_does_it(
    tmp_path: Path, fleet_env: dict[str, str], registry: Registry, make_dist: MakeDist
) -> None:
    home = Path(fleet_env["NEXO_HOME"])
    push_dist(make_dist("alpha", "1.0.0", identity=None, targets=(LINUX,)),
              registry.ref("plugins/alpha"), home)  # fmt: skip
    wanted = tmp_path / "nexo-plugins.toml"
    wanted.write_text(f'[plugins.alpha]\nsource = "{registry.ref("plugins/alpha")}"\n')
    assert nexo("plugin", "lock", "-f", str(wanted), "--plain-http", env=fleet_env,
                in_process=True).code == 0  # fmt: skip
    lock, root = tmp_path / "nexo-plugins.lock", tmp_path / "root"
    common = ("sync", "--lock", str(lock), "--dest", str(root), "--plain-http", "--frozen")
    assert nexo("plugin", *common, env=fleet_env, in_process=True).code == 0

    receipt = root / "alpha-1.0.0" / ".nexo-install.json"
    document = json.loads(receipt.read_text())
    receipt.write_text(json.dumps({**document, "sha256": "0" * 64}))
    before = tree_snapshot(root)
    planned = nexo("plugin", *common, "--dry-run", "--json", env=fleet_env, in_process=True)
    assert planned.code == 0, planned.stderr
    assert planned.document["plan"] == [
        {"id": "alpha", "action": "reinstall", "from_version": "1.0.0", "version": "1.0.0"}
    ]
    text = nexo("plugin", *common, "--dry-run", env=fleet_env, in_process=True)
    assert text.code == 0, text.stderr
    assert text.stdout.split() == ["alpha", "1.0.0", "reinstall", "(other", "bytes,", "same",
                                   "version)"]  # fmt: skip
    assert tree_snapshot(root) == before

    done = nexo("plugin", *common, "--json", env=fleet_env, in_process=True)
    assert done.code == 0, done.stderr
    (plugin,) = done.document["plugins"]
    assert (plugin["change"], plugin["from_version"], plugin["version"]) == (
        "reinstall", "1.0.0", "1.0.0",
    )  # fmt: skip
    assert json.loads(receipt.read_text())["sha256"] == document["sha256"]
    again = nexo("plugin", *common, "--dry-run", "--json", env=fleet_env, in_process=True)
    assert [step["action"] for step in again.document["plan"]] == ["unchanged"]
