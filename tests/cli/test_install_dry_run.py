"""``install --dry-run`` runs the checks the install runs (docs/install.md, step 6), the
installed root included: what the install would refuse, the dry run refuses with the same
kind, and what the install would find already there, it says so; neither writes anything."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.cli import CliResult, clean_env, nexo
from support.tarballs import plugin_tarball, tree_snapshot, write_plugin


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return clean_env(NEXO_HOME=str(tmp_path / "home"))


def _install(tarball: Path, root: Path, env: dict[str, str], *extra: str) -> CliResult:
    # The console script in a process of its own, as an operator runs it.
    return nexo("plugin", "install", tarball, "--dest", root, "--yes", "--json", *extra, env=env)


def test_a_dry_run_over_a_newer_version_is_a_downgrade_as_the_install_is(
    tmp_path: Path, env: dict[str, str]
) -> None:
    newer = write_plugin(tmp_path / "dist-2", "hello", "2.0.0")
    older = write_plugin(tmp_path / "dist-1", "hello", "1.0.0")
    root = tmp_path / "plugins"
    assert _install(newer, root, env).code == 0
    before = tree_snapshot(root)

    dry = _install(older, root, env, "--dry-run")
    real = _install(older, root, env)
    for result in (dry, real):
        assert result.code == 1, result.stderr
        assert result.document["kind"] == "downgrade_refused"
        assert result.document["installed"] == "2.0.0"
        assert tree_snapshot(root) == before
    # --allow-downgrade lets both through; the dry run still writes nothing.
    allowed = _install(older, root, env, "--dry-run", "--allow-downgrade")
    assert allowed.code == 0, allowed.stderr
    assert allowed.document["dry_run"] is True
    assert tree_snapshot(root) == before
    # `info` describes the release whatever is installed.
    info = nexo("plugin", "info", older, "--json", env=env, cwd=tmp_path)
    assert info.code == 0, info.stderr


def test_a_dry_run_over_the_same_version_from_another_archive_is_already_installed(
    tmp_path: Path, env: dict[str, str]
) -> None:
    first = write_plugin(tmp_path / "dist-a", "hello", "1.0.0")
    other = write_plugin(
        tmp_path / "dist-b", "hello", "1.0.0", data=plugin_tarball("hello", "1.0.0", payload=b"x")
    )
    root = tmp_path / "plugins"
    assert _install(first, root, env).code == 0
    before = tree_snapshot(root)

    for result in (_install(other, root, env, "--dry-run"), _install(other, root, env)):
        assert result.code == 1, result.stderr
        assert result.document["kind"] == "already_installed"
        assert "from a different archive" in result.document["error"]
        assert tree_snapshot(root) == before
    # The very archive installed: nothing to do, exit 0, in both.
    for result in (_install(first, root, env, "--dry-run"), _install(first, root, env)):
        assert result.code == 0, result.stderr
        assert result.document["was_already_present"] is True
    text = nexo("plugin", "install", first, "--dest", root, "--dry-run", env=env)
    assert text.code == 0, text.stderr
    assert "hello 1.0.0 is already installed at" in text.stdout + text.stderr
    assert "every check passed" not in text.stdout + text.stderr
    assert tree_snapshot(root) == before


@pytest.mark.parametrize("from_policy", [True, False], ids=["policy", "flag"])
def test_the_screen_says_mode_ignore_whichever_way_it_was_set(
    tmp_path: Path, env: dict[str, str], from_policy: bool
) -> None:
    # Mode ignore from the trust policy is not the --skip-signature-verify flag: the
    # confirmation screen names the mode, not a flag the operator did not pass.
    tarball = write_plugin(tmp_path / "dist", "hello", "1.0.0")
    root = tmp_path / "plugins"
    extra: tuple[str, ...] = ()
    if from_policy:
        policy = Path(env["NEXO_HOME"]) / "config" / "extensions" / "trusted_keys.toml"
        policy.parent.mkdir(parents=True)
        policy.write_text('schema_version = "1.0"\ndefault = "ignore"\n', encoding="utf-8")
    else:
        extra = ("--skip-signature-verify",)
    result = nexo("plugin", "install", tarball, "--dest", root, "--dry-run", *extra, env=env)
    assert result.code == 0, result.stderr
    # The screen goes to stderr when the output is not a terminal.
    assert "Signer:       not checked (signature mode ignore)" in result.stderr.splitlines()
    assert "--skip-signature-verify" not in result.stderr
    assert not root.exists()


def test_the_screen_names_the_installed_tree_an_install_replaces(
    tmp_path: Path, env: dict[str, str]
) -> None:
    """Installing another version replaces the installed one (kept for rollback, as upgrade
    keeps it), and ``--force`` replaces the same version (kept by nothing): the screen says so
    before anything is asked,
    and a dry run's ``replaced`` lists what the install would replace."""
    old = write_plugin(tmp_path / "dist-1", "hello", "1.0.0")
    new = write_plugin(tmp_path / "dist-2", "hello", "2.0.0")
    root = tmp_path / "plugins"
    assert _install(old, root, env).code == 0
    installed = root / "hello-1.0.0"
    before = tree_snapshot(root)

    dry = _install(new, root, env, "--dry-run")
    assert dry.code == 0, dry.stderr
    assert dry.document["replaced"] == [str(installed)]
    assert tree_snapshot(root) == before
    for extra in (("--dry-run",), ()):
        text = nexo("plugin", "install", new, "--dest", root, "--yes", *extra, env=env)
        assert text.code == 0, text.stderr
        assert f"Replaces:     {installed} (kept for rollback)\n" in text.stderr
    assert not installed.exists()

    # --force over the same version replaces the tree in place: named too.
    forced = nexo(
        "plugin", "install", new, "--dest", root, "--yes", "--force", "--dry-run", env=env
    )  # fmt: skip
    assert forced.code == 0, forced.stderr
    assert f"Replaces:     {root / 'hello-2.0.0'}\n" in forced.stderr
    # A first install replaces nothing, and says nothing about it.
    fresh = nexo("plugin", "install", new, "--dest", tmp_path / "empty", "--yes", env=env)
    assert fresh.code == 0, fresh.stderr
    assert "Replaces:" not in fresh.stderr
