"""A TOML file with a decimal integer of more digits than Python's ``int`` converts from a
string (4300 by default) is refused as any integer beyond 64 bits is: by its file's own
kind, at the integer's line and column, never as an internal error. ``tomllib`` reports
such a literal with a plain ``ValueError``, not its ``TOMLDecodeError``."""

from __future__ import annotations

import sys
from pathlib import Path

from support.cli import clean_env, nexo
from support.tarballs import asset_name, manifest_text, plugin_tarball, sidecar_line

DIGITS = sys.get_int_max_str_digits() + 700
LONG = "9" * DIGITS
SAID = f"an integer of {DIGITS} digits does not fit in a 64-bit signed integer"


def _env(tmp_path: Path) -> dict[str, str]:
    return clean_env(NEXO_HOME=str(tmp_path / "home"))


def _files(tmp_path: Path) -> dict[Path, bytes]:
    return {path: path.read_bytes() for path in sorted(tmp_path.rglob("*")) if path.is_file()}


def test_a_lock_is_refused_as_lock_invalid_at_the_integer(tmp_path: Path) -> None:
    lock = tmp_path / "nexo-plugins.lock"
    lock.write_text(
        "lock_version = 1\n"
        "\n[plugins.echo]\n"
        'source = "oci://127.0.0.1:9/plugins/echo"\n'
        'requirement = "*"\nversion = "1.0.0"\n'
        f'resolved = "oci://127.0.0.1:9/plugins/echo@sha256:{"a" * 64}"\n'
        f"\n[plugins.echo.targets.noarch]\nsize = {LONG}\n",  # line 10
        encoding="utf-8",
    )
    before = _files(tmp_path)
    root = tmp_path / "root"
    result = nexo(
        "plugin", "sync", "--frozen", "--dest", root, "--lock", lock, "--json",
        env=_env(tmp_path), in_process=True,
    )  # fmt: skip
    assert result.code == 2, result.stdout + result.stderr
    document = result.document
    assert document["kind"] == "lock_invalid", document
    assert document["error"] == f"{lock}:10:8: not valid TOML ({SAID})"
    assert document["line"] == 10
    assert not root.exists()
    assert _files(tmp_path) == before


def test_a_manifest_is_nx001_at_the_integer(tmp_path: Path) -> None:
    plugin = tmp_path / "plugin"
    plugin.mkdir()
    manifest = plugin / "plugin.toml"
    manifest.write_text(
        manifest_text("hello", "1.0.0") + f"\n[hello]\nx = -{LONG}\n", encoding="utf-8"
    )
    line = manifest.read_text(encoding="utf-8").count("\n")
    result = nexo("plugin", "lint", plugin, "--json", env=_env(tmp_path), in_process=True)
    assert result.code == 1, result.stdout + result.stderr
    (found,) = result.document["files"][0]["diagnostics"]
    assert found["code"] == "NX001"
    assert SAID in found["message"]
    # At the sign that begins the literal.
    assert found["range"]["start"] == {"line": line, "column": 5}


def test_a_trust_policy_is_policy_invalid_at_the_integer(tmp_path: Path) -> None:
    policy = tmp_path / "trusted_keys.toml"
    policy.write_text(f'default = "warn"\nx = {LONG}\n', encoding="utf-8")
    result = nexo(
        "plugin", "trust", "list", "--trusted-keys", policy, "--json",
        env=_env(tmp_path), in_process=True,
    )  # fmt: skip
    assert result.code == 2, result.stdout + result.stderr
    assert result.document["kind"] == "policy_invalid", result.document
    assert SAID in result.document["error"]


def test_a_tarball_manifest_is_manifest_invalid_and_nothing_is_installed(
    tmp_path: Path,
) -> None:
    name = asset_name("big", "1.0.0")
    manifest = manifest_text("big", "1.0.0") + f"\n[big]\nx = {LONG}\n"
    data = plugin_tarball("big", "1.0.0", manifest=manifest)
    (tmp_path / name).write_bytes(data)
    (tmp_path / f"{name}.sha256").write_text(sidecar_line(data, name), encoding="utf-8")
    dest = tmp_path / "root"
    result = nexo(
        "plugin", "install", tmp_path / name, "--dest", dest, "--yes", "--json",
        env=_env(tmp_path), in_process=True,
    )  # fmt: skip
    assert result.code == 1, result.stdout + result.stderr
    assert result.document["kind"] == "manifest_invalid", result.document
    assert SAID in result.document["error"]
    assert not dest.exists() or not any(path.name.startswith("big") for path in dest.iterdir())


# -- the daemon's YAML files ------------------------------------------------------------------
# serde_yaml reads a scalar of digits past 128 bits as a string (its f64 is infinite).


def test_a_discovery_yaml_number_is_read_as_the_daemon_reads_it(tmp_path: Path) -> None:
    config = tmp_path / "config"
    (config / "plugins").mkdir(parents=True)
    (config / "plugins" / "discovery.yaml").write_text(
        f"discovery:\n  search_paths: [{tmp_path / 'root'}]\n  follow_symlinks: {LONG}\n",
        encoding="utf-8",
    )
    result = nexo(
        "plugin", "list", "--config", config, "--json", env=_env(tmp_path), in_process=True
    )  # fmt: skip
    assert result.code == 2, result.stdout + result.stderr
    assert result.document["kind"] == "config", result.document
    assert "`discovery.follow_symlinks` must be true or false" in result.document["error"]


def test_an_extensions_yaml_number_is_linted_not_an_internal_error(tmp_path: Path) -> None:
    extensions = tmp_path / "config" / "extensions" / "extensions.yaml"
    extensions.parent.mkdir(parents=True)
    extensions.write_text(f"enabled: true\nx: {LONG}\n", encoding="utf-8")
    result = nexo("plugin", "lint", extensions, "--json", env=_env(tmp_path), in_process=True)
    assert result.code == 1, result.stdout + result.stderr
    found = result.document["files"][0]["diagnostics"]
    assert {item["code"] for item in found} == {"NX220", "NX221"}, found
    assert "unknown key `x` in the top level" in [item["message"] for item in found]


def test_a_memory_yaml_number_leaves_the_wired_capabilities_undecided(tmp_path: Path) -> None:
    from nexo_pkg.install.compat import wired_capabilities

    (tmp_path / "memory.yaml").write_text(
        f"long_term:\n  backend: sqlite\n  x: {LONG}\n", encoding="utf-8"
    )
    assert wired_capabilities(tmp_path) is None
