"""Every failure line of the fleet commands ends with `` [KIND]``, the kind ``--json`` reports
for the same command line, against the real ``docker-registry`` behind htpasswd basic auth
(the console script, as an operator runs it): ``sync``'s line per failed plugin
(``error: ID: MESSAGE [KIND]``), ``lock``'s line per plugin it cannot lock and its closing
line, and the one line of a refused ``push`` or ``mirror``. A failure leaves what it names
untouched: the other plugins synced, the lock file, the registry's storage."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from support.cli import CliResult, nexo
from support.registry import Registry
from support.tarballs import tree_snapshot

from .conftest import MakeDist, auth_config, push_dist


def _errors(result: CliResult) -> list[str]:
    return [line for line in result.stderr.splitlines() if line.startswith("error: ")]


def _plugin_lines(result: CliResult) -> list[str]:
    """The ``error:`` line sync prints for each plugin its ``--json`` document says failed."""
    return [
        f"error: {item['id']}: {item['error']} [{item['kind']}]"
        for item in result.document["plugins"]
        if item["action"] == "failed"
    ]


@pytest.fixture
def locked(
    tmp_path: Path, fleet_env: dict[str, str], auth_registry: Registry, make_dist: MakeDist,
    policy: Path,
) -> tuple[Path, dict[str, str]]:  # fmt: skip
    """alpha and bravo (signed by acme) pushed to the auth registry and locked; the
    environment that holds the registry's credentials (``REGISTRY_AUTH_FILE``) and trusts
    acme (``NEXO_CONFIG_DIR``)."""
    config = auth_config(tmp_path, auth_registry)
    home = Path(fleet_env["NEXO_HOME"])
    for plugin_id in ("alpha", "bravo"):
        push_dist(make_dist(plugin_id, "1.0.0"), auth_registry.ref(f"p/{plugin_id}"), home, config)
    project = tmp_path / "fleet"
    project.mkdir()
    (project / "nexo-plugins.toml").write_text(
        "".join(
            f'[plugins.{name}]\nsource = "{auth_registry.ref(f"p/{name}")}"\n'
            for name in ("alpha", "bravo")
        ),
        encoding="utf-8",
    )
    daemon_config = tmp_path / "config"
    (daemon_config / "extensions").mkdir(parents=True)
    policy.rename(daemon_config / "extensions" / "trusted_keys.toml")
    (tmp_path / "private_trusted_root.json").rename(
        daemon_config / "extensions" / "private_trusted_root.json"
    )
    env = {
        **fleet_env, "REGISTRY_AUTH_FILE": str(config), "NEXO_CONFIG_DIR": str(daemon_config)
    }  # fmt: skip
    done = nexo("plugin", "lock", "-f", project / "nexo-plugins.toml", "--plain-http", env=env)
    assert done.code == 0, done.stderr
    return project / "nexo-plugins.lock", env


def _sync(lock: Path, dest: Path, env: dict[str, str], home: Path, *extra: str) -> CliResult:
    return nexo(
        "plugin", "sync", "--lock", lock, "--dest", dest, "--frozen", "--plain-http",
        *extra, env={**env, "NEXO_HOME": str(home)},
    )  # fmt: skip


def test_sync_names_each_failed_plugin_with_its_kind_and_syncs_the_others(
    tmp_path: Path, locked: tuple[Path, dict[str, str]]
) -> None:
    lock, env = locked
    # bravo's lock rows name bytes the registry does not serve: only bravo can fail.
    text = lock.read_text(encoding="utf-8")
    head, tail = text.split("[plugins.bravo]\n")
    tail = re.sub(r'^sha256 = "[0-9a-f]{64}"$', f'sha256 = "{"0" * 64}"', tail, flags=re.M)
    lock.write_text(f"{head}[plugins.bravo]\n{tail}", encoding="utf-8")

    as_json = _sync(lock, tmp_path / "root-json", env, tmp_path / "home-json", "--json")
    assert as_json.code == 1, as_json.stderr
    plugins = as_json.document["plugins"]
    states = {item["id"]: (item["action"], item.get("kind")) for item in plugins}
    assert states == {"alpha": ("installed", None), "bravo": ("failed", "checksum_mismatch")}
    # With --json the failed plugin is said on stderr too, in the same words.
    assert _errors(as_json) == _plugin_lines(as_json)

    dest = tmp_path / "root-text"
    as_text = _sync(lock, dest, env, tmp_path / "home-text")
    assert as_text.code == 1, as_text.stderr
    assert as_text.stdout == ""
    assert _errors(as_text) == _plugin_lines(as_json)
    assert [line.rsplit(" [", 1)[1] for line in _errors(as_text)] == ["checksum_mismatch]"]
    # The summary counts the failure: a run that failed does not read as a clean check.
    assert f"{dest}: 1 change(s), 2 plugin(s) checked, 1 failed." in as_text.stderr
    # The others are synced and consistent: alpha installed, nothing of bravo in the root.
    assert sorted(path.name for path in dest.iterdir() if not path.name.startswith(".")) == [
        "alpha-1.0.0"
    ]
    verified = nexo("plugin", "verify", "alpha", "--dest", dest, env=env)
    assert verified.code == 0, verified.stderr

    # A second run: alpha is left as it is, bravo fails again with the same line.
    snapshot = tree_snapshot(dest)
    again = _sync(lock, dest, env, tmp_path / "home-text")
    assert again.code == 1
    assert _errors(again) == _errors(as_text)
    assert tree_snapshot(dest) == snapshot


def test_sync_without_credentials_names_every_plugin_with_registry_auth(
    tmp_path: Path, locked: tuple[Path, dict[str, str]]
) -> None:
    lock, env = locked
    anonymous = {key: value for key, value in env.items() if key != "REGISTRY_AUTH_FILE"}
    as_json = _sync(lock, tmp_path / "root-json", anonymous, tmp_path / "home-json", "--json")
    assert (as_json.code, as_json.document["kind"]) == (1, "sync_failed")
    assert [(item["id"], item["kind"]) for item in as_json.document["plugins"]] == [
        ("alpha", "registry_auth"),
        ("bravo", "registry_auth"),
    ]
    dest = tmp_path / "root-text"
    as_text = _sync(lock, dest, anonymous, tmp_path / "home-text")
    assert as_text.code == 1
    assert _errors(as_text) == _plugin_lines(as_json)
    assert not dest.exists() or not [p for p in dest.iterdir() if not p.name.startswith(".")]


def test_lock_names_every_plugin_it_cannot_lock_with_its_kind_and_keeps_the_lock(
    locked: tuple[Path, dict[str, str]], auth_registry: Registry
) -> None:
    lock, env = locked
    wanted = lock.parent / "nexo-plugins.toml"
    before = lock.read_bytes()
    wanted.write_text(
        wanted.read_text(encoding="utf-8")
        + f'[plugins.ghost]\nsource = "{auth_registry.ref("p/ghost")}"\n'
        + f'[plugins.weather]\nsource = "{auth_registry.ref("p/alpha")}"\nversion = "^9"\n',
        encoding="utf-8",
    )
    command = ("plugin", "lock", "-f", wanted, "--plain-http")
    for run_env, kinds in (
        (env, {"ghost": "release_not_found", "weather": "release_not_found"}),
        # Without credentials every plugin to resolve is named, each as registry_auth.
        (
            {key: value for key, value in env.items() if key != "REGISTRY_AUTH_FILE"},
            {"ghost": "registry_auth", "weather": "registry_auth"},
        ),
    ):
        as_json = nexo(*command, "--json", env=run_env)
        assert as_json.code == 1, as_json.stderr
        document = as_json.document
        failures = document["failures"]
        assert {failure["plugin"]: failure["kind"] for failure in failures} == kinds
        expected = [f"error: {failure['error']} [{failure['kind']}]" for failure in failures]
        expected.append(f"error: {document['error']} [{document['kind']}]")
        assert [failure["error"].split(": ", 1)[0] for failure in failures] == ["ghost", "weather"]
        assert _errors(as_json) == expected
        as_text = nexo(*command, env=run_env)
        assert (as_text.code, as_text.stdout) == (1, "")
        assert _errors(as_text) == expected
        assert lock.read_bytes() == before


def test_refused_push_and_mirror_end_with_their_kind_and_write_nothing(
    tmp_path: Path, fleet_env: dict[str, str], auth_registry: Registry, make_dist: MakeDist,
) -> None:  # fmt: skip
    config = auth_config(tmp_path, auth_registry)
    dist = make_dist("alpha", "1.0.0")
    push_dist(dist, auth_registry.ref("p/alpha"), Path(fleet_env["NEXO_HOME"]), config)
    stored = sorted(auth_registry.blob_files())
    with_credentials = {**fleet_env, "REGISTRY_AUTH_FILE": str(config)}
    for args, run_env, kind in (
        (("push", dist, auth_registry.ref("q/alpha")), fleet_env, "registry_auth"),
        (
            ("mirror", auth_registry.ref("p/alpha:1.0.0"), auth_registry.ref("q/alpha")),
            fleet_env,
            "registry_auth",
        ),
        (
            ("mirror", auth_registry.ref("p/alpha:9.9.9"), auth_registry.ref("q/alpha")),
            with_credentials,
            "release_not_found",
        ),
    ):
        as_json = nexo("plugin", *args, "--plain-http", "--json", env=run_env)
        assert (as_json.code, as_json.document["kind"]) == (1, kind), as_json.stderr
        line = f"error: {as_json.document['error']} [{kind}]"
        assert _errors(as_json) == [line]
        as_text = nexo("plugin", *args, "--plain-http", env=run_env)
        assert (as_text.code, as_text.stdout) == (1, "")
        assert _errors(as_text) == [line]
        assert sorted(auth_registry.blob_files()) == stored
