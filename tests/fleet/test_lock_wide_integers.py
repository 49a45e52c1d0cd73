"""A lock whose integer (an asset's ``size``) lies beyond TOML's 64-bit range is no lock:
Rust's toml, taplo and the schema refuse it, and so does every command that reads it here
(``lock_invalid``, naming the field's line, nothing written)."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.cli import nexo

from nexo_pkg.core.errors import ConfigError
from nexo_pkg.fleet.lockfile import read_lock

I64_MAX = 2**63 - 1


def _lock(path: Path, size: int) -> Path:
    path.write_text(
        "lock_version = 1\n"
        "\n[plugins.echo]\n"
        'source = "oci://127.0.0.1:9/plugins/echo"\n'
        'requirement = "*"\nversion = "1.0.0"\n'
        f'resolved = "oci://127.0.0.1:9/plugins/echo@sha256:{"a" * 64}"\n'
        "\n[plugins.echo.targets.noarch]\n"
        'asset = "echo-1.0.0-noarch.tar.gz"\n'
        f"size = {size}\n"  # line 11
        f'sha256 = "{"b" * 64}"\n'
        f'manifest = "sha256:{"c" * 64}"\n',
        encoding="utf-8",
    )
    return path


@pytest.mark.parametrize(
    "command",
    [
        ("sync", "--frozen", "--dest", "{root}"),
        ("sync", "--frozen", "--dry-run", "--dest", "{root}"),
        ("verify", "--dest", "{root}"),
    ],
)
@pytest.mark.parametrize("size", [I64_MAX + 1, 99999999999999999999, 2**64])
def test_a_size_beyond_64_bits_is_refused_naming_its_line(
    tmp_path: Path, fleet_env: dict[str, str], command: tuple[str, ...], size: int
) -> None:
    lock = _lock(tmp_path / "nexo-plugins.lock", size)
    before = lock.read_bytes()
    root = tmp_path / "root"
    args = [part.replace("{root}", str(root)) for part in command]
    result = nexo(
        "plugin", *args, "--lock", lock, "--json", env=fleet_env, in_process=True
    )  # fmt: skip
    assert result.code == 2, result.stdout + result.stderr
    document = result.document
    assert document["kind"] == "lock_invalid"
    assert document["line"] == 11
    assert f"{lock}:11:" in document["error"]
    assert "plugins.echo.targets.noarch.size" in document["error"]
    assert not root.exists()
    assert lock.read_bytes() == before


def test_the_largest_64_bit_size_is_read(tmp_path: Path) -> None:
    lock = read_lock(_lock(tmp_path / "nexo-plugins.lock", I64_MAX))
    assert lock.plugins["echo"].targets["noarch"].size == I64_MAX
    with pytest.raises(ConfigError) as refused:
        read_lock(_lock(tmp_path / "nexo-plugins.lock", I64_MAX + 1))
    assert refused.value.kind == "lock_invalid"
    assert refused.value.details["line"] == 11
