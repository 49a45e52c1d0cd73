"""A tarball's SBOM member (``sbom.cdx.json``): installed when it is the plugin's CycloneDX 1.6
document, refused (``archive_invalid``, naming the member, nothing written) when it is over the
cap, malformed (CycloneDX 1.6's schema or the library refuses it, as ``nexo plugin sbom`` reads
it) or about another plugin."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support.tarballs import directory, file, plugin_members, targz, write_plugin

from nexo_pkg.install.pipeline import install
from nexo_pkg.sbom import MAX_SBOM_BYTES
from nexo_pkg.sbom.cyclonedx import PluginSbom, write_sbom
from nexo_pkg.sbom.inventory import Package

from .conftest import InstallEnv, assert_refused


def sbom_bytes(plugin_id: str = "hello", version: str = "1.0.0") -> bytes:
    package = Package("idna", "3.20", "lib/idna-3.20.dist-info", ("BSD-3-Clause",), True)
    return write_sbom(PluginSbom(plugin_id, version, "noarch", (package,), files_sha256="0" * 64))


def edited_sbom(edit: Callable[[dict[str, Any]], object]) -> bytes:
    """:func:`sbom_bytes` as JSON, changed in place by ``edit``."""
    document = json.loads(sbom_bytes())
    edit(document)
    return json.dumps(document).encode()


def tarball_with(tmp_path: Path, sbom: bytes) -> Path:
    members = [*plugin_members("hello", "1.0.0"), file("sbom.cdx.json", sbom)]
    return write_plugin(tmp_path, "hello", "1.0.0", data=targz(members))


def test_a_plugin_sbom_is_installed_and_its_packages_shown(
    install_env: InstallEnv, tmp_path: Path
) -> None:
    data = sbom_bytes()
    result = install(str(tarball_with(tmp_path, data)), install_env.make_options())
    assert (result.path / "sbom.cdx.json").read_bytes() == data
    assert result.plan.vendored == (
        {"name": "idna", "version": "3.20", "purl": "pkg:pypi/idna@3.20"},
    )


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"{not json", "it is not JSON"),
        (json.dumps({"bomFormat": "SPDX"}).encode(), "not a CycloneDX document"),
        (sbom_bytes().replace(b'"1.6"', b'"1.4"'), "specVersion is '1.4'"),
        (sbom_bytes("other"), "it describes 'other' '1.0.0', not hello 1.0.0"),
        (b" " * (MAX_SBOM_BYTES + 1), f"over the cap of {MAX_SBOM_BYTES}"),
    ],
    ids=["not-json", "not-cyclonedx", "old-spec", "another-plugin", "oversized"],
)
def test_a_bad_sbom_member_is_refused_naming_it(
    install_env: InstallEnv, tmp_path: Path, data: bytes, reason: str
) -> None:
    error = assert_refused(install_env, str(tarball_with(tmp_path, data)), "archive_invalid")
    assert "sbom.cdx.json" in error.message
    assert reason in error.message
    assert error.details["member"] == "sbom.cdx.json"


@pytest.mark.parametrize("implied", [False, True], ids=["explicit", "implied-by-a-member"])
def test_a_directory_under_the_sbom_s_name_is_refused(
    install_env: InstallEnv, tmp_path: Path, implied: bool
) -> None:
    """Installed, it would make ``sbom`` derive a document and say the tarball carried none."""
    extra = file("sbom.cdx.json/x.json", b"{}") if implied else directory("sbom.cdx.json")
    members = [*plugin_members("hello", "1.0.0"), extra]
    tarball = write_plugin(tmp_path, "hello", "1.0.0", data=targz(members))
    error = assert_refused(install_env, str(tarball), "archive_invalid")
    assert "sbom.cdx.json is not a regular file" in error.message
    assert error.details["member"] == "sbom.cdx.json"


@pytest.mark.parametrize(
    ("edit", "reason"),
    [
        (
            lambda d: d["components"][0].update(version=5),
            "does not validate against CycloneDX 1.6: 5 is not of type 'string'",
        ),
        (
            lambda d: d["components"][0].update(bogus="x"),
            "does not validate against CycloneDX 1.6: Additional properties are not allowed",
        ),
        (
            lambda d: d["components"][0].update(hashes=[{"alg": "SHA-256", "content": "zz"}]),
            "does not validate against CycloneDX 1.6: 'zz' does not match",
        ),
        (
            lambda d: d.update(serialNumber="urn:uuid:not-a-uuid"),
            "does not validate against CycloneDX 1.6",
        ),
        (
            lambda d: d["components"][0].update(purl="not a purl"),
            "the CycloneDX library cannot read it",
        ),
        (
            lambda d: d["components"][0].update(purl="pkg:pypi/%09@0"),
            "the CycloneDX library cannot read it: PURL string supplied does not parse",
        ),
        (
            lambda d: d["components"][0].update(purl="pkg:pypi/%2F@1"),
            "the CycloneDX library cannot read it: PURL string supplied does not parse",
        ),
        (
            lambda d: d["components"][0].update(purl="pkg:pypi/%C2%A0@1"),
            "the CycloneDX library cannot read it: PURL string supplied does not parse",
        ),
    ],
    ids=[
        "integer-version",
        "unknown-key",
        "bad-hash",
        "bad-serial",
        "bad-purl",
        "purl-name-a-tab",
        "purl-name-a-slash",
        "purl-name-a-no-break-space",
    ],
)
def test_an_sbom_that_cyclonedx_1_6_refuses_is_refused_as_sbom_would(
    install_env: InstallEnv, tmp_path: Path, edit: Callable[[dict[str, Any]], object], reason: str
) -> None:
    """Installed, such an SBOM is listed by ``list --json`` and ``info`` with what it says,
    and refused only later by ``nexo plugin sbom``."""
    error = assert_refused(
        install_env, str(tarball_with(tmp_path, edited_sbom(edit))), "archive_invalid"
    )
    assert error.message.startswith("the archive's sbom.cdx.json is not the plugin's SBOM: ")
    assert reason in error.message
    assert error.details["member"] == "sbom.cdx.json"


@pytest.mark.parametrize(
    "edit",
    [
        lambda d: d["components"][0].update(description="a package", publisher="someone"),
        lambda d: d["components"][0].update(licenses=[{"license": {"id": "MIT"}}]),
        lambda d: d["metadata"].update(timestamp="2023-11-14T22:13:20Z"),
    ],
    ids=["more-fields", "spdx-id-licence", "zulu-time"],
)
def test_a_valid_sbom_of_another_shape_than_pack_s_is_installed(
    install_env: InstallEnv, tmp_path: Path, edit: Callable[[dict[str, Any]], object]
) -> None:
    """A CycloneDX 1.6 document pack would not write, that the library reads, installs: only
    the schema and the library judge what is not pack's shape."""
    data = edited_sbom(edit)
    result = install(str(tarball_with(tmp_path, data)), install_env.make_options())
    assert (result.path / "sbom.cdx.json").read_bytes() == data
