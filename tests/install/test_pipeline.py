"""The install pipeline end to end against the loopback GitHub server and real tarballs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.github_server import BlobServer
from support.tarballs import (
    asset_name,
    directory,
    file,
    manifest_text,
    plugin_members,
    plugin_tarball,
    release_assets,
    sha256_hex,
    sidecar_line,
    targz,
    tree_snapshot,
    write_plugin,
)

from nexo_pkg.core.errors import NexoError
from nexo_pkg.install.options import InstallCallbacks
from nexo_pkg.install.pipeline import install, remove, upgrade
from nexo_pkg.install.receipts import RECEIPT_NAME, read_receipt, scan_installed
from nexo_pkg.install.verify import verify_installed
from nexo_pkg.sources.hosttriple import requested_target

from .conftest import InstallEnv, assert_refused

GNU = "x86_64-unknown-linux-gnu"
MUSL = "x86_64-unknown-linux-musl"


def _publish(env: InstallEnv, tag: str = "v1.0.0", **kwargs: object) -> dict[str, bytes]:
    version = tag.removeprefix("v")
    assets = release_assets("hello", version, **kwargs)  # type: ignore[arg-type]
    env.server.publish("acme", "hello", tag, assets)
    return assets


_failure = assert_refused


def test_install_latest(install_env: InstallEnv) -> None:
    assets = _publish(install_env)
    result = install("acme/hello", install_env.make_options())
    path = install_env.dest / "hello-1.0.0"
    assert result.path == path
    assert not result.was_already_present
    assert (path / "bin" / "hello").stat().st_mode & 0o777 == 0o755
    assert (path / "lib/plugin/main.py").read_text() == "print('hello')\n"
    receipt = json.loads((path / RECEIPT_NAME).read_text())
    assert set(receipt) == {
        "schema_version", "id", "version", "owner", "repo", "tag", "target", "sha256",
        "installed_at", "source", "signature", "files", "modes", "resolved_tag",
    }  # fmt: skip
    assert receipt["schema_version"] == "1.0"
    assert receipt["modes"]["bin/hello"] == "0755"
    assert receipt["id"] == "hello"
    assert receipt["version"] == "1.0.0"
    # `tag` is what was asked for (the latest release), as the reference records it.
    assert (receipt["owner"], receipt["repo"], receipt["tag"]) == ("acme", "hello", "latest")
    assert receipt["resolved_tag"] == "v1.0.0"
    # The target asked for (this host's), though the noarch tarball is what was installed.
    assert receipt["target"] == requested_target(None)
    assert result.plan.target == "noarch"
    assert receipt["source"] == "github-releases"
    assert receipt["sha256"] == sha256_hex(assets[asset_name("hello", "1.0.0")])
    assert receipt["signature"]["status"] == "unsigned"
    assert set(receipt["files"]) == {"nexo-plugin.toml", "bin/hello", "lib/plugin/main.py"}
    assert receipt["files"]["bin/hello"] == sha256_hex((path / "bin/hello").read_bytes())
    document = result.to_json()
    assert document["ok"] is True
    assert document["signature"]["status"] == "unsigned"
    assert document["source"]["type"] == "github-releases"
    assert not install_env.cache.exists() or list(install_env.cache.iterdir()) == []
    assert sorted(p.name for p in install_env.dest.iterdir()) == [
        ".nexo-install.lock",
        "hello-1.0.0",
    ]


def test_install_from_tag_and_digest_only(install_env: InstallEnv) -> None:
    tarball = plugin_tarball("hello", "2.0.0")
    install_env.server.publish(
        "acme", "hello", "v2.0.0", {asset_name("hello", "2.0.0"): tarball}, digests=True
    )
    _publish(install_env, "v1.0.0")
    result = install("acme/hello@v2.0.0", install_env.make_options())
    assert result.plan.version == "2.0.0"
    assert result.plan.checksums == ("digest",)


def test_host_asset_is_preferred_and_noarch_is_the_fallback(install_env: InstallEnv) -> None:
    gnu = targz(plugin_members("hello", "1.0.0"))
    assets = release_assets("hello", "1.0.0", target=GNU, data=gnu)
    assets.update(release_assets("hello", "1.0.0"))
    install_env.server.publish("acme", "hello", "v1.0.0", assets)
    result = install("acme/hello", install_env.make_options(target=GNU, dry_run=True))
    assert result.plan.target == GNU
    result = install("acme/hello", install_env.make_options(target="aarch64-apple-darwin"))
    assert result.plan.target == "noarch"


def test_gnu_host_falls_back_to_musl(
    install_env: InstallEnv, monkeypatch: pytest.MonkeyPatch
) -> None:
    assets = release_assets("hello", "1.0.0", target=MUSL)
    install_env.server.publish("acme", "hello", "v1.0.0", assets)
    monkeypatch.setenv("NEXO_INSTALL_TARGET", GNU)
    result = install("acme/hello", install_env.make_options())
    assert result.plan.target == MUSL
    # The receipt records the target asked for, as the daemon's installer does, so a later
    # upgrade resolves the gnu build again when a release offers one.
    assert read_receipt(result.path).target == GNU


def test_the_receipt_records_the_requested_target_not_noarch(install_env: InstallEnv) -> None:
    _publish(install_env)
    result = install("acme/hello", install_env.make_options(target="x86_64-pc-windows-gnu"))
    assert result.plan.target == "noarch"
    assert read_receipt(result.path).target == "x86_64-pc-windows-gnu"
    # A newer release with a build for it: upgrade resolves the requested target again.
    gnu = targz(plugin_members("hello", "1.1.0"))
    assets = release_assets("hello", "1.1.0", target="x86_64-pc-windows-gnu", data=gnu)
    assets.update(release_assets("hello", "1.1.0", manifest_asset=False))
    install_env.server.publish("acme", "hello", "v1.1.0", assets)
    upgraded = upgrade("hello", install_env.make_options(), keep_old=False)
    assert upgraded.install is not None
    assert upgraded.install.plan.target == "x86_64-pc-windows-gnu"


def test_a_local_tarball_records_its_own_target(install_env: InstallEnv, tmp_path: Path) -> None:
    tarball = write_plugin(tmp_path, "hello", "1.0.0", target=MUSL)
    result = install(str(tarball), install_env.make_options(target=GNU))
    assert read_receipt(result.path).target == MUSL


@pytest.mark.parametrize("force", [False, True])
def test_an_empty_directory_in_the_plugins_place_is_replaced(
    install_env: InstallEnv, force: bool
) -> None:
    """The daemon's installer replaces an empty `<dest>/<id>-<version>/`; a non-empty one
    without a receipt stays `already_installed` (SPEC §5, docs/security.md)."""
    _publish(install_env)
    (install_env.dest / "hello-1.0.0").mkdir(parents=True)
    result = install("acme/hello", install_env.make_options(force=force))
    assert not result.was_already_present
    assert read_receipt(result.path).version == "1.0.0"
    assert (result.path / "bin" / "hello").is_file()
    assert sorted(p.name for p in install_env.dest.iterdir() if p.name != ".nexo") == [
        ".nexo-install.lock",
        "hello-1.0.0",
    ]


def test_a_non_empty_directory_without_a_receipt_is_already_installed(
    install_env: InstallEnv,
) -> None:
    _publish(install_env)
    (install_env.dest / "hello-1.0.0").mkdir(parents=True)
    (install_env.dest / "hello-1.0.0" / "notes.txt").write_text("mine\n")
    error = _failure(install_env, "acme/hello", "already_installed")
    assert error.details == {"path": str(install_env.dest / "hello-1.0.0")}
    assert (install_env.dest / "hello-1.0.0" / "notes.txt").read_text() == "mine\n"


def test_id_from_tarball_names_without_manifest_asset(install_env: InstallEnv) -> None:
    _publish(install_env, manifest_asset=False)
    assert install("acme/hello", install_env.make_options()).plan.plugin_id == "hello"


@pytest.mark.parametrize("tag", ["v1.0.0", "v1.1.0", "v2.0.0"])
def test_two_versions_without_a_manifest_asset_are_ambiguous(
    install_env: InstallEnv, tag: str
) -> None:
    """Tarballs of two versions of one id and no manifest asset: nothing says which one the
    release is (the tag only selects the release, even when it names one of them)."""
    assets = release_assets("hello", "1.0.0", manifest_asset=False)
    assets.update(release_assets("hello", "1.1.0", manifest_asset=False))
    install_env.server.publish("acme", "hello", tag, assets, digests=True)
    error = _failure(install_env, f"acme/hello@{tag}", "asset_not_found")
    assert "several versions of hello (1.0.0, 1.1.0)" in error.message
    assert error.details["versions"] == ["1.0.0", "1.1.0"]
    assert not [request for request in install_env.server.requests if "/assets/" in request.path]


def test_asset_not_found_lists_tarballs(install_env: InstallEnv) -> None:
    assets = release_assets("hello", "1.0.0", target="aarch64-apple-darwin")
    install_env.server.publish("acme", "hello", "v1.0.0", assets)
    error = _failure(install_env, "acme/hello", "asset_not_found", target=GNU)
    assert "hello-1.0.0-aarch64-apple-darwin.tar.gz" in error.message


def test_release_not_found(install_env: InstallEnv) -> None:
    _publish(install_env)
    _failure(install_env, "acme/hello@v3.0.0", "release_not_found")


def test_checksum_missing(install_env: InstallEnv) -> None:
    _publish(install_env, sidecar=False)
    _failure(install_env, "acme/hello", "checksum_missing")


@pytest.mark.parametrize("digest", [False, True], ids=["checksums-only", "with-digest"])
def test_a_release_with_too_many_checksums_files_is_refused_unread(
    install_env: InstallEnv, digest: bool
) -> None:
    """Each checksums file is a request and up to 1 MiB: a release with more than the fixed
    limit (8) is refused before any is fetched, for its checksum and as signature material."""
    name = asset_name("hello", "1.0.0")
    assets = release_assets("hello", "1.0.0", sidecar=False)
    line = sidecar_line(assets[name], name).encode()
    for index in range(9):
        assets[f"tool{index}_1.0.0_checksums.txt"] = line
    install_env.server.publish("acme", "hello", "v1.0.0", assets, digests=digest)
    error = _failure(install_env, "acme/hello", "checksum_mismatch")
    assert "has 9 checksums files" in error.message
    assert "more than the 8" in error.message
    checksums_ids = {
        asset.id for _, asset in install_env.server.assets.values() if "checksums" in asset.name
    }
    asked = {request.path.rsplit("/", 1)[-1] for request in install_env.server.requests}
    assert not {str(i) for i in checksums_ids} & asked


def test_eight_checksums_files_are_read(install_env: InstallEnv) -> None:
    name = asset_name("hello", "1.0.0")
    assets = release_assets("hello", "1.0.0", sidecar=False)
    for index in range(7):
        assets[f"tool{index}_1.0.0_checksums.txt"] = b"0" * 64 + b"  other.tar.gz\n"
    assets["hello_1.0.0_checksums.txt"] = sidecar_line(assets[name], name).encode()
    install_env.server.publish("acme", "hello", "v1.0.0", assets)
    assert install("acme/hello", install_env.make_options()).plan.plugin_id == "hello"


def test_checksum_mismatch_deletes_the_download(install_env: InstallEnv) -> None:
    name = asset_name("hello", "1.0.0")
    assets = release_assets("hello", "1.0.0")
    assets[name + ".sha256"] = sidecar_line(b"something else", name).encode()
    install_env.server.publish("acme", "hello", "v1.0.0", assets)
    error = _failure(install_env, "acme/hello", "checksum_mismatch")
    # The download happened (into the blob cache), and its temp file is gone.
    blobs = install_env.home / "cache" / "blobs"
    assert (blobs / "tmp").is_dir()
    assert list((blobs / "tmp").iterdir()) == []
    assert list((blobs / "sha256").iterdir()) == []
    assert error.details["actual"] == sha256_hex(assets[name])


def test_digest_mismatch_even_when_sidecar_matches(install_env: InstallEnv) -> None:
    assets = release_assets("hello", "1.0.0")
    install_env.server.publish(
        "acme", "hello", "v1.0.0", assets,
        digests={asset_name("hello", "1.0.0"): "sha256:" + "0" * 64},
    )  # fmt: skip
    _failure(install_env, "acme/hello", "checksum_mismatch")


@pytest.mark.parametrize("fault", ["truncate", "short_length"])
def test_truncated_body_is_refused_by_the_listed_size(install_env: InstallEnv, fault: str) -> None:
    """A well-formed but short response (its Content-Length matching what is sent) is a
    failed download: fewer bytes than the release lists the asset with, both sizes named."""
    assets = release_assets("hello", "1.0.0")
    release = install_env.server.publish("acme", "hello", "v1.0.0", assets)
    url = install_env.server.asset_api_url(release, asset_name("hello", "1.0.0"))
    path = url.removeprefix(install_env.server.url)
    if fault == "truncate":
        install_env.server.truncate_body(times=None, path_contains=path)
    else:
        install_env.server.wrong_content_length(-100, times=None, path_contains=path)
    listed = len(assets[asset_name("hello", "1.0.0")])
    got = listed // 2 if fault == "truncate" else listed - 100
    error = _failure(install_env, "acme/hello", "network")
    assert f"got {got} bytes, but the release lists it as {listed} bytes" in error.message


class _PaddingHost(BlobServer):
    """A redirect target that serves every tarball with ``extra`` bytes more than it is."""

    extra = 300_000

    def put(self, path: str, data: bytes) -> str:
        padding = b"\0" * self.extra if path.endswith(".tar.gz") else b""
        return super().put(path, data + padding)


def test_a_body_longer_than_the_listed_size_is_stopped_where_it_passes_it(
    install_env: InstallEnv,
) -> None:
    """A download that sends more bytes than the release lists the asset with (its own
    Content-Length agreeing) is a failed download (``network``), cut off once it passes the
    listed size rather than read on to ``--max-download-size``; nothing is installed."""
    assets = release_assets("hello", "1.0.0")
    install_env.server.publish("acme", "hello", "v1.0.0", assets)
    listed = len(assets[asset_name("hello", "1.0.0")])
    with _PaddingHost() as host:
        install_env.server.redirect_assets_to(host)
        error = _failure(install_env, "acme/hello", "network")
    name = asset_name("hello", "1.0.0")
    assert f"download of {name}: got at least " in error.message, error.message
    assert f"bytes, but the release lists it as {listed} bytes" in error.message, error.message
    said = error.message.split("got at least ", 1)[1].split(" bytes", 1)[0]
    # Stopped within a chunk of the listed size, not after the whole padded body.
    assert listed < int(said) < listed + _PaddingHost.extra, error.message


def test_retries_after_500s_then_installs(install_env: InstallEnv) -> None:
    _publish(install_env)
    install_env.server.fail(status=500, times=2)
    install_env.server.drop_connection(times=1, path_contains="/assets/")
    assert install("acme/hello", install_env.make_options()).path.is_dir()


def test_refused_api_asset_url_falls_back_to_the_browser_url(install_env: InstallEnv) -> None:
    _publish(install_env)
    install_env.server.fail(status=404, times=None, path_contains="/releases/assets/")
    assert install("acme/hello", install_env.make_options()).path.is_dir()
    assert install_env.server.requests_to("/releases/download/")


def test_api_asset_url_failing_with_5xx_is_not_retried_elsewhere(install_env: InstallEnv) -> None:
    _publish(install_env)
    install_env.server.fail(status=503, times=None, path_contains="/releases/assets/")
    _failure(install_env, "acme/hello", "network")
    assert not install_env.server.requests_to("/releases/download/")


def test_rate_limited(install_env: InstallEnv) -> None:
    _publish(install_env)
    install_env.server.rate_limit(status=429, reset=1_900_000_000)
    error = _failure(install_env, "acme/hello", "rate_limited")
    assert "GH_ENTERPRISE_TOKEN" in error.message  # the loopback API is not github.com


def test_manifest_mismatch(install_env: InstallEnv, tmp_path: Path) -> None:
    wrong = targz(plugin_members("hello", "1.0.0", manifest=manifest_text("hello", "1.0.1")))
    tarball = write_plugin(tmp_path, "hello", "1.0.0", data=wrong)
    _failure(install_env, str(tarball), "manifest_mismatch")
    other_id = targz(plugin_members("hello", "1.0.0", manifest=manifest_text("other", "1.0.0")))
    tarball = write_plugin(tmp_path, "hello", "1.0.0", data=other_id)
    _failure(install_env, str(tarball), "manifest_mismatch")


def test_manifest_invalid(install_env: InstallEnv, tmp_path: Path) -> None:
    broken = targz(plugin_members("hello", "1.0.0", manifest="[plugin]\nid = 3\n"))
    tarball = write_plugin(tmp_path, "hello", "1.0.0", data=broken)
    _failure(install_env, str(tarball), "manifest_invalid")
    members = [m for m in plugin_members("hello", "1.0.0") if m.name != "nexo-plugin.toml"]
    tarball = write_plugin(tmp_path, "hello", "1.0.0", data=targz(members))
    _failure(install_env, str(tarball), "manifest_invalid")


def test_missing_launcher(install_env: InstallEnv, tmp_path: Path) -> None:
    members = [m for m in plugin_members("hello", "1.0.0") if m.name != "bin/hello"]
    tarball = write_plugin(tmp_path, "hello", "1.0.0", data=targz(members))
    _failure(install_env, str(tarball), "archive_invalid")
    as_dir = [m for m in members if m.name != "bin"] + [
        directory("bin/hello"),
        file("bin/hello/x", ""),
    ]
    tarball = write_plugin(tmp_path, "hello", "1.0.0", data=targz(as_dir))
    _failure(install_env, str(tarball), "archive_invalid")


def test_local_file_install_is_offline(install_env: InstallEnv, tmp_path: Path) -> None:
    tarball = write_plugin(tmp_path / "dist", "hello", "1.0.0")
    result = install(str(tarball), install_env.make_options())
    assert install_env.server.requests == []
    receipt = read_receipt(result.path)
    assert receipt.source == "local-file"
    assert (receipt.owner, receipt.repo, receipt.tag) == (None, None, None)
    assert result.to_json()["source"] == {"type": "local-file", "path": str(tarball)}


def test_local_file_without_sidecar(install_env: InstallEnv, tmp_path: Path) -> None:
    tarball = write_plugin(tmp_path / "dist", "hello", "1.0.0", sidecar=False)
    _failure(install_env, str(tarball), "checksum_missing")


def test_local_file_badly_named(install_env: InstallEnv, tmp_path: Path) -> None:
    tarball = tmp_path / "plugin.tar.gz"
    tarball.write_bytes(plugin_tarball("hello", "1.0.0"))
    _failure(install_env, str(tarball), "source_invalid")


def test_dry_run_writes_nothing(install_env: InstallEnv) -> None:
    _publish(install_env)
    result = install("acme/hello", install_env.make_options(dry_run=True))
    assert result.dry_run
    assert not install_env.dest.exists()
    assert result.plan.summary.plugin_id == "hello"


def test_declined_confirmation_is_cancelled(install_env: InstallEnv) -> None:
    _publish(install_env)
    shown: list[str] = []

    def decline(plan: object) -> bool:
        shown.append(str(plan))
        return False

    _failure(install_env, "acme/hello", "cancelled", InstallCallbacks(confirm=decline))
    assert shown


def test_install_twice_and_force(install_env: InstallEnv) -> None:
    _publish(install_env)
    first = install("acme/hello", install_env.make_options())
    installed_at = read_receipt(first.path).installed_at
    (first.path / "lib/plugin/main.py").write_text("tampered")
    second = install("acme/hello", install_env.make_options())
    assert second.was_already_present
    assert (first.path / "lib/plugin/main.py").read_text() == "tampered"
    forced = install("acme/hello", install_env.make_options(force=True))
    assert not forced.was_already_present
    assert (first.path / "lib/plugin/main.py").read_text() == "print('hello')\n"
    assert read_receipt(first.path).installed_at >= installed_at
    assert sorted(p.name for p in install_env.dest.iterdir()) == [
        ".nexo-install.lock",
        "hello-1.0.0",
    ]


def test_same_version_different_archive_is_already_installed(
    install_env: InstallEnv, tmp_path: Path
) -> None:
    _publish(install_env)
    install("acme/hello", install_env.make_options())
    different = plugin_tarball("hello", "1.0.0", payload=b"more")
    tarball = write_plugin(tmp_path, "hello", "1.0.0", data=different)
    _failure(install_env, str(tarball), "already_installed")
    assert install(str(tarball), install_env.make_options(force=True)).path.is_dir()


def test_stale_staging_dirs_are_cleaned(install_env: InstallEnv) -> None:
    _publish(install_env)
    install_env.dest.mkdir(parents=True)
    (install_env.dest / ".staging-hello-dead").mkdir()
    (install_env.dest / ".staging-hello-dead" / "junk").write_text("x")
    (install_env.dest / ".removing-old-dead").mkdir()
    install("acme/hello", install_env.make_options())
    assert sorted(p.name for p in install_env.dest.iterdir()) == [
        ".nexo-install.lock",
        "hello-1.0.0",
    ]


def test_upgrade_downgrade_and_keep_old(install_env: InstallEnv) -> None:
    _publish(install_env, "v1.0.0")
    install("acme/hello", install_env.make_options())
    same = upgrade("hello", install_env.make_options())
    assert same.install is None
    _publish(install_env, "v1.1.0")
    result = upgrade("hello", install_env.make_options(), keep_old=False)
    assert result.install is not None
    assert result.to_json()["upgraded"] is True
    assert result.removed_old
    assert result.to_json()["kept_paths"] == []
    assert sorted(p.name for p in install_env.dest.iterdir()) == [
        ".nexo-install.lock",
        "hello-1.1.0",
    ]
    # The latest release now goes backwards.
    install_env.server.latest[("acme", "hello")] = "v1.0.0"
    before = tree_snapshot(install_env.dest)
    with pytest.raises(NexoError) as caught:
        upgrade("hello", install_env.make_options())
    assert caught.value.kind == "downgrade_refused"
    assert tree_snapshot(install_env.dest) == before
    back = upgrade("hello", install_env.make_options(), allow_downgrade=True, keep_old=True)
    assert back.install is not None
    assert not back.removed_old
    # The kept 1.1.0 is out of the daemon's sight: exactly one version stays discoverable.
    names = sorted(p.name for p in install_env.dest.iterdir())
    assert names == [".nexo", ".nexo-install.lock", "hello-1.0.0"]
    (kept,) = back.kept
    assert kept.relative_to(install_env.dest).parts[:2] == (".nexo", "kept")
    assert read_receipt(kept).version == "1.1.0"
    assert back.to_json()["kept_paths"] == [str(kept)]


def test_upgrade_unknown_and_local(install_env: InstallEnv, tmp_path: Path) -> None:
    with pytest.raises(NexoError) as caught:
        upgrade("hello", install_env.make_options())
    assert caught.value.kind == "not_installed"
    install(str(write_plugin(tmp_path, "hello", "1.0.0")), install_env.make_options())
    with pytest.raises(NexoError) as local:
        upgrade("hello", install_env.make_options())
    assert local.value.kind == "source_invalid"


def test_remove(install_env: InstallEnv, tmp_path: Path) -> None:
    install(str(write_plugin(tmp_path, "hello", "1.0.0")), install_env.make_options())
    install(str(write_plugin(tmp_path, "other", "1.0.0")), install_env.make_options())
    removed = remove("hello", install_env.dest)
    assert [item.path.name for item in removed] == ["hello-1.0.0"]
    assert sorted(p.name for p in install_env.dest.iterdir()) == [
        ".nexo-install.lock",
        "other-1.0.0",
    ]
    with pytest.raises(NexoError) as caught:
        remove("hello", install_env.dest)
    assert caught.value.kind == "not_installed"


def test_verify_detects_tampering(install_env: InstallEnv, tmp_path: Path) -> None:
    result = install(str(write_plugin(tmp_path, "hello", "1.0.0")), install_env.make_options())
    (item,) = scan_installed(install_env.dest)
    assert verify_installed(item).ok
    (result.path / "lib/plugin/main.py").write_text("edited")
    (result.path / "nexo-plugin.toml").unlink()
    (result.path / "lib/plugin/extra.py").write_text("added")
    (result.path / "lib/link").symlink_to("/etc")
    report = verify_installed(item)
    assert not report.ok
    assert report.modified == ("lib/plugin/main.py",)
    assert report.missing == ("nexo-plugin.toml",)
    assert report.extra == ("lib/link", "lib/plugin/extra.py")


def test_orphans_are_listed_apart(install_env: InstallEnv, tmp_path: Path) -> None:
    install(str(write_plugin(tmp_path, "hello", "1.0.0")), install_env.make_options())
    (install_env.dest / "stray").mkdir()
    items = scan_installed(install_env.dest)
    assert [(item.path.name, item.receipt is None) for item in items] == [
        ("hello-1.0.0", False),
        ("stray", True),
    ]


def test_flags_and_policy_errors_come_before_network(
    install_env: InstallEnv, tmp_path: Path
) -> None:
    _publish(install_env)
    with pytest.raises(NexoError) as both:
        install(
            "acme/hello",
            install_env.make_options(require_signature=True, skip_signature_verify=True),
        )
    assert both.value.exit_code == 2
    with pytest.raises(NexoError) as policy:
        install("acme/hello", install_env.make_options(trusted_keys=tmp_path / "missing.toml"))
    assert policy.value.kind == "policy_invalid"
    assert policy.value.exit_code == 2
    assert install_env.server.requests == []


def test_require_signature_refuses_unsigned(install_env: InstallEnv) -> None:
    _publish(install_env)
    _failure(install_env, "acme/hello", "signature_missing", require_signature=True)


def test_skip_signature_verify_is_recorded(install_env: InstallEnv) -> None:
    _publish(install_env)
    result = install("acme/hello", install_env.make_options(skip_signature_verify=True))
    assert read_receipt(result.path).signature["status"] == "skipped"


def test_signature_material_is_downloaded_and_passed_on(install_env: InstallEnv) -> None:
    """A bundle beside the asset reaches the trust step, which refuses a bogus one."""
    assets = release_assets("hello", "1.0.0")
    assets[asset_name("hello", "1.0.0") + ".sigstore.json"] = b'{"not": "a bundle"}'
    install_env.server.publish("acme", "hello", "v1.0.0", assets)
    _failure(install_env, "acme/hello", "signature_invalid")
    assert install_env.server.requests_to("/assets/")


def test_concurrent_installs_are_serialised(install_env: InstallEnv, tmp_path: Path) -> None:
    import threading

    tarball = write_plugin(tmp_path, "hello", "1.0.0")
    results: list[bool] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            results.append(install(str(tarball), install_env.make_options()).was_already_present)
        except BaseException as exc:  # noqa: BLE001 (reported by the assertion below)
            errors.append(exc)

    threads = [threading.Thread(target=run) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert errors == []
    assert sorted(results) == [False, True, True]
    assert sorted(p.name for p in install_env.dest.iterdir()) == [
        ".nexo-install.lock",
        "hello-1.0.0",
    ]


def test_local_install_never_imports_httpx(tmp_path: Path) -> None:
    import subprocess
    import sys

    tarball = write_plugin(tmp_path / "dist", "hello", "1.0.0")
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from nexo_pkg.install.options import InstallOptions\n"
        "from nexo_pkg.install.pipeline import install\n"
        f"home = Path({str(tmp_path / 'home')!r})\n"
        f"install({str(tarball)!r}, InstallOptions(dest=home / 'plugins', nexo_home=home))\n"
        "print('httpx' in sys.modules)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "False"
    assert (tmp_path / "home" / "plugins" / "hello-1.0.0").is_dir()


def test_local_tarball_for_another_target(install_env: InstallEnv, tmp_path: Path) -> None:
    tarball = write_plugin(tmp_path, "hello", "1.0.0", target="riscv64gc-unknown-linux-gnu")
    error = _failure(install_env, str(tarball), "asset_not_found")
    assert "--target riscv64gc-unknown-linux-gnu" in error.message
    forced = install(str(tarball), install_env.make_options(target="riscv64gc-unknown-linux-gnu"))
    assert forced.plan.target == "riscv64gc-unknown-linux-gnu"


@pytest.mark.parametrize(
    ("installed", "offered", "upgraded"),
    [
        # The daemon's `semver` crate orders build metadata (semver 1.0.28 src/impls.rs,
        # `impl Ord for BuildMetadata`): +b1 < +b2 < +b3, and none below any.
        ("1.0.0+b2", "1.0.0+b1", False),
        ("1.0.0+b2", "1.0.0+b3", True),
        ("1.0.0", "1.0.0+b1", True),
    ],
)
def test_upgrade_orders_build_metadata_as_the_daemon(
    install_env: InstallEnv, installed: str, offered: str, upgraded: bool
) -> None:
    _publish(install_env, f"v{installed}")
    install("acme/hello", install_env.make_options())
    _publish(install_env, f"v{offered}")
    if not upgraded:
        before = tree_snapshot(install_env.dest)
        with pytest.raises(NexoError) as caught:
            upgrade("hello", install_env.make_options())
        assert caught.value.kind == "downgrade_refused"
        assert caught.value.details == {"installed": installed, "latest": offered}
        assert tree_snapshot(install_env.dest) == before
        return
    result = upgrade("hello", install_env.make_options(), keep_old=False)
    assert result.install is not None
    assert result.to_json()["upgraded"] is True
    assert read_receipt(install_env.dest / f"hello-{offered}").version == offered
    assert not (install_env.dest / f"hello-{installed}").exists()
