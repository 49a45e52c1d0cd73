"""A tarball's SBOM member (``sbom.cdx.json``): installed when it is the plugin's CycloneDX 1.6
document, refused (``archive_invalid``, naming the member, nothing written) when it is over the
cap, malformed or about another plugin."""

from __future__ import annotations

import json
from pathlib import Path

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
