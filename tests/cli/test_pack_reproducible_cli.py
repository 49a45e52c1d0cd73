"""Issue 3's reproducibility promise through the console script, with the real `nexoai`
vendored by pip: the scaffold packed in two trees made in opposite orders, with other mtimes
and modes, under umask 022 and 077, from other paths and working directories, gives the same
tarball, SBOM and `.sha256`, named as SPEC §3 says; `--source-date-epoch` wins over
`SOURCE_DATE_EPOCH`."""

from __future__ import annotations

import hashlib
import os
import tarfile
from pathlib import Path
from typing import Any

from support.cli import clean_env, nexo

EPOCH = 1_700_000_000
NAMES = [
    "demo-0.1.0-noarch.cdx.json",
    "demo-0.1.0-noarch.tar.gz",
    "demo-0.1.0-noarch.tar.gz.sha256",
    "nexo-plugin.toml",
]


def _under_umask(mask: int) -> list[str]:
    # pip vendors under the pack's umask: its files and directories get the umask's modes.
    return ["sh", "-c", f'umask {mask:03o} && exec "$@"', "sh"]


def _copy_reversed(source: Path, target: Path, mtime: int) -> None:
    """``source`` copied file by file in reverse name order, private modes (as umask 077
    writes them) and another mtime."""
    files = sorted(path for path in source.rglob("*") if path.is_file())
    for path in reversed(files):
        copy = target / path.relative_to(source)
        copy.parent.mkdir(parents=True, exist_ok=True)
        copy.write_bytes(path.read_bytes())
        copy.chmod(0o700 if os.access(path, os.X_OK) else 0o600)
    for path in [target, *target.rglob("*")]:
        if path.is_dir():
            path.chmod(0o700)
        os.utime(path, (mtime, mtime))


def _pack(
    project: Path, out: Path, cwd: Path, mask: int, env: dict[str, str], *extra: str
) -> dict[str, Any]:
    cwd.mkdir(parents=True, exist_ok=True)
    (cwd / "tmp").mkdir(exist_ok=True)
    result = nexo(
        "plugin", "pack", project, "--out", out, "--json", *extra,
        env={**env, "TMPDIR": str(cwd / "tmp"), "HOME": str(cwd)}, cwd=cwd,
        prefix=_under_umask(mask), timeout=300,
    )  # fmt: skip
    assert result.code == 0, result.stdout + result.stderr
    return result.document


def test_the_scaffold_packs_the_same_bytes_across_trees_umasks_and_mtimes(
    tmp_path: Path, offline_pip_env: dict[str, str]
) -> None:
    env = clean_env(
        **offline_pip_env, SOURCE_DATE_EPOCH=str(EPOCH), GIT_CEILING_DIRECTORIES=str(tmp_path)
    )
    first = tmp_path / "a" / "demo"
    created = nexo("plugin", "new", "demo", "--dest", first, "-q",
                   "--nexo-pkg-spec", "nexo-pkg==0.1.0", env=env, cwd=tmp_path)  # fmt: skip
    assert created.code == 0, created.stderr
    for path in [first, *first.rglob("*")]:
        os.utime(path, (1_000_000_000, 1_000_000_000))
    second = tmp_path / "elsewhere" / "deeper" / "demo"
    _copy_reversed(first, second, 2_000_000_000)
    assert (first / "src" / "main.py").stat().st_mode != (second / "src" / "main.py").stat().st_mode

    one = _pack(first, first / "dist", first, 0o022, env)
    two = _pack(second, tmp_path / "out2", tmp_path / "run2", 0o077, env)

    dist_one, dist_two = first / "dist", tmp_path / "out2"
    assert sorted(path.name for path in dist_one.iterdir()) == NAMES
    assert sorted(path.name for path in dist_two.iterdir()) == NAMES
    for name in NAMES:
        assert (dist_one / name).read_bytes() == (dist_two / name).read_bytes(), name
    tarball = dist_one / "demo-0.1.0-noarch.tar.gz"
    digest = hashlib.sha256(tarball.read_bytes()).hexdigest()
    assert (dist_one / f"{tarball.name}.sha256").read_text() == f"{digest}  {tarball.name}\n"
    assert [asset["sha256"] for asset in one["assets"]] == [
        asset["sha256"] for asset in two["assets"]
    ]
    assert one["assets"][0]["sha256"] == digest

    with tarfile.open(tarball) as archive:
        members = archive.getmembers()
    assert "lib/nexo_plugin_sdk/adapter.py" in {member.name for member in members}
    for member in members:
        assert (member.uid, member.gid, member.uname, member.gname) == (0, 0, "", ""), member.name
        assert member.mtime == EPOCH, member.name
        expected = 0o755 if member.isdir() or member.name == "bin/demo" else 0o644
        assert member.mode == expected, (member.name, oct(member.mode))

    # The flag wins over the variable, and a time other than the variable's changes the bytes.
    flagged = _pack(second, tmp_path / "out3", tmp_path / "run3", 0o077, env,
                    "--source-date-epoch", "1600000000")  # fmt: skip
    assert flagged["source_date_epoch"] == 1_600_000_000
    with tarfile.open(tmp_path / "out3" / tarball.name) as archive:
        assert {member.mtime for member in archive.getmembers()} == {1_600_000_000}
    assert flagged["assets"][0]["sha256"] != digest
