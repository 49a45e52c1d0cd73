"""The line forms of a release's checksums file (``checksums.txt``, ``SHA256SUMS``), read as
``sha256sum -c`` reads them.

coreutils (github:coreutils/coreutils, ``src/cksum.c``, which took in ``src/digest.c``):
``split_3`` reads a line either as ``<hex>  <name>`` / ``<hex> *<name>`` or, when it starts
(after blanks) with the program's tag (``SHA256`` for ``sha256sum``) followed by one optional
space and ``(``, as the tagged form ``bsd_split_3`` splits: the name runs to the line's last
``)``, then blanks, ``=``, blanks and the digest, which ends the line. That is what
``sha256sum --tag``, BSD ``sha256`` and ``openssl dgst -sha256`` (``SHA256(name)= hex``)
write. A name under a directory (``dist/name``, as ``sha256sum dist/*`` writes) lists the
file by its last path component. Each release here is served by the loopback GitHub stand-in
with no ``.sha256`` sidecar and no asset digest, so the checksums file alone vouches for the
tarball."""

from __future__ import annotations

import pytest
from support.tarballs import asset_name, release_assets, sha256_hex

from nexo_pkg.install.pipeline import install
from nexo_pkg.trust.verifiers.checksums import listed_digests, names_asset

from .conftest import InstallEnv, assert_refused

NAME = asset_name("hello", "1.0.0")
OTHER = "b" * 64


def _publish(env: InstallEnv, lines: str) -> bytes:
    """Publish acme/hello v1.0.0 with ``checksums.txt`` holding ``lines`` (``{hex}`` is the
    tarball's sha256, ``{name}`` its name); return the tarball."""
    assets = release_assets("hello", "1.0.0", sidecar=False)
    tarball = assets[NAME]
    text = lines.format(hex=sha256_hex(tarball), HEX=sha256_hex(tarball).upper(), name=NAME)
    assets["checksums.txt"] = text.encode()
    env.server.publish("acme", "hello", "v1.0.0", assets)
    return tarball


@pytest.mark.parametrize(
    "lines",
    [
        "SHA256 ({name}) = {hex}\n",
        "SHA256 ({name}) = {HEX}\r\n",
        "SHA256({name})= {hex}\n",
        "  SHA256 ({name})\t=\t{hex}\n",
        "SHA512 ({name}) = " + "c" * 128 + "\nSHA256 ({name}) = {hex}\n",
        f"{OTHER}  dist/other.tar.gz\n{{hex}}  dist/{{name}}\n",
        "{hex} *dist/{name}\n",
        "{hex}  ./{name}\n",
        "{hex}  /home/ci/dist/{name}\n",
        "{hex}  {name}\nSHA256 (dist/{name}) = {hex}\n",
    ],
    ids=[
        "tag",
        "tag-capitals-crlf",
        "openssl",
        "tag-blanks",
        "tag-after-sha512",
        "dist",
        "dist-binary",
        "dot-slash",
        "absolute",
        "both-forms-agree",
    ],
)
def test_a_checksums_file_in_each_form_vouches_for_the_tarball(
    install_env: InstallEnv, lines: str
) -> None:
    _publish(install_env, lines)
    result = install("acme/hello", install_env.make_options())
    assert result.plan.plugin_id == "hello"
    assert result.plan.checksums == ("checksums-file",)
    assert (install_env.dest / "hello-1.0.0" / "bin" / "hello").is_file()


@pytest.mark.parametrize(
    "lines",
    [f"SHA256 ({{name}}) = {OTHER}\n", f"SHA256({{name}})= {OTHER}\n", f"{OTHER}  dist/{{name}}\n"],
    ids=["tag", "openssl", "dist"],
)
def test_a_wrong_hash_in_those_forms_is_a_mismatch(install_env: InstallEnv, lines: str) -> None:
    """Before, these lines were not read at all (``checksum_missing``): now the tarball is
    checked against them, and the download that does not match is refused and deleted."""
    tarball = _publish(install_env, lines)
    error = assert_refused(install_env, "acme/hello", "checksum_mismatch")
    assert error.details == {
        "expected": OTHER,
        "actual": sha256_hex(tarball),
        "checked_against": "checksums-file",
    }
    assert f"checksums.txt says {OTHER}" in error.message


@pytest.mark.parametrize(
    "lines",
    [
        f"{{hex}}  {{name}}\n{OTHER}  dist/{{name}}\n",
        f"{{hex}}  {{name}}\nSHA256 ({{name}}) = {OTHER}\n",
        f"{{hex}}  linux/{{name}}\n{OTHER}  ../{{name}}\n",
    ],
    ids=["plain-and-dist", "plain-and-tag", "two-directories"],
)
def test_two_lines_for_the_tarball_with_different_hashes_are_refused(
    install_env: InstallEnv, lines: str
) -> None:
    """Ambiguous: the file lists the tarball's name twice with two hashes, so it vouches for
    neither, even though one of them is the download's (before, the second line was not read
    and the install went through)."""
    tarball = _publish(install_env, lines)
    error = assert_refused(install_env, "acme/hello", "checksum_mismatch")
    assert error.message == (
        f"checksum mismatch for {NAME}: checksums.txt lists it with different hashes "
        f"({', '.join(sorted([OTHER, sha256_hex(tarball)]))}), so it vouches for neither"
    )


@pytest.mark.parametrize(
    "lines",
    [
        "SHA512 ({name}) = {hex}\n",
        "SHA1 ({name}) = {hex}\n",
        "SHA256 ({name}) = {hex} \n",
        "{hex}  {name}/\n",
        "{hex}  dist/{name}.sig\n",
    ],
    ids=["sha512-tag", "sha1-tag", "trailing-blank", "directory", "other-file"],
)
def test_lines_that_do_not_list_a_sha256_of_the_tarball(
    install_env: InstallEnv, lines: str
) -> None:
    """Another algorithm's tag holds no sha256 even with 64 hex digits; a tagged digest must
    end the line; a path whose last part is not the name does not
    name the tarball. The release then has no checksum for it."""
    _publish(install_env, lines)
    error = assert_refused(install_env, "acme/hello", "checksum_missing")
    assert f"no checksum for {NAME}" in error.message


@pytest.mark.parametrize(
    ("listed", "named"),
    [
        ("a.tgz", True),
        ("./a.tgz", True),
        ("dist/a.tgz", True),
        (".//a.tgz", True),
        ("../a.tgz", True),
        ("/abs/dist/a.tgz", True),
        ("dist/../a.tgz", True),
        ("a.tgz/..", False),
        ("a.tgz/.", False),
        ("a.tgz/", False),
        ("dist/a.tgz.sha256", False),
        ("dist\\a.tgz", False),
        ("", False),
    ],
)
def test_a_path_names_the_asset_by_its_last_component_only(listed: str, named: bool) -> None:
    """No path is normalised, ``..`` and absolute ones included: the last ``/``-separated
    component is the asset's name exactly, or the line is about another file."""
    assert names_asset(listed, "a.tgz") is named
    line = f"{'d' * 64}  {listed}\n"
    assert listed_digests(line, "a.tgz") == ({"d" * 64} if named else set())
    tagged = f"SHA256 ({listed}) = {'E' * 64}\n"
    assert listed_digests(tagged, "a.tgz") == ({"e" * 64} if named else set())


def test_a_tagged_name_runs_to_the_last_parenthesis() -> None:
    """``bsd_split_3`` looks for the name's end from the end of the line: a name holding
    ``) = <hex>`` is still one name."""
    inner = f"x) = {'1' * 64}"
    line = f"SHA256 ({inner}) = {'2' * 64}\n"
    assert listed_digests(line, inner) == {"2" * 64}
    assert listed_digests(line, "x") == set()
