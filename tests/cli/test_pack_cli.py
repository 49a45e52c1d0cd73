"""`nexo plugin pack` through the command line, and the full new -> pack -> run flow."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import tarfile
from functools import partial
from pathlib import Path

import pytest
from support.cli import nexo
from support.tarballs import tree_snapshot

from nexo_pkg.lint.engine import lint_file
from nexo_pkg.scaffold.generator import NewProject, create_project

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"nexo_version": "0.1.0"},
}


# `nexo plugin ...` in this process (pip and the packed plugin still run as processes).
plugin = partial(nexo, "plugin", in_process=True)


def _converse(command: list[str], *requests: dict[str, object]) -> list[dict[str, object]]:
    frames = "".join(json.dumps(request) + "\n" for request in requests)
    # A clean environment: the plugin must run from its own lib/, not from this virtualenv.
    env = {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/")}
    completed = subprocess.run(
        command, input=frames, capture_output=True, text=True, timeout=60, check=False, env=env
    )
    assert completed.returncode == 0, completed.stderr
    return [json.loads(line) for line in completed.stdout.splitlines() if line.strip()]


def test_new_lint_pack_extract_run(tmp_path: Path, offline_pip_env: dict[str, str]) -> None:
    created = plugin("new", "demo", "--lang", "python", cwd=tmp_path)
    assert created.code == 0, created.stderr
    project = tmp_path / "demo"
    assert lint_file(project / "plugin.toml").diagnostics == ()

    packed = plugin("pack", "--json", cwd=project, env={**os.environ, **offline_pip_env})
    assert packed.code == 0, packed.stderr
    document = json.loads(packed.stdout)
    dist = project / "dist"
    names = sorted(p.name for p in dist.iterdir())
    assert names == [
        "demo-0.1.0-noarch.cdx.json",
        "demo-0.1.0-noarch.tar.gz",
        "demo-0.1.0-noarch.tar.gz.sha256",
        "nexo-plugin.toml",  # SPEC §3: the release's name for it, whatever the project's
    ]
    tarball = dist / "demo-0.1.0-noarch.tar.gz"
    digest = hashlib.sha256(tarball.read_bytes()).hexdigest()
    assert document["ok"] is True
    assert (document["id"], document["version"], document["target"]) == ("demo", "0.1.0", "noarch")
    assets = {Path(a["path"]).name: a for a in document["assets"]}
    assert assets[tarball.name] == {
        "path": str(Path("dist") / tarball.name),
        "sha256": digest,
        "size": tarball.stat().st_size,
    }
    subprocess.run(["sha256sum", "-c", f"{tarball.name}.sha256"], cwd=dist, check=True)

    again = plugin("pack", "--json", cwd=project, env={**os.environ, **offline_pip_env})
    assert again.code == 0, again.stderr
    assert json.loads(again.stdout)["assets"][0]["sha256"] == digest
    assert hashlib.sha256(tarball.read_bytes()).hexdigest() == digest

    with tarfile.open(tarball, "r:gz") as archive:
        members = {m.name: m for m in archive.getmembers()}
    assert sorted(n for n in members if "/" not in n) == [
        "bin",
        "lib",
        "nexo-plugin.toml",
        "sbom.cdx.json",
    ]
    assert members["bin/demo"].mode == 0o755
    assert "lib/plugin/main.py" in members
    assert "lib/nexo_plugin_sdk/adapter.py" in members

    installed = tmp_path / "installed"
    installed.mkdir()
    subprocess.run(["tar", "-xzf", str(tarball), "-C", str(installed)], check=True)
    replies = _converse(
        [str(installed / "bin" / "demo")],
        INITIALIZE,
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tool.invoke",
            "params": {"plugin_id": "demo", "tool_name": "demo_hello", "args": {"name": "Ada"}},
        },
        {"jsonrpc": "2.0", "id": 3, "method": "shutdown", "params": {}},
    )
    by_id = {reply["id"]: reply for reply in replies}
    initialize = by_id[1]["result"]
    assert isinstance(initialize, dict)
    assert initialize["manifest"]["plugin"]["id"] == "demo"
    assert [tool["name"] for tool in initialize["tools"]] == ["demo_hello"]
    assert by_id[2]["result"] == {
        "content": [{"type": "text", "text": "Hello, Ada!"}],
        "is_error": False,
    }
    assert by_id[3]["result"] == {"ok": True}

    # The project's own tests pass with the SDK taken from the vendored lib/.
    own_tests = subprocess.run(
        ["python3", "-m", "unittest", "discover", "-s", "tests"],
        cwd=project,
        env={"PATH": os.environ["PATH"], "PYTHONPATH": str(installed / "lib")},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert own_tests.returncode == 0, own_tests.stderr

    # The project holds only plugin.toml, the daemon's canonical name; its release carries the
    # manifest as nexo-plugin.toml. The packed tarball passes `check` (warnings fail too) and
    # installs, under the name every daemon's discovery reads.
    assert not (project / "nexo-plugin.toml").exists()
    checked = plugin("check", str(tarball), "--strict", "--json", cwd=tmp_path)
    assert checked.code == 0, checked.stdout + checked.stderr
    dest = tmp_path / "plugins"
    installs = plugin(
        "install",
        str(tarball),
        "--dest",
        str(dest),
        "--yes",
        "--json",
        cwd=tmp_path,
        env={**os.environ, "NEXO_HOME": str(tmp_path / "home")},
    )
    assert installs.code == 0, installs.stdout + installs.stderr
    installed_dir = Path(json.loads(installs.stdout)["path"])
    assert (installed_dir / "nexo-plugin.toml").read_bytes() == (
        project / "plugin.toml"
    ).read_bytes()
    assert not (installed_dir / "plugin.toml").exists()


def test_lint_errors_exit_1_with_diagnostics(tmp_path: Path) -> None:
    create_project(NewProject("demo", dest=tmp_path / "demo"))
    manifest = tmp_path / "demo" / "plugin.toml"
    manifest.write_text(manifest.read_text().replace('"demo_hello"', '"hello"'))
    completed = plugin("pack", "demo", "--json", cwd=tmp_path)
    assert completed.code == 1
    document = json.loads(completed.stdout)
    assert (document["ok"], document["kind"]) == (False, "manifest_invalid")
    assert document["diagnostics"]
    assert "plugin.toml:" in completed.stderr
    assert not (tmp_path / "demo" / "dist").exists()


@pytest.mark.parametrize(
    ("args", "code", "kind"),
    [
        (["--binary", "exe"], 2, "usage"),
        (["--target", "x86_64-pc-windows-msvc"], 2, "usage"),  # no daemon runs there
        (["--target", "mips-unknown-plan9", "--binary", "exe"], 2, "usage"),
        (["--out", "occupied"], 2, "usage"),
        (["--requirements", "missing.txt"], 2, "usage"),
        (["--source-date-epoch", "-3"], 2, "usage"),
        (["nowhere"], 2, "manifest_missing"),
    ],
)
def test_bad_flags(tmp_path: Path, args: list[str], code: int, kind: str) -> None:
    create_project(NewProject("demo", dest=tmp_path))
    (tmp_path / "exe").write_bytes(b"\x7fELF")
    (tmp_path / "exe").chmod(0o755)
    (tmp_path / "occupied").write_text("file\n")
    before = sorted(p.name for p in tmp_path.iterdir())
    completed = plugin("pack", *args, "--json", cwd=tmp_path)
    assert completed.code == code, completed.stderr
    assert json.loads(completed.stdout)["kind"] == kind
    assert completed.stderr.startswith("error: ")
    assert "Traceback" not in completed.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == before


@pytest.mark.parametrize("extra", [[], ["--binary", "exe"]], ids=["python", "binary"])
@pytest.mark.parametrize("value", ["", "  "], ids=["empty", "blank"])
def test_an_empty_target_is_a_usage_error_as_every_empty_option(
    tmp_path: Path, value: str, extra: list[str]
) -> None:
    """``--target "$TARGET"`` with the variable unset is neither noarch nor an "unknown
    target ''" among seventeen triples: it is said as an empty ``--out`` or ``--dest`` is."""
    project = tmp_path / "demo"
    create_project(NewProject("demo", dest=project))
    (tmp_path / "exe").write_bytes(b"\x7fELF")
    (tmp_path / "exe").chmod(0o755)
    before = tree_snapshot(tmp_path)
    completed = plugin("pack", str(project), "--target", value, *extra, "--json", cwd=tmp_path)
    assert completed.code == 2, completed.stderr
    document = json.loads(completed.stdout)
    assert document["kind"] == "usage"
    assert document["error"] == (
        "--target is empty; name noarch or a target triple such as x86_64-unknown-linux-gnu, "
        "or leave --target out for the default"
    )
    assert completed.stderr == f"error: {document['error']} [{document['kind']}]\n"
    assert tree_snapshot(tmp_path) == before


def test_non_integer_epoch_is_a_usage_error(tmp_path: Path) -> None:
    completed = plugin("pack", "--source-date-epoch", "tomorrow", cwd=tmp_path)
    assert completed.code == 2


def test_per_target_through_the_cli(tmp_path: Path) -> None:
    create_project(NewProject("demo", dest=tmp_path))
    binary = tmp_path / "target" / "demo"
    binary.parent.mkdir()
    # An x86-64 ELF header (64-bit, little-endian, e_machine 62): a binary for the target.
    binary.write_bytes(b"\x7fELF\x02\x01\x01" + bytes(9) + b"\x02\x00\x3e\x00" + bytes(44))
    binary.chmod(0o755)
    completed = plugin(
        "pack",
        "--target",
        "aarch64-unknown-linux-musl",
        "--binary",
        str(binary),
        "--out",
        "out",
        "--source-date-epoch",
        "1700000000",
        cwd=tmp_path,
    )
    assert completed.code == 0, completed.stderr
    tarball = tmp_path / "out" / "demo-0.1.0-aarch64-unknown-linux-musl.tar.gz"
    listing = subprocess.run(
        ["tar", "-tvzf", str(tarball)], capture_output=True, text=True, check=True
    ).stdout
    assert "-rwxr-xr-x 0/0" in listing
    assert "lib/" not in listing
    assert "2023-11-14" in listing


def test_quiet_pack_still_warns_about_a_shadowed_manifest(tmp_path: Path) -> None:
    create_project(NewProject("demo", dest=tmp_path))
    (tmp_path / "nexo-plugin.toml").write_bytes((tmp_path / "plugin.toml").read_bytes())
    binary = tmp_path / "demo-binary"
    # An x86-64 ELF header (64-bit, little-endian, e_machine 62): a binary for the target.
    binary.write_bytes(b"\x7fELF\x02\x01\x01" + bytes(9) + b"\x02\x00\x3e\x00" + bytes(44))
    binary.chmod(0o755)
    args = ("pack", "--target", "x86_64-unknown-linux-gnu", "--binary", str(binary))
    completed = plugin(*args, "-q", cwd=tmp_path)
    assert completed.code == 0, completed.stderr
    # --quiet drops notes, never warnings.
    assert completed.stderr.splitlines() == [
        "warning: plugin.toml is shadowed by nexo-plugin.toml in the same directory: the daemon "
        "loads nexo-plugin.toml first and ignores a plugin.toml of the same plugin id; delete "
        "one of them"
    ]
    assert (tmp_path / "dist" / "nexo-plugin.toml").is_file()
    assert not (tmp_path / "dist" / "plugin.toml").exists()


def test_the_project_itself_as_the_output_directory_is_refused(tmp_path: Path) -> None:
    """`--out .` in a project whose manifest is `plugin.toml` would write the release's
    `nexo-plugin.toml` beside it, which the daemon, lint and the next pack read first: the
    next edit of `plugin.toml` would be packed as the old manifest. Refused as `--out src` is,
    before anything is written."""
    create_project(NewProject("demo", dest=tmp_path / "demo"))
    project = tmp_path / "demo"
    before = sorted(str(p.relative_to(project)) for p in project.rglob("*"))
    for out in (".", str(project), "src/.."):
        completed = nexo("plugin", "pack", "--out", out, "--json", cwd=project)
        assert completed.code == 2, completed.stderr
        assert json.loads(completed.stdout)["kind"] == "usage"
        assert completed.stderr.startswith("error: ")
        assert "nexo-plugin.toml" in completed.stderr
        assert len(completed.stderr.splitlines()) == 1
    assert sorted(str(p.relative_to(project)) for p in project.rglob("*")) == before
