"""A ``trusted_root`` is read under a cap: a planted multi-gigabyte (sparse) file is refused
as ``policy_invalid`` after reading just past the cap, not loaded whole into memory."""

from __future__ import annotations

import json
from pathlib import Path

from support.cli import clean_env, nexo
from support.private_sigstore import PrivateSigstore
from support.tarballs import write_plugin

IDENTITY = (
    "https://github.com/acme/nexo-plugin-hello/.github/workflows/release.yml@refs/tags/v1.0.0"
)
# Far below the 2 GiB of the planted file, far above what install needs.
ADDRESS_SPACE = 1536 * 1024 * 1024


def test_a_two_gib_trusted_root_is_policy_invalid_without_reading_it_whole(
    tmp_path: Path, private_sigstore: PrivateSigstore
) -> None:
    tarball = write_plugin(tmp_path / "dist", "hello", "1.0.0")
    bundle = private_sigstore.sign(tarball.read_bytes(), identity=IDENTITY)
    tarball.with_name(tarball.name + ".sigstore.json").write_text(json.dumps(bundle))
    huge = tmp_path / "trusted_root.json"
    with huge.open("wb") as handle:
        handle.truncate(2 * 1024**3)
    policy = tmp_path / "trusted_keys.toml"
    policy.write_text(
        'schema_version = "1.0"\ndefault = "warn"\ntrusted_root = "trusted_root.json"\n',
        encoding="utf-8",
    )
    dest = tmp_path / "root"
    # The address-space cap needs a process of its own.
    completed = nexo(
        "plugin", "install", str(tarball), "--dest", str(dest), "--trusted-keys", str(policy),
        "--yes", "--json", env=clean_env(NEXO_HOME=str(tmp_path / "home")),
        prefix=("prlimit", f"--as={ADDRESS_SPACE}", "--"),
    )  # fmt: skip
    assert completed.code == 2, completed.stderr
    document = json.loads(completed.stdout)
    assert document["kind"] == "policy_invalid"
    assert "larger than" in document["error"]
    assert "Traceback" not in completed.stderr
    assert not dest.exists() or not [p for p in dest.iterdir() if not p.name.startswith(".")]
