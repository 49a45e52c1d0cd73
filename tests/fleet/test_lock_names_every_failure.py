"""``lock`` tries every plugin of the wanted set: when several cannot be locked, each is named
with its kind (``error: ID: MESSAGE [KIND]``, and under ``failures`` in ``--json``), and the
lock file is left as it was, against the real ``docker-registry``."""

from __future__ import annotations

from pathlib import Path

from support.cli import nexo
from support.registry import Registry

from .conftest import MakeDist, fleet_run, push_dist


def test_every_plugin_that_cannot_be_locked_is_named_and_the_lock_is_kept(
    tmp_path: Path, fleet_env: dict[str, str], registry: Registry, make_dist: MakeDist,
    policy: Path,
) -> None:  # fmt: skip
    home = Path(fleet_env["NEXO_HOME"])
    push_dist(make_dist("echo", "1.0.0"), registry.ref("plugins/echo"), home)
    wanted = tmp_path / "nexo-plugins.toml"
    echo = f'[plugins.echo]\nsource = "{registry.ref("plugins/echo")}"\n'
    wanted.write_text(echo, encoding="utf-8")
    lock = tmp_path / "nexo-plugins.lock"
    common = ("--plain-http", "--trusted-keys", str(policy), "--timeout", "5")
    first = fleet_run("lock", "-f", wanted, *common, env=fleet_env)
    assert first.code == 0, first.stderr
    before = lock.read_bytes()

    # Two plugins added that cannot be locked, for two different reasons: a repository the
    # registry does not hold, and a version requirement no pushed tag meets.
    wanted.write_text(
        echo
        + f'[plugins.ghost]\nsource = "{registry.ref("plugins/ghost")}"\n'
        + f'[plugins.weather]\nsource = "{registry.ref("plugins/echo")}"\nversion = "^9"\n',
        encoding="utf-8",
    )
    text = nexo("plugin", "lock", "-f", str(wanted), *common, env=fleet_env, in_process=True)
    assert text.code == 1, text.stderr
    lines = [line for line in text.stderr.splitlines() if line.startswith("error: ")]
    assert any(line.startswith("error: ghost: ") for line in lines), text.stderr
    assert any(line.startswith("error: weather: ") for line in lines), text.stderr
    assert not any(line.startswith("error: echo") for line in lines), text.stderr
    assert lock.read_bytes() == before

    document = fleet_run("lock", "-f", wanted, *common, env=fleet_env)
    assert document.code == 1, document.stderr
    failures = document.document["failures"]
    assert [failure["plugin"] for failure in failures] == ["ghost", "weather"]
    assert document.document["kind"] == failures[0]["kind"]
    for failure in failures:
        # Each plugin's own line carries its kind, as in the document.
        assert f"[{failure['kind']}]" in next(
            line for line in document.stderr.splitlines()
            if line.startswith(f"error: {failure['plugin']}: ")
        )  # fmt: skip
    assert lock.read_bytes() == before
