"""``install`` of the very archive already installed, when its manifest's
``min_nexo_version`` excludes the daemon: ``incompatible`` (exit 1), as a first install and
the dry run say, never "already installed" (SPEC §5: the payload, step 7, is judged before
the root, step 9). The root is left as it was."""

from __future__ import annotations

from pathlib import Path

from support.cli import clean_env, nexo
from support.tarballs import manifest_text, plugin_tarball, tree_snapshot, write_plugin

FUTURE = manifest_text("hello", "2.0.0").replace(">=0.1.0", ">=9.0")


def test_an_installed_archive_the_daemon_refuses_is_incompatible_not_already_installed(
    tmp_path: Path,
) -> None:
    tarball = write_plugin(
        tmp_path / "dist", "hello", "2.0.0", data=plugin_tarball("hello", "2.0.0", manifest=FUTURE)
    )
    root = tmp_path / "root"
    env = clean_env(NEXO_HOME=str(tmp_path / "home"))
    common = ("plugin", "install", str(tarball), "--dest", str(root), "--yes",
              "--skip-signature-verify")  # fmt: skip
    # Installed under a daemon that admits it.
    first = nexo(*common, "--nexo-version", "9.1.0", env=env, cwd=tmp_path, in_process=True)
    assert first.exit_code == 0, first.stderr
    before = tree_snapshot(root)

    for extra in ((), ("--json",), ("--dry-run", "--json")):
        result = nexo(*common, "--nexo-version", "0.2.1", *extra, env=env, cwd=tmp_path,
                      in_process=True)  # fmt: skip
        assert result.exit_code == 1, (extra, result.stdout, result.stderr)
        assert "already installed" not in result.stdout + result.stderr
        error = next(line for line in result.stderr.splitlines() if line.startswith("error:"))
        assert "min_nexo_version" in error, error
        assert "0.2.1" in error, error
        if "--json" in extra:
            assert result.document["kind"] == "incompatible", result.document
            assert result.document["ok"] is False
        assert tree_snapshot(root) == before

    # A daemon that admits it still finds it in place, as before.
    again = nexo(*common, "--nexo-version", "9.1.0", "--json", env=env, cwd=tmp_path,
                 in_process=True)  # fmt: skip
    assert again.exit_code == 0, again.stderr
    assert again.document["was_already_present"] is True
    assert tree_snapshot(root) == before
