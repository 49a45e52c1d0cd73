"""Release shapes of the real first-party plugin repositories, served by the loopback GitHub.

The tag only selects a release: the plugin id and version come from the release's manifest
asset, else from its tarball names, as the reference installer reads them. A lookup answered
with another release than the one asked for is refused, and ``upgrade`` compares the version
the release actually carries.
"""

from __future__ import annotations

import pytest
from support.tarballs import (
    asset_name,
    manifest_text,
    plugin_tarball,
    release_assets,
    sidecar_line,
    tree_snapshot,
)

from nexo_pkg.core.errors import NexoError
from nexo_pkg.install.pipeline import install, upgrade
from nexo_pkg.install.receipts import read_receipt

from .conftest import InstallEnv, assert_refused

GNU = "x86_64-unknown-linux-gnu"
MUSL = "x86_64-unknown-linux-musl"


def _matrix(plugin_id: str, version: str, targets: tuple[str, ...]) -> dict[str, bytes]:
    """Per-target tarballs with sidecars, and no manifest asset (as cargo-dist style
    workflows publish them)."""
    assets: dict[str, bytes] = {}
    for target in targets:
        assets.update(release_assets(plugin_id, version, target=target, manifest_asset=False))
    return assets


_refused = assert_refused


def test_tag_ahead_of_the_manifest_installs_the_manifest_version(install_env: InstallEnv) -> None:
    # google v0.3.1 ships google-0.3.0-x86_64-unknown-linux-musl.tar.gz and its manifest.
    assets = _matrix("google", "0.3.0", (MUSL, "aarch64-unknown-linux-musl"))
    assets["nexo-plugin.toml"] = manifest_text("google", "0.3.0").encode()
    install_env.server.publish("lordmacu", "nexo-rs-plugin-google", "v0.3.1", assets)
    result = install("lordmacu/nexo-rs-plugin-google", install_env.make_options(target=GNU))
    assert result.path == install_env.dest / "google-0.3.0"
    assert (result.plan.version, result.plan.target) == ("0.3.0", MUSL)
    receipt = read_receipt(result.path)
    # What was asked for (the latest release), as the reference records it; the tag found.
    assert (receipt.version, receipt.tag, receipt.resolved_tag) == ("0.3.0", "latest", "v0.3.1")


def test_plugin_toml_release_asset_is_read_too(install_env: InstallEnv) -> None:
    assets = _matrix("admin", "0.1.4", (MUSL,))
    assets["plugin.toml"] = manifest_text("admin", "0.1.4").encode()
    install_env.server.publish("lordmacu", "nexo-rs-plugin-admin", "v0.1.5", assets)
    result = install("lordmacu/nexo-rs-plugin-admin@v0.1.5", install_env.make_options(target=GNU))
    assert result.path.name == "admin-0.1.4"


@pytest.mark.parametrize("with_manifest", [True, False])
def test_release_plz_prefixed_tag(install_env: InstallEnv, with_manifest: bool) -> None:
    assets = _matrix("google", "0.2.0", (MUSL, GNU))
    if with_manifest:
        assets["nexo-plugin.toml"] = manifest_text("google", "0.2.0").encode()
    tag = "nexo-plugin-google-v0.2.0"
    install_env.server.publish("lordmacu", "nexo-plugin-google", tag, assets)
    result = install(f"lordmacu/nexo-plugin-google@{tag}", install_env.make_options(target=GNU))
    assert (result.plan.version, result.plan.target) == ("0.2.0", GNU)
    assert read_receipt(result.path).tag == tag


def test_doubled_v_tag(install_env: InstallEnv) -> None:
    install_env.server.publish("acme", "hello", "vv1.0.0", _matrix("hello", "1.0.0", ("noarch",)))
    result = install("acme/hello", install_env.make_options())
    assert result.path.name == "hello-1.0.0"
    assert install("acme/hello@vv1.0.0", install_env.make_options()).was_already_present


def test_musl_only_matrix_installs_on_a_glibc_host(install_env: InstallEnv) -> None:
    targets = (MUSL, "aarch64-unknown-linux-musl", "aarch64-apple-darwin", "x86_64-apple-darwin")
    assets = _matrix("email", "0.4.2", targets)
    install_env.server.publish("lordmacu", "nexo-plugin-email", "v0.4.2", assets)
    result = install("lordmacu/nexo-plugin-email", install_env.make_options(target=GNU))
    assert result.plan.target == MUSL
    other = "riscv64gc-unknown-linux-gnu"
    refused = _refused(install_env, "lordmacu/nexo-plugin-email", "asset_not_found", target=other)
    assert asset_name("email", "0.4.2", MUSL) in refused.details["available"]


def test_several_plugin_ids_in_one_release_are_refused_by_name(install_env: InstallEnv) -> None:
    assets = _matrix("whatsapp", "0.5.0", ("noarch",))
    assets.update(_matrix("telegram", "0.5.0", ("noarch",)))
    install_env.server.publish("lordmacu", "nexo-rs", "v0.5.0", assets)
    refused = _refused(install_env, "lordmacu/nexo-rs", "asset_not_found")
    assert refused.details["ids"] == ["telegram", "whatsapp"]
    assert "telegram, whatsapp" in refused.message


def test_several_plugin_ids_with_a_manifest_asset_take_the_manifest_s(
    install_env: InstallEnv,
) -> None:
    assets = _matrix("whatsapp", "0.5.0", ("noarch",))
    assets.update(_matrix("telegram", "0.5.0", ("noarch",)))
    assets["nexo-plugin.toml"] = manifest_text("telegram", "0.5.0").encode()
    install_env.server.publish("lordmacu", "nexo-rs", "v0.5.0", assets)
    assert install("lordmacu/nexo-rs", install_env.make_options()).path.name == "telegram-0.5.0"


def test_bare_version_falls_back_to_the_v_tag(install_env: InstallEnv) -> None:
    install_env.server.publish("acme", "hello", "v0.1.0", release_assets("hello", "0.1.0"))
    result = install("acme/hello@0.1.0", install_env.make_options())
    assert read_receipt(result.path).tag == "v0.1.0"
    looked_up = [r.path for r in install_env.server.requests if "/releases/tags/" in r.path]
    base = "/repos/acme/hello/releases/tags/"
    assert looked_up == [base + "0.1.0", base + "v0.1.0"]


def test_at_latest_is_the_latest_release_as_for_the_reference(install_env: InstallEnv) -> None:
    install_env.server.publish("acme", "hello", "v0.1.0", release_assets("hello", "0.1.0"))
    install_env.server.publish("acme", "hello", "v0.2.0", release_assets("hello", "0.2.0"))
    result = install("acme/hello@latest", install_env.make_options())
    assert result.path.name == "hello-0.2.0"
    assert (read_receipt(result.path).tag, read_receipt(result.path).resolved_tag) == (
        "latest",
        "v0.2.0",
    )
    # A release really tagged `latest` (a rolling release) is that release.
    install_env.server.publish(
        "acme", "rolling", "latest", release_assets("rolling", "0.1.0"), latest=False
    )
    install_env.server.publish("acme", "rolling", "v0.2.0", release_assets("rolling", "0.2.0"))
    assert install("acme/rolling@latest", install_env.make_options()).path.name == "rolling-0.1.0"


def test_missing_tag_lists_the_nearest_tags(install_env: InstallEnv) -> None:
    for version in ("0.1.0", "0.2.0", "0.2.1", "0.3.0", "1.0.0", "2.0.0", "2.1.0"):
        install_env.server.publish("acme", "hello", f"v{version}", release_assets("hello", version))
    refused = _refused(install_env, "acme/hello@v0.2.5", "release_not_found")
    assert refused.details["nearest_tags"] == ["v0.2.1", "v0.2.0", "v0.3.0", "v0.1.0", "v1.0.0"]
    assert "nearest tags: v0.2.1, v0.2.0" in refused.message
    assert "public" not in refused.message
    unknown = _refused(install_env, "acme/nope@v1.0.0", "release_not_found")
    assert "repository acme/nope not found" in unknown.message


@pytest.mark.parametrize("source", ["acme/hello", "acme/hello@latest"])
def test_no_latest_release_lists_the_releases_there_are(
    install_env: InstallEnv, source: str
) -> None:
    """A repository whose releases are all prereleases (GitHub's ``releases/latest`` answers
    404) is not said to be missing or private: its newest tags are listed to choose from."""
    for tag in ("v1.0.0-rc.1", "v1.0.0-rc.2"):
        install_env.server.publish("acme", "hello", tag, release_assets("hello", tag[1:]),
                                   latest=False)  # fmt: skip
    refused = _refused(install_env, source, "release_not_found")
    assert refused.message == (
        "acme/hello has no latest release (GitHub never calls a prerelease or a draft the "
        "latest); its newest tags: v1.0.0-rc.2, v1.0.0-rc.1; name one as acme/hello@TAG"
    )
    assert refused.details["nearest_tags"] == ["v1.0.0-rc.2", "v1.0.0-rc.1"]
    # A repository with no release at all says so; one that is not found is asked about.
    install_env.server.releases[("acme", "empty")] = []
    assert _refused(install_env, "acme/empty", "release_not_found").message == (
        "acme/empty has no releases"
    )
    assert (
        "is the repository public"
        in _refused(install_env, "acme/nope", "release_not_found").message
    )


def test_a_substituted_release_is_refused(install_env: InstallEnv) -> None:
    install_env.server.publish("acme", "hello", "v0.1.0", release_assets("hello", "0.1.0"))
    install_env.server.publish("acme", "hello", "v2.0.0", release_assets("hello", "2.0.0"))
    install_env.server.substitute("acme", "hello", "v2.0.0", "v0.1.0")
    refused = _refused(install_env, "acme/hello@v2.0.0", "release_not_found")
    assert refused.details["answered_tag"] == "v0.1.0"
    # The `v` fallback holds the answer to the tag it asked for, too.
    install_env.server.substitute("acme", "hello", "v2.0.0", "v2.0.0")
    install_env.server.substitute("acme", "hello", "v3.0.0", "v0.1.0")
    _refused(install_env, "acme/hello@3.0.0", "release_not_found")


def test_upgrade_installs_the_release_it_compared(install_env: InstallEnv) -> None:
    server = install_env.server
    server.publish("acme", "hello", "v0.1.0", release_assets("hello", "0.1.0"), latest=False)
    server.publish("acme", "hello", "v1.0.0", release_assets("hello", "1.0.0"))
    install("acme/hello", install_env.make_options())  # follows the latest release
    server.publish("acme", "hello", "v2.0.0", release_assets("hello", "2.0.0"))
    # A second lookup of the tag would be answered with the old release.
    server.substitute("acme", "hello", "v2.0.0", "v0.1.0")
    result = upgrade("hello", install_env.make_options())
    assert result.to_json()["version"] == "2.0.0"
    assert sorted(p.name for p in install_env.dest.iterdir() if not p.name.startswith(".")) == [
        "hello-2.0.0"
    ]


def test_upgrade_to_a_release_carrying_an_older_version_is_a_downgrade(
    install_env: InstallEnv,
) -> None:
    server = install_env.server
    server.publish("acme", "hello", "v1.0.0", release_assets("hello", "1.0.0"))
    install("acme/hello", install_env.make_options())
    # The newest tag carries the genuine old 0.1.0 tarball and manifest.
    server.publish("acme", "hello", "v2.0.0", release_assets("hello", "0.1.0"))
    before = tree_snapshot(install_env.dest)
    with pytest.raises(NexoError) as caught:
        upgrade("hello", install_env.make_options())
    assert caught.value.kind == "downgrade_refused"
    assert caught.value.details == {"installed": "1.0.0", "latest": "0.1.0"}
    assert tree_snapshot(install_env.dest) == before
    allowed = upgrade("hello", install_env.make_options(), allow_downgrade=True)
    assert allowed.to_json()["version"] == "0.1.0"


def test_archive_manifest_must_match_the_release_manifest(install_env: InstallEnv) -> None:
    # The release manifest says 2.0.0, the tarball named for 2.0.0 holds a 0.1.0 manifest.
    data = plugin_tarball("hello", "2.0.0", manifest=manifest_text("hello", "0.1.0"))
    name = asset_name("hello", "2.0.0")
    assets = {
        name: data,
        name + ".sha256": sidecar_line(data, name).encode(),
        "nexo-plugin.toml": manifest_text("hello", "2.0.0").encode(),
    }
    install_env.server.publish("acme", "hello", "v2.0.0", assets)
    _refused(install_env, "acme/hello", "manifest_mismatch")
