"""A malformed PAX sparse map is refused in the product's words, naming the member: tarfile
reads the map with ``int()`` and tuple unpacking, and its bare ``ValueError`` used to be the
message (``not enough values to unpack (expected 2, got 1)``)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from support.cli import clean_env, nexo
from support.tarballs import asset_name, plugin_tarball, sidecar_line

from .archives import (
    ASSET_NAME,
    _baseline_tar_without_end,
    _end_of_archive,
    _gzip,
    _info,
    _pax_header_block,
    _pax_sparse,
    _raw_member,
    sha256_sidecar,
)
from .harness import diff, snapshot

MIB = 1024 * 1024


def _pax_sparse_01(sparse_map: str) -> bytes:
    """A PAX 0.1 sparse member: the map is the ``GNU.sparse.map`` record itself."""
    pax = _pax_header_block(
        {
            "GNU.sparse.map": sparse_map,
            "GNU.sparse.name": "lib/sparse-01.bin",
            "GNU.sparse.size": "4",
        }
    )
    member = _raw_member(_info("lib/GNUSparseFile.0/sparse-01.bin", size=4), b"abcd")
    return _gzip(_baseline_tar_without_end() + pax + member + _end_of_archive())


CASES: dict[str, tuple[Callable[[], bytes], str]] = {
    # 1.0: the map in the member's data announces 10 regions and gives one number.
    "1.0-cut-short": (lambda: _pax_sparse(b"10\n0\n", b"", 1024 * MIB), "lib/sparse-pax.bin"),
    # 1.0: a region's offset is not a number.
    "1.0-not-a-number": (lambda: _pax_sparse(b"1\nx\n4\n", b"abcd", 1024), "lib/sparse-pax.bin"),
    # 0.1: the map record holds what is not a number.
    "0.1-not-a-number": (lambda: _pax_sparse_01("0,x"), "lib/sparse-01.bin"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_malformed_sparse_map_is_refused_naming_the_member(case: str, tmp_path: Path) -> None:
    build, member = CASES[case]
    home = tmp_path / "home"
    dest = tmp_path / "dest"
    # A root that already holds a plugin, installed by the CLI: the refusal must keep it.
    keeper = plugin_tarball("keeper", "1.0.0")
    kept = tmp_path / "keeper" / asset_name("keeper", "1.0.0")
    kept.parent.mkdir()
    kept.write_bytes(keeper)
    (kept.parent / f"{kept.name}.sha256").write_text(sidecar_line(keeper, kept.name))
    env = clean_env(NEXO_HOME=str(home))
    installed = nexo("plugin", "install", str(kept), "--dest", str(dest), "--yes", env=env)
    assert installed.exit_code == 0, installed.stderr
    incoming = tmp_path / "incoming"
    incoming.mkdir()
    data = build()
    tarball = incoming / ASSET_NAME
    tarball.write_bytes(data)
    (incoming / f"{ASSET_NAME}.sha256").write_text(sha256_sidecar(data))
    before = snapshot(tmp_path)
    message = (
        f"not a valid .tar.gz archive: member '{member}' has a malformed sparse map (its list "
        "of data regions is cut short or holds what is not a number)"
    )

    text = nexo("plugin", "install", str(tarball), "--dest", str(dest), "--yes", env=env)
    assert text.exit_code == 1, (text.stdout, text.stderr)
    assert text.stderr.splitlines() == [f"error: {message} [archive_invalid]"]
    as_json = nexo(
        "plugin", "install", str(tarball), "--dest", str(dest), "--yes", "--json", env=env
    )
    assert as_json.exit_code == 1, (as_json.stdout, as_json.stderr)
    assert (as_json.document["kind"], as_json.document["error"]) == ("archive_invalid", message)
    assert not any(diff(before, snapshot(tmp_path)).values())
