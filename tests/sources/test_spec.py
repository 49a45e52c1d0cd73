"""SOURCE parsing, target triples, asset naming and checksum sidecars."""

from __future__ import annotations

import os
import platform
import sys
from pathlib import Path

import pytest
from support.tarballs import manifest_text

from nexo_pkg.core.errors import NexoError
from nexo_pkg.install.manifest_check import manifest_asset_problem
from nexo_pkg.sources import hosttriple
from nexo_pkg.sources.checksum import parse_digest, verify_checksums
from nexo_pkg.sources.github import Release, ReleaseAsset
from nexo_pkg.sources.hosttriple import host_candidates, requested_target
from nexo_pkg.sources.select import (
    ReleaseIdentity,
    choose_asset,
    parse_tarball_name,
    release_identity,
    version_in_tag,
)
from nexo_pkg.sources.spec import GitHubSource, LocalSource, parse_source


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("acme/hello", GitHubSource("acme", "hello", None)),
        ("acme/hello@v1.2.3", GitHubSource("acme", "hello", "v1.2.3")),
        (
            "Acme-Corp/nexo.plugin_x@1.0.0-rc.1",
            GitHubSource("Acme-Corp", "nexo.plugin_x", "1.0.0-rc.1"),
        ),
        ("a" * 39 + "/" + "b" * 100, GitHubSource("a" * 39, "b" * 100, None)),
    ],
)
def test_github_sources_parse(text: str, expected: GitHubSource) -> None:
    assert parse_source(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "../x",
        "a/b/c",
        "/b",
        "a/",
        "",
        "acme",
        "ac me/hello",
        "acme/he llo",
        "acme/%2e%2e",
        "%2e%2e/hello",
        "acme/..",
        "acme/.",
        "./hello",
        "acme/a..b",
        "acme/hel\x00lo",
        "acme/hello\n",
        "acme/hel\x1blo",
        "https://github.com/acme/hello",
        "http:acme/hello",
        "git@github.com:acme/hello",
        "a" * 40 + "/hello",
        "acme/" + "b" * 101,
        "acme/hello@",
        "acme/hello@v1/../../x",
        "acme/hello@v1 2",
        "acme/hello@..",
        "acme/hello@-v1",
        "acme/hello@" + "1" * 129,
        "acme/hell\u00f6",
        "-acme/hello",
        "acme/hello.tar.gz",
    ],
)
def test_bad_sources_are_source_invalid(text: str) -> None:
    with pytest.raises(NexoError) as caught:
        parse_source(text)
    assert caught.value.kind == "source_invalid"


def test_local_tarball_source(tmp_path: Path) -> None:
    tarball = tmp_path / "hello-1.0.0-noarch.tar.gz"
    tarball.write_bytes(b"x")
    assert parse_source(str(tarball)) == LocalSource(tarball.resolve())


def test_local_source_must_be_a_tarball(tmp_path: Path) -> None:
    other = tmp_path / "notes.txt"
    other.write_text("x")
    with pytest.raises(NexoError) as caught:
        parse_source(str(other))
    assert caught.value.kind == "source_invalid"


@pytest.mark.parametrize("text", ["dist", "dist/", "out/dist/"])
def test_a_directory_named_without_owner_repo_shape_is_said_to_be_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str
) -> None:
    """``install dist`` (``pack``'s output directory) is not refused as a malformed owner/repo:
    the message says it is a directory and what to give instead."""
    (tmp_path / "out" / "dist").mkdir(parents=True)
    (tmp_path / "dist").mkdir()
    monkeypatch.chdir(tmp_path)
    with pytest.raises(NexoError) as caught:
        parse_source(text)
    assert caught.value.kind == "source_invalid"
    assert f"invalid source {text!r}: it is a directory; give the release .tar.gz inside it" in (
        caught.value.message
    )


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
def test_a_path_that_exists_but_is_no_regular_file_is_said_to_be_one(tmp_path: Path) -> None:
    """A FIFO named like a release (``<(curl …)``, a device) exists: the message says what it
    is not, rather than that there is no such file."""
    fifo = tmp_path / "hello-1.0.0.tar.gz"
    os.mkfifo(fifo)
    with pytest.raises(NexoError) as caught:
        parse_source(str(fifo))
    assert caught.value.kind == "source_invalid"
    assert f"invalid source {str(fifo)!r}: not a regular file" in caught.value.message
    missing = tmp_path / "missing-1.0.0.tar.gz"
    with pytest.raises(NexoError) as caught:
        parse_source(str(missing))
    assert f"invalid source {str(missing)!r}: no such file" in caught.value.message


def test_an_owner_repo_that_is_also_a_directory_stays_a_github_source(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "acme" / "hello").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    assert parse_source("acme/hello") == GitHubSource("acme", "hello", None)


def test_target_override_expands_gnu_to_musl(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NEXO_INSTALL_TARGET", raising=False)
    assert host_candidates("x86_64-unknown-linux-gnu") == (
        "x86_64-unknown-linux-gnu",
        "x86_64-unknown-linux-musl",
    )
    assert host_candidates("aarch64-apple-darwin") == ("aarch64-apple-darwin",)
    assert host_candidates("noarch") == ()
    monkeypatch.setenv("NEXO_INSTALL_TARGET", "x86_64-unknown-linux-musl")
    assert host_candidates(None) == ("x86_64-unknown-linux-musl",)


def test_detection_answers_what_the_platform_module_answers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The host's triples come from ``uname`` and ``confstr`` without loading ``platform``;
    they are the ones its ``machine()`` and ``libc_ver()`` give, and where ``confstr`` says
    nothing, ``libc_ver()`` itself is asked."""
    monkeypatch.delenv("NEXO_INSTALL_TARGET", raising=False)
    machine = platform.machine().lower()
    arch = {"amd64": "x86_64", "x64": "x86_64", "arm64": "aarch64"}.get(machine, machine)
    if sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc":
        assert host_candidates(None) == (
            f"{arch}-unknown-linux-gnu",
            f"{arch}-unknown-linux-musl",
        )
    elif sys.platform == "darwin":
        assert host_candidates(None) == (f"{arch}-apple-darwin",)
    assert hosttriple._libc_name() == platform.libc_ver()[0]

    def silent(name: str) -> str:
        raise ValueError(name)

    monkeypatch.setattr(os, "confstr", silent)
    monkeypatch.setattr(platform, "libc_ver", lambda: ("musl-or-other", "1.2"))
    assert hosttriple._libc_name() == "musl-or-other"


@pytest.mark.parametrize(
    ("target", "candidates"),
    [
        # Any `-gnu` target falls back to its `-musl` twin (SPEC §5: glibc, then musl).
        ("x86_64-pc-windows-gnu", ("x86_64-pc-windows-gnu", "x86_64-pc-windows-musl")),
        ("x-gnu", ("x-gnu", "x-musl")),
        # 32-bit ARM's glibc ABI has its musl twin, as a detected armv7 glibc host asks.
        (
            "armv7-unknown-linux-gnueabihf",
            ("armv7-unknown-linux-gnueabihf", "armv7-unknown-linux-musleabihf"),
        ),
        ("x86_64-pc-windows-msvc", ("x86_64-pc-windows-msvc",)),
        ("x86_64-unknown-linux-musl", ("x86_64-unknown-linux-musl",)),
    ],
)
def test_any_gnu_target_falls_back_to_musl(
    monkeypatch: pytest.MonkeyPatch, target: str, candidates: tuple[str, ...]
) -> None:
    monkeypatch.delenv("NEXO_INSTALL_TARGET", raising=False)
    assert host_candidates(target) == candidates
    assert requested_target(target) == target


def test_the_requested_target(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NEXO_INSTALL_TARGET", "x86_64-pc-windows-gnu")
    assert requested_target(None) == "x86_64-pc-windows-gnu"
    assert requested_target("aarch64-apple-darwin") == "aarch64-apple-darwin"
    assert requested_target("noarch") == "noarch"
    monkeypatch.delenv("NEXO_INSTALL_TARGET")
    assert requested_target(None) == host_candidates(None)[0]


def test_detection_on_this_host(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NEXO_INSTALL_TARGET", raising=False)
    detected = host_candidates(None)
    assert detected, "this test runs on Linux or macOS"
    assert detected[0].endswith(("-linux-gnu", "-linux-musl", "-apple-darwin"))


def test_bad_target_is_a_usage_error() -> None:
    with pytest.raises(NexoError) as caught:
        host_candidates("../../etc")
    assert caught.value.exit_code == 2


@pytest.mark.parametrize("text", ["", "  "])
def test_an_empty_target_is_a_usage_error_not_this_host(
    monkeypatch: pytest.MonkeyPatch, text: str
) -> None:
    """``--target "$T"`` with ``T`` unset asks for no target: a usage error, never this host's
    detected one in its place. An empty ``NEXO_INSTALL_TARGET`` stays "unset"."""
    monkeypatch.delenv("NEXO_INSTALL_TARGET", raising=False)
    with pytest.raises(NexoError) as caught:
        host_candidates(text)
    assert (caught.value.kind, caught.value.exit_code) == ("usage", 2)
    assert "--target is empty" in caught.value.message
    monkeypatch.setenv("NEXO_INSTALL_TARGET", "")
    assert host_candidates(None)


def _release(tag: str, *names: str) -> Release:
    return Release(tag, tuple(ReleaseAsset(name, f"u/{name}", "", 1) for name in names))


def test_choose_asset_prefers_host_then_musl_then_noarch() -> None:
    host = ("x86_64-unknown-linux-gnu", "x86_64-unknown-linux-musl")
    both = _release("v1.0.0", "p-1.0.0-x86_64-unknown-linux-musl.tar.gz", "p-1.0.0-noarch.tar.gz")
    named = ReleaseIdentity("p", "1.0.0", "release asset nexo-plugin.toml")
    assert choose_asset(both, host, named).target == "x86_64-unknown-linux-musl"
    assert (
        choose_asset(
            both, (), release_identity(both, None, manifest_problem=manifest_asset_problem)
        ).target
        == "noarch"
    )
    choice = choose_asset(
        both,
        ("aarch64-apple-darwin",),
        release_identity(both, None, manifest_problem=manifest_asset_problem),
    )
    assert (choice.plugin_id, choice.version, choice.target) == ("p", "1.0.0", "noarch")


def test_asset_not_found_lists_tarballs() -> None:
    release = _release("v1.0.0", "p-1.0.0-aarch64-apple-darwin.tar.gz", "README.md")
    with pytest.raises(NexoError) as caught:
        choose_asset(
            release,
            ("x86_64-unknown-linux-gnu",),
            release_identity(release, None, manifest_problem=manifest_asset_problem),
        )
    assert caught.value.kind == "asset_not_found"
    assert "p-1.0.0-aarch64-apple-darwin.tar.gz" in caught.value.message
    assert caught.value.details["available"] == ["p-1.0.0-aarch64-apple-darwin.tar.gz"]


def test_version_in_tag_reads_real_tag_shapes() -> None:
    assert version_in_tag("v2.0.0-rc.1") == "2.0.0-rc.1"
    assert version_in_tag("2.0.0") == "2.0.0"
    assert version_in_tag("vv1.0.0") == "1.0.0"
    assert version_in_tag("nexo-plugin-google-v0.2.0") == "0.2.0"
    assert version_in_tag("release-7") is None


def test_identity_from_tarball_names_ignores_the_tag() -> None:
    release = _release("vv1.0.0", "p-1.0.0-x86_64-unknown-linux-musl.tar.gz")
    assert release_identity(
        release, None, manifest_problem=manifest_asset_problem
    ) == ReleaseIdentity("p", "1.0.0", "tarball names")
    manifest = ("plugin.toml", manifest_text("q", "0.3.0"))
    shipped = _release(
        "vv1.0.0", "p-1.0.0-x86_64-unknown-linux-musl.tar.gz", "q-0.3.0-noarch.tar.gz"
    )
    assert (
        release_identity(shipped, manifest, manifest_problem=manifest_asset_problem).plugin_id
        == "q"
    )
    # A manifest asset naming what no tarball ships is not believed.
    with pytest.raises(NexoError) as lie:
        release_identity(release, manifest, manifest_problem=manifest_asset_problem)
    assert lie.value.kind == "asset_not_found"
    assert lie.value.details["manifest_version"] == "0.3.0"
    unusable = ("nexo-plugin.toml", manifest_text("p", "1.0.0").replace('"1.0.0"', '"one"'))
    with pytest.raises(NexoError) as caught:
        release_identity(release, unusable, manifest_problem=manifest_asset_problem)
    assert caught.value.kind == "manifest_invalid"
    assert caught.value.details["asset"] == "nexo-plugin.toml"


@pytest.mark.parametrize("tag", ["p-v1.1.0", "v1.0.0", "latest-build"])
def test_several_versions_in_tarball_names_are_never_told_apart_by_the_tag(tag: str) -> None:
    """The tag only selects the release: tarballs of two versions and no manifest asset
    are ambiguous whatever the tag says."""
    names = ("p-1.0.0-noarch.tar.gz", "p-1.1.0-noarch.tar.gz")
    with pytest.raises(NexoError) as caught:
        release_identity(_release(tag, *names), None, manifest_problem=manifest_asset_problem)
    assert caught.value.kind == "asset_not_found"
    assert caught.value.details["versions"] == ["1.0.0", "1.1.0"]
    assert "several versions of p (1.0.0, 1.1.0)" in caught.value.message
    manifest = ("nexo-plugin.toml", manifest_text("p", "1.1.0"))
    chosen = release_identity(
        _release(tag, *names), manifest, manifest_problem=manifest_asset_problem
    )
    assert chosen.version == "1.1.0"


@pytest.mark.parametrize(
    ("name", "parts"),
    [
        ("hello-1.0.0-noarch.tar.gz", ("hello", "1.0.0", "noarch")),
        (
            "p_x-1.0.0-rc.1-x86_64-unknown-linux-gnu.tar.gz",
            ("p_x", "1.0.0-rc.1", "x86_64-unknown-linux-gnu"),
        ),
        ("p-0.2.0-aarch64-apple-darwin.tar.gz", ("p", "0.2.0", "aarch64-apple-darwin")),
        # A two-part triple: Rust's `wasm32-wasip1`, or the `x-musl` an `x-gnu` target falls
        # back to (the daemon's installer finds a tarball by its whole name).
        ("p-1.0.0-rc.1-wasm32-wasip1.tar.gz", ("p", "1.0.0-rc.1", "wasm32-wasip1")),
        ("p-1.0.0-x-musl.tar.gz", ("p", "1.0.0", "x-musl")),
        # ...never where a longer triple or `noarch` reads the name with a CPU in front.
        ("p-1.0.0-rc.1-noarch.tar.gz", ("p", "1.0.0-rc.1", "noarch")),
        ("p-1.0.0-rc-x86_64-apple-darwin.tar.gz", ("p", "1.0.0-rc", "x86_64-apple-darwin")),
        ("Hello-1.0.0-noarch.tar.gz", None),
        ("hello-1.0-noarch.tar.gz", None),
        ("hello.tar.gz", None),
    ],
)
def test_parse_tarball_name(name: str, parts: tuple[str, str, str] | None) -> None:
    assert parse_tarball_name(name) == parts


DIGEST = "a" * 64


def test_verify_checksums() -> None:
    assert parse_digest(f"sha256:{DIGEST}") == DIGEST
    assert parse_digest(f"sha512:{DIGEST}") is None
    assert verify_checksums(DIGEST, "p", sidecar=DIGEST, digest=DIGEST) == ("sidecar", "digest")
    with pytest.raises(NexoError) as missing:
        verify_checksums(DIGEST, "p", sidecar=None, digest=None)
    assert missing.value.kind == "checksum_missing"
    with pytest.raises(NexoError) as mismatch:
        verify_checksums(DIGEST, "p", sidecar=DIGEST, digest="b" * 64)
    assert mismatch.value.kind == "checksum_mismatch"


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("acme/hello@-v1", "the tag may not start with '-'"),
        ("acme/hello@.v1", "the tag may not start with '.'"),
        ("acme/hello@v1..2", "the tag may not contain '..'"),
        (
            "acme/hello@v1//2",
            "the tag may only use letters, digits, '.', '_', '+' and '-', and '/' between them",
        ),
        (
            "acme/hello@v1/",
            "the tag may only use letters, digits, '.', '_', '+' and '-', and '/' between them",
        ),
        ("acme/hello@google/.v1", "no part of the tag may start with '.'"),
    ],
)
def test_a_refused_tag_is_told_what_is_wrong_with_it(text: str, why: str) -> None:
    """A tag of allowed characters is not told it uses forbidden ones: the message names the
    rule it breaks."""
    with pytest.raises(NexoError) as caught:
        parse_source(text)
    assert caught.value.kind == "source_invalid"
    assert f"invalid source {text!r}: {why};" in caught.value.message
