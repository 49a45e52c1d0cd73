"""``nexo plugin sbom``: installed plugins' SBOMs, vouched for against their receipts, derived
for trees installed before tarballs carried one, merged for a whole root; read back by the
CycloneDX library and checked with its schema validator."""

from __future__ import annotations

import json
import os
import stat
import tarfile
import threading
from pathlib import Path

import pytest
from cyclonedx.model.bom import Bom
from cyclonedx.schema import SchemaVersion
from cyclonedx.validation.json import JsonStrictValidator
from pack.pack_helpers import build_wheel, write_project
from support.cli import CliResult, clean_env, nexo
from support.tarballs import Member, file, plugin_members, targz, tree_snapshot, write_plugin

from nexo_pkg.pack.build import PackOptions, pack
from nexo_pkg.sbom.cyclonedx import PluginSbom, write_sbom

EPOCH = 1_700_000_000


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return clean_env(NEXO_HOME=str(tmp_path / "home"))


@pytest.fixture
def packed(
    tmp_path: Path, offline_pip_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> Path:
    """A real packed tarball vendoring two real wheels (``alpha`` needs ``beta``)."""
    wheels = tmp_path / "wheels"
    build_wheel(
        wheels, "alpha", "1.2.0", {"alpha/__init__.py": b""}, purelib=True, tag="py3-none-any",
        metadata="License-Expression: MIT\nRequires-Dist: beta\n",
    )  # fmt: skip
    build_wheel(wheels, "beta", "2.0.1", {"beta.py": b""}, purelib=True, tag="py3-none-any")
    monkeypatch.setenv("PIP_FIND_LINKS", f"{wheels} {offline_pip_env['PIP_FIND_LINKS']}")
    project = write_project(tmp_path / "project", requirements="alpha\n")
    return pack(PackOptions(project=project, source_date_epoch=EPOCH)).tarball.path


def install(env: dict[str, str], tarball: Path, root: Path) -> None:
    done = nexo("plugin", "install", tarball, "--dest", root, "--yes", env=env, in_process=True)
    assert done.code == 0, done.stderr


def sbom(env: dict[str, str], root: Path, *args: str) -> CliResult:
    return nexo("plugin", "sbom", *args, "--dest", root, env=env, in_process=True)


def strict_errors(text: str) -> object:
    return JsonStrictValidator(SchemaVersion.V1_6).validate_str(text)


def test_the_carried_sbom_is_printed_as_packed(
    env: dict[str, str], packed: Path, tmp_path: Path
) -> None:
    root = tmp_path / "root"
    install(env, packed, root)
    done = sbom(env, root, "demo")
    assert done.code == 0, done.stderr
    assert done.stdout.encode() == packed.with_name("demo-0.1.0-noarch.cdx.json").read_bytes()
    assert "derived" not in done.stderr
    listed = nexo("plugin", "list", "--json", "--dest", root, env=env, in_process=True).document
    assert listed["plugins"][0]["vendored"] == {
        "from": "sbom",
        "packages": [
            {"name": "alpha", "version": "1.2.0", "purl": "pkg:pypi/alpha@1.2.0"},
            {"name": "beta", "version": "2.0.1", "purl": "pkg:pypi/beta@2.0.1"},
        ],
    }
    out = tmp_path / "out.cdx.json"
    assert sbom(env, root, "demo", "--output", str(out)).code == 0
    assert out.read_text() == done.stdout


def test_a_changed_vendored_file_is_a_verify_failure_and_no_document(
    env: dict[str, str], packed: Path, tmp_path: Path
) -> None:
    root = tmp_path / "root"
    install(env, packed, root)
    (root / "demo-0.1.0" / "lib" / "beta.py").write_text("import os\n")
    done = sbom(env, root, "demo")
    assert done.code == 1
    assert done.stdout == ""
    assert "modified lib/beta.py" in done.error_line
    assert "verify" in done.error_line
    assert sbom(env, root, "--all").code == 1


def test_an_sbom_that_describes_other_files_is_never_vouched_for(
    env: dict[str, str], tmp_path: Path
) -> None:
    """A tarball whose SBOM lists a package but was not made for its files (a hand-edited
    release): it installs, but `sbom` refuses it, naming the file."""
    forged = write_sbom(PluginSbom("hello", "1.0.0", "noarch", (), files_sha256="0" * 64))
    members = [*plugin_members("hello", "1.0.0"), file("sbom.cdx.json", forged)]
    tarball = write_plugin(tmp_path / "dist", "hello", "1.0.0", data=targz(members))
    root = tmp_path / "root"
    install(env, tarball, root)
    done = sbom(env, root, "hello")
    assert done.code == 1
    assert done.stdout == ""
    assert "hello-1.0.0/sbom.cdx.json" in done.error_line
    assert "does not describe this tree" in done.error_line


def test_a_tree_from_before_sboms_gets_a_derived_one(
    env: dict[str, str], packed: Path, tmp_path: Path
) -> None:
    root = tmp_path / "root"
    install(env, packed, root)
    tree = root / "demo-0.1.0"
    # As an install of a tarball without the member left it: no file, no receipt entry.
    (tree / "sbom.cdx.json").unlink()
    receipt = json.loads((tree / ".nexo-install.json").read_text())
    del receipt["files"]["sbom.cdx.json"]
    receipt.get("modes", {}).pop("sbom.cdx.json", None)
    (tree / ".nexo-install.json").write_text(json.dumps(receipt))
    done = sbom(env, root, "demo")
    assert done.code == 0, done.stderr
    assert "derived from its *.dist-info" in done.stderr
    assert strict_errors(done.stdout) is None
    document = json.loads(done.stdout)
    props = {p["name"]: p["value"] for p in document["metadata"]["component"]["properties"]}
    assert props["nexo:sbom-origin"] == "derived"
    bom = Bom.from_json(document)  # type: ignore[attr-defined]
    assert sorted((c.name, c.version, str(c.purl)) for c in bom.components) == [
        ("alpha", "1.2.0", "pkg:pypi/alpha@1.2.0"),
        ("beta", "2.0.1", "pkg:pypi/beta@2.0.1"),
    ]
    assert all(not c.hashes for c in bom.components)
    graph = {str(d.ref.value): [str(x.ref.value) for x in d.dependencies] for d in bom.dependencies}
    assert graph["pkg:pypi/alpha@1.2.0"] == ["pkg:pypi/beta@2.0.1"]
    assert graph["plugin:demo@0.1.0"] == ["pkg:pypi/alpha@1.2.0"]
    listed = nexo("plugin", "list", "--json", "--dest", root, env=env, in_process=True).document
    assert listed["plugins"][0]["vendored"]["from"] == "dist-info"


def test_a_tree_with_code_but_no_dist_info_is_named(env: dict[str, str], tmp_path: Path) -> None:
    members = [*plugin_members("hello", "1.0.0"), file("lib/mystery/__init__.py", "")]
    tarball = write_plugin(tmp_path / "dist", "hello", "1.0.0", data=targz(members))
    root = tmp_path / "root"
    install(env, tarball, root)
    done = sbom(env, root, "hello")
    assert done.code == 0, done.stderr
    assert "mystery" in done.stderr
    assert "no *.dist-info" in done.stderr
    assert "lib" in done.stderr


def test_all_merges_every_plugin_into_one_valid_document(
    env: dict[str, str], packed: Path, tmp_path: Path
) -> None:
    root = tmp_path / "root"
    install(env, packed, root)
    install(env, write_plugin(tmp_path / "dist", "hello", "1.0.0"), root)
    done = sbom(env, root, "--all")
    assert done.code == 0, done.stderr
    assert strict_errors(done.stdout) is None
    document = json.loads(done.stdout)
    bom = Bom.from_json(document)  # type: ignore[attr-defined]
    plugins = sorted(c.name for c in bom.components if c.type.value == "application")
    assert plugins == ["demo", "hello"]
    libraries = {
        (str(c.purl), next(p.value for p in c.properties if p.name == "nexo:plugin"))
        for c in bom.components
        if c.type.value == "library"
    }
    assert libraries == {
        ("pkg:pypi/alpha@1.2.0", "demo@0.1.0"),
        ("pkg:pypi/beta@2.0.1", "demo@0.1.0"),
    }
    again = sbom(env, root, "demo", "hello")
    assert again.code == 0
    assert again.stdout == done.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "name the installed plugins"),
        (("demo", "--all"), "not both"),
        (("demo", "--format", "spdx-json"), "'spdx-json' is not offered"),
    ],
)
def test_usage_errors(
    env: dict[str, str], tmp_path: Path, args: tuple[str, ...], message: str
) -> None:
    before = tree_snapshot(tmp_path)
    done = sbom(env, tmp_path / "root", *args)
    assert done.code == 2
    assert message in done.error_line
    assert tree_snapshot(tmp_path) == before


def test_an_unknown_plugin_is_not_installed(env: dict[str, str], tmp_path: Path) -> None:
    done = sbom(env, tmp_path / "root", "nothere")
    assert done.code == 1
    assert "nothere" in done.error_line
    assert done.stdout == ""


def test_an_output_that_cannot_be_written_is_io(
    env: dict[str, str], packed: Path, tmp_path: Path
) -> None:
    root = tmp_path / "root"
    install(env, packed, root)
    target = tmp_path / "a-directory"
    target.mkdir()
    done = sbom(env, root, "demo", "--output", str(target))
    assert done.code == 1
    assert str(target) in done.error_line
    assert list(target.iterdir()) == []


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this system")
@pytest.mark.parametrize("through_a_link", [False, True], ids=["fifo", "link-to-fifo"])
def test_an_output_that_is_a_pipe_or_device_is_written_into_not_replaced(
    env: dict[str, str], packed: Path, tmp_path: Path, through_a_link: bool
) -> None:
    # `-o /dev/null`, `-o /dev/stdout` (a link) and a shell's `>(jq …)` (a pipe) are written
    # into, as a shell's redirection writes; a rename over them would leave a regular file
    # where /dev/null was.
    root = tmp_path / "root"
    install(env, packed, root)
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    target = fifo
    if through_a_link:
        target = tmp_path / "stdout"
        target.symlink_to(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()), daemon=True)
    reader.start()
    done = sbom(env, root, "demo", "--output", str(target))
    reader.join(timeout=30)
    assert done.code == 0, done.stderr
    assert stat.S_ISFIFO(fifo.lstat().st_mode)
    assert target.is_symlink() is through_a_link
    assert len(received) == 1, "the pipe's reader got nothing"
    assert strict_errors(received[0].decode("utf-8")) is None


def test_all_on_an_empty_root_is_a_valid_empty_document(
    env: dict[str, str], tmp_path: Path
) -> None:
    done = sbom(env, tmp_path / "root", "--all")
    assert done.code == 0, done.stderr
    assert "no plugins installed" in done.stderr
    assert strict_errors(done.stdout) is None
    assert json.loads(done.stdout).get("components", []) == []


def test_a_development_link_is_named_as_one_never_as_an_orphan(
    env: dict[str, str], tmp_path: Path
) -> None:
    """``install --link`` points the root at a checkout, which has no install receipt to
    vouch for its files: ``sbom ID`` says the link is not described by it, and ``--all``
    names it as the development link ``list`` shows, not as an orphan, nor the root as
    holding no plugins."""
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    for member in plugin_members("hello", "0.1.0"):
        path = checkout / member.name
        if member.kind == tarfile.DIRTYPE:
            path.mkdir(parents=True, exist_ok=True)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(member.data)
            path.chmod(member.mode)
    root = tmp_path / "root"
    linked = nexo("plugin", "install", "--link", checkout, "--dest", root, "--yes", env=env,
                  in_process=True)  # fmt: skip
    assert linked.code == 0, linked.stderr
    one = sbom(env, root, "hello")
    assert one.code == 1
    assert one.stdout == ""
    assert "development link" in one.error_line
    assert "sbom" in one.error_line
    every = sbom(env, root, "--all")
    assert every.code == 0, every.stderr
    assert "--include-orphan" not in every.stderr
    assert "no plugins installed" not in every.stderr
    assert f"hello: a development link ({root / 'hello'} -> {checkout})" in every.stderr
    assert strict_errors(every.stdout) is None


def test_a_derived_sbom_reads_markers_as_the_tree_was_resolved(
    env: dict[str, str], tmp_path: Path
) -> None:
    """A tree without a carried SBOM, vendored for Python 3.10 (its `lib/nexo-vendor.json`
    says so): `alpha` needs `beta` only below 3.11, and pip put beta there. The derived graph
    judges that marker for the tree's Python, not for the one nexo runs on."""
    markers = {
        "implementation_name": "cpython", "implementation_version": "3.10.0",
        "os_name": "posix", "platform_machine": "x86_64",
        "platform_python_implementation": "CPython", "platform_system": "Linux",
        "python_full_version": "3.10.0", "python_version": "3.10", "sys_platform": "linux",
    }  # fmt: skip
    record = {"implementation": "cp", "markers": markers, "python_version": "3.10"}
    members = [
        *plugin_members("hello", "1.0.0"),
        file("lib/nexo-vendor.json", json.dumps(record)),
        file(
            "lib/alpha-1.0.dist-info/METADATA",
            "Metadata-Version: 2.1\nName: alpha\nVersion: 1.0\n"
            "Requires-Dist: beta; python_version < '3.11'\n",
        ),
        file("lib/alpha/__init__.py", ""),
        file(
            "lib/beta-2.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: beta\nVersion: 2.0\n"
        ),
        file("lib/beta.py", ""),
    ]
    tarball = write_plugin(tmp_path / "dist", "hello", "1.0.0", data=targz(members))
    root = tmp_path / "root"
    install(env, tarball, root)
    done = sbom(env, root, "hello")
    assert done.code == 0, done.stderr
    assert "derived from its *.dist-info" in done.stderr
    assert strict_errors(done.stdout) is None
    graph = {
        item["ref"]: item.get("dependsOn", []) for item in json.loads(done.stdout)["dependencies"]
    }
    assert graph == {
        "plugin:hello@1.0.0": ["pkg:pypi/alpha@1.0"],
        "pkg:pypi/alpha@1.0": ["pkg:pypi/beta@2.0"],
        "pkg:pypi/beta@2.0": [],
    }


def test_a_derived_sbom_reaches_packages_that_require_one_another(
    env: dict[str, str], tmp_path: Path
) -> None:
    """A tree without a carried SBOM whose two vendored packages require each other (so no
    package is required by none): the plugin still depends on one of them, and every
    component is reached from the plugin in the derived graph."""

    def dist(name: str, needs: str) -> list[Member]:
        return [
            file(
                f"lib/{name}-1.0.dist-info/METADATA",
                f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\nRequires-Dist: {needs}\n",
            ),
            file(f"lib/{name}.py", ""),
        ]

    members = [*plugin_members("hello", "1.0.0"), *dist("alpha", "beta"), *dist("beta", "alpha")]
    tarball = write_plugin(tmp_path / "dist", "hello", "1.0.0", data=targz(members))
    root = tmp_path / "root"
    install(env, tarball, root)
    done = sbom(env, root, "hello")
    assert done.code == 0, done.stderr
    assert strict_errors(done.stdout) is None
    graph = {
        item["ref"]: item.get("dependsOn", []) for item in json.loads(done.stdout)["dependencies"]
    }
    assert graph == {
        "plugin:hello@1.0.0": ["pkg:pypi/alpha@1.0"],
        "pkg:pypi/alpha@1.0": ["pkg:pypi/beta@1.0"],
        "pkg:pypi/beta@1.0": ["pkg:pypi/alpha@1.0"],
    }
