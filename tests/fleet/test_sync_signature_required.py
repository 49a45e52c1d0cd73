"""A sync that requires a signature gives the same verdict on every host: a plugin locked
unsigned and already installed is refused as on a clean root (``signature_missing``), its
installed tree left as it is; one whose lock records its signer stays unchanged, with no
request."""

from __future__ import annotations

from pathlib import Path

from support.registry import Registry
from support.tarballs import tree_snapshot

from .conftest import ACME_IDENTITY, MakeDist, fleet_run, push_dist


def test_an_installed_unsigned_plugin_is_refused_when_a_signature_is_required(
    tmp_path: Path,
    fleet_env: dict[str, str],
    registry: Registry,
    make_dist: MakeDist,
    policy: Path,
) -> None:
    home = Path(fleet_env["NEXO_HOME"])
    signed = ACME_IDENTITY.replace("nexo-plugin-echo", "nexo-plugin-signed")
    push_dist(make_dist("signed", "1.0.0", identity=signed), registry.ref("plugins/signed"), home)
    push_dist(make_dist("bare", "1.0.0", identity=None), registry.ref("plugins/bare"), home)
    wanted = tmp_path / "nexo-plugins.toml"
    wanted.write_text(
        f'[plugins.signed]\nsource = "{registry.ref("plugins/signed:1.0.0")}"\n\n'
        f'[plugins.bare]\nsource = "{registry.ref("plugins/bare:1.0.0")}"\n'
    )
    lock_file = tmp_path / "nexo-plugins.lock"
    common = ("--plain-http", "--trusted-keys", str(policy))
    # Under the policy's `warn`, the unsigned plugin is locked and installed (with a warning).
    assert fleet_run("lock", "-f", wanted, *common, env=fleet_env).code == 0
    dest = tmp_path / "root"
    first = fleet_run("sync", "--lock", lock_file, "--dest", str(dest), *common, env=fleet_env)
    assert first.code == 0, first.stderr
    before, lock_before = tree_snapshot(dest), lock_file.read_bytes()

    # A clean root, with a signature required: the unsigned plugin is refused.
    clean = tmp_path / "clean"
    fresh = fleet_run(
        "sync", "--lock", lock_file, "--dest", str(clean), "--frozen", "--require-signature",
        *common, env=fleet_env,
    )  # fmt: skip
    assert fresh.code == 1
    verdicts = {p["id"]: (p["action"], p.get("kind")) for p in fresh.document["plugins"]}
    assert verdicts == {"bare": ("failed", "signature_missing"), "signed": ("installed", None)}

    # The root that has it installed already gets the same verdict, and keeps its tree.
    again = fleet_run(
        "sync", "--lock", lock_file, "--dest", str(dest), "--frozen", "--require-signature",
        *common, env=fleet_env,
    )  # fmt: skip
    assert again.code == 1, again.stderr
    assert again.document["kind"] == "sync_failed"
    verdicts = {p["id"]: (p["action"], p.get("kind")) for p in again.document["plugins"]}
    assert verdicts == {"bare": ("failed", "signature_missing"), "signed": ("unchanged", None)}
    assert "error: bare: " in again.stderr
    assert "[signature_missing]" in again.stderr
    assert (tree_snapshot(dest), lock_file.read_bytes()) == (before, lock_before)

    # Without the requirement the root is in line: nothing asked of the registry.
    requests = registry.all_requests()
    quiet = fleet_run("sync", "--lock", lock_file, "--dest", str(dest), *common, env=fleet_env)
    assert quiet.code == 0, quiet.stderr
    assert [p["action"] for p in quiet.document["plugins"]] == ["unchanged", "unchanged"]
    assert registry.all_requests() == requests
    assert tree_snapshot(dest) == before
