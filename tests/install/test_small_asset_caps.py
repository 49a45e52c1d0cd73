"""A release's small files (checksum sidecar, signature material, manifest asset) past the
fixed cap each has: refused with the kind of what the file is, in words that do not send the
operator to ``--max-download-size`` (which raises the tarball's limit, not these), and nothing
written."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.cli import clean_env, nexo
from support.install_env import InstallEnv
from support.tarballs import asset_name, manifest_text, release_assets, tree_snapshot

ASSET = asset_name("hello", "1.0.0")
OVER_SIDECAR_CAP = 64 * 1024 + 1
OVER_SIGNATURE_CAP = 4 * 1024 * 1024 + 1
OVER_MANIFEST_CAP = 1024 * 1024 + 1


def _assets(case: str) -> dict[str, bytes]:
    assets = release_assets("hello", "1.0.0")
    if case == "sidecar":
        assets[ASSET + ".sha256"] += b"#" * OVER_SIDECAR_CAP
    elif case == "bundle":
        assets[ASSET + ".sigstore.json"] = b" " * OVER_SIGNATURE_CAP
    elif case == "certificate":
        assets[ASSET + ".sig"] = b"MEUCIQ=="
        assets[ASSET + ".pem"] = b" " * OVER_SIGNATURE_CAP
    else:
        manifest = manifest_text("hello", "1.0.0").encode()
        assets["nexo-plugin.toml"] = manifest + b"#" * OVER_MANIFEST_CAP
    return assets


@pytest.mark.parametrize(
    ("case", "kind"),
    [
        ("sidecar", "checksum_mismatch"),
        ("bundle", "signature_invalid"),
        ("certificate", "signature_invalid"),
        ("manifest", "archive_unsafe"),
    ],
)
def test_an_oversized_small_asset_is_refused_as_what_it_is(
    install_env: InstallEnv, tmp_path: Path, case: str, kind: str
) -> None:
    install_env.server.publish("acme", "hello", "v1.0.0", _assets(case))
    install_env.dest.mkdir(parents=True)
    before = tree_snapshot(install_env.dest)
    result = nexo(
        "plugin", "install", "acme/hello", "--dest", install_env.dest, "--yes", "--json",
        "--max-download-size", str(1 << 30),
        env=clean_env(NEXO_HOME=str(install_env.home), NEXO_GITHUB_API_BASE=install_env.server.url,
                      NEXO_HTTP_RETRY_BASE_MS="1"),
        in_process=True,
    )  # fmt: skip
    assert result.exit_code == 1, result.stderr
    document = result.document
    assert document["kind"] == kind, document
    assert "--max-download-size" not in document["error"]
    assert "is larger than" in document["error"]
    assert tree_snapshot(install_env.dest) == before


def test_oversized_signature_material_is_not_read_when_verification_is_off(
    install_env: InstallEnv,
) -> None:
    install_env.server.publish("acme", "hello", "v1.0.0", _assets("bundle"))
    result = nexo(
        "plugin", "install", "acme/hello", "--dest", install_env.dest, "--yes", "--json",
        "--skip-signature-verify",
        env=clean_env(NEXO_HOME=str(install_env.home), NEXO_GITHUB_API_BASE=install_env.server.url,
                      NEXO_HTTP_RETRY_BASE_MS="1"),
        in_process=True,
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    assert result.document["signature"]["status"] == "skipped"
