"""The SBOM ``pack`` writes (docs/pack.md, "SBOM"): CycloneDX 1.6 JSON beside the tarball and
inside it, checked with the CycloneDX library's own schema validator and read back by it."""

from __future__ import annotations

import hashlib
import json
import os
import tarfile
import uuid
from pathlib import Path

import pytest
from cyclonedx.model.bom import Bom
from cyclonedx.schema import SchemaVersion
from cyclonedx.validation.json import JsonStrictValidator

from nexo_pkg.core.errors import NexoError
from nexo_pkg.pack.build import PackOptions, pack
from nexo_pkg.pack.vendor import read_report
from nexo_pkg.sbom.inventory import Inventory, InventoryError, apply_report, read_tree
from pack.pack_helpers import ProjectFactory, build_wheel

EPOCH = 1_700_000_000


def _members(tarball: Path) -> dict[str, bytes]:
    with tarfile.open(tarball, "r:gz") as archive:
        return {
            member.name: archive.extractfile(member).read()  # type: ignore[union-attr]
            for member in archive.getmembers()
            if member.isfile()
        }


def _strict_errors(data: bytes) -> object:
    return JsonStrictValidator(SchemaVersion.V1_6).validate_str(data.decode())


def _expected_serial(members: dict[str, bytes]) -> str:
    """The serial number as docs/pack.md defines it, recomputed from the tarball alone:
    uuid5 of the sha256 of `sha256sum`-style lines of every other member, sorted by name."""
    lines = "".join(
        f"{hashlib.sha256(data).hexdigest()}  {name}\n"
        for name, data in sorted(members.items(), key=lambda item: item[0].encode())
        if name != "sbom.cdx.json"
    )
    digest = hashlib.sha256(lines.encode()).hexdigest()
    return f"urn:uuid:{uuid.uuid5(uuid.NAMESPACE_URL, f'urn:nexo-pkg:files:sha256:{digest}')}"


@pytest.fixture
def wheels(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, offline_pip_env: dict[str, str]
) -> Path:
    """Two real wheels: ``alpha`` (an SPDX expression, needs ``beta`` and, only on Windows,
    ``gamma``) and ``beta`` (a licence classifier)."""
    directory = tmp_path / "wheels"
    build_wheel(
        directory, "alpha", "1.2.0", {"alpha/__init__.py": b"A = 1\n"}, purelib=True,
        tag="py3-none-any",
        metadata="License-Expression: MIT OR Apache-2.0\nRequires-Dist: beta>=2\n"
        "Requires-Dist: gamma; sys_platform == 'win32'\n",
    )  # fmt: skip
    build_wheel(
        directory, "beta", "2.0.1", {"beta.py": b"B = 2\n"}, purelib=True, tag="py3-none-any",
        metadata="Classifier: License :: OSI Approved :: BSD License\n",
    )  # fmt: skip
    monkeypatch.setenv("PIP_FIND_LINKS", f"{directory} {offline_pip_env['PIP_FIND_LINKS']}")
    return directory


def test_the_sbom_lists_every_vendored_distribution(
    wheels: Path, make_project: ProjectFactory
) -> None:
    project = make_project(requirements="alpha\n")
    result = pack(PackOptions(project=project, source_date_epoch=EPOCH))
    beside = project / "dist" / "demo-0.1.0-noarch.cdx.json"
    members = _members(result.tarball.path)
    assert members["sbom.cdx.json"] == beside.read_bytes()
    assert [a.path.name for a in result.assets][-1] == beside.name
    assert result.assets[-1].sha256 == hashlib.sha256(beside.read_bytes()).hexdigest()
    data = beside.read_bytes()
    assert _strict_errors(data) is None
    document = json.loads(data)
    assert (document["bomFormat"], document["specVersion"]) == ("CycloneDX", "1.6")
    assert document["metadata"]["timestamp"].startswith("2023-11-14T22:13:20")
    assert document["serialNumber"] == _expected_serial(members)
    root = document["metadata"]["component"]
    assert (root["name"], root["version"], root["type"]) == ("demo", "0.1.0", "application")
    # Read back by the CycloneDX library itself.
    bom = Bom.from_json(document)  # type: ignore[attr-defined]
    found = {c.name: c for c in bom.components}
    assert sorted(found) == ["alpha", "beta"]
    alpha, beta = found["alpha"], found["beta"]
    assert str(alpha.purl) == "pkg:pypi/alpha@1.2.0"
    assert str(beta.purl) == "pkg:pypi/beta@2.0.1"
    assert [lic.value for lic in alpha.licenses] == ["MIT OR Apache-2.0"]
    assert [lic.name for lic in beta.licenses] == ["BSD License"]
    for component, wheel in (
        (alpha, "alpha-1.2.0-py3-none-any.whl"),
        (beta, "beta-2.0.1-py3-none-any.whl"),
    ):
        digest = hashlib.sha256((wheels / wheel).read_bytes()).hexdigest()
        assert [(h.alg.value, h.content) for h in component.hashes] == [("SHA-256", digest)]
    graph = {
        str(d.ref.value): sorted(str(x.ref.value) for x in d.dependencies) for d in bom.dependencies
    }
    # gamma's marker does not hold here, and it was not vendored: no edge to it.
    assert graph == {
        "plugin:demo@0.1.0": ["pkg:pypi/alpha@1.2.0"],
        "pkg:pypi/alpha@1.2.0": ["pkg:pypi/beta@2.0.1"],
        "pkg:pypi/beta@2.0.1": [],
    }
    again = pack(PackOptions(project=project, out=project / "d2", source_date_epoch=EPOCH))
    assert (project / "d2" / beside.name).read_bytes() == data
    assert again.tarball.sha256 == result.tarball.sha256


def test_the_sbom_changes_no_other_byte_of_the_tarball(make_project: ProjectFactory) -> None:
    project = make_project(files={"src/data.txt": "d\n"})
    result = pack(PackOptions(project=project, source_date_epoch=EPOCH), environ={})
    members = _members(result.tarball.path)
    assert members["lib/plugin/data.txt"] == b"d\n"
    assert members["nexo-plugin.toml"] == (project / "nexo-plugin.toml").read_bytes()
    with tarfile.open(result.tarball.path, "r:gz") as archive:
        names = archive.getnames()
    # The SBOM is the last member: the bytes of the tar stream before it are those of the
    # tarball without it.
    assert names[-1] == "sbom.cdx.json"


def test_a_plugin_without_requirements_gets_a_root_only_sbom(make_project: ProjectFactory) -> None:
    project = make_project()
    result = pack(PackOptions(project=project, source_date_epoch=EPOCH), environ={})
    data = (project / "dist" / "demo-0.1.0-noarch.cdx.json").read_bytes()
    assert _strict_errors(data) is None
    document = json.loads(data)
    assert document.get("components", []) == []
    assert document["dependencies"] == [{"ref": "plugin:demo@0.1.0"}]
    assert document["serialNumber"] == _expected_serial(_members(result.tarball.path))


def test_a_compiled_plugin_gets_a_root_only_sbom(
    tmp_path: Path, make_project: ProjectFactory
) -> None:
    project = make_project()
    binary = tmp_path / "exe"
    binary.write_bytes(b"\x7fELF")
    binary.chmod(0o755)
    target = "x86_64-unknown-linux-gnu"
    result = pack(
        PackOptions(project=project, target=target, binary=binary, source_date_epoch=EPOCH),
        environ={},
    )
    data = _members(result.tarball.path)["sbom.cdx.json"]
    assert (project / "dist" / f"demo-0.1.0-{target}.cdx.json").read_bytes() == data
    document = json.loads(data)
    properties = {p["name"]: p["value"] for p in document["metadata"]["component"]["properties"]}
    assert properties["nexo:target"] == target
    assert _strict_errors(data) is None


def test_an_unreadable_pip_report_is_vendor_failed_naming_the_file(tmp_path: Path) -> None:
    requirements = tmp_path / "requirements.txt"
    requirements.write_text("alpha\n")
    report = tmp_path / "report.json"
    report.write_text("{not json")
    with pytest.raises(NexoError) as caught:
        read_report(report, requirements)
    assert (caught.value.kind, caught.value.exit_code) == ("vendor_failed", 1)
    assert "requirements.txt" in caught.value.message
    assert "--report" in caught.value.message
    assert not report.exists()
    with pytest.raises(NexoError) as missing:
        read_report(tmp_path / "absent.json", requirements)
    assert missing.value.kind == "vendor_failed"


def test_a_report_that_does_not_match_the_tree_names_the_dist_info(
    wheels: Path, tmp_path: Path
) -> None:
    lib = tmp_path / "lib"
    import subprocess
    import sys

    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--target", str(lib), "alpha"],
        check=True,
        env=dict(os.environ),
    )
    tree = read_tree(lib)
    assert sorted(p.name for p in tree.packages) == ["alpha", "beta"]
    with pytest.raises(InventoryError, match=r"lib/alpha-1\.2\.0\.dist-info is not in pip"):
        apply_report(tree, {"install": []}, "report.json")
    with pytest.raises(InventoryError, match=r"report\.json lists other"):
        apply_report(Inventory(), {"install": [{"metadata": {"name": "other"}}]}, "report.json")
    with pytest.raises(InventoryError, match=r"report\.json is not a pip installation report"):
        apply_report(tree, ["not", "a", "report"], "report.json")


def test_a_vendored_tree_without_dist_info_is_named(tmp_path: Path) -> None:
    lib = tmp_path / "lib"
    (lib / "mystery").mkdir(parents=True)
    (lib / "mystery" / "__init__.py").write_text("")
    tree = read_tree(lib)
    assert tree.packages == ()
    assert len(tree.warnings) == 1
    assert str(lib) in tree.warnings[0]
    assert "mystery" in tree.warnings[0]
    assert "no *.dist-info" in tree.warnings[0]
    broken = lib / "broken-1.0.dist-info"
    broken.mkdir()
    with pytest.raises(InventoryError, match=r"broken-1\.0\.dist-info/METADATA is missing"):
        read_tree(lib)


def test_a_tree_s_distribution_with_a_direct_url_gets_no_pypi_purl(tmp_path: Path) -> None:
    """PEP 610: a ``direct_url.json`` says the distribution came from a direct reference (here
    a VCS checkout, which pack keeps), not from an index; a derived SBOM then claims no purl."""
    from nexo_pkg.sbom.cyclonedx import PluginSbom, read_sbom, write_sbom

    lib = tmp_path / "lib"
    for name in ("fromgit", "fromindex"):
        dist_info = lib / f"{name}-1.0.dist-info"
        dist_info.mkdir(parents=True)
        (dist_info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    (lib / "fromgit-1.0.dist-info" / "direct_url.json").write_text(
        '{"url": "https://example.org/fromgit.git", "vcs_info": {"vcs": "git", "commit_id": "0"}}'
    )
    packages = {p.name: p for p in read_tree(lib).packages}
    assert packages["fromgit"].purl is None
    assert packages["fromindex"].purl == "pkg:pypi/fromindex@1.0"
    data = write_sbom(PluginSbom("demo", "0.1.0", "noarch", tuple(packages.values())))
    components = {c["name"]: c for c in json.loads(data)["components"]}
    assert "purl" not in components["fromgit"]
    assert components["fromindex"]["purl"] == "pkg:pypi/fromindex@1.0"
    assert {p.name: p.purl for p in read_sbom(data).packages} == {
        "fromgit": None,
        "fromindex": "pkg:pypi/fromindex@1.0",
    }


def test_the_cyclonedx_library_stays_off_the_lint_and_install_paths() -> None:
    import subprocess
    import sys

    code = (
        "import sys; from nexo_pkg.cli import lint; "
        "import nexo_pkg.pack.build, nexo_pkg.install.pipeline, nexo_pkg.install.sbom; "
        "import nexo_pkg.cli.install, nexo_pkg.fleet.lock; "
        "print(any(m.startswith('cyclonedx') for m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.usefixtures("offline_pip_env")
def test_a_package_from_a_local_directory_has_no_hash_and_pack_says_so(
    tmp_path: Path, make_project: ProjectFactory
) -> None:
    local = tmp_path / "localdep"
    (local / "localdep").mkdir(parents=True)
    (local / "localdep" / "__init__.py").write_text("")
    (local / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n'
        '[project]\nname = "localdep"\nversion = "0.3.0"\nlicense = "Apache-2.0"\n'
    )
    project = make_project(requirements=f"{local}\n")
    result = pack(PackOptions(project=project, source_date_epoch=EPOCH))
    document = json.loads((project / "dist" / "demo-0.1.0-noarch.cdx.json").read_bytes())
    (component,) = document["components"]
    assert (component["name"], component["version"]) == ("localdep", "0.3.0")
    assert "hashes" not in component
    assert component["licenses"] == [{"expression": "Apache-2.0"}]
    assert any("localdep 0.3.0" in note and "no sha256" in note for note in result.notes)


def _local_package(root: Path, name: str = "localdep") -> Path:
    (root / name).mkdir(parents=True)
    (root / name / "__init__.py").write_text("")
    (root / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n'
        f'[project]\nname = "{name}"\nversion = "0.3.0"\n'
    )
    return root


@pytest.mark.usefixtures("offline_pip_env")
@pytest.mark.parametrize("spelling", ["./localdep", "file:"])
def test_a_package_not_from_pypi_claims_no_pypi_purl(
    tmp_path: Path, make_project: ProjectFactory, spelling: str
) -> None:
    """A local directory (a relative path or a file: URL) is not PyPI's project of that name:
    its component keeps name and version, has no purl, and the SBOM stays valid, plainly
    shaped for install's fast path, reproducible across checkouts and readable back."""
    from nexo_pkg.sbom import plainly_valid
    from nexo_pkg.sbom.cyclonedx import read_sbom, validate

    sboms: list[bytes] = []
    for place in ("one", "elsewhere/two"):
        project = make_project(place)
        local = _local_package(project / "localdep")
        line = "./localdep" if spelling == "./localdep" else local.as_uri()
        (project / "requirements.txt").write_text(f"{line}\nnexoai>=0.4\n")
        result = pack(
            PackOptions(
                project=project, out=tmp_path / f"out-{len(sboms)}", source_date_epoch=EPOCH
            )
        )
        sboms.append((tmp_path / f"out-{len(sboms)}" / "demo-0.1.0-noarch.cdx.json").read_bytes())
    data = sboms[0]
    document = json.loads(data)
    by_name = {component["name"]: component for component in document["components"]}
    local_component = by_name["localdep"]
    assert local_component["version"] == "0.3.0"
    assert "purl" not in local_component
    assert not local_component["bom-ref"].startswith("pkg:pypi/")
    assert by_name["nexoai"]["purl"].startswith("pkg:pypi/nexoai@")
    assert validate(data) == []
    assert plainly_valid(document)
    assert read_sbom(data).packages == read_sbom(data).packages  # reads back
    [back] = [p for p in read_sbom(data).packages if p.name == "localdep"]
    assert (back.purl, back.direct, back.requested) == (None, True, True)
    if spelling == "./localdep":
        assert sboms[0] == sboms[1]  # the packing checkout's path is in no SBOM
    assert any(
        "localdep 0.3.0 was installed from a direct reference" in note
        and "no pkg:pypi purl" in note
        for note in result.notes
    )


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"{not json", "it is not JSON"),
        (b"[" * 100_000, "it is not JSON"),
        (b"\xff\xfe", "it is not UTF-8"),
        (b"[]", "is not of type 'object'"),
        (b'{"bomFormat": "CycloneDX", "specVersion": "1.6"}', "no metadata.component"),
    ],
    ids=["not-json", "too-deep", "not-utf8", "array", "no-metadata"],
)
def test_reading_a_malformed_sbom_is_one_sbom_error(data: bytes, reason: str) -> None:
    from nexo_pkg.sbom import SbomError
    from nexo_pkg.sbom.cyclonedx import read_sbom

    with pytest.raises(SbomError) as caught:
        read_sbom(data)
    assert reason in str(caught.value)


def test_purls_follow_the_package_url_specification(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    offline_pip_env: dict[str, str],
    make_project: ProjectFactory,
) -> None:
    """A ``pkg:pypi`` purl's name is lowercased with ``_`` as ``-`` and keeps its dots (the
    purl specification's PyPI type, as packageurl-python, which cyclonedx-python-lib uses,
    writes it): ``Zope.Event_Hub`` is ``pkg:pypi/zope.event-hub``, not PEP 503's
    ``zope-event-hub``; scanners match the names they read this way."""
    from packageurl import PackageURL

    directory = tmp_path / "wheels"
    build_wheel(
        directory, "Zope.Event_Hub", "1.0", {"zope_hub/__init__.py": b""}, purelib=True,
        tag="py3-none-any",
    )  # fmt: skip
    monkeypatch.setenv("PIP_FIND_LINKS", f"{directory} {offline_pip_env['PIP_FIND_LINKS']}")
    project = make_project(requirements="zope.event-hub\n")
    result = pack(PackOptions(project=project, source_date_epoch=EPOCH))
    document = json.loads(_members(result.tarball.path)["sbom.cdx.json"])
    (component,) = document["components"]
    expected = PackageURL(type="pypi", name="Zope.Event_Hub", version="1.0").to_string()
    assert expected == "pkg:pypi/zope.event-hub@1.0"
    assert component["purl"] == expected
    assert component["bom-ref"] == expected
    assert _strict_errors(_members(result.tarball.path)["sbom.cdx.json"]) is None


def test_an_extra_asked_for_by_a_vendored_package_keeps_its_edge(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, offline_pip_env: dict[str, str],
    make_project: ProjectFactory,
) -> None:  # fmt: skip
    """``alpha`` needs ``beta[fast]``, and ``beta`` needs ``gamma`` only for that extra: pip
    vendors gamma (the extra was asked for, though not in the requirements file), so the graph
    has beta -> gamma; no vendored package hangs off the graph unreached from the plugin."""
    directory = tmp_path / "wheels"
    build_wheel(
        directory, "alpha", "1.0.0", {"alpha/__init__.py": b""}, purelib=True,
        tag="py3-none-any", metadata="Requires-Dist: beta[fast]>=1\n",
    )  # fmt: skip
    build_wheel(
        directory, "beta", "1.0.0", {"beta/__init__.py": b""}, purelib=True, tag="py3-none-any",
        metadata="Provides-Extra: fast\nRequires-Dist: gamma; extra == 'fast'\n",
    )  # fmt: skip
    build_wheel(
        directory, "gamma", "1.0.0", {"gamma/__init__.py": b""}, purelib=True, tag="py3-none-any"
    )
    monkeypatch.setenv("PIP_FIND_LINKS", f"{directory} {offline_pip_env['PIP_FIND_LINKS']}")
    project = make_project(requirements="alpha\n")
    pack(PackOptions(project=project, source_date_epoch=EPOCH))
    data = (project / "dist" / "demo-0.1.0-noarch.cdx.json").read_bytes()
    assert _strict_errors(data) is None
    graph = {
        item["ref"]: sorted(item.get("dependsOn", [])) for item in json.loads(data)["dependencies"]
    }
    assert graph == {
        "plugin:demo@0.1.0": ["pkg:pypi/alpha@1.0.0"],
        "pkg:pypi/alpha@1.0.0": ["pkg:pypi/beta@1.0.0"],
        "pkg:pypi/beta@1.0.0": ["pkg:pypi/gamma@1.0.0"],
        "pkg:pypi/gamma@1.0.0": [],
    }
