"""GitHub sources in a lock, ``lock --upgrade``, and the shared blob cache."""

from __future__ import annotations

import hashlib
import json
import threading
from pathlib import Path

import pytest
from support.cli import nexo
from support.github_server import GitHubServer, github_server
from support.private_sigstore import PrivateSigstore
from support.registry_env import publish_signed_release
from support.tarballs import release_assets, tree_snapshot

from nexo_pkg.core.errors import NexoError
from nexo_pkg.fleet.sources import FleetOptions
from nexo_pkg.fleet.sync import sync
from nexo_pkg.install.api import InstallCallbacks, InstallOptions, InstallPlan
from nexo_pkg.sources.cache import BlobCache, BlobSink

from .conftest import ACME_IDENTITY, LINUX, fleet_run

__all__ = ["github_server"]


def _wants_echo(
    tmp_path: Path, fleet_env: dict[str, str], server: GitHubServer, version: str | None = None
) -> tuple[dict[str, str], Path]:
    """The fleet environment pointed at ``server``, and a ``nexo-plugins.toml`` that wants the
    echo plugin from its GitHub releases (at ``version`` when given)."""
    wanted = tmp_path / "nexo-plugins.toml"
    requirement = f'version = "{version}"\n' if version else ""
    wanted.write_text(f'[plugins.echo]\nsource = "acme/nexo-plugin-echo"\n{requirement}')
    return {**fleet_env, "NEXO_GITHUB_API_BASE": server.url}, wanted


def test_github_sources_lock_sync_and_upgrade(
    *,
    tmp_path: Path,
    fleet_env: dict[str, str],
    github_server: GitHubServer,
    private_sigstore: PrivateSigstore,
    policy: Path,
) -> None:
    publish_signed_release(github_server, private_sigstore, "1.2.3")
    env, wanted = _wants_echo(tmp_path, fleet_env, github_server, "^1.2")
    lock_file = tmp_path / "nexo-plugins.lock"
    common = ("--trusted-keys", str(policy), "--require-signature")
    locked = nexo("plugin", "lock", "-f", str(wanted), *common, env=env, in_process=True)
    assert locked.code == 0, locked.stderr
    text = lock_file.read_text()
    assert 'resolved = "acme/nexo-plugin-echo@v1.2.3"' in text
    assert f'identity = "{ACME_IDENTITY}"' in text

    dest = tmp_path / "root"
    synced = nexo(
        "plugin",
        "sync",
        "--lock",
        str(lock_file),
        "--dest",
        str(dest),
        *common,
        env=env,
        in_process=True,
    )
    assert synced.code == 0, synced.stderr
    receipt = json.loads((dest / "echo-1.2.3" / ".nexo-install.json").read_text())
    assert receipt["source"] == "github-releases"
    assert receipt["tag"] == "v1.2.3"
    assert receipt["signature"]["identity"] == ACME_IDENTITY

    # A newer release does not move the lock until asked, and asking GitHub is not needed.
    publish_signed_release(github_server, private_sigstore, "1.3.0")
    seen = len(github_server.requests)
    again = fleet_run("lock", "-f", wanted, *common, env=env)
    assert again.document["written"] is False
    assert len(github_server.requests) == seen
    upgraded = fleet_run("lock", "-f", wanted, "--upgrade", "echo", *common, env=env)
    assert upgraded.code == 0, upgraded.stderr
    assert upgraded.document["changes"] == {"echo": "1.2.3 -> 1.3.0"}
    replaced = fleet_run(
        "sync", "--lock", lock_file, "--dest", str(dest), "--frozen", *common, env=env
    )
    assert replaced.code == 0, replaced.stderr
    assert replaced.document["plugins"][0]["action"] == "replaced"
    assert sorted(p.name for p in dest.iterdir() if not p.name.startswith(".")) == ["echo-1.3.0"]

    unknown = fleet_run("lock", "-f", wanted, "--upgrade", "nope", env=env)
    assert unknown.code == 2
    assert unknown.document["kind"] == "usage"
    without_flag = nexo(
        "plugin", "lock", "echo", "-f", str(wanted), "--json", env=env, in_process=True
    )
    assert without_flag.code == 2
    assert without_flag.document["kind"] == "usage"
    # --upgrade with no id re-resolves every plugin: already the newest, nothing to write.
    everything = fleet_run("lock", "-f", wanted, "--upgrade", *common, env=env)
    assert everything.code == 0, everything.stderr
    assert everything.document["written"] is False


def test_frozen_syncs_of_a_github_lock_write_the_same_receipts_on_every_host(
    *,
    tmp_path: Path,
    fleet_env: dict[str, str],
    github_server: GitHubServer,
    private_sigstore: PrivateSigstore,
    policy: Path,
) -> None:
    """The lock records the release's publication time; every host's receipt carries it as
    ``installed_at``, so two clean roots end byte-identical, receipts included."""
    publish_signed_release(github_server, private_sigstore, "1.2.3")
    published = github_server.releases[("acme", "nexo-plugin-echo")][0].published_at
    env, wanted = _wants_echo(tmp_path, fleet_env, github_server)
    lock_file = tmp_path / "nexo-plugins.lock"
    common = ("--trusted-keys", str(policy), "--require-signature")
    assert nexo("plugin", "lock", "-f", str(wanted), *common, env=env, in_process=True).code == 0
    assert f'published = "{published}"' in lock_file.read_text()
    roots = []
    for name in ("a", "b"):
        host = {**env, "NEXO_HOME": str(tmp_path / f"home-{name}")}
        dest = tmp_path / f"root-{name}"
        synced = nexo(
            "plugin",
            "sync",
            "--lock",
            str(lock_file),
            "--dest",
            str(dest),
            "--frozen",
            *common,
            env=host,
            in_process=True,
        )
        assert synced.code == 0, synced.stderr
        roots.append(dest)
    assert tree_snapshot(roots[0]) == tree_snapshot(roots[1])
    receipts = [(root / "echo-1.2.3" / ".nexo-install.json").read_bytes() for root in roots]
    assert receipts[0] == receipts[1]
    assert json.loads(receipts[0])["installed_at"] == published

    # A hand-edited publication time that is not one is refused before anything is fetched.
    lock_file.write_text(
        lock_file.read_text().replace(published, "yesterday\\u001b[2J"), encoding="utf-8"
    )
    edited = fleet_run(
        "sync", "--lock", lock_file, "--dest", str(tmp_path / "c"), "--frozen", *common, env=env
    )
    assert edited.code == 2
    assert edited.document["kind"] == "lock_invalid"
    assert "published" in edited.document["error"]
    assert not (tmp_path / "c" / "echo-1.2.3").exists()

    # Without a publication time in the lock, SOURCE_DATE_EPOCH is the receipts' time.
    lock_file.write_text(
        "".join(line for line in lock_file.read_text().splitlines(keepends=True)
                if not line.startswith("published = ")),
        encoding="utf-8",
    )  # fmt: skip
    epoch_env = {**env, "NEXO_HOME": str(tmp_path / "home-d"), "SOURCE_DATE_EPOCH": "1700000000"}
    dated = fleet_run(
        "sync", "--lock", lock_file, "--dest", str(tmp_path / "d"), "--frozen", *common,
        env=epoch_env,
    )  # fmt: skip
    assert dated.code == 0, dated.stderr
    receipt = json.loads((tmp_path / "d" / "echo-1.2.3" / ".nexo-install.json").read_text())
    assert receipt["installed_at"] == "2023-11-14T22:13:20Z"


def test_a_lock_that_names_another_signer_is_refused_at_sync(
    *,
    tmp_path: Path,
    fleet_env: dict[str, str],
    github_server: GitHubServer,
    private_sigstore: PrivateSigstore,
    policy: Path,
) -> None:
    publish_signed_release(github_server, private_sigstore, "1.2.3")
    env, wanted = _wants_echo(tmp_path, fleet_env, github_server)
    assert (
        nexo(
            "plugin",
            "lock",
            "-f",
            str(wanted),
            "--trusted-keys",
            str(policy),
            env=env,
            in_process=True,
        ).code
        == 0
    )
    lock_file = tmp_path / "nexo-plugins.lock"
    other = "https://github.com/acme/nexo-plugin-echo/.github/workflows/other.yml@refs/tags/v1"
    lock_file.write_text(lock_file.read_text().replace(ACME_IDENTITY, other))
    dest = tmp_path / "root"
    refused = fleet_run(
        "sync",
        "--lock",
        lock_file,
        "--dest",
        str(dest),
        "--frozen",
        "--trusted-keys",
        str(policy),
        env=env,
    )
    assert refused.code == 1
    assert refused.document["plugins"][0]["kind"] == "signer_untrusted"
    assert not (dest / "echo-1.2.3").exists()
    # The text report names the plugin once, as for every other failure.
    said = nexo("plugin", "sync", "--lock", str(lock_file), "--dest", str(dest), "--frozen",
                "--trusted-keys", str(policy), env=env, in_process=True)  # fmt: skip
    assert said.code == 1
    assert f"error: echo: the lock records signer {other} (" in said.stderr
    assert "echo: echo:" not in said.stderr
    assert not (dest / "echo-1.2.3").exists()


@pytest.mark.parametrize("lock_names", ["the release's signer", "another signer"])
def test_the_locked_signer_is_a_rule_of_the_install_step_not_of_a_callback(
    *,
    tmp_path: Path,
    fleet_env: dict[str, str],
    github_server: GitHubServer,
    private_sigstore: PrivateSigstore,
    policy: Path,
    lock_names: str,
) -> None:
    """``sync`` called with callbacks that accept every plan: a lock naming the signer of the
    release installs it (the plan reached that confirmation), a lock naming another one is
    refused (``signer_untrusted``) before any plan is shown, and nothing is installed."""
    publish_signed_release(github_server, private_sigstore, "1.2.3")
    env, wanted = _wants_echo(tmp_path, fleet_env, github_server)
    locked = fleet_run("lock", "-f", wanted, "--trusted-keys", str(policy), env=env)
    assert locked.code == 0, locked.stderr
    lock_file = tmp_path / "nexo-plugins.lock"
    if lock_names == "another signer":
        other = "https://github.com/acme/nexo-plugin-echo/.github/workflows/other.yml@refs/tags/v1"
        lock_file.write_text(lock_file.read_text().replace(ACME_IDENTITY, other))
    shown: list[InstallPlan] = []

    def accept(plan: InstallPlan) -> bool:
        shown.append(plan)
        return True

    dest = tmp_path / "root"
    options = InstallOptions(
        dest=dest,
        nexo_home=tmp_path / "home",
        trusted_keys=policy,
        github_api_url=github_server.url,
        retry_base_delay=0.001,
    )
    result = sync(
        lock_file,
        dest,
        FleetOptions(options),
        frozen=True,
        callbacks=InstallCallbacks(confirm=accept, notice=lambda line: None),
    )
    [outcome] = result.outcomes
    if lock_names == "another signer":
        assert (outcome.action, outcome.kind) == ("failed", "signer_untrusted")
        assert outcome.error == (
            f"the lock records signer {other} (https://token.actions.githubusercontent.com"
            f"); the artifact has {ACME_IDENTITY}"
        )
        assert shown == []
        assert [path.name for path in dest.iterdir() if not path.name.startswith(".")] == []
    else:
        assert (outcome.action, outcome.identity) == ("installed", ACME_IDENTITY)
        assert [plan.plugin_id for plan in shown] == ["echo"]
        assert (dest / "echo-1.2.3" / ".nexo-install.json").is_file()


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_the_cache_fetches_a_blob_once_and_survives_concurrent_writers(tmp_path: Path) -> None:
    data = b"plugin bytes" * 10_000
    calls: list[int] = []
    lock = threading.Lock()

    def fetch(sink: BlobSink) -> None:
        with lock:
            calls.append(1)
        for start in range(0, len(data), 4096):
            sink.write(data[start : start + 4096])

    results: list[bytes] = []

    def worker() -> None:
        cache = BlobCache(tmp_path / "home")
        with cache.open_blob(_digest(data), fetch) as path:
            results.append(path.read_bytes())

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == [data] * 8
    store = tmp_path / "home" / "cache" / "blobs" / "sha256"
    assert [p.name for p in store.iterdir()] == [_digest(data)]
    assert not any((tmp_path / "home" / "cache" / "blobs" / "tmp").iterdir())
    calls_before = len(calls)

    # Present with the right hash: never fetched again.
    cache = BlobCache(tmp_path / "home")
    with cache.open_blob(_digest(data), fetch):
        pass
    assert len(calls) == calls_before
    assert cache.hits == 1

    # A blob that no longer matches its name is fetched again.
    blob = store / _digest(data)
    blob.chmod(0o644)
    blob.write_bytes(b"rotten")
    with cache.open_blob(_digest(data), fetch) as path:
        assert path.read_bytes() == data
    assert len(calls) == calls_before + 1


def test_the_cache_refuses_bytes_that_do_not_match_and_keeps_nothing(tmp_path: Path) -> None:
    cache = BlobCache(tmp_path / "home")

    def wrong(sink: BlobSink) -> None:
        sink.write(b"other bytes")

    with pytest.raises(NexoError) as caught, cache.open_blob(_digest(b"expected"), wrong):
        pass
    assert caught.value.kind == "checksum_mismatch"
    assert not any(cache.store.iterdir())
    assert not any(cache.temp.iterdir())


def _store(cache: BlobCache, data: bytes) -> None:
    """Put ``data`` into the cache under the sha256 it hashes to."""
    with cache.open_blob(None, lambda sink: sink.write(data)):
        pass


def test_cache_prune(fleet_env: dict[str, str]) -> None:
    home = Path(fleet_env["NEXO_HOME"])
    cache = BlobCache(home)
    _store(cache, b"fresh")
    (cache.temp / "leftover.part").write_bytes(b"half")
    kept = nexo("plugin", "cache", "prune", "--json", env=fleet_env, in_process=True)
    assert kept.code == 0, kept.stderr
    assert kept.document == {"ok": True, "removed": 1, "freed_bytes": 4, "kept": 1}
    emptied = nexo("plugin", "cache", "prune", "--all", "--json", env=fleet_env, in_process=True)
    assert emptied.document["removed"] == 1
    assert not any(cache.store.iterdir())
    bad = nexo(
        "plugin",
        "cache",
        "prune",
        "--older-than-days",
        "-1",
        "--json",
        env=fleet_env,
        in_process=True,
    )
    assert bad.code == 2
    assert bad.document["kind"] == "usage"


def test_cache_dir_size_clean_as_uv(fleet_env: dict[str, str]) -> None:
    """``cache dir|size|clean`` answer as ``uv cache`` does: path, bytes, emptied."""
    home = Path(fleet_env["NEXO_HOME"])
    where = nexo("plugin", "cache", "dir", env=fleet_env, in_process=True)
    assert (where.code, where.stdout) == (0, f"{home / 'cache' / 'blobs'}\n")
    where = nexo("plugin", "cache", "dir", "--json", env=fleet_env, in_process=True)
    assert where.document == {"ok": True, "path": str(home / "cache" / "blobs")}
    empty = nexo("plugin", "cache", "size", env=fleet_env, in_process=True)
    assert (empty.code, empty.stdout) == (0, "0\n")
    assert not (home / "cache").exists()  # asking creates nothing
    cache = BlobCache(home)
    for index, size in enumerate((1000, 2072)):
        _store(cache, bytes([index]) * size)
    sized = nexo("plugin", "cache", "size", env=fleet_env, in_process=True)
    assert sized.stdout == "3072\n"
    assert (
        nexo("plugin", "cache", "size", "--human", env=fleet_env, in_process=True).stdout
        == "3.0KiB\n"
    )
    assert nexo("plugin", "cache", "size", "--json", env=fleet_env, in_process=True).document == {
        "ok": True, "path": str(cache.root), "blobs": 2, "bytes": 3072,
    }  # fmt: skip
    cleaned = nexo("plugin", "cache", "clean", "--json", env=fleet_env, in_process=True)
    assert cleaned.code == 0, cleaned.stderr
    assert cleaned.document == {"ok": True, "removed": 2, "freed_bytes": 3072, "kept": 0}
    assert not any(cache.store.iterdir())
    assert nexo("plugin", "cache", "size", env=fleet_env, in_process=True).stdout == "0\n"


def test_lock_binds_a_signature_to_the_release_it_was_made_for(
    *,
    tmp_path: Path,
    fleet_env: dict[str, str],
    github_server: GitHubServer,
    private_sigstore: PrivateSigstore,
    policy: Path,
) -> None:
    # v1.3.0 carries a bundle made by the v1.2.3 release run: valid, trusted signer, wrong tag.
    assets = release_assets("echo", "1.3.0", target=LINUX)
    name = f"echo-1.3.0-{LINUX}.tar.gz"
    bundle = private_sigstore.sign(assets[name], identity=ACME_IDENTITY)
    assets[name + ".sigstore.json"] = json.dumps(bundle).encode()
    github_server.publish("acme", "nexo-plugin-echo", "v1.3.0", assets)
    env, wanted = _wants_echo(tmp_path, fleet_env, github_server)
    refused = fleet_run("lock", "-f", wanted, "--trusted-keys", str(policy), env=env)
    assert refused.code == 1
    assert refused.document["kind"] == "signer_untrusted"
    assert not (tmp_path / "nexo-plugins.lock").exists()


def test_no_signature_request_when_signatures_are_not_verified(
    *,
    tmp_path: Path,
    fleet_env: dict[str, str],
    github_server: GitHubServer,
    private_sigstore: PrivateSigstore,
    policy: Path,
) -> None:
    """lock and sync with --skip-signature-verify ask neither the attestations endpoint nor
    for the signature assets; the same release verified does (the check can fail)."""
    publish_signed_release(github_server, private_sigstore, "1.2.3")
    name = f"echo-1.2.3-{LINUX}.tar.gz"
    release = github_server.releases[("acme", "nexo-plugin-echo")][0]
    signature_path = github_server.asset_api_url(release, name + ".sigstore.json").removeprefix(
        github_server.url
    )
    env, wanted = _wants_echo(tmp_path, fleet_env, github_server, "^1.2")
    lock_file = tmp_path / "nexo-plugins.lock"
    locked = nexo(
        "plugin", "lock", "-f", str(wanted), "--skip-signature-verify", env=env, in_process=True
    )
    assert locked.code == 0, locked.stderr
    synced = nexo(
        "plugin",
        "sync",
        "--lock",
        str(lock_file),
        "--dest",
        str(tmp_path / "root"),
        "--skip-signature-verify",
        env=env,
        in_process=True,
    )
    assert synced.code == 0, synced.stderr
    assert github_server.requests_to("/attestations/") == []
    assert github_server.requests_to(signature_path) == []
    verified = nexo(
        "plugin",
        "sync",
        "--lock",
        str(lock_file),
        "--dest",
        str(tmp_path / "again"),
        "--trusted-keys",
        str(policy),
        env=env,
        in_process=True,
    )
    assert verified.code == 0, verified.stderr
    assert github_server.requests_to(signature_path)


def test_lock_names_a_changed_source_not_a_version_that_did_not_change(
    *, tmp_path: Path, fleet_env: dict[str, str], github_server: GitHubServer
) -> None:
    """The wanted set moves echo to another repository publishing the same release: the lock
    is rewritten for the new source, and its change says so rather than ``1.2.3 -> 1.2.3``
    (or nothing at all)."""
    assets = release_assets("echo", "1.2.3", target=LINUX)
    for repo in ("nexo-plugin-echo", "echo-mirror"):
        github_server.publish("acme", repo, "v1.2.3", assets)
    env, wanted = _wants_echo(tmp_path, fleet_env, github_server)
    first = fleet_run("lock", "-f", wanted, env=env)
    assert first.code == 0, first.stderr
    assert first.document["changes"] == {"echo": "locked 1.2.3"}
    wanted.write_text('[plugins.echo]\nsource = "acme/echo-mirror"\n')
    moved = fleet_run("lock", "-f", wanted, env=env)
    assert moved.code == 0, moved.stderr
    assert moved.document["written"] is True
    assert moved.document["changes"] == {
        "echo": "1.2.3 (source acme/nexo-plugin-echo -> acme/echo-mirror)"
    }
    assert 'source = "acme/echo-mirror"' in (tmp_path / "nexo-plugins.lock").read_text()


@pytest.mark.parametrize(
    "case",
    [
        ("oci://registry.example.com/nexo/echo", ("--plain-http",), "usage"),
        (
            "oci://127.0.0.1:1/nexo/echo",
            ("--plain-http", "--registry-config", "{tmp}/absent.json"),
            "registry_config",
        ),
        ("oci://127.0.0.1:1/nexo/echo", ("--plain-http", "SOURCE_DATE_EPOCH=soon"), "usage"),
    ],
    ids=["plain-http-to-a-remote-registry", "unreadable-registry-config", "source-date-epoch"],
)
def test_mirror_refuses_a_destination_it_cannot_use_before_fetching_the_release(
    tmp_path: Path,
    fleet_env: dict[str, str],
    github_server: GitHubServer,
    private_sigstore: PrivateSigstore,
    case: tuple[str, tuple[str, ...], str],
) -> None:
    destination, flags, kind = case
    publish_signed_release(github_server, private_sigstore, "1.2.3")
    env = {**fleet_env, "NEXO_GITHUB_API_BASE": github_server.url}
    env.update(flag.partition("=")[::2] for flag in flags if "=" in flag)  # the environment
    filled = [flag.replace("{tmp}", str(tmp_path)) for flag in flags if "=" not in flag]
    result = nexo(
        "plugin", "mirror", "acme/nexo-plugin-echo@v1.2.3", destination, *filled, "--json",
        env=env, in_process=True,
    )  # fmt: skip
    assert (result.code, result.document["kind"]) == (2, kind), result.stdout
    assert github_server.requests_to("/") == []  # a usage error: nothing asked, nothing fetched
    blobs = Path(fleet_env["NEXO_HOME"]) / "cache" / "blobs" / "sha256"
    assert not blobs.exists() or not any(blobs.iterdir())
