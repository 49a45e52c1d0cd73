"""A broken trust policy is a configuration error (SPEC §1: exit 2, ``policy_invalid``) for
every command that reads it, through the real console script: the daemon's default policy
file as much as one named with ``--trusted-keys``, and whatever the command turns out to
have to do — not one failure per plugin, nor a rehearsal that passes what the run refuses."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.cli import nexo, stand_in_env
from support.github_server import GitHubServer, github_server
from support.private_sigstore import PrivateSigstore
from support.shared_fixtures import skip_unless_present
from support.tarballs import release_assets, tree_snapshot

from .helpers import FIXTURES, VECTOR_ARTIFACT

__all__ = ["github_server"]

BROKEN = 'default = "require"\nidentity_regex = "^typo$"\n'


def _installed_twice(tmp_path: Path, server: GitHubServer) -> tuple[dict[str, str], Path]:
    """Two plugins installed from the stand-in, each with a newer release waiting."""
    env = stand_in_env(tmp_path / "home", server.url)
    for plugin in ("echo", "hello"):
        server.publish("acme", plugin, "v1.0.0", release_assets(plugin, "1.0.0"))
        installed = nexo("plugin", "install", f"acme/{plugin}", "--yes", env=env)
        assert installed.code == 0, installed.stderr
        server.publish("acme", plugin, "v2.0.0", release_assets(plugin, "2.0.0"))
    return env, tmp_path / "home" / "state" / "plugins"


def _break_default_policy(tmp_path: Path) -> Path:
    policy = tmp_path / "home" / "config" / "extensions" / "trusted_keys.toml"
    policy.parent.mkdir(parents=True)
    policy.write_text(BROKEN, encoding="utf-8")
    return policy


def test_upgrade_all_under_a_broken_default_policy_is_one_configuration_error(
    tmp_path: Path, github_server: GitHubServer
) -> None:
    env, root = _installed_twice(tmp_path, github_server)
    policy = _break_default_policy(tmp_path)
    before = tree_snapshot(root)
    asked = len(github_server.requests)
    result = nexo("plugin", "upgrade", "--all", "--yes", "--json", env=env)
    assert (result.code, result.document.get("kind")) == (2, "policy_invalid"), result.stdout
    assert result.document["error"].startswith(f"{policy}:2:1: invalid trust policy")
    assert result.stderr.count("invalid trust policy") == 1, result.stderr
    assert len(github_server.requests) == asked
    assert tree_snapshot(root) == before


@pytest.mark.parametrize("where", ["default", "--trusted-keys"])
def test_a_sync_dry_run_refuses_the_broken_policy_the_run_refuses(
    tmp_path: Path, github_server: GitHubServer, where: str
) -> None:
    env, root = _installed_twice(tmp_path, github_server)
    (tmp_path / "nexo-plugins.toml").write_text(
        '[plugins.echo]\nsource = "acme/echo"\n\n[plugins.hello]\nsource = "acme/hello"\n',
        encoding="utf-8",
    )
    locked = nexo("plugin", "lock", "--yes", env=env, cwd=tmp_path)
    assert locked.code == 0, locked.stderr
    if where == "default":
        policy, flags = _break_default_policy(tmp_path), []
    else:
        policy = tmp_path / "named.toml"
        policy.write_text(BROKEN, encoding="utf-8")
        flags = ["--trusted-keys", str(policy)]
    before = tree_snapshot(tmp_path)
    run = nexo("plugin", "sync", *flags, "--json", env=env, cwd=tmp_path)
    assert (run.code, run.document["kind"]) == (2, "policy_invalid"), run.stdout
    rehearsal = nexo("plugin", "sync", "--dry-run", *flags, "--json", env=env, cwd=tmp_path)
    assert (rehearsal.code, rehearsal.document.get("kind")) == (2, "policy_invalid"), (
        rehearsal.stdout
    )
    assert rehearsal.document["error"].startswith(f"{policy}:2:1: invalid trust policy")
    assert tree_snapshot(tmp_path) == before
    assert root.is_dir()


@pytest.mark.parametrize(
    ("entry", "line", "says"),
    [
        ('owner = ".."', 2, "authors[0].owner '..' is not a GitHub owner name"),
        ('owner = "."', 2, "authors[0].owner '.' is not a GitHub owner name"),
        ('owner = "acme"\nrepos = ["."]', 3, "authors[0].repos has names that are not GitHub"),
    ],
)
def test_an_owner_or_repository_github_cannot_have_is_an_invalid_policy(
    tmp_path: Path, entry: str, line: int, says: str
) -> None:
    """SPEC §5's names (GitHub's characters, no ``..``, not ``.``) hold in the policy too: an
    entry no release can ever match hides a mistake, so install refuses the policy (exit 2)
    with its line, before anything is read or written."""
    from support.tarballs import write_plugin

    tarball = write_plugin(tmp_path / "dist", "echo", "1.0.0")
    policy = tmp_path / "trusted_keys.toml"
    policy.write_text(f'[[authors]]\n{entry}\nidentity = "x"\n', encoding="utf-8")
    root = tmp_path / "root"
    env = stand_in_env(tmp_path / "home", "http://127.0.0.1:9")
    result = nexo("plugin", "install", tarball, "--dest", root, "--trusted-keys", policy,
                  "--yes", "--json", env=env)  # fmt: skip
    assert (result.code, result.document.get("kind")) == (2, "policy_invalid"), result.stdout
    assert result.document["error"].startswith(f"{policy}:{line}:1: invalid trust policy: {says}")
    assert not root.exists()


@pytest.mark.parametrize(
    ("pattern", "anchored"),
    [
        # Alternation binds loosest: `^a|b$` is `(?:^a)|(?:b$)`, which cosign's search reads
        # as "starts with a, or ends with b", where the full match is "a" or "b".
        ("^https://github\\.com/acme/x/.*|.*@refs/tags/v1$", True),
        ("^a|b$", True),
        ("^a$|b$", True),
        ("^a$|^b$", False),
        ("^(?:a|b)$", False),
        ("^a[|]b$", False),
        ("^a\\|b$", False),
        ("^a\\Q|\\Eb$", False),
    ],
)
def test_lint_warns_about_each_alternative_cosign_would_search(
    tmp_path: Path, pattern: str, anchored: bool
) -> None:
    """SPEC §6: lint warns where the full match makes a pattern narrower than cosign's
    unanchored search (NXT010), and shows the anchored form: every top-level alternative must
    be anchored at both ends; `|` in a class, escaped or quoted is no alternative."""
    policy = tmp_path / "trusted_keys.toml"
    escaped = pattern.replace("\\", "\\\\")
    policy.write_text(
        f'[[authors]]\nowner = "acme"\nidentity_regexp = "{escaped}"\n', encoding="utf-8"
    )
    result = nexo(
        "plugin",
        "lint",
        policy,
        "--format",
        "json",
        env=stand_in_env(tmp_path, "http://127.0.0.1:9"),
    )
    codes = [d["code"] for f in result.document["files"] for d in f["diagnostics"]]
    if "\\Q" in pattern:
        # RE2 reads `\Q|\E` as a quoted `|`, but the reference installer's Rust regex has no
        # `\Q…\E` and refuses the whole file (trusted_keys.rs:107-114 at eec3f33).
        assert (result.code, codes) == (1, ["NXT007"]), result.stdout
        return
    assert result.code == 0, result.stdout
    assert codes == (["NXT010"] if anchored else []), result.stdout
    if anchored:
        (warning,) = [d for f in result.document["files"] for d in f["diagnostics"]]
        assert warning["message"].endswith(f'write identity_regexp = "^(?:{escaped})$"')


@skip_unless_present("sigstore")
@pytest.mark.parametrize("trusted", [True, False])
def test_trust_verify_says_the_policy_warnings_install_says(tmp_path: Path, trusted: bool) -> None:
    """``trust verify`` reads the policy exactly as install would, warnings included: a
    policy every user may write, and an entry an earlier one hides (which may be why a signer
    is refused), are said on stderr whatever the verdict, and listed in ``--json``. The
    hidden entry trusts nothing, as the warning says, with no --owner/--repo as well."""
    policy = tmp_path / "trusted_keys.toml"
    identity = "^https://github\\\\.com/trailofbits/.+$" if trusted else "^nope$"
    policy.write_text(
        f'[[authors]]\nowner = "trailofbits"\nidentity_regexp = "{identity}"\n\n'
        '[[authors]]\nowner = "trailofbits"\nidentity_regexp = "^.*$"\n',
        encoding="utf-8",
    )
    policy.chmod(0o666)
    env = stand_in_env(tmp_path / "home", "http://127.0.0.1:9")
    result = nexo("plugin", "trust", "verify", FIXTURES / VECTOR_ARTIFACT, "--trusted-keys",
                  policy, "--json", env=env)  # fmt: skip
    assert result.code == (0 if trusted else 1), result.stdout
    hidden = f"WARNING: {policy}:5:1: authors[1] for owner 'trailofbits' is ignored"
    writable = f"WARNING: the trust policy {policy} is writable by every user (mode 666)"
    warnings = [line for line in result.stderr.splitlines() if line.startswith("WARNING")]
    assert [line.startswith(hidden) for line in warnings] == [True, False], result.stderr
    assert warnings[1].startswith(writable), result.stderr
    if trusted:
        assert result.document["warnings"] == warnings


def test_an_entry_an_earlier_one_hides_trusts_no_local_tarball_either(
    tmp_path: Path, github_server: GitHubServer, private_sigstore: PrivateSigstore
) -> None:
    """The first entry for an owner decides (as in the reference installer; lint's NXT012
    says the later one is ignored): the same signed tarball is refused from the owner's
    release and from a local file alike, never trusted locally through the hidden entry."""
    from support.tarballs import asset_name

    identity = "https://github.com/acme/echo/.github/workflows/release.yml@refs/tags/v1.0.0"
    assets = release_assets("echo", "1.0.0")
    name = asset_name("echo", "1.0.0")
    assets[f"{name}.sigstore.json"] = json.dumps(
        private_sigstore.sign(assets[name], identity=identity)
    ).encode()
    github_server.publish("acme", "echo", "v1.0.0", assets)
    dist = tmp_path / "dist"
    dist.mkdir()
    for each, data in assets.items():
        if each.startswith(name):
            (dist / each).write_bytes(data)
    private_sigstore.write_trusted_root(tmp_path / "root.json")
    policy = tmp_path / "trusted_keys.toml"
    policy.write_text(
        'trusted_root = "root.json"\ndefault = "require"\n\n'
        '[[authors]]\nowner = "acme"\nidentity_regexp = "^https://github\\\\.com/acme/other/.+$"\n\n'
        '[[authors]]\nowner = "acme"\nidentity_regexp = "^https://github\\\\.com/acme/echo/.+$"\n',
        encoding="utf-8",
    )
    env = stand_in_env(tmp_path / "home", github_server.url)
    root = tmp_path / "root"
    for source in ("acme/echo", dist / name):
        result = nexo("plugin", "install", source, "--dest", root, "--trusted-keys", policy,
                      "--yes", "--json", env=env)  # fmt: skip
        assert (result.code, result.document.get("kind")) == (1, "signer_untrusted"), (
            source,
            result.stdout,
        )
        assert not root.exists()
        # Said with the refusal: the later entry trusted nothing, and why.
        hidden = f"WARNING: {policy}:8:1: authors[1] for owner 'acme' is ignored"
        assert result.stderr.startswith(hidden), result.stderr
        assert result.document["policy_warnings"][0].startswith(hidden)
    checked = nexo("plugin", "trust", "verify", dist / name, "--trusted-keys", policy, "--json",
                   env=env)  # fmt: skip
    assert (checked.code, checked.document.get("kind")) == (1, "signer_untrusted"), checked.stdout
    # The tool to run after a refusal says why the later entry trusted nothing.
    assert f"{policy}:8:1: authors[1] for owner 'acme' is ignored" in checked.stderr


def test_trust_add_and_remove_keep_a_policys_crlf_line_endings(tmp_path: Path) -> None:
    """A policy written on Windows keeps its layout through ``trust add`` and ``trust
    remove``: the lines they write end as the file's do (no LF-only lines in a CRLF file),
    its comments stay, and the result reads as the policy it says."""
    policy = tmp_path / "trusted_keys.toml"
    original = (
        '# ours\r\ndefault = "warn"\r\n\r\n[[authors]]\r\nowner = "acme"\r\nidentity = "x"\r\n'
    )
    policy.write_bytes(original.encode())
    env = stand_in_env(tmp_path / "home", "http://127.0.0.1:9")
    added = nexo("plugin", "trust", "add", "other", "--identity", "y", "--trusted-keys", policy,
                 "--yes", env=env)  # fmt: skip
    assert added.code == 0, added.stderr
    written = policy.read_bytes()
    assert written.startswith(original.encode())
    assert b'owner = "other"\r\n' in written
    assert written.count(b"\n") == written.count(b"\r\n")
    removed = nexo("plugin", "trust", "remove", "acme", "--trusted-keys", policy, "--yes",
                   env=env)  # fmt: skip
    assert removed.code == 0, removed.stderr
    written = policy.read_bytes()
    assert written.startswith(b'# ours\r\ndefault = "warn"\r\n')
    assert written.count(b"\n") == written.count(b"\r\n")
    listed = nexo("plugin", "trust", "list", "--trusted-keys", policy, "--json", env=env)
    assert [a["owner"] for a in listed.document["authors"]] == ["other"]


def test_trust_add_says_the_policys_warnings_before_it_asks(tmp_path: Path) -> None:
    """``trust add`` edits the policy install reads, so it says what install would warn
    about it (here: every user may write it) before the entry is shown and written; the
    file it writes is no longer writable by every user."""
    policy = tmp_path / "trusted_keys.toml"
    policy.write_text('default = "warn"\n', encoding="utf-8")
    policy.chmod(0o666)
    env = stand_in_env(tmp_path / "home", "http://127.0.0.1:9")
    added = nexo("plugin", "trust", "add", "acme", "--identity", "x", "--trusted-keys", policy,
                 "--yes", env=env)  # fmt: skip
    assert added.code == 0, added.stderr
    assert added.stderr.startswith(
        f"WARNING: the trust policy {policy} is writable by every user (mode 666)"
    ), added.stderr
    assert policy.stat().st_mode & 0o777 == 0o644
    assert 'owner = "acme"' in policy.read_text(encoding="utf-8")


def _publish_signed_echo(
    server: GitHubServer, sigstore: PrivateSigstore, version: str, trusted_root: Path
) -> None:
    """Release ``acme/echo`` ``version`` signed by its own release workflow, and write the
    private Sigstore's trusted root to ``trusted_root``."""
    from support.tarballs import asset_name

    identity = f"https://github.com/acme/echo/.github/workflows/release.yml@refs/tags/v{version}"
    assets = release_assets("echo", version)
    name = asset_name("echo", version)
    assets[f"{name}.sigstore.json"] = json.dumps(
        sigstore.sign(assets[name], identity=identity)
    ).encode()
    server.publish("acme", "echo", f"v{version}", assets)
    sigstore.write_trusted_root(trusted_root)


def test_a_sync_refusing_a_signer_says_the_policy_warnings_install_says(
    tmp_path: Path, github_server: GitHubServer, private_sigstore: PrivateSigstore
) -> None:
    """A plugin sync fails on for its signer is refused with the policy's warnings (an entry
    an earlier one hides may be why), on stderr and in its outcome, as install says them."""
    _publish_signed_echo(github_server, private_sigstore, "1.0.0", tmp_path / "root.json")
    head = 'trusted_root = "root.json"\ndefault = "require"\n'
    echo = (
        '\n[[authors]]\nowner = "acme"\nidentity_regexp = "^https://github\\\\.com/acme/echo/.+$"\n'
    )
    other = '\n[[authors]]\nowner = "acme"\nidentity_regexp = "^https://github\\\\.com/acme/other/.+$"\n'
    trusting, hiding = tmp_path / "trusting.toml", tmp_path / "trusted_keys.toml"
    trusting.write_text(head + echo, encoding="utf-8")
    hiding.write_text(head + other + echo, encoding="utf-8")
    env = stand_in_env(tmp_path / "home", github_server.url)
    wanted = tmp_path / "nexo-plugins.toml"
    wanted.write_text('[plugins.echo]\nsource = "acme/echo"\n', encoding="utf-8")
    locked = nexo("plugin", "lock", "-f", wanted, "--trusted-keys", trusting, env=env)
    assert locked.code == 0, locked.stderr
    root = tmp_path / "root"
    synced = nexo("plugin", "sync", "--frozen", "--lock", tmp_path / "nexo-plugins.lock",
                  "--dest", root, "--trusted-keys", hiding, "--json", env=env)  # fmt: skip
    assert synced.code == 1, synced.stdout
    (outcome,) = synced.document["plugins"]
    assert (outcome["action"], outcome["kind"]) == ("failed", "signer_untrusted")
    hidden = f"WARNING: {hiding}:8:1: authors[1] for owner 'acme' is ignored"
    assert outcome["warnings"][0].startswith(hidden), outcome
    assert hidden in synced.stderr, synced.stderr
    assert not any(root.glob("echo*"))


def test_upgrade_all_refusing_a_signer_says_the_policy_warnings(
    tmp_path: Path, github_server: GitHubServer, private_sigstore: PrivateSigstore
) -> None:
    """`upgrade --all` goes on past a plugin refused for its signer, and says the policy's
    warnings with the refusal (on stderr, once), as a single upgrade or install says them."""
    env, _ = _installed_twice(tmp_path, github_server)
    _publish_signed_echo(github_server, private_sigstore, "3.0.0", tmp_path / "root.json")
    policy = tmp_path / "trusted_keys.toml"
    policy.write_text(
        'trusted_root = "root.json"\ndefault = "warn"\n\n'
        '[[authors]]\nowner = "acme"\nidentity_regexp = "^https://github\\\\.com/acme/other/.+$"\n\n'
        '[[authors]]\nowner = "acme"\nidentity_regexp = "^https://github\\\\.com/acme/echo/.+$"\n',
        encoding="utf-8",
    )
    # hello stays: no install of its own says the policy's warnings.
    assert nexo("plugin", "hold", "hello", env=env).code == 0
    result = nexo("plugin", "upgrade", "--all", "--yes", "--trusted-keys", policy, env=env)
    assert result.code == 1, result.stderr
    hidden = f"WARNING: {policy}:8:1: authors[1] for owner 'acme' is ignored"
    assert result.stderr.count(hidden) == 1, result.stderr
    lines = result.stderr.splitlines()
    warned = next(n for n, line in enumerate(lines) if line.startswith(hidden))
    refused = next(n for n, line in enumerate(lines) if line.startswith("error: echo: "))
    assert "which is not trusted" in lines[refused], result.stderr
    assert warned < refused, result.stderr
