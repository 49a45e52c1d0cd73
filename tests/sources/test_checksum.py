"""``.sha256`` sidecars read as the daemon's installer reads them, and every branch of
``sources/checksum.py`` pinned.

The daemon (lordmacu/nexo-rs ``crates/ext-installer/src/lib.rs``, ``download_and_verify``)
fetches the sidecar with reqwest's ``Response::text()`` (encoding_rs ``Encoding::decode``: a
byte-order mark picks the encoding and is dropped, otherwise lossy UTF-8), then takes
``.split_whitespace().next()`` (Rust's ``char::is_whitespace``: Unicode White_Space, so tab and
U+00A0 split too), lower-cases it and wants 64 hex digits. A wrong first digest is a mismatch
even when a later line names the tarball with the right one; a refused download leaves nothing
in the cache or the install root."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.cli import clean_env, nexo
from support.tarballs import asset_name, release_assets, sha256_hex, write_plugin

from nexo_pkg.core.errors import NexoError
from nexo_pkg.install.pipeline import install
from nexo_pkg.sources.checksum import (
    parse_digest,
    parse_sidecar,
    sidecar_text,
    verify_checksums,
)
from nexo_pkg.trust.verifiers.checksums import listed_digests

from .conftest import InstallEnv, assert_refused

NAME = asset_name("hello", "1.0.0")
OTHER = "b" * 64
DIGEST = "a" * 64


def _refused(env: InstallEnv, source: str) -> NexoError:
    error = assert_refused(env, source, "checksum_mismatch")
    # Nothing kept in the blob cache either: the refused download is deleted.
    blobs = env.home / "cache" / "blobs" / "sha256"
    assert not blobs.exists() or list(blobs.iterdir()) == []
    return error


def test_a_wrong_first_digest_is_a_mismatch_whatever_follows(install_env: InstallEnv) -> None:
    assets = release_assets("hello", "1.0.0")
    real = sha256_hex(assets[NAME])
    assets[NAME + ".sha256"] = f"{OTHER}  other.tar.gz\n{real}  {NAME}\n".encode()
    install_env.server.publish("acme", "hello", "v1.0.0", assets)
    error = _refused(install_env, "acme/hello")
    assert OTHER in error.message
    assert error.details["checked_against"] == "sidecar"


def test_the_right_first_digest_is_what_counts(install_env: InstallEnv) -> None:
    assets = release_assets("hello", "1.0.0")
    real = sha256_hex(assets[NAME])
    # A UTF-8 BOM, a tab and a no-break space around it, a later line for another file.
    sidecar = f"\ufeff\t{real}\u00a0{NAME}\r\n{OTHER}  other.tar.gz\r\n"
    assets[NAME + ".sha256"] = sidecar.encode()
    install_env.server.publish("acme", "hello", "v1.0.0", assets)
    result = install("acme/hello", install_env.make_options())
    assert result.path == install_env.dest / "hello-1.0.0"


@pytest.mark.parametrize("first", ["wrong", "right"])
def test_beside_a_local_tarball_the_same_rule(
    install_env: InstallEnv, tmp_path: Path, first: str
) -> None:
    tarball = write_plugin(tmp_path / "dist", "hello", "1.0.0")
    real = sha256_hex(tarball.read_bytes())
    lines = [f"{real}  {NAME}", f"{OTHER}  other.tar.gz"]
    if first == "wrong":
        lines = [f"{OTHER}  {NAME}", f"{real}  other.tar.gz"]
    tarball.with_name(NAME + ".sha256").write_text("\n".join(lines) + "\n")
    if first == "wrong":
        error = _refused(install_env, str(tarball))
        assert "beside it" in error.message
    else:
        assert install(str(tarball), install_env.make_options()).path.name == "hello-1.0.0"


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (DIGEST.encode(), DIGEST),
        (DIGEST.upper().encode(), DIGEST),  # lower-cased, as `to_lowercase`
        (f"{DIGEST}  {NAME}\n".encode(), DIGEST),
        (f"{DIGEST} *{NAME}".encode(), DIGEST),
        (f"{DIGEST}  dist/{NAME}".encode(), DIGEST),  # the name is never read
        (f"{DIGEST}  other.tar.gz\n{OTHER}  another.tar.gz\n".encode(), DIGEST),
        (f"{DIGEST}  {NAME}\n{DIGEST.upper()} *dist/{NAME}\n\n".encode(), DIGEST),  # agree
        (f"{DIGEST}\r\n".encode(), DIGEST),  # CRLF
        (f"\n\n  \t{DIGEST}".encode(), DIGEST),  # leading whitespace and blank lines
        (f"{DIGEST}\t{NAME}".encode(), DIGEST),  # tab
        (f"{DIGEST}\u00a0{NAME}".encode(), DIGEST),  # no-break space (White_Space)
        (f"\u3000{DIGEST}\u2028".encode(), DIGEST),  # ideographic space, line separator
        (f"{DIGEST}\x0b{NAME}".encode(), DIGEST),  # vertical tab
        (f"{DIGEST}\x85x".encode(), DIGEST),  # NEL
        (b"\xef\xbb\xbf" + DIGEST.encode(), DIGEST),  # UTF-8 BOM dropped
        (b"\xff\xfe" + f"{DIGEST}  {NAME}".encode("utf-16-le"), DIGEST),  # UTF-16LE by its BOM
        (b"\xfe\xff" + f"{DIGEST}\n".encode("utf-16-be"), DIGEST),  # UTF-16BE by its BOM
        (DIGEST.encode() + b"  \xff\xfe-not-utf8", DIGEST),  # lossy after the token
    ],
)
def test_sidecar_forms(raw: bytes, expected: str) -> None:
    assert parse_sidecar(raw, NAME) == expected


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        (b"", "nothing"),
        (b" \t\r\n", "nothing"),
        (b"nothex  p.tar.gz", "nothex"),
        (b"abc", "abc"),
        (("a" * 63).encode(), "a" * 63),
        (("a" * 65).encode(), "a" * 65),
        (("a" * 63 + "g").encode(), "a" * 63 + "g"),
        # U+001C..U+001F are whitespace to Python's str.split but not to Rust: no split.
        (f"{DIGEST}\x1c{NAME}".encode(), f"{DIGEST}\\u001c{NAME}"[:80]),
        # A UTF-16 sidecar without a BOM is read as UTF-8: NULs glued to the digits.
        (DIGEST.encode("utf-16-le"), "a\\u0000" * 5),
        # A BOM only at the start counts: a second one is text.
        (b"\xef\xbb\xbf\xef\xbb\xbf" + DIGEST.encode(), "\ufeff" + "a" * 64),
        (b"\xff" + DIGEST.encode(), "\ufffd" + "a" * 64),  # not UTF-8: replaced, refused
    ],
)
def test_a_first_word_that_is_no_digest_is_a_mismatch(raw: bytes, shown: str) -> None:
    with pytest.raises(NexoError) as caught:
        parse_sidecar(raw, NAME)
    assert caught.value.kind == "checksum_mismatch"
    assert caught.value.message.startswith(f"{NAME}.sha256 does not start with a sha256 checksum")
    assert f"its first word is {shown}" in caught.value.message


@pytest.mark.parametrize(
    "later",
    [
        f"{OTHER}  {NAME}",  # a sha256sum line naming the asset
        f"{OTHER} *{NAME}",  # binary mode
        f"{OTHER}  dist/{NAME}",  # the asset under a directory
        OTHER,  # a bare digest
        f"{OTHER.upper()}  {NAME}\r",  # upper case, CRLF
    ],
)
def test_lines_for_the_asset_that_disagree_are_a_mismatch(
    install_env: InstallEnv, later: str
) -> None:
    # The first digest is the download's own, so the daemon's first-word reading alone would
    # accept it; `sha256sum -c` fails the file, and a sidecar that contradicts itself vouches
    # for nothing.
    assets = release_assets("hello", "1.0.0")
    real = sha256_hex(assets[NAME])
    assets[NAME + ".sha256"] = f"{real}  {NAME}\n{later}\n".encode()
    install_env.server.publish("acme", "hello", "v1.0.0", assets)
    error = _refused(install_env, "acme/hello")
    assert "disagree" in error.message
    assert error.details["sidecar_digests"] == [real, OTHER]


def test_disagreeing_lines_beside_a_local_tarball_are_refused_by_the_cli(
    tmp_path: Path,
) -> None:
    tarball = write_plugin(tmp_path / "dist", "hello", "1.0.0")
    real = sha256_hex(tarball.read_bytes())
    tarball.with_name(NAME + ".sha256").write_text(f"{real}  {NAME}\n{OTHER}  {NAME}\n")
    dest = tmp_path / "plugins"
    result = nexo(
        "plugin", "install", tarball, "--dest", dest, "--yes", "--json",
        env=clean_env(NEXO_HOME=str(tmp_path / "home")),
    )  # fmt: skip
    assert result.code == 1, result.stderr
    assert result.document["kind"] == "checksum_mismatch"
    assert result.error_line.startswith(f"error: {NAME}.sha256 holds checksums for {NAME}")
    assert not dest.exists()


def test_a_local_sidecar_over_the_cap_is_refused_not_cut_short(tmp_path: Path) -> None:
    """A contradicting line after 64 KiB of blank lines went unread (the file was cut at the
    cap), where ``sha256sum -c`` fails it and a release's sidecar that size is refused."""
    tarball = write_plugin(tmp_path / "dist", "hello", "1.0.0")
    real = sha256_hex(tarball.read_bytes())
    padding = "\n" * (64 * 1024)
    tarball.with_name(NAME + ".sha256").write_text(f"{real}  {NAME}\n{padding}{OTHER}  {NAME}\n")
    dest = tmp_path / "plugins"
    result = nexo(
        "plugin", "install", tarball, "--dest", dest, "--yes", "--json",
        env=clean_env(NEXO_HOME=str(tmp_path / "home")),
    )  # fmt: skip
    assert result.code == 1, result.stderr
    assert result.document["kind"] == "checksum_mismatch"
    assert result.error_line.startswith(f"error: {NAME}.sha256 is larger than 65536 bytes")
    assert len(result.stderr.splitlines()) == 1
    assert not dest.exists()


def test_lines_for_other_files_or_that_agree_are_not_a_contradiction() -> None:
    raw = f"{DIGEST}  {NAME}\n{OTHER}  other.tar.gz\n{DIGEST}\nnot a line\n{OTHER}x  {NAME}\n"
    assert parse_sidecar(raw.encode(), NAME) == DIGEST


def test_a_long_first_word_is_shown_cut() -> None:
    with pytest.raises(NexoError) as caught:
        parse_sidecar(b"z" * 500, NAME)
    assert f"its first word is {'z' * 80}, not" in caught.value.message
    assert caught.value.details == {"sidecar_token": "z" * 80}


def test_sidecar_text_decodes_as_the_daemons_client() -> None:
    assert sidecar_text(b"\xef\xbb\xbfab") == "ab"
    assert sidecar_text(b"\xff\xfea\x00") == "a"
    assert sidecar_text(b"\xfe\xff\x00a") == "a"
    assert sidecar_text(b"a\xffb") == "a\ufffdb"
    assert sidecar_text(b"") == ""


def test_parse_digest() -> None:
    assert parse_digest(f"sha256:{DIGEST}") == DIGEST
    assert parse_digest(f"SHA256:{DIGEST.upper()}") == DIGEST
    assert parse_digest(f"sha512:{DIGEST}") is None
    assert parse_digest(f"sha256:{DIGEST}0") is None
    assert parse_digest(f"sha256:{DIGEST[:-1]}") is None
    assert parse_digest(DIGEST) is None
    assert parse_digest("") is None
    assert parse_digest(None) is None


def test_verify_checksums_checks_every_value_present() -> None:
    assert verify_checksums(DIGEST, "p", sidecar=DIGEST, digest=DIGEST) == ("sidecar", "digest")
    assert verify_checksums(DIGEST, "p", sidecar=None, digest=DIGEST) == ("digest",)
    assert verify_checksums(DIGEST, "p", sidecar=DIGEST, digest=None) == ("sidecar",)
    local = Path("/srv/dist")
    assert verify_checksums(DIGEST, "p", sidecar=DIGEST, digest=None, local_dir=local) == (
        "sidecar",
    )


@pytest.mark.parametrize(
    ("sidecar", "digest", "local", "source", "label"),
    [
        (OTHER, DIGEST, False, "sidecar", "p.sha256 says"),
        (DIGEST, OTHER, False, "digest", "the release asset digest says"),
        (OTHER, None, True, "sidecar", "p.sha256 beside it says"),
        (None, OTHER, False, "digest", "the release asset digest says"),
        (OTHER, OTHER, False, "sidecar", "p.sha256 says"),  # the first one checked is named
        # "beside it" belongs to a sidecar only, even when a directory is given.
        (None, OTHER, True, "digest", "the release asset digest says"),
    ],
)
def test_verify_checksums_mismatch(
    sidecar: str | None, digest: str | None, local: bool, source: str, label: str
) -> None:
    with pytest.raises(NexoError) as caught:
        verify_checksums(
            DIGEST, "p", sidecar=sidecar, digest=digest, local_dir=Path("/d") if local else None
        )
    assert caught.value.kind == "checksum_mismatch"
    # A tarball on disk was not downloaded: the message says so.
    hashed = "the tarball" if local else "the download"
    assert caught.value.message == f"checksum mismatch for p: {label} {OTHER}, {hashed} is {DIGEST}"
    assert caught.value.details == {"expected": OTHER, "actual": DIGEST, "checked_against": source}


def test_verify_checksums_missing() -> None:
    with pytest.raises(NexoError) as release:
        verify_checksums(DIGEST, "p", sidecar=None, digest=None)
    assert release.value.kind == "checksum_missing"
    assert "the release has neither p.sha256 nor an asset digest" in release.value.message
    with pytest.raises(NexoError) as local:
        verify_checksums(DIGEST, "p", sidecar=None, digest=None, local_dir=Path("/srv/dist"))
    assert local.value.kind == "checksum_missing"
    assert "there is no p.sha256 beside it in /srv/dist" in local.value.message


def test_a_manifest_asset_with_a_bom_is_read(install_env: InstallEnv) -> None:
    """The daemon's installer reads the manifest asset with `std::str::from_utf8` and then
    `toml::from_str`, which drops a leading BOM (toml_edit src/parser/document.rs at
    toml-v0.8.23)."""
    assets = release_assets("hello", "1.0.0")
    assets["nexo-plugin.toml"] = b"\xef\xbb\xbf" + assets["nexo-plugin.toml"]
    install_env.server.publish("acme", "hello", "v1.0.0", assets)
    result = install("acme/hello", install_env.make_options())
    assert result.path == install_env.dest / "hello-1.0.0"


def test_a_manifest_asset_that_is_not_utf8_is_refused(install_env: InstallEnv) -> None:
    """`std::str::from_utf8` fails: the daemon refuses the release ("manifest is not valid
    UTF-8", ext-installer src/lib.rs); a lossy decode would have let a replaced byte through
    in a string value."""
    assets = release_assets("hello", "1.0.0")
    text = assets["nexo-plugin.toml"].decode()
    assets["nexo-plugin.toml"] = text.replace('id = "hello"', 'id = "hello"\n# caf\xe9').encode(
        "latin-1"
    )
    install_env.server.publish("acme", "hello", "v1.0.0", assets)
    error = assert_refused(install_env, "acme/hello", "manifest_invalid")
    assert error.message.startswith(
        "release v1.0.0: its asset nexo-plugin.toml is not a manifest the daemon can read: it "
        "is not valid UTF-8 (byte "
    )
    assert error.details == {"tag": "v1.0.0", "asset": "nexo-plugin.toml"}


@pytest.mark.parametrize("checksums_file", [False, True], ids=["alone", "checksums.txt beside"])
@pytest.mark.parametrize("shape", ["fifo", "directory", "dangling link"])
def test_a_sidecar_that_is_not_a_regular_file_is_said_to_be_one(
    install_env: InstallEnv, tmp_path: Path, shape: str, checksums_file: bool
) -> None:
    """Neither read (a FIFO is never waited on) nor called absent: the message says what is
    in the sidecar's place. A checksums file beside the tarball that lists it does not stand
    in for it: that fallback is for a tarball with no sidecar, as a release's checksums file
    is consulted only when the release has no ``.sha256`` asset."""
    tarball = write_plugin(tmp_path / "dist", "hello", "1.0.0", sidecar=False)
    sidecar = tarball.with_name(tarball.name + ".sha256")
    if checksums_file:
        listed = f"{sha256_hex(tarball.read_bytes())}  {tarball.name}\n"
        tarball.with_name("checksums.txt").write_text(listed, encoding="utf-8")
    if shape == "fifo":
        os.mkfifo(sidecar)
    elif shape == "directory":
        sidecar.mkdir()
    else:
        sidecar.symlink_to(tmp_path / "nowhere")
    error = assert_refused(install_env, str(tarball), "checksum_missing")
    assert error.message == (
        f"no checksum for {tarball.name}: {sidecar.name} beside it in {tarball.parent} is not a "
        "regular file, so the tarball cannot be verified (`nexo plugin pack` writes one next to "
        "the tarball; copy both)"
    )


def test_a_missing_sidecar_is_said_to_be_missing(install_env: InstallEnv, tmp_path: Path) -> None:
    tarball = write_plugin(tmp_path / "dist", "hello", "1.0.0", sidecar=False)
    error = assert_refused(install_env, str(tarball), "checksum_missing")
    assert f"there is no {tarball.name}.sha256 beside it in {tarball.parent}" in error.message


@pytest.mark.parametrize("digest", ["sha512:" + "ab" * 64, "sha256:xyz", "sha256:" + "0" * 63])
def test_a_listed_digest_that_is_no_sha256_is_named_when_nothing_else_vouches(
    install_env: InstallEnv, digest: str
) -> None:
    assets = release_assets("hello", "1.0.0", sidecar=False)
    install_env.server.publish("acme", "hello", "v1.0.0", assets, digests={NAME: digest})
    error = assert_refused(install_env, "acme/hello", "checksum_missing")
    shown = digest if len(digest) <= 80 else digest[:80] + "…"
    assert error.message == (
        f"no checksum for {NAME}: the release has no {NAME}.sha256, and its asset digest "
        f"'{shown}' is not a sha256 digest (sha256:<64 hex digits>), so the download cannot "
        "be verified"
    )


def test_no_sidecar_and_no_digest_is_said_so(install_env: InstallEnv) -> None:
    assets = release_assets("hello", "1.0.0", sidecar=False)
    install_env.server.publish("acme", "hello", "v1.0.0", assets)
    error = assert_refused(install_env, "acme/hello", "checksum_missing")
    assert f"the release has neither {NAME}.sha256 nor an asset digest" in error.message


@pytest.mark.parametrize("listed", ["right", "wrong"])
def test_a_checksums_line_with_a_long_run_of_blanks_is_read_at_once(
    tmp_path: Path, listed: str
) -> None:
    """A checksums file beside a tarball (or a release's) is read line by line within its
    1 MiB cap; a line whose name holds a long run of blanks before more text (here ~1 MiB)
    is one more line, read in linear time, never a regular expression backtracking for hours.
    The line that lists the tarball still decides."""
    tarball = write_plugin(tmp_path / "dist", "hello", "1.0.0", sidecar=False)
    digest = sha256_hex(tarball.read_bytes()) if listed == "right" else OTHER
    hostile = "c" * 64 + "  x" + " \t" * 500_000 + "y"
    tarball.with_name("checksums.txt").write_text(
        f"{hostile}\n{digest}  {NAME}\n", encoding="utf-8", newline="\n"
    )
    dest = tmp_path / "root"
    result = nexo(
        "plugin", "install", tarball, "--dest", dest, "--yes", "--json",
        env=clean_env(NEXO_HOME=str(tmp_path / "home")), timeout=60,
    )  # fmt: skip
    if listed == "right":
        assert result.code == 0, result.stderr
        assert json.loads(result.stdout)["path"] == str(dest / "hello-1.0.0")
    else:
        assert result.code == 1, result.stderr
        document = json.loads(result.stdout)
        assert document["kind"] == "checksum_mismatch"
        assert not dest.exists() or list(dest.iterdir()) == []


@settings(max_examples=300, deadline=None)
@given(
    blanks=st.text(alphabet=" \t", max_size=4),
    star=st.booleans(),
    name=st.text(alphabet=st.sampled_from(" \t*./\r\x85\u2028ab-"), max_size=12),
    tail=st.text(alphabet=" \t", max_size=4),
)
def test_a_checksums_line_names_what_sha256sum_reads(
    blanks: str, star: bool, name: str, tail: str
) -> None:
    """``<hex>``, blanks, an optional ``*`` and the name (trailing blanks dropped): the line
    lists the asset exactly when that name's last ``/``-separated part is the asset's, the
    name split as the backtracking pattern it replaced split it (on lines short enough for
    that one to end)."""
    import re

    old = re.compile(r"^([0-9a-fA-F]{64})[ \t]+\*?(.+?)[ \t]*$")
    line = "A" * 64 + blanks + ("*" if star else "") + name + tail
    match = old.match(line.removesuffix("\r"))
    for asset in ("a.b", "a b", "*a", "a.b\x85"):
        named = match is not None and match.group(2).rsplit("/", 1)[-1] == asset
        assert listed_digests(line + "\n", asset) == ({"a" * 64} if named else set()), line
