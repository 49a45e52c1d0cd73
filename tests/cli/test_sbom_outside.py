"""``nexo plugin sbom`` from the outside: what reaches stdout from a carried SBOM, and one
merged document when the same plugin sits in two plugin roots; every document is checked
with the CycloneDX library's strict validator."""

from __future__ import annotations

import hashlib
import json
import os
import tarfile
from dataclasses import replace
from pathlib import Path

import pytest
from cyclonedx.schema import SchemaVersion
from cyclonedx.validation.json import JsonStrictValidator
from support.cli import nexo
from support.tarballs import Member, file, plugin_members, targz, tree_snapshot, write_plugin

from nexo_pkg.install.receipts import REFERENCE_RECEIPT_FIELDS
from nexo_pkg.sbom.cyclonedx import PluginSbom, write_sbom
from nexo_pkg.sbom.inventory import Package, files_digest


@pytest.fixture
def env(home: Path) -> dict[str, str]:
    """The environment of the ``home`` fixture (NEXO_HOME in tmp_path, no token)."""
    return dict(os.environ)


def _valid(text: str) -> bool:
    return JsonStrictValidator(SchemaVersion.V1_6).validate_str(text) is None


def _dist_info(packages: tuple[Package, ...]) -> list[Member]:
    """A ``lib/<name>-<version>.dist-info/METADATA`` per package, as pip leaves them."""
    return [
        file(
            f"lib/{p.name}-{p.version}.dist-info/METADATA",
            f"Metadata-Version: 2.4\nName: {p.name}\nVersion: {p.version}\n",
        )
        for p in packages
    ]


def _tarball(
    directory: Path,
    packages: tuple[Package, ...],
    *,
    ascii_only: bool,
    vendored: tuple[Package, ...] | None = None,
) -> Path:
    """hello 1.0.0 vendoring ``vendored`` (by default ``packages``) and carrying an SBOM that
    lists ``packages``, made for exactly its files (as pack would make it), written with raw
    non-ASCII characters unless ``ascii_only``."""
    members: list[Member] = [
        *plugin_members("hello", "1.0.0"),
        *_dist_info(packages if vendored is None else vendored),
    ]
    digests = {
        m.name: hashlib.sha256(m.data).hexdigest() for m in members if m.kind == tarfile.REGTYPE
    }
    sbom = write_sbom(
        PluginSbom("hello", "1.0.0", "noarch", packages, files_sha256=files_digest(digests))
    )
    if not ascii_only:
        text = json.dumps(json.loads(sbom), indent=2, sort_keys=True, ensure_ascii=False)
        sbom = (text + "\n").encode()
    return write_plugin(
        directory, "hello", "1.0.0", data=targz([*members, file("sbom.cdx.json", sbom)])
    )


def _install(env: dict[str, str], tarball: Path, root: Path) -> None:
    done = nexo("plugin", "install", tarball, "--dest", root, "--yes", env=env, in_process=True)
    assert done.code == 0, done.stderr


HOSTILE = (Package("evil", "1.0", "", ("\u202eTIM \u009b31m \u2066",), False),)


def test_a_carried_sbom_never_prints_raw_bidi_or_c1_characters(
    env: dict[str, str], tmp_path: Path
) -> None:
    tarball = _tarball(tmp_path / "dist", HOSTILE, ascii_only=False)
    root = tmp_path / "root"
    _install(env, tarball, root)
    done = nexo("plugin", "sbom", "hello", "--dest", root, env=env, in_process=True)
    assert done.code == 0, done.stderr
    assert done.stdout.isascii()
    assert _valid(done.stdout)
    carried = json.loads((root / "hello-1.0.0" / "sbom.cdx.json").read_bytes())
    # The same document, in the form pack writes.
    assert json.loads(done.stdout) == carried
    assert done.stdout == json.dumps(carried, indent=2, sort_keys=True) + "\n"
    out = tmp_path / "out.cdx.json"
    written = nexo("plugin", "sbom", "hello", "--dest", root, "-o", out, env=env, in_process=True)
    assert written.code == 0, written.stderr
    assert out.read_text() == done.stdout


def test_an_ascii_carried_sbom_is_printed_byte_for_byte(
    env: dict[str, str], tmp_path: Path
) -> None:
    tarball = _tarball(tmp_path / "dist", HOSTILE, ascii_only=True)
    root = tmp_path / "root"
    _install(env, tarball, root)
    done = nexo("plugin", "sbom", "hello", "--dest", root, env=env, in_process=True)
    assert done.code == 0, done.stderr
    assert done.stdout.encode() == (root / "hello-1.0.0" / "sbom.cdx.json").read_bytes()


def test_the_same_plugin_in_two_roots_gives_one_reproducible_document_with_both(
    env: dict[str, str], tmp_path: Path
) -> None:
    packages = (Package("urllib3", "2.2.1", "", ("MIT",), True),)
    tarball = _tarball(tmp_path / "dist", packages, ascii_only=True)
    first, second = tmp_path / "first", tmp_path / "second"
    _install(env, tarball, first)
    _install(env, tarball, second)
    config = tmp_path / "config"
    (config / "plugins").mkdir(parents=True)
    (config / "plugins" / "discovery.yaml").write_text(
        f"discovery:\n  search_paths: ['{first}', '{second}']\n"
    )
    runs = [
        nexo("plugin", "sbom", "--all", "--config", config, env=env, in_process=True)
        for _ in range(2)
    ]
    assert all(run.code == 0 for run in runs), runs[0].stderr
    assert runs[0].stdout == runs[1].stdout
    assert _valid(runs[0].stdout)
    document = json.loads(runs[0].stdout)
    refs = sorted(component["bom-ref"] for component in document["components"])
    assert refs == [
        "plugin:hello@1.0.0",
        "plugin:hello@1.0.0#2",
        "plugin:hello@1.0.0#2|pkg:pypi/urllib3@2.2.1",
        "plugin:hello@1.0.0|pkg:pypi/urllib3@2.2.1",
    ]
    (top,) = [d for d in document["dependencies"] if d["ref"] == "nexo-plugin-root"]
    assert top["dependsOn"] == ["plugin:hello@1.0.0", "plugin:hello@1.0.0#2"]


def test_output_dash_is_standard_output_and_a_directory_is_refused(
    env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tarball = _tarball(tmp_path / "dist", HOSTILE, ascii_only=True)
    root = tmp_path / "root"
    _install(env, tarball, root)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    plain = nexo("plugin", "sbom", "hello", "--dest", root, env=env, in_process=True)
    dashed = nexo("plugin", "sbom", "hello", "--dest", root, "-o", "-", env=env, in_process=True)
    assert dashed.code == 0, dashed.stderr
    assert dashed.stdout == plain.stdout
    assert _valid(dashed.stdout)
    assert list(work.iterdir()) == []
    refused = nexo("plugin", "sbom", "hello", "--dest", root, "-o", work, env=env, in_process=True)
    assert refused.code == 1
    assert refused.stdout == ""
    assert f"cannot write {work}: it is a directory" in refused.error_line
    assert list(work.iterdir()) == []


def test_a_carried_sbom_the_schema_refuses_is_one_short_line_naming_it(
    env: dict[str, str], tmp_path: Path
) -> None:
    """Two identical components (bom-refs must be unique): ``install`` refuses the tarball
    (``archive_invalid``, nothing installed) and ``sbom`` refuses the document where it meets
    one in a tree (written there after install, its receipt hash updated), each in one line
    of sane length rather than the whole offending value."""
    members: list[Member] = plugin_members("hello", "1.0.0")
    digests = {
        m.name: hashlib.sha256(m.data).hexdigest() for m in members if m.kind == tarfile.REGTYPE
    }
    packages = tuple(Package(f"pkg{i}", "1.0", "", ("MIT",), True) for i in range(40))
    valid = write_sbom(
        PluginSbom("hello", "1.0.0", "noarch", packages, files_sha256=files_digest(digests))
    )
    document = json.loads(valid)
    document["components"].append(dict(document["components"][0]))
    broken = json.dumps(document).encode()
    root = tmp_path / "root"
    refused = nexo(
        "plugin", "install", write_plugin(tmp_path / "bad", "hello", "1.0.0",
                                          data=targz([*members, file("sbom.cdx.json", broken)])),
        "--dest", root, "--yes", env=env, in_process=True,
    )  # fmt: skip
    assert refused.code == 1
    assert refused.error_line.startswith(
        "error: the archive's sbom.cdx.json is not the plugin's SBOM: it does not validate "
        "against CycloneDX 1.6: "
    )
    assert refused.error_line.endswith("has non-unique elements [archive_invalid]")
    assert len(refused.error_line) < 500
    assert not (root / "hello-1.0.0").exists()

    data = targz([*members, file("sbom.cdx.json", valid)])
    _install(env, write_plugin(tmp_path / "dist", "hello", "1.0.0", data=data), root)
    carried = root / "hello-1.0.0" / "sbom.cdx.json"
    carried.write_bytes(broken)
    receipt_path = root / "hello-1.0.0" / ".nexo-install.json"
    receipt = json.loads(receipt_path.read_bytes())
    receipt["files"]["sbom.cdx.json"] = hashlib.sha256(broken).hexdigest()
    receipt_path.write_text(json.dumps(receipt), encoding="utf-8")
    done = nexo("plugin", "sbom", "hello", "--dest", root, env=env, in_process=True)
    assert done.code == 1
    assert done.stdout == ""
    line = done.error_line
    assert f"{carried}: it does not validate against CycloneDX" in line
    assert line.endswith("has non-unique elements [sbom_invalid]")
    assert len(line) < 500
    assert done.stderr.count("\n") == 1


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_a_carried_sbom_holding_a_number_json_has_not_is_refused_everywhere(
    env: dict[str, str], tmp_path: Path, constant: str
) -> None:
    """``NaN``/``Infinity`` (where CycloneDX 1.6 takes a number: a vulnerability's score) are
    read by Python's parser and the schema, but they are not JSON (RFC 8259) and no scanner
    reads them: ``install`` and ``info`` refuse the tarball (``archive_invalid``, nothing
    installed), ``sbom`` refuses such a document met in a tree (``sbom_invalid``), and
    ``list --json`` shows no packages from it."""
    members: list[Member] = plugin_members("hello", "1.0.0")
    digests = {
        m.name: hashlib.sha256(m.data).hexdigest() for m in members if m.kind == tarfile.REGTYPE
    }
    packages = (Package("idna", "3.20", "", ("BSD-3-Clause",), True),)
    valid = write_sbom(
        PluginSbom("hello", "1.0.0", "noarch", packages, files_sha256=files_digest(digests))
    )
    document = json.loads(valid)
    document["vulnerabilities"] = [{"id": "CVE-0000-0001", "ratings": [{"score": 1.5}]}]
    broken = json.dumps(document).encode().replace(b"1.5", constant.encode())
    assert _valid(broken.decode())  # the schema alone takes it
    tarball = write_plugin(
        tmp_path / "bad", "hello", "1.0.0", data=targz([*members, file("sbom.cdx.json", broken)])
    )
    root = tmp_path / "root"
    for command in (("install", "--dest", root, "--yes"), ("info",)):
        refused = nexo("plugin", command[0], tarball, *command[1:], env=env, in_process=True)
        assert refused.code == 1, command
        assert refused.stdout == "", command
        assert refused.error_line == (
            "error: the archive's sbom.cdx.json is not the plugin's SBOM: it is not JSON "
            f"({constant} is not a JSON value) [archive_invalid]"
        ), command
    assert not root.exists() or not (root / "hello-1.0.0").exists()

    data = targz([*members, file("sbom.cdx.json", valid)])
    _install(env, write_plugin(tmp_path / "dist", "hello", "1.0.0", data=data), root)
    carried = root / "hello-1.0.0" / "sbom.cdx.json"
    carried.write_bytes(broken)
    receipt_path = root / "hello-1.0.0" / ".nexo-install.json"
    receipt = json.loads(receipt_path.read_bytes())
    receipt["files"]["sbom.cdx.json"] = hashlib.sha256(broken).hexdigest()
    receipt_path.write_text(json.dumps(receipt), encoding="utf-8")
    out = tmp_path / "out.cdx.json"
    done = nexo("plugin", "sbom", "hello", "--dest", root, "-o", out, env=env, in_process=True)
    assert done.code == 1
    assert done.stdout == ""
    assert done.error_line == (
        f"error: {carried}: it is not JSON ({constant} is not a JSON value) [sbom_invalid]"
    )
    assert not out.exists()
    listed = nexo("plugin", "list", "--dest", root, "--json", env=env, in_process=True)
    assert listed.code == 0, listed.stderr
    (entry,) = json.loads(listed.stdout)["plugins"]
    assert entry["vendored"] is None


def test_json_makes_every_failure_a_document_and_output_a_report(
    env: dict[str, str], tmp_path: Path
) -> None:
    root = tmp_path / "root"
    _install(env, _tarball(tmp_path / "dist", HOSTILE, ascii_only=True), root)
    printed = nexo("plugin", "sbom", "hello", "--dest", root, "--json", env=env, in_process=True)
    assert printed.code == 0, printed.stderr
    assert printed.stdout.encode() == (root / "hello-1.0.0" / "sbom.cdx.json").read_bytes()
    before = tree_snapshot(tmp_path)
    for args, code, kind in (
        (("nothere",), 1, "not_installed"),
        ((), 2, "usage"),
        (("hello", "--format", "spdx-json"), 2, "usage"),
        (("hello", "-o", str(tmp_path)), 1, "io"),
        (("hello", "-o", str(tmp_path / "absent" / "sbom.json")), 1, "io"),
        (("nothere", "-o", str(tmp_path / "sbom.json")), 1, "not_installed"),
    ):
        done = nexo("plugin", "sbom", *args, "--dest", root, "--json", env=env, in_process=True)
        assert done.code == code, (args, done.stderr)
        assert done.document["ok"] is False
        assert done.document["kind"] == kind
        assert tree_snapshot(tmp_path) == before, args
    out = tmp_path / "out.cdx.json"
    written = nexo(
        "plugin", "sbom", "hello", "--dest", root, "--json", "-o", out, env=env, in_process=True
    )
    assert written.code == 0, written.stderr
    assert written.document == {"ok": True, "path": str(out)}
    assert out.read_text() == printed.stdout


def test_a_tree_the_reference_installer_wrote_gets_the_same_derived_document_each_time(
    env: dict[str, str], tmp_path: Path
) -> None:
    """Its receipt has the reference's ten fields and no file hashes: the SBOM is derived
    from ``lib/*.dist-info``, with a serial number from what it says, not a random one."""
    root = tmp_path / "root"
    _install(env, write_plugin(tmp_path / "dist", "hello", "1.0.0"), root)
    tree = root / "hello-1.0.0"
    receipt = json.loads((tree / ".nexo-install.json").read_text())
    reference = {key: receipt[key] for key in REFERENCE_RECEIPT_FIELDS}
    (tree / ".nexo-install.json").write_text(json.dumps({**reference, "tag": "latest"}))
    dist_info = tree / "lib" / "urllib3-2.2.1.dist-info"
    dist_info.mkdir()
    (dist_info / "METADATA").write_text(
        "Metadata-Version: 2.4\nName: urllib3\nVersion: 2.2.1\nLicense-Expression: MIT\n"
    )
    runs = [
        nexo("plugin", "sbom", "hello", "--dest", root, env=env, in_process=True) for _ in range(2)
    ]
    assert all(run.code == 0 for run in runs), runs[0].stderr
    assert "its receipt has no file hashes" in runs[0].stderr
    assert runs[0].stdout == runs[1].stdout
    assert _valid(runs[0].stdout)
    document = json.loads(runs[0].stdout)
    assert [c["purl"] for c in document["components"]] == ["pkg:pypi/urllib3@2.2.1"]
    assert document["serialNumber"].startswith("urn:uuid:")


def test_a_plugin_whose_receipt_cannot_be_read_is_never_an_empty_document(
    env: dict[str, str], tmp_path: Path
) -> None:
    root = tmp_path / "root"
    _install(env, write_plugin(tmp_path / "dist", "hello", "1.0.0"), root)
    _install(env, _tarball(tmp_path / "dist2", HOSTILE, ascii_only=True), tmp_path / "other")
    (root / "hello-1.0.0" / ".nexo-install.json").write_text("{broken")
    (root / "orphan-1.0.0" / "lib").mkdir(parents=True)
    plain = nexo("plugin", "sbom", "hello", "--dest", root, env=env, in_process=True)
    assert plain.code == 1
    assert plain.stdout == ""
    done = nexo("plugin", "sbom", "hello", "--dest", root, "--json", env=env, in_process=True)
    assert done.code == 1
    assert done.document["kind"] == "verify_failed"
    assert done.document["path"] == str(root / "hello-1.0.0")
    assert "receipt unreadable" in done.document["error"]
    every = nexo("plugin", "sbom", "--all", "--dest", root, env=env, in_process=True)
    assert every.code == 0, every.stderr
    assert _valid(every.stdout)
    assert f"{root / 'hello-1.0.0'}: receipt unreadable" in every.stderr
    assert f"{root / 'orphan-1.0.0'}: no install receipt; not described" in every.stderr


URLLIB3 = Package("urllib3", "2.2.1", "", ("MIT",), True)
REQUESTS = Package("requests", "2.32.3", "", ("Apache-2.0",), True)


@pytest.mark.parametrize(
    ("listed", "vendored", "said"),
    [
        # It claims a package the tree does not hold (the one the tree holds left out).
        ((URLLIB3,), (REQUESTS,), "it lists urllib3 2.2.1, which"),
        # It hides a package the tree holds.
        ((URLLIB3,), (URLLIB3, REQUESTS), "it leaves out requests 2.32.3, vendored in"),
        # The same name at another version.
        ((URLLIB3,), (replace(URLLIB3, version="1.26.0"),), "it lists urllib3 2.2.1, which"),
    ],
)
def test_a_carried_sbom_whose_packages_are_not_the_trees_is_never_vouched_for(
    env: dict[str, str],
    tmp_path: Path,
    listed: tuple[Package, ...],
    vendored: tuple[Package, ...],
    said: str,
) -> None:
    """The files digest binds the SBOM to the tree's files, not its list to what they hold:
    a list that disagrees with ``lib/*.dist-info`` is ``sbom_invalid``, nothing printed, for
    one id and for ``--all``."""
    root = tmp_path / "root"
    _install(env, _tarball(tmp_path / "dist", listed, ascii_only=True, vendored=vendored), root)
    carried = root / "hello-1.0.0" / "sbom.cdx.json"
    before = carried.read_bytes()
    for args in (("hello",), ("--all",)):
        done = nexo("plugin", "sbom", *args, "--dest", root, "--json", env=env, in_process=True)
        assert done.code == 1, (args, done.stderr)
        assert done.document["kind"] == "sbom_invalid"
        assert done.document["path"] == str(carried)
        assert said in done.document["error"]
        assert str(root / "hello-1.0.0" / "lib") in done.document["error"]
        plain = nexo("plugin", "sbom", *args, "--dest", root, env=env, in_process=True)
        assert plain.code == 1
        assert plain.stdout == ""
        assert plain.error_line.startswith(f"error: {carried}: it ")
    assert carried.read_bytes() == before


def test_a_carried_sbom_listing_the_trees_packages_in_another_spelling_is_vouched_for(
    env: dict[str, str], tmp_path: Path
) -> None:
    """Names compare in their PEP 503 form: ``Typing_Extensions`` in METADATA is the SBOM's
    ``typing-extensions``."""
    listed = (Package("typing-extensions", "4.12.2", "", ("PSF-2.0",), True),)
    vendored = (Package("Typing_Extensions", "4.12.2", "", (), True),)
    root = tmp_path / "root"
    _install(env, _tarball(tmp_path / "dist", listed, ascii_only=True, vendored=vendored), root)
    done = nexo("plugin", "sbom", "hello", "--dest", root, env=env, in_process=True)
    assert done.code == 0, done.stderr
    assert done.stdout.encode() == (root / "hello-1.0.0" / "sbom.cdx.json").read_bytes()


@pytest.mark.parametrize(
    ("version", "encoded"), [("1!2.0", "1%212.0"), ("2.0+acme.1", "2.0%2Bacme.1")]
)
def test_a_purl_is_written_the_same_in_every_place(
    env: dict[str, str], tmp_path: Path, version: str, encoded: str
) -> None:
    """An epoch or local version: the SBOM's purl (packageurl-python encodes ``!`` and ``+``),
    its bom-ref, its dependency refs and ``list --json`` name the package the same way,
    derived or carried."""
    purl = f"pkg:pypi/demo-lib@{encoded}"
    package = Package("Demo_Lib", version, "", ("MIT",), True)
    derived_root, carried_root = tmp_path / "derived", tmp_path / "carried"
    members = [*plugin_members("hello", "1.0.0"), *_dist_info((package,))]
    _install(
        env, write_plugin(tmp_path / "plain", "hello", "1.0.0", data=targz(members)), derived_root
    )
    _install(env, _tarball(tmp_path / "dist", (package,), ascii_only=True), carried_root)
    for root in (derived_root, carried_root):
        done = nexo("plugin", "sbom", "hello", "--dest", root, env=env, in_process=True)
        assert done.code == 0, done.stderr
        assert _valid(done.stdout)
        document = json.loads(done.stdout)
        (component,) = document["components"]
        assert (component["purl"], component["bom-ref"]) == (purl, purl)
        refs = {d["ref"] for d in document["dependencies"]}
        refs |= {r for d in document["dependencies"] for r in d.get("dependsOn", [])}
        assert purl in refs
        listed = nexo("plugin", "list", "--json", "--dest", root, env=env, in_process=True)
        assert listed.code == 0, listed.stderr
        (plugin,) = listed.document["plugins"]
        assert plugin["vendored"]["packages"] == [
            {"name": "Demo_Lib", "version": version, "purl": purl}
        ]


def test_pack_says_it_writes_the_sbom_in_help_and_readme() -> None:
    """The SBOM is one of pack's four outputs: its help and the README's command table say
    so, as docs/pack.md does."""
    helped = nexo("plugin", "pack", "--help", in_process=True)
    assert helped.code == 0
    summary = helped.stdout.split("Exit codes")[0]
    assert "SBOM" in summary
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    (row,) = [line for line in readme.splitlines() if line.startswith("| `nexo plugin pack [DIR]`")]
    assert "SBOM" in row
    assert ".cdx.json" in row
