"""A registry repository bound to a GitHub owner (``registry_owners.toml`` beside the trust
policy) is judged by that owner's ``[[authors]]`` entries, not by the default mode.

The daemon reads ``trusted_keys.toml`` with ``#[serde(deny_unknown_fields)]`` on the root and on
``[[authors]]`` (``crates/ext-installer/src/trusted_keys.rs:54`` and ``:74``), so the binding
lives in a file of its own that the daemon never reads: the policy file stays one it loads.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support.cli import nexo
from support.private_sigstore import PrivateSigstore
from support.registry import Registry

from nexo_pkg.sources.artifact import GitHubOrigin

from .conftest import ACME_IDENTITY, ACME_REGEXP, MakeDist
from .test_registry_boundaries import _push_under

# Signed in acme's organisation, but by a workflow acme's entry does not trust.
OTHER_WORKFLOW = (
    "https://github.com/acme/nexo-plugin-echo/.github/workflows/nightly.yml@refs/tags/v1.2.3"
)


def _policy(tmp_path: Path, private_sigstore: PrivateSigstore) -> Path:
    """``default = "ignore"``; acme's entry requires its release workflow."""
    directory = tmp_path / "policy"
    directory.mkdir()
    root = private_sigstore.write_trusted_root(directory / "private_trusted_root.json")
    path = directory / "trusted_keys.toml"
    path.write_text(
        'schema_version = "1.0"\ndefault = "ignore"\n'
        f'trusted_root = "{root.name}"\n\n'
        f"[[authors]]\nowner = \"acme\"\nidentity_regexp = '^{ACME_REGEXP}$'\n"
        'mode = "require"\n',
        encoding="utf-8",
    )
    return path


def _bind(policy: Path, repository: str, owner: str = "acme") -> Path:
    bindings = policy.parent / "registry_owners.toml"
    bindings.write_text(
        f"# which owner judges copies in a registry repository\n[[registries]]\n"
        f'repository = "{repository}"\nowner = "{owner}"\n',
        encoding="utf-8",
    )
    return bindings


def _push(env: dict[str, str], registry: Registry, dist: Path) -> None:
    """``push`` ``dist`` to ``plugins/echo``: no origin annotation."""
    pushed = nexo(
        "plugin",
        "push",
        str(dist),
        registry.ref("plugins/echo"),
        "--plain-http",
        env=env,
        in_process=True,
    )
    assert pushed.code == 0, pushed.stderr


def _install(
    env: dict[str, str], reference: str, dest: Path, policy: Path
) -> tuple[int, dict[str, object], str]:
    result = nexo(
        "plugin",
        "install",
        reference,
        "--dest",
        str(dest),
        "--plain-http",
        "--trusted-keys",
        str(policy),
        "--yes",
        "--json",
        env=env,
        in_process=True,
    )
    return result.code, result.document, result.stderr


def _installed(dest: Path) -> list[str]:
    return (
        sorted(p.name for p in dest.iterdir() if not p.name.startswith("."))
        if dest.exists()
        else []
    )


@pytest.mark.parametrize("bound", [True, False])
def test_an_unannotated_copy_of_a_bound_repository_is_judged_by_the_owner_s_entry(
    *,
    tmp_path: Path,
    fleet_env: dict[str, str],
    registry: Registry,
    make_dist: MakeDist,
    private_sigstore: PrivateSigstore,
    bound: bool,
) -> None:
    """Signed by acme's release workflow and pushed with no origin: bound, acme's ``require``
    applies and the signature is verified against acme's identity; unbound, the default mode
    (``ignore``) decides and nothing is verified."""
    _push(fleet_env, registry, make_dist())
    policy = _policy(tmp_path, private_sigstore)
    if bound:
        _bind(policy, f"{registry.host}/plugins/echo")
    dest = tmp_path / "plugins"
    code, document, stderr = _install(fleet_env, registry.ref("plugins/echo:1.2.3"), dest, policy)
    assert code == 0, stderr
    signature = document["signature"]
    assert isinstance(signature, dict)
    if bound:
        assert (signature["status"], signature["identity"]) == ("verified", ACME_IDENTITY)
    else:
        assert signature["status"] == "skipped"
    assert _installed(dest) == ["echo-1.2.3"]


@pytest.mark.parametrize("bound", [True, False])
def test_a_bound_owner_s_entry_refuses_a_signer_it_does_not_trust(
    *,
    tmp_path: Path,
    fleet_env: dict[str, str],
    registry: Registry,
    make_dist: MakeDist,
    private_sigstore: PrivateSigstore,
    bound: bool,
) -> None:
    """A copy signed by another workflow: bound, acme's entry refuses it (``signer_untrusted``,
    nothing installed); unbound, the default mode installs it unverified."""
    _push(fleet_env, registry, make_dist(identity=OTHER_WORKFLOW))
    policy = _policy(tmp_path, private_sigstore)
    if bound:
        _bind(policy, f"{registry.host.upper()}/plugins/echo")  # hosts compare case-insensitively
    dest = tmp_path / "plugins"
    code, document, stderr = _install(fleet_env, registry.ref("plugins/echo:1.2.3"), dest, policy)
    if bound:
        assert code == 1, stderr
        assert document["kind"] == "signer_untrusted"
        assert OTHER_WORKFLOW in str(document["error"])
        assert _installed(dest) == []
    else:
        assert code == 0, stderr
        assert _installed(dest) == ["echo-1.2.3"]


def test_a_binding_to_another_owner_than_the_copy_s_origin_is_refused(
    tmp_path: Path,
    fleet_env: dict[str, str],
    registry: Registry,
    make_dist: MakeDist,
    private_sigstore: PrivateSigstore,
) -> None:
    """Whoever pushes may write an origin naming an owner with a laxer entry; the operator's
    binding says whose repository it is, so the contradiction is ``registry_invalid``."""
    dist = make_dist()
    _push_under(
        dist, registry, "plugins/echo", "1.2.3", origin=GitHubOrigin.parse("lax/echo@v1.2.3")
    )
    policy = _policy(tmp_path, private_sigstore)
    _bind(policy, f"{registry.host}/plugins/echo")
    dest = tmp_path / "plugins"
    code, document, stderr = _install(fleet_env, registry.ref("plugins/echo:1.2.3"), dest, policy)
    assert code == 1, stderr
    assert document["kind"] == "registry_invalid"
    assert _installed(dest) == []


@pytest.mark.parametrize(
    ("text", "line", "says"),
    [
        ('[[registries]]\nrepository = "oci://h/x:1"\nowner = "acme"\n', 2, "not a registry"),
        ('[[registries]]\nrepository = "h:5000/x"\nowner = "../evil"\n', 3, "not a GitHub owner"),
        ('[[registries]]\nrepository = "h/x"\n', 1, "has no `owner`"),
        ('[[registries]]\nrepository = "h/x"\nowner = "acme"\nmode = "ignore"\n', 4, "unknown key"),
        (
            '[[registries]]\nrepository = "h/x"\nowner = "acme"\n\n'
            '[[registries]]\nrepository = "H/x"\nowner = "lax"\n',
            6,
            "again",
        ),
        ('registries = "h/x"\n', 1, "array of tables"),
        ("[[registries]\n", 1, "invalid TOML"),
    ],
)
def test_invalid_bindings_stop_the_install_with_policy_invalid(
    *,
    tmp_path: Path,
    fleet_env: dict[str, str],
    registry: Registry,
    private_sigstore: PrivateSigstore,
    text: str,
    line: int,
    says: str,
) -> None:
    policy = _policy(tmp_path, private_sigstore)
    bindings = policy.parent / "registry_owners.toml"
    bindings.write_text(text, encoding="utf-8")
    dest = tmp_path / "plugins"
    code, document, stderr = _install(fleet_env, registry.ref("plugins/echo:1.2.3"), dest, policy)
    assert code == 2, stderr
    assert document["kind"] == "policy_invalid"
    assert str(document["error"]).startswith(f"{bindings}:{line}:")
    assert says in str(document["error"])
    assert not dest.exists()


def test_a_binding_to_an_owner_without_an_entry_is_warned_about(
    tmp_path: Path,
    fleet_env: dict[str, str],
    registry: Registry,
    make_dist: MakeDist,
    private_sigstore: PrivateSigstore,
) -> None:
    """Bound to an owner the policy does not name: the copy gets the default mode, and the
    operator is told (a mistyped owner would otherwise go unseen)."""
    _push(fleet_env, registry, make_dist())
    policy = _policy(tmp_path, private_sigstore)
    _bind(policy, f"{registry.host}/plugins/echo", owner="acme-typo")
    dest = tmp_path / "plugins"
    code, _, stderr = _install(fleet_env, registry.ref("plugins/echo:1.2.3"), dest, policy)
    assert code == 0, stderr
    assert "bound to owner 'acme-typo', which has no [[authors]] entry" in stderr
    assert _installed(dest) == ["echo-1.2.3"]
