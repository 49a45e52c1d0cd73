"""The shipped JSON Schema works with taplo (the engine of Even Better TOML).

taplo runs offline here: ``--no-auto-config``, a ``file://`` schema, no schema catalogs (they are
opt-in with ``--default-schema-catalogs``), and proxies pointed at a closed loopback port so an
accidental fetch fails instead of reaching out.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from support.shared_fixtures import shared_fixture, skip_unless_present

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = ROOT / "schemas" / "nexo-plugin.schema.json"
MANIFESTS = ROOT / "tests" / "fixtures" / "manifests"
REFERENCE = shared_fixture("reference-manifests")
SEMANTIC_CODES_START = 100  # NX100 and up are rules beyond the schema (SPEC §2)
PARSE_CODES = {"NX001", "NX002"}  # syntax and duplicate keys: taplo rejects them as TOML


def _taplo() -> str:
    found = shutil.which("taplo", path=str(Path(sys.executable).parent)) or shutil.which("taplo")
    if found is None:
        pytest.skip("taplo is not installed (pip install taplo)")
    return found


def _check(
    *files: Path, schema: str | None, cwd: Path | None = None, auto_config: bool = False
) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY"):
        env[name] = "http://127.0.0.1:9"
    env.pop("TAPLO_CONFIG", None)
    env["NO_PROXY"] = ""
    command = [_taplo(), "check", "--colors", "never"]
    if not auto_config:
        command.append("--no-auto-config")
    if schema is not None:
        command += ["--schema", schema]
    return subprocess.run(
        [*command, *map(str, files)],
        cwd=cwd or ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )


def _expected_codes(manifest: Path) -> set[str]:
    expected = json.loads(manifest.with_suffix(".expected.json").read_text("utf-8"))
    return {item["code"] for item in expected}


def _schema_level(manifest: Path) -> bool:
    codes = _expected_codes(manifest)
    return bool(codes) and all(int(code[2:]) < SEMANTIC_CODES_START for code in codes)


LOCAL_VALID = sorted((MANIFESTS / "valid").glob("*.toml"))
REFERENCE_VALID = sorted(REFERENCE.glob("*.toml"))
VALID = LOCAL_VALID + REFERENCE_VALID
# JSON Schema counts `3.0` as an integer, and taplo validates the TOML as JSON: only the linter's
# TOML typing (NX012) refuses a float where the daemon wants an integer.
INTEGRAL_FLOATS = MANIFESTS / "invalid" / "integer_fields_reject_floats.toml"
SCHEMA_INVALID = [
    m
    for m in sorted((MANIFESTS / "invalid").glob("*.toml"))
    if _schema_level(m) and m != INTEGRAL_FLOATS
]


def test_fixture_corpus_is_there() -> None:
    assert len(LOCAL_VALID) >= 5
    assert len([m for m in SCHEMA_INVALID if not _expected_codes(m) & PARSE_CODES]) >= 5


@skip_unless_present("reference-manifests")
def test_reference_corpus_is_there() -> None:
    """The public manifests in the shared fixtures are part of the valid corpus."""
    assert len(REFERENCE_VALID) >= 4


@pytest.mark.parametrize("manifest", VALID, ids=lambda path: f"{path.parent.name}/{path.name}")
def test_valid_manifests_pass(manifest: Path) -> None:
    done = _check(manifest, schema=SCHEMA.as_uri())
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("manifest", SCHEMA_INVALID, ids=lambda path: path.name)
def test_schema_level_faults_fail(manifest: Path) -> None:
    done = _check(manifest, schema=SCHEMA.as_uri())
    output = done.stdout + done.stderr
    assert done.returncode != 0, output
    if not _expected_codes(manifest) & PARSE_CODES:
        # The document is valid TOML, so the failure can only be the schema's.
        tomllib.loads(manifest.read_text("utf-8"))
        assert "error:" in output


def test_schema_directive_in_the_file(tmp_path: Path) -> None:
    """``#:schema ./nexo-plugin.schema.json`` at the top selects the schema, no flag needed."""
    shutil.copy(SCHEMA, tmp_path / "nexo-plugin.schema.json")
    good = tmp_path / "good" / "nexo-plugin.toml"
    bad = tmp_path / "bad" / "nexo-plugin.toml"
    for target, source in ((good, "valid/minimal.toml"), (bad, "invalid/invalid_enum.toml")):
        target.parent.mkdir()
        text = (MANIFESTS / source).read_text("utf-8")
        target.write_text("#:schema ../nexo-plugin.schema.json\n" + text, encoding="utf-8")
    assert _check(good, schema=None, cwd=tmp_path).returncode == 0
    failed = _check(bad, schema=None, cwd=tmp_path)
    assert failed.returncode != 0
    assert "is not one of" in failed.stdout + failed.stderr


def test_project_config_associates_the_schema(tmp_path: Path) -> None:
    """A ``.taplo.toml`` rule, as docs/editors.md shows it, applies the schema by file name."""
    shutil.copy(SCHEMA, tmp_path / "nexo-plugin.schema.json")
    (tmp_path / ".taplo.toml").write_text(
        '[[rule]]\ninclude = ["**/plugin.toml", "**/nexo-plugin.toml"]\n'
        'schema.path = "./nexo-plugin.schema.json"\n',
        encoding="utf-8",
    )
    manifest = tmp_path / "plugin" / "nexo-plugin.toml"
    manifest.parent.mkdir()
    other = tmp_path / "plugin" / "other.toml"
    other.write_text((MANIFESTS / "invalid" / "invalid_enum.toml").read_text("utf-8"), "utf-8")
    manifest.write_text(other.read_text("utf-8"), encoding="utf-8")
    failed = _check(manifest, schema=None, cwd=tmp_path, auto_config=True)
    assert failed.returncode != 0
    assert "is not one of" in failed.stdout + failed.stderr
    # The same text under another name is not a manifest: no schema, and it is valid TOML.
    assert _check(other, schema=None, cwd=tmp_path, auto_config=True).returncode == 0
    canonical = tmp_path / "plugin" / "plugin.toml"
    canonical.write_text(other.read_text("utf-8"), encoding="utf-8")
    failed = _check(canonical, schema=None, cwd=tmp_path, auto_config=True)
    assert failed.returncode != 0


def test_documented_toml_snippets_parse() -> None:
    import re

    text = (ROOT / "docs" / "editors.md").read_text("utf-8")
    blocks = re.findall(r"```toml\n(.*?)```", text, flags=re.DOTALL)
    assert len(blocks) >= 3
    for block in blocks:
        tomllib.loads(block)
    helix = next(tomllib.loads(b) for b in blocks if "language-server" in b)
    assert helix["language-server"]["nexo"] == {"command": "nexo", "args": ["plugin", "lsp"]}


def test_a_microapp_manifest_takes_its_schema_by_directive_over_the_association(
    tmp_path: Path,
) -> None:
    """docs/editors.md, "Microapps": the project association checks every plugin.toml against
    the plugin schema, which a scaffolded microapp's manifest fails (it needs no
    `min_nexo_version`); its `#:schema` directive for the microapp schema wins over the
    association, and the manifest passes."""
    shutil.copy(SCHEMA, tmp_path / "nexo-plugin.schema.json")
    shutil.copy(ROOT / "schemas" / "microapp-manifest.schema.json", tmp_path)
    (tmp_path / ".taplo.toml").write_text(
        '[[rule]]\ninclude = ["**/plugin.toml", "**/nexo-plugin.toml"]\n'
        'schema.path = "./nexo-plugin.schema.json"\n',
        encoding="utf-8",
    )
    made = subprocess.run(
        [sys.executable, "-m", "nexo_pkg", "plugin", "new", "notes", "--kind", "microapp",
         "--dest", str(tmp_path / "notes"), "-q"],
        capture_output=True, text=True, check=False, timeout=120,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    manifest = tmp_path / "notes" / "plugin.toml"
    failed = _check(manifest, schema=None, cwd=tmp_path, auto_config=True)
    assert failed.returncode != 0
    assert "min_nexo_version" in failed.stdout + failed.stderr
    text = manifest.read_text("utf-8")
    manifest.write_text("#:schema ../microapp-manifest.schema.json\n" + text, encoding="utf-8")
    passed = _check(manifest, schema=None, cwd=tmp_path, auto_config=True)
    assert passed.returncode == 0, passed.stdout + passed.stderr


def test_taplo_takes_an_integral_float_for_an_integer_where_lint_does_not() -> None:
    """The limit docs/lint.md states: `max_attempts = 3.0` passes the schema in taplo."""
    assert _expected_codes(INTEGRAL_FLOATS) == {"NX012"}
    done = _check(INTEGRAL_FLOATS, schema=SCHEMA.as_uri())
    assert done.returncode == 0, done.stdout + done.stderr
