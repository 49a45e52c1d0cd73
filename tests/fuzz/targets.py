"""The files the command line reads, each laid out valid with the commands that read it.

Valid inputs come from the scaffold (``nexo plugin new``), the test support's tarballs and the
shared fixtures (the real Sigstore bundle). A fleet's lock file is written by ``nexo plugin
lock`` against the loopback GitHub stand-in, whose URL every build is given.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import shutil
import subprocess
import tarfile
from pathlib import Path

from support.shared_fixtures import require_shared_fixture
from support.tarballs import manifest_text, plugin_members, plugin_tarball, targz, write_plugin

from .mutation import NEXO, Target, Workspace, base_env

PLUGIN = "echo"
VERSION = "1.0.0"
TARBALL = f"{PLUGIN}-{VERSION}-noarch.tar.gz"
OWNER, REPO = "acme", "nexo-plugin-echo"
WHEEL = "rfc8785-0.1.2-py3-none-any.whl"  # the real Sigstore test vector of the shared fixtures
AGENTS_YAML = (
    "agents:\n"
    "  - id: ana\n"
    "    extensions_config:\n"
    "      notes: {region: bogota}\n"
    "    model: {provider: minimax, model: m}\n"
    "  - id: bob\n"
    "    extensions_config: null\n"
    "    model: {provider: minimax, model: m}\n"
)
TRUSTED_SIGNER = (
    'default = "warn"\n\n'
    "[[authors]]\n"
    'owner = "trailofbits"\n'
    'identity_regexp = "^https://github\\\\.com/trailofbits/rfc8785\\\\.py/\\\\.github/workflows/'
    'release\\\\.yml@refs/tags/.+$"\n'
    'oidc_issuer = "https://token.actions.githubusercontent.com"\n'
    'repos = ["rfc8785.py"]\n'
)


def _nexo(env: dict[str, str], cwd: Path, *args: str) -> None:
    subprocess.run([NEXO, *args], env=env, cwd=cwd, check=True, capture_output=True, timeout=120)


def _installed(directory: Path, env: dict[str, str]) -> Path:
    """An install root under ``directory`` holding ``echo`` installed from a local tarball."""
    dist = directory / "dist"
    write_plugin(dist, PLUGIN, VERSION)
    root = directory / "root"
    _nexo(env, directory, "plugin", "install", str(dist / TARBALL), "--dest", str(root), "--yes")
    return root


def _root_commands(root: Path) -> list[list[str]]:
    dest = ["--dest", str(root)]
    return [
        ["plugin", "list", *dest, "--json"],
        ["plugin", "list", *dest],
        ["plugin", "verify", *dest, "--json"],
        ["plugin", "verify", PLUGIN, *dest],
        ["plugin", "doctor", "--no-check", *dest, "--json"],
        ["plugin", "sbom", PLUGIN, *dest],
        ["plugin", "outdated", *dest, "--json"],
    ]


def _sidecar_for(tarball: Path, data: bytes) -> None:
    """Write ``tarball``'s ``.sha256`` sidecar for ``data``, so a mutant gets past the digest."""
    text = f"{hashlib.sha256(data).hexdigest()}  {tarball.name}\n"
    tarball.with_name(f"{tarball.name}.sha256").write_text(text, encoding="utf-8")


def _release_sbom(directory: Path) -> Workspace:
    """The ``sbom.cdx.json`` a packed tarball carries, read by ``install`` and ``sbom``."""
    env = base_env(directory / "home")
    _nexo(env, directory, "plugin", "new", PLUGIN, "--lang", "python")
    (directory / PLUGIN / "requirements.txt").write_text("", encoding="utf-8")
    dist = directory / "dist"
    _nexo(env, directory, "plugin", "pack", PLUGIN, "--out", str(dist))
    tarball = next(dist.glob("*.tar.gz"))  # the scaffold's version
    with tarfile.open(tarball) as archive:
        members = [
            (member, archive.extractfile(member).read() if member.isfile() else b"")  # type: ignore[union-attr]
            for member in archive.getmembers()
        ]
    sbom = directory / "sbom.cdx.json"
    sbom.write_bytes(next(data for member, data in members if member.name == "sbom.cdx.json"))
    root = directory / "root"

    def repack(mutant: bytes) -> None:
        stream = io.BytesIO()
        with tarfile.open(fileobj=stream, mode="w:gz") as archive:
            for member, data in members:
                body = mutant if member.name == "sbom.cdx.json" else data
                member.size = len(body)
                archive.addfile(member, io.BytesIO(body) if member.isfile() else None)
        tarball.write_bytes(stream.getvalue())
        _sidecar_for(tarball, stream.getvalue())

    dest = ["--dest", str(root)]
    return Workspace(
        sbom, sbom.read_bytes(), "json",
        [
            ["plugin", "install", str(tarball), *dest, "--yes", "--json"],
            ["plugin", "sbom", PLUGIN, *dest, "--json"],
            ["plugin", "sbom", PLUGIN, *dest],
            ["plugin", "list", *dest, "--json"],
        ],
        env, directory, scratch=[root], after_write=repack,
    )  # fmt: skip


def _plugin_manifest(directory: Path) -> Workspace:
    env = base_env(directory / "home")
    _nexo(env, directory, "plugin", "new", PLUGIN, "--lang", "python")
    project = directory / PLUGIN
    (project / "requirements.txt").write_text("", encoding="utf-8")  # nothing to vendor
    manifest = project / "plugin.toml"
    out = directory / "out"
    return Workspace(
        manifest, manifest.read_bytes(), "toml",
        [
            ["plugin", "lint", str(manifest)],
            ["plugin", "lint", str(manifest), "--format", "json"],
            ["plugin", "lint", "--format", "sarif", str(project)],
            ["plugin", "pack", str(project), "--out", str(out)],
        ],
        env, directory, scratch=[out],
    )  # fmt: skip


def _release_manifest(directory: Path) -> Workspace:
    """The ``nexo-plugin.toml`` inside a release tarball, installed from a local file."""
    env = base_env(directory / "home")
    manifest = directory / "nexo-plugin.toml"
    tarball = directory / TARBALL
    root = directory / "root"

    def repack(data: bytes) -> None:
        text = data.decode("utf-8", "surrogateescape").encode("utf-8", "surrogateescape")
        members = plugin_members(PLUGIN, VERSION)
        members[0].data = text
        data = targz(members)
        tarball.write_bytes(data)
        _sidecar_for(tarball, data)

    return Workspace(
        manifest, manifest_text(PLUGIN, VERSION).encode(), "toml",
        [
            ["plugin", "lint", str(manifest), "--format", "json"],
            ["plugin", "install", str(tarball), "--dest", str(root), "--yes", "--json"],
            ["plugin", "install", str(tarball), "--dest", str(root), "--yes"],
        ],
        env, directory, scratch=[root], after_write=repack,
    )  # fmt: skip


def _microapp(name: str) -> Target:
    def build(directory: Path) -> Workspace:
        env = base_env(directory / "home")
        _nexo(env, directory, "plugin", "new", "notes", "--kind", "microapp")
        project = directory / "notes"
        manifest = project / name
        out = directory / "out"
        return Workspace(
            manifest, manifest.read_bytes(), "toml",
            [
                ["plugin", "lint", str(project)],
                ["plugin", "lint", str(project), "--format", "json"],
                ["plugin", "pack", str(project), "--out", str(out)],
            ],
            env, directory, scratch=[out],
        )  # fmt: skip

    return Target(f"microapp-{name}", build)


def _daemon_yaml(name: str) -> Target:
    def build(directory: Path) -> Workspace:
        env = base_env(directory / "home")
        _nexo(env, directory, "plugin", "new", "notes", "--kind", "microapp")
        config = directory / "config"
        config.mkdir()
        # extensions.yaml's search path ./extensions is the daemon's working directory's.
        (directory / "extensions").mkdir()
        shutil.move(directory / "notes", directory / "extensions" / "notes")
        example = directory / "extensions" / "notes" / "extensions.yaml.example"
        (config / "extensions.yaml").write_text(
            example.read_text(encoding="utf-8").replace("notes_fz", "notes"), encoding="utf-8"
        )
        (config / "agents.yaml").write_text(AGENTS_YAML, encoding="utf-8")
        root = _installed(directory, env)
        target = config / name
        return Workspace(
            target, target.read_bytes(), "yaml",
            [
                ["plugin", "lint", "--config", str(config)],
                ["plugin", "lint", "--config", str(config), "--format", "json"],
                ["plugin", "doctor", "--no-check", "--config", str(config), "--dest",
                 str(root), "--json"],
            ],
            env, directory,
        )  # fmt: skip

    return Target(name.replace(".", "-"), build)


def _discovery(directory: Path) -> Workspace:
    env = base_env(directory / "home")
    root = _installed(directory, env)
    config = directory / "config"
    (config / "plugins").mkdir(parents=True)
    discovery = config / "plugins" / "discovery.yaml"
    discovery.write_text(
        f"# where the daemon looks\ndiscovery:\n  search_paths:\n    - {root}\n  disabled: []\n"
        "  follow_symlinks: false\n",
        encoding="utf-8",
    )
    at = ["--config", str(config)]
    return Workspace(
        discovery, discovery.read_bytes(), "yaml",
        [
            ["plugin", "list", *at, "--json"],
            ["plugin", "doctor", "--no-check", *at, "--json"],
            ["plugin", "disable", PLUGIN, *at, "--yes", "--json"],
            ["plugin", "enable", PLUGIN, *at, "--json"],
        ],
        env, directory,
    )  # fmt: skip


def _trusted_keys(directory: Path) -> Workspace:
    env = base_env(directory / "home")
    policy = directory / "trusted_keys.toml"
    dist = directory / "dist"
    write_plugin(dist, PLUGIN, VERSION)
    wheel = require_shared_fixture("sigstore", WHEEL)
    bundle = require_shared_fixture("sigstore", f"{WHEEL}.sigstore.json")
    root = directory / "root"
    keys = ["--trusted-keys", str(policy)]
    return Workspace(
        policy, TRUSTED_SIGNER.encode(), "toml",
        [
            ["plugin", "trust", "list", *keys, "--json"],
            ["plugin", "trust", "list", *keys],
            ["plugin", "trust", "verify", str(wheel), "--bundle", str(bundle), *keys, "--json"],
            ["plugin", "install", str(dist / TARBALL), "--dest", str(root), *keys, "--yes",
             "--json"],
        ],
        env, directory, scratch=[root],
    )  # fmt: skip


def _bundle(directory: Path) -> Workspace:
    env = base_env(directory / "home")
    policy = directory / "trusted_keys.toml"
    policy.write_text(TRUSTED_SIGNER, encoding="utf-8")
    wheel = require_shared_fixture("sigstore", WHEEL)
    valid = require_shared_fixture("sigstore", f"{WHEEL}.sigstore.json").read_bytes()
    bundle = directory / "bundle.sigstore.json"
    verify = ["plugin", "trust", "verify", str(wheel), "--bundle", str(bundle)]
    return Workspace(
        bundle, valid, "json",
        [[*verify, "--trusted-keys", str(policy), "--json"], [*verify, "--trusted-keys",
                                                              str(policy)]],
        env, directory,
    )  # fmt: skip


def _sidecar(directory: Path) -> Workspace:
    env = base_env(directory / "home")
    dist = directory / "dist"
    write_plugin(dist, PLUGIN, VERSION)
    sidecar = dist / f"{TARBALL}.sha256"
    root = directory / "root"
    install = ["plugin", "install", str(dist / TARBALL), "--dest", str(root), "--yes"]
    return Workspace(
        sidecar, sidecar.read_bytes(), "text", [[*install, "--json"], install],
        env, directory, scratch=[root],
    )  # fmt: skip


def _tarball(directory: Path) -> Workspace:
    env = base_env(directory / "home")
    dist = directory / "dist"
    write_plugin(dist, PLUGIN, VERSION)
    tarball = dist / TARBALL
    root = directory / "root"
    install = ["plugin", "install", str(tarball), "--dest", str(root), "--yes"]
    return Workspace(
        tarball, plugin_tarball(PLUGIN, VERSION), "tar.gz",
        [[*install, "--json"], install, ["plugin", "info", str(tarball), "--json"]],
        env, directory, scratch=[root], after_write=lambda data: _sidecar_for(tarball, data),
    )  # fmt: skip


def _installed_file(relative: str, fmt: str) -> Target:
    def build(directory: Path) -> Workspace:
        env = base_env(directory / "home")
        root = _installed(directory, env)
        target = root / f"{PLUGIN}-{VERSION}" / relative
        return Workspace(target, target.read_bytes(), fmt, _root_commands(root), env, directory)

    return Target(f"installed-{relative.lstrip('.').replace('.', '-')}", build)


def _fleet(api: str, name: str) -> Target:
    def build(directory: Path) -> Workspace:
        env = base_env(directory / "home", NEXO_GITHUB_API_BASE=api)
        fleet = directory / "fleet"
        fleet.mkdir()
        (fleet / "nexo-plugins.toml").write_text(
            f'[plugins.{PLUGIN}]\nsource = "{OWNER}/{REPO}"\n', encoding="utf-8"
        )
        _nexo(env, fleet, "plugin", "lock")
        root = directory / "root"
        target = fleet / name
        dest = ["--dest", str(root)]
        return Workspace(
            target, target.read_bytes(), "toml",
            [
                ["plugin", "lock", "--check", "--json"],
                ["plugin", "lock", "--json"] if name.endswith(".toml") else
                ["plugin", "sync", *dest, "--json"],
                ["plugin", "sync", "--dry-run", *dest, "--json"],
                ["plugin", "sync", "--dry-run", "--frozen", *dest],
            ],
            env, fleet, scratch=[root],
        )  # fmt: skip

    return Target(name.replace(".", "-"), build)


def _attestation(label: str, name: str, artifact: str, *, root: bool = False) -> Target:
    """A GitHub attestation (a bundle, or a ``.jsonl`` of them) or, with ``root``, the trusted
    root a policy names for GitHub's own Sigstore instance, checked by ``trust verify``."""

    def build(directory: Path) -> Workspace:
        env = base_env(directory / "home")
        fixtures = require_shared_fixture("github-attestations")
        policy = directory / "trusted_keys.toml"
        policy.write_text('trusted_root = "trusted_root.json"\n', encoding="utf-8")
        shutil.copy(fixtures / "trusted_root.json", directory / "trusted_root.json")
        target = directory / ("trusted_root.json" if root else name)
        if not root:
            shutil.copy(fixtures / name, target)
        verify = ["plugin", "trust", "verify", str(fixtures / artifact), "--bundle",
                  str(directory / name if not root else fixtures / name), "--trusted-keys",
                  str(policy)]  # fmt: skip
        fmt = "text" if name.endswith(".jsonl") and not root else "json"
        return Workspace(target, target.read_bytes(), fmt, [[*verify, "--json"], verify], env,
                         directory)  # fmt: skip

    return Target(label, build)


def _journal(directory: Path) -> Workspace:
    """A replacement journal an interrupted run left in the root, replayed by the next one."""
    env = base_env(directory / "home")
    root = _installed(directory, env)
    journal = root / ".nexo" / "journal" / "0123456789abcdef.json"
    journal.parent.mkdir(parents=True)
    installed = f"{PLUGIN}-{VERSION}"
    record = {
        "final": installed,
        "staged": f".nexo/staging/1/{installed}",
        "moves": [[installed, f".nexo/removing/1/{installed}"]],
    }
    return Workspace(
        journal, json.dumps(record).encode(), "json",
        [*_root_commands(root)[:4], ["plugin", "remove", "absent", "--dest", str(root), "--yes",
                                     "--json"]],
        env, directory, consumed=True,
    )  # fmt: skip


def _hold(directory: Path) -> Workspace:
    env = base_env(directory / "home")
    root = _installed(directory, env)
    _nexo(env, directory, "plugin", "hold", PLUGIN, "--dest", str(root))
    hold = root / ".nexo" / "holds" / f"{PLUGIN}.json"
    dest = ["--dest", str(root)]
    return Workspace(
        hold, hold.read_bytes(), "json",
        [
            ["plugin", "list", *dest, "--json"],
            ["plugin", "outdated", *dest, "--json"],
            ["plugin", "upgrade", PLUGIN, *dest, "--dry-run", "--json"],
            ["plugin", "unhold", PLUGIN, *dest, "--json"],
        ],
        env, directory,
    )  # fmt: skip


def _lint_config(directory: Path) -> Workspace:
    env = base_env(directory / "home")
    _nexo(env, directory, "plugin", "new", PLUGIN, "--lang", "python")
    config = directory / ".nexo.toml"
    valid = (
        '[lint]\nselect = ["NX"]\nignore = ["NX101"]\nexclude = ["build"]\n\n'
        '[lint.per-file-ignores]\n"echo/*.toml" = ["NX201"]\n'
    )
    return Workspace(
        config, valid.encode(), "toml",
        [["plugin", "lint"], ["plugin", "lint", "--format", "json", PLUGIN]],
        env, directory,
    )  # fmt: skip


def _registry_config(directory: Path) -> Workspace:
    env = base_env(directory / "home")
    credentials = directory / "config.json"
    valid = json.dumps(
        {"auths": {"127.0.0.1:9": {"auth": base64.b64encode(b"user:secret").decode()}}}
    )
    (directory / "nexo-plugins.toml").write_text(
        f'[plugins.{PLUGIN}]\nsource = "oci://127.0.0.1:9/plugins/{PLUGIN}:{VERSION}"\n',
        encoding="utf-8",
    )
    root = directory / "root"
    registry = ["--registry-config", str(credentials), "--plain-http", "--timeout", "2"]
    return Workspace(
        credentials, valid.encode(), "json",
        [
            ["plugin", "lock", *registry, "--json"],
            ["plugin", "install", f"oci://127.0.0.1:9/plugins/{PLUGIN}:{VERSION}", "--dest",
             str(root), *registry, "--yes", "--json"],
        ],
        env, directory, scratch=[root],
    )  # fmt: skip


def publish_echo(server: object) -> None:
    """Publish ``acme/nexo-plugin-echo`` v1.0.0 on the GitHub stand-in ``server``."""
    data = plugin_tarball(PLUGIN, VERSION)
    sidecar = f"{hashlib.sha256(data).hexdigest()}  {TARBALL}\n".encode()
    server.publish(OWNER, REPO, f"v{VERSION}", {TARBALL: data, f"{TARBALL}.sha256": sidecar})  # type: ignore[attr-defined]


def targets(api: str) -> list[Target]:
    """Every kind of file, the fleet's against the GitHub stand-in at ``api``."""
    return [
        Target("plugin-toml", _plugin_manifest),
        Target("release-manifest", _release_manifest),
        _microapp("plugin.toml"),
        _microapp("nexo-plugin.toml"),
        _daemon_yaml("extensions.yaml"),
        _daemon_yaml("agents.yaml"),
        Target("discovery-yaml", _discovery),
        Target("trusted-keys", _trusted_keys),
        Target("sigstore-bundle", _bundle),
        Target("sha256-sidecar", _sidecar),
        Target("tarball", _tarball),
        _installed_file(".nexo-install.json", "json"),
        _installed_file("nexo-plugin.toml", "toml"),
        _fleet(api, "nexo-plugins.toml"),
        _fleet(api, "nexo-plugins.lock"),
        _attestation(
            "attestation-reusable",
            "reusable-workflow-attestation.sigstore.json",
            "reusable-workflow-artifact",
        ),
        _attestation(
            "attestation-custom-issuer", "custom-issuer.sigstore.json", "custom-issuer-artifact"
        ),
        _attestation(
            "attestations-jsonl",
            "github_provenance_demo-0.0.12-py3-none-any-bundle.jsonl",
            "github_provenance_demo-0.0.12-py3-none-any.whl",
        ),
        _attestation(
            "trusted-root",
            "github_provenance_demo-0.0.12-py3-none-any-bundle.jsonl",
            "github_provenance_demo-0.0.12-py3-none-any.whl",
            root=True,
        ),
        Target("release-sbom", _release_sbom),
        Target("journal", _journal),
        Target("hold", _hold),
        Target("lint-config", _lint_config),
        Target("registry-config", _registry_config),
    ]
