"""The signer a lock row records binds ``sync`` for a registry source as for a GitHub
release (``tests/fleet/test_github_and_cache.py`` holds that one): the rule is a field of
the install step, whatever the kind of the source the row names."""

from __future__ import annotations

import json
from pathlib import Path

from support.cli import nexo
from support.registry import Registry
from support.registry_env import ACME_IDENTITY, MakeDist, push_dist, write_wanted

OTHER = "https://github.com/acme/nexo-plugin-echo/.github/workflows/other.yml@refs/tags/v1"


def test_a_registry_row_naming_another_signer_is_refused_and_nothing_installed(
    tmp_path: Path,
    fleet_env: dict[str, str],
    registry: Registry,
    make_dist: MakeDist,
    policy: Path,
) -> None:
    push_dist(make_dist(), registry.ref("plugins/echo"), Path(fleet_env["NEXO_HOME"]))
    wanted = write_wanted(tmp_path / "nexo-plugins.toml", {"echo": registry.ref("plugins/echo")})
    locked = nexo("plugin", "lock", "-f", str(wanted), "--plain-http", "--trusted-keys",
                  str(policy), "--json", env=fleet_env, in_process=True)  # fmt: skip
    assert locked.code == 0, locked.stderr
    lock = tmp_path / "nexo-plugins.lock"
    text = lock.read_text(encoding="utf-8")
    assert ACME_IDENTITY in text
    lock.write_text(text.replace(ACME_IDENTITY, OTHER), encoding="utf-8")
    dest = tmp_path / "root"

    refused = nexo("plugin", "sync", "--lock", str(lock), "--dest", str(dest), "--plain-http",
                   "--trusted-keys", str(policy), "--yes", "--json",
                   env=fleet_env, in_process=True)  # fmt: skip
    assert refused.code == 1, refused.stdout
    document = json.loads(refused.stdout)
    assert document["kind"] == "sync_failed"
    [outcome] = document["plugins"]
    assert (outcome["id"], outcome["action"], outcome["kind"]) == (
        "echo", "failed", "signer_untrusted",
    )  # fmt: skip
    assert OTHER in outcome["error"]
    assert ACME_IDENTITY in outcome["error"]
    assert refused.stderr.rstrip().endswith("[signer_untrusted]")
    assert not (dest / "echo-1.2.3").exists()
    assert [path.name for path in dest.iterdir() if not path.name.startswith(".")] == []

    # The lock as written (its own signer) installs.
    lock.write_text(text, encoding="utf-8")
    synced = nexo("plugin", "sync", "--lock", str(lock), "--dest", str(dest), "--plain-http",
                  "--trusted-keys", str(policy), "--yes", "--json",
                  env=fleet_env, in_process=True)  # fmt: skip
    assert synced.code == 0, synced.stderr
    assert (dest / "echo-1.2.3").is_dir()


def test_a_row_with_half_a_signer_is_refused_before_the_root_is_touched(
    tmp_path: Path,
    fleet_env: dict[str, str],
    registry: Registry,
    make_dist: MakeDist,
    policy: Path,
) -> None:
    """A lock row naming an identity without its issuer (or an issuer without an identity),
    or a mirrored version's release that is no ``owner/repo@tag``, is no lock ``lock`` wrote:
    ``lock_invalid`` (exit 2) for the run and its dry run alike, and nothing is written,
    rather than a plugin refused with an issuer of ``None``, or installed bound to no signer
    or no owner."""
    push_dist(make_dist(), registry.ref("plugins/echo"), Path(fleet_env["NEXO_HOME"]))
    wanted = write_wanted(tmp_path / "nexo-plugins.toml", {"echo": registry.ref("plugins/echo")})
    locked = nexo("plugin", "lock", "-f", str(wanted), "--plain-http", "--trusted-keys",
                  str(policy), "--json", env=fleet_env, in_process=True)  # fmt: skip
    assert locked.code == 0, locked.stderr
    lock = tmp_path / "nexo-plugins.lock"
    text = lock.read_text(encoding="utf-8")
    issuer = 'issuer = "https://token.actions.githubusercontent.com"\n'
    identity = f'identity = "{ACME_IDENTITY}"\n'
    assert issuer in text
    assert identity in text
    resolved = next(line for line in text.splitlines() if line.startswith("resolved = "))
    edits = {
        "issuer": text.replace(issuer, ""),
        "identity": text.replace(identity, ""),
        "github": text.replace(resolved, resolved + '\ngithub = "acme/nexo-plugin-echo"'),
    }
    dest = tmp_path / "root"
    for key, edited in edits.items():
        lock.write_text(edited, encoding="utf-8")
        for dry_run in ((), ("--dry-run",)):
            refused = nexo("plugin", "sync", "--lock", str(lock), "--dest", str(dest),
                           "--frozen", "--plain-http", "--trusted-keys", str(policy), "--json",
                           *dry_run, env=fleet_env, in_process=True)  # fmt: skip
            assert refused.code == 2, (key, dry_run, refused.stdout)
            document = json.loads(refused.stdout)
            assert document["kind"] == "lock_invalid", (key, document)
            assert f".{key}`" in document["error"], document["error"]
            assert "None" not in document["error"]
            assert not dest.exists()
        assert lock.read_text(encoding="utf-8") == edited
