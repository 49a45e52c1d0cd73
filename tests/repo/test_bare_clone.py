"""A checkout with nothing beside it (no ``../shared``, no ``NEXO_TEST_FIXTURES``) runs the
tests: the ones that need the shared fixtures skip, naming the path they looked for."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
# Modules that read the shared fixtures at collection time, in tests and in helpers.
NEEDING_FIXTURES = [
    "tests/editors/test_taplo.py",
    "tests/cli/test_lint_cli.py",
    "tests/trust/test_policy_dialect.py",
    "tests/install/test_operator_settings.py",
    "tests/manifest/test_manifest_schema.py",
    # Modules whose tests read them when they run.
    "tests/trust/test_trust_cli.py",
    "tests/trust/test_lazy_import.py",
    "tests/trust/test_github_attestations.py",
    "tests/trust/test_gh_verdicts.py",
    "tests/trust/test_policy_reading.py",
    "tests/trust/test_exact_signer_match.py",
]
IGNORED = shutil.ignore_patterns(
    ".git", ".venv", ".cache", "__pycache__", "*.egg-info", ".*_cache", "benchmarks", "fuzz"
)


def test_a_clone_without_the_shared_fixtures_skips_with_the_path(tmp_path: Path) -> None:
    clone = tmp_path / "nexo-pkg"
    shutil.copytree(REPO, clone, ignore=IGNORED)
    env = {key: value for key, value in os.environ.items() if key != "NEXO_TEST_FIXTURES"}
    env["PYTHONPATH"] = str(clone)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider",
         *NEEDING_FIXTURES],
        cwd=clone, env=env, capture_output=True, text=True, check=False, timeout=600,
    )  # fmt: skip
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    looked = tmp_path / "shared" / "fixtures"
    assert f"shared fixtures not found at {looked}/" in output
    assert "set NEXO_TEST_FIXTURES" in output
    assert " passed" in output
