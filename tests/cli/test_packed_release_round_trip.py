"""A release as ``nexo plugin new`` + ``nexo plugin pack`` make it, published on the loopback
GitHub stand-in, goes through ``install``, ``list`` and ``verify`` as separate processes: the
API base given by ``--github-api-url`` only, the success document and receipt SPEC §5 names,
the plugin listed, verified, and refused by ``verify`` once one of its files is edited."""

from __future__ import annotations

import hashlib
import json
import socket
from pathlib import Path

from support.cli import clean_env, nexo
from support.github_server import GitHubServer

# The fields the reference installer writes and reads, every one a JSON string.
REFERENCE_FIELDS = (
    "schema_version", "id", "version", "owner", "repo", "tag", "target", "sha256",
    "installed_at", "source",
)  # fmt: skip


def _closed_port_url() -> str:
    """An http URL on a loopback port nothing listens on."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_packed_release_installs_lists_verifies_and_fails_verify_once_edited(
    tmp_path: Path, offline_pip_env: dict[str, str]
) -> None:
    # The environment names an API base nothing answers at: --github-api-url must win.
    env = clean_env(
        NEXO_HOME=str(tmp_path / "home"), NEXO_GITHUB_API_BASE=_closed_port_url(),
        NEXO_HTTP_RETRY_BASE_MS="1", NO_PROXY="127.0.0.1,localhost", **offline_pip_env,
    )  # fmt: skip
    made = nexo("plugin", "new", "weather", "--dest", "weather", env=env, cwd=tmp_path)
    assert made.code == 0, made.stderr
    packed = nexo("plugin", "pack", "weather", "--out", "dist", env=env, cwd=tmp_path)
    assert packed.code == 0, packed.stderr
    dist = tmp_path / "dist"
    tarball = dist / "weather-0.1.0-noarch.tar.gz"
    assert (dist / (tarball.name + ".sha256")).is_file()
    dest = tmp_path / "D"

    with GitHubServer() as server:
        server.publish(
            "acme", "weather", "v0.1.0", {path.name: path.read_bytes() for path in dist.iterdir()}
        )
        done = nexo(
            "plugin", "install", "acme/weather@v0.1.0", "--github-api-url", server.url,
            "--dest", dest, "--yes", "--json", env=env, cwd=tmp_path,
        )  # fmt: skip
    assert done.code == 0, done.stderr
    installed = dest / "weather-0.1.0"
    document = done.document
    assert {key: document[key] for key in ("ok", "id", "version", "target", "path")} == {
        "ok": True, "id": "weather", "version": "0.1.0", "target": "noarch",
        "path": str(installed),
    }  # fmt: skip
    assert document["sha256"] == _sha256(tarball)
    assert document["was_already_present"] is False
    assert document["signature"]["status"] == "unsigned"
    source = document["source"]
    assert (source["type"], source["owner"], source["repo"], source["tag"]) == (
        "github-releases", "acme", "weather", "v0.1.0",
    )  # fmt: skip

    receipt = json.loads((installed / ".nexo-install.json").read_text(encoding="utf-8"))
    assert all(isinstance(receipt[field], str) for field in REFERENCE_FIELDS), receipt
    assert {field: receipt[field] for field in REFERENCE_FIELDS if field != "installed_at"} == {
        "schema_version": "1.0", "id": "weather", "version": "0.1.0", "owner": "acme",
        "repo": "weather", "tag": "v0.1.0", "target": receipt["target"],
        "sha256": _sha256(tarball), "source": "github-releases",
    }  # fmt: skip
    assert receipt["signature"]["status"] == "unsigned"
    tree = {
        path.relative_to(installed).as_posix(): _sha256(path)
        for path in installed.rglob("*")
        if path.is_file() and not path.is_symlink() and path.name != ".nexo-install.json"
    }
    assert receipt["files"] == tree
    assert "bin/weather" in tree
    assert (installed / "bin" / "weather").stat().st_mode & 0o777 == 0o755

    listed = nexo("plugin", "list", "--dest", dest, "--json", env=env, cwd=tmp_path)
    assert listed.code == 0, listed.stderr
    rows = [
        (row["id"], row["version"], row["source"], row["signature"], row["path"])
        for row in listed.document["plugins"]
    ]
    assert rows == [("weather", "0.1.0", "github-releases", "unsigned", str(installed))]

    verified = nexo("plugin", "verify", "weather", "--dest", dest, "--json", env=env, cwd=tmp_path)
    assert verified.code == 0, verified.stdout + verified.stderr
    assert verified.document["ok"] is True

    edited = sorted(name for name in tree if name.endswith(".py"))[0]
    with (installed / edited).open("a", encoding="utf-8") as handle:
        handle.write("# edited after install\n")
    refused = nexo("plugin", "verify", "weather", "--dest", dest, "--json", env=env, cwd=tmp_path)
    assert refused.code == 1, refused.stdout + refused.stderr
    assert refused.document["ok"] is False
    [plugin] = refused.document["plugins"]
    assert (plugin["id"], plugin["ok"], plugin["modified"], plugin["missing"], plugin["extra"]) == (
        "weather", False, [edited], [], [],
    )  # fmt: skip
