"""``nexo plugin install --link DIR``: a development install pointing at a checkout, listed as
such, refused by ``verify``, removed without touching the checkout."""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path

import pytest
from support.cli import nexo
from support.tarballs import manifest_text, tree_snapshot, write_plugin

# `nexo plugin ...` in this process: these runs need no process of their own.
plugin = partial(nexo, "plugin", in_process=True)


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("NEXO_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("NEXO_CONFIG_DIR", raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _checkout(tmp_path: Path, version: str = "0.1.0") -> Path:
    checkout = tmp_path / "src" / "hello"
    checkout.mkdir(parents=True, exist_ok=True)
    (checkout / "nexo-plugin.toml").write_text(manifest_text("hello", version))
    (checkout / "main.py").write_text("print('hi')\n")
    return checkout


def test_link_list_verify_remove(env: Path) -> None:
    checkout = _checkout(env)
    root = env / "plugins"
    result = plugin("install", "--link", str(checkout), "--dest", str(root), "--json")
    assert result.code == 0, result.stderr
    document = json.loads(result.stdout)
    assert (document["id"], document["version"]) == ("hello", "0.1.0")
    assert document["linked_to"] == str(checkout)
    link = root / "hello"
    assert link.is_symlink()
    assert link.readlink() == checkout
    # Without discovery.follow_symlinks the daemon would not follow it: said, not hidden.
    assert "warning: the daemon follows links" in result.stderr

    result = plugin("list", "--dest", str(root), "--json")
    (listed,) = json.loads(result.stdout)["plugins"]
    assert (listed["id"], listed["source"], listed["linked_to"]) == ("hello", "link", str(checkout))
    # The checkout's manifest is what counts: a bump shows at once.
    (checkout / "nexo-plugin.toml").write_text(manifest_text("hello", "0.2.0"))
    result = plugin("list", "--dest", str(root))
    assert "0.2.0" in result.stdout
    assert "linked" in result.stdout

    result = plugin("verify", "--dest", str(root), "--json")
    assert result.code == 1
    (report,) = json.loads(result.stdout)["plugins"]
    assert report["ok"] is False
    assert report["path"] == str(link)
    # Named as list names it: the checkout's manifest says what the link is.
    assert (report["id"], report["version"]) == ("hello", "0.2.0")
    # Refused as what it is: a development link, with nothing installed to vouch for.
    assert report["problem"] == (
        f"is a development link (install --link) to {checkout}: nothing was installed "
        "there, so there is nothing to verify"
    )
    named = plugin("verify", "hello", "--dest", str(root))
    assert named.code == 1
    assert "is a development link (install --link)" in named.stdout

    before = tree_snapshot(checkout)
    result = plugin("remove", "hello", "--dest", str(root), "--yes", "--json")
    assert result.code == 0
    assert json.loads(result.stdout)["removed"] == [str(link)]
    assert not link.is_symlink()
    assert tree_snapshot(checkout) == before


def test_follow_symlinks_in_the_daemon_config_silences_the_warning(env: Path) -> None:
    config = env / "config"
    (config / "plugins").mkdir(parents=True)
    root = env / "plugins"
    (config / "plugins" / "discovery.yaml").write_text(
        f"discovery:\n  search_paths: ['{root}']\n  follow_symlinks: true\n"
    )
    result = plugin("install", "--link", str(_checkout(env)))
    assert result.code == 0, result.stderr
    assert "warning" not in result.stderr
    assert (root / "hello").is_symlink()


def test_link_refuses_a_second_copy_of_the_id(env: Path) -> None:
    root = env / "plugins"
    tarball = write_plugin(env / "dist", "hello", "1.0.0")
    assert plugin("install", str(tarball), "--dest", str(root), "--yes").code == 0
    before = tree_snapshot(root)
    result = plugin("install", "--link", str(_checkout(env)), "--dest", str(root), "--json")
    assert result.code == 1
    assert json.loads(result.stdout)["kind"] == "already_installed"
    assert tree_snapshot(root) == before


def test_link_twice_is_refused(env: Path) -> None:
    root = env / "plugins"
    checkout = _checkout(env)
    assert plugin("install", "--link", str(checkout), "--dest", str(root)).code == 0
    result = plugin("install", "--link", str(checkout), "--dest", str(root), "--json")
    assert result.code == 1
    assert json.loads(result.stdout)["kind"] == "already_installed"


@pytest.mark.parametrize(
    ("case", "code", "kind"),
    [
        ("with-source", 2, "usage"),
        ("missing-dir", 2, "usage"),
        ("no-manifest", 2, "usage"),
        ("bad-manifest", 1, "manifest_invalid"),
        ("nothing", 2, "usage"),
    ],
)
def test_link_refusals_write_nothing(env: Path, case: str, code: int, kind: str) -> None:
    root = env / "plugins"
    checkout = _checkout(env)
    args = ["install", "--link", str(checkout)]
    if case == "with-source":
        args.insert(1, "acme/hello")
    elif case == "missing-dir":
        args[2] = str(env / "nope")
    elif case == "no-manifest":
        (checkout / "nexo-plugin.toml").unlink()
    elif case == "bad-manifest":
        (checkout / "nexo-plugin.toml").write_text('[plugin]\nid = "Hello"\n')
    elif case == "nothing":
        args = ["install"]
    result = plugin(*args, "--dest", str(root), "--json")
    assert result.code == code
    assert json.loads(result.stdout)["kind"] == kind
    assert "Traceback" not in result.stderr
    assert not root.exists() or not any(root.iterdir())


def test_install_over_a_link_is_refused_naming_the_link(env: Path) -> None:
    checkout = _checkout(env, "1.0.0")
    root = env / "plugins"
    assert plugin("install", "--link", str(checkout), "--dest", str(root)).code == 0
    tarball = write_plugin(env / "dist", "hello", "1.0.0")
    before = tree_snapshot(root)
    for dry in ((), ("--dry-run",)):
        result = plugin("install", str(tarball), "--dest", str(root), "--yes", "--json", *dry)
        assert result.code == 1, result.stdout
        document = json.loads(result.stdout)
        assert document["kind"] == "already_installed"
        assert str(root / "hello") in document["error"]
        assert "nexo plugin remove hello" in document["error"]
        assert str(checkout) in document["error"]
        # Nothing beside the link: the daemon would load the unverified checkout first.
        assert tree_snapshot(root) == before


def test_install_force_replaces_the_link_and_says_so(env: Path) -> None:
    checkout = _checkout(env, "1.0.0")
    root = env / "plugins"
    assert plugin("install", "--link", str(checkout), "--dest", str(root)).code == 0
    tarball = write_plugin(env / "dist", "hello", "1.0.0")
    checkout_before = tree_snapshot(checkout)
    args = ("install", str(tarball), "--dest", str(root), "--yes", "--force")
    result = plugin(*args)
    assert result.code == 0, result.stderr
    assert f"replaced the development link {root / 'hello'} -> {checkout}" in result.stderr
    assert not (root / "hello").is_symlink()
    assert sorted(p.name for p in root.iterdir()) == [".nexo-install.lock", "hello-1.0.0"]
    assert tree_snapshot(checkout) == checkout_before
    listing = json.loads(plugin("list", "--dest", str(root), "--json").stdout)
    assert [(p["id"], p["source"]) for p in listing["plugins"]] == [("hello", "local-file")]


@pytest.mark.parametrize(
    "args", [["upgrade", "hello", "--yes"], ["rollback", "hello"], ["hold", "hello"]]
)
def test_commands_for_installed_copies_say_a_link_is_one_not_that_nothing_is_there(
    env: Path, args: list[str]
) -> None:
    """``list`` shows the link; a command that works on installed copies must not answer
    that the plugin is not installed, but that it is a development link, and how to unlink
    it. Nothing changes."""
    checkout = _checkout(env)
    root = env / "plugins"
    assert plugin("install", "--link", str(checkout), "--dest", str(root)).code == 0
    before = tree_snapshot(root)
    result = plugin(*args, "--dest", str(root), "--json")
    assert (result.code, json.loads(result.stdout)["kind"]) == (1, "not_installed")
    error = json.loads(result.stdout)["error"]
    assert "development link" in error, error
    assert "is not installed" not in error
    assert "nexo plugin remove hello" in error
    assert tree_snapshot(root) == before


def test_a_link_named_through_dot_dot_outlives_the_directory_it_was_named_from(
    env: Path,
) -> None:
    """``install --link ../src/hello`` from a directory removed later: the link names the
    checkout itself, not a path through the directory that is gone."""
    checkout = _checkout(env)
    work = env / "work"
    work.mkdir()
    root = env / "plugins"
    result = plugin("install", "--link", "../src/hello", "--dest", str(root), "--json", cwd=work)
    assert result.code == 0, result.stderr
    assert json.loads(result.stdout)["linked_to"] == str(checkout)
    work.rmdir()
    assert (root / "hello").readlink() == checkout
    assert (root / "hello" / "nexo-plugin.toml").is_file()
    listed = plugin("list", "--dest", str(root), "--json")
    (entry,) = json.loads(listed.stdout)["plugins"]
    assert (entry["id"], entry["version"], entry["linked_to"]) == ("hello", "0.1.0", str(checkout))
