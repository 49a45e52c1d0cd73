"""``nexo plugin install --link DIR``: a development install pointing at a checkout, listed as
such, refused by ``verify``, removed without touching the checkout."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.tarballs import manifest_text, tree_snapshot, write_plugin
from typer.testing import CliRunner

from nexo_pkg.cli.main import app


def nexo(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, ["plugin", *args])
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


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
    code, out, err = nexo("install", "--link", str(checkout), "--dest", str(root), "--json")
    assert code == 0, err
    document = json.loads(out)
    assert (document["id"], document["version"]) == ("hello", "0.1.0")
    assert document["linked_to"] == str(checkout)
    link = root / "hello"
    assert link.is_symlink()
    assert link.readlink() == checkout
    # Without discovery.follow_symlinks the daemon would not follow it: said, not hidden.
    assert "warning: the daemon follows links" in err

    code, out, _ = nexo("list", "--dest", str(root), "--json")
    (listed,) = json.loads(out)["plugins"]
    assert (listed["id"], listed["source"], listed["linked_to"]) == ("hello", "link", str(checkout))
    # The checkout's manifest is what counts: a bump shows at once.
    (checkout / "nexo-plugin.toml").write_text(manifest_text("hello", "0.2.0"))
    code, out, _ = nexo("list", "--dest", str(root))
    assert "0.2.0" in out
    assert "linked" in out

    code, out, _ = nexo("verify", "--dest", str(root), "--json")
    assert code == 1
    (report,) = json.loads(out)["plugins"]
    assert report["ok"] is False
    assert report["path"] == str(link)

    before = tree_snapshot(checkout)
    code, out, _ = nexo("remove", "hello", "--dest", str(root), "--yes", "--json")
    assert code == 0
    assert json.loads(out)["removed"] == [str(link)]
    assert not link.is_symlink()
    assert tree_snapshot(checkout) == before


def test_follow_symlinks_in_the_daemon_config_silences_the_warning(env: Path) -> None:
    config = env / "config"
    (config / "plugins").mkdir(parents=True)
    root = env / "plugins"
    (config / "plugins" / "discovery.yaml").write_text(
        f"discovery:\n  search_paths: ['{root}']\n  follow_symlinks: true\n"
    )
    code, _, err = nexo("install", "--link", str(_checkout(env)))
    assert code == 0, err
    assert "warning" not in err
    assert (root / "hello").is_symlink()


def test_link_refuses_a_second_copy_of_the_id(env: Path) -> None:
    root = env / "plugins"
    tarball = write_plugin(env / "dist", "hello", "1.0.0")
    assert nexo("install", str(tarball), "--dest", str(root), "--yes")[0] == 0
    before = tree_snapshot(root)
    code, out, _ = nexo("install", "--link", str(_checkout(env)), "--dest", str(root), "--json")
    assert code == 1
    assert json.loads(out)["kind"] == "already_installed"
    assert tree_snapshot(root) == before


def test_link_twice_is_refused(env: Path) -> None:
    root = env / "plugins"
    checkout = _checkout(env)
    assert nexo("install", "--link", str(checkout), "--dest", str(root))[0] == 0
    code, out, _ = nexo("install", "--link", str(checkout), "--dest", str(root), "--json")
    assert code == 1
    assert json.loads(out)["kind"] == "already_installed"


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
    got, out, err = nexo(*args, "--dest", str(root), "--json")
    assert got == code
    assert json.loads(out)["kind"] == kind
    assert "Traceback" not in err
    assert not root.exists() or not any(root.iterdir())
