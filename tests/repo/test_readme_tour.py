"""README.md's tour runs as written, on a clean home: every ``nexo`` line of its block, in
order, read from the README itself. Where the tour pushes and tags (the scaffolded workflow
releases the plugin to ``acme/nexo-plugin-weather``, signed), the test publishes the tarball
``pack`` made to the loopback GitHub stand-in, signed by the test-only Sigstore instance with
the identity of that workflow at that tag; the one policy setting it starts from names that
instance's trusted root. A command that asks on a terminal (``trust add``) gets ``--yes``,
the answer a user types there."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

from support.cli import CliResult, clean_env, nexo
from support.github_server import GitHubServer, github_server
from support.private_sigstore import PrivateSigstore
from support.registry_env import private_sigstore

__all__ = ["github_server", "private_sigstore"]

REPO = Path(__file__).resolve().parents[2]
WORKFLOW = "https://github.com/acme/nexo-plugin-weather/.github/workflows/release.yml"


def tour() -> list[str]:
    """The lines of the README's tour block, comments and blank lines dropped."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    _, _, after = text.partition("## A tour\n")
    block = re.search(r"^```bash\n(.*?)^```", after, re.MULTILINE | re.DOTALL)
    assert block is not None
    return [line for raw in block.group(1).splitlines() if (line := raw.split("#")[0].strip())]


def _publish(github: GitHubServer, signer: PrivateSigstore, dist: Path) -> None:
    """What the scaffolded release workflow uploads on tag v0.1.0, the tarball signed."""
    assets = {path.name: path.read_bytes() for path in sorted(dist.iterdir())}
    tarball = "weather-0.1.0-noarch.tar.gz"
    bundle = signer.sign(assets[tarball], identity=f"{WORKFLOW}@refs/tags/v0.1.0")
    assets[f"{tarball}.sigstore.json"] = json.dumps(bundle).encode()
    github.publish("acme", "nexo-plugin-weather", "v0.1.0", assets)


def test_the_readme_tour_runs_as_written(
    tmp_path: Path,
    github_server: GitHubServer,
    private_sigstore: PrivateSigstore,
    offline_pip_env: dict[str, str],
) -> None:
    home = tmp_path / "home"
    policy = home / ".nexo" / "config" / "extensions" / "trusted_keys.toml"
    policy.parent.mkdir(parents=True)
    private_sigstore.write_trusted_root(policy.parent / "private_trusted_root.json")
    policy.write_text(
        'schema_version = "1.0"\ntrusted_root = "private_trusted_root.json"\n', encoding="utf-8"
    )
    env = clean_env(HOME=str(home), NEXO_GITHUB_API_BASE=github_server.url,
                    NEXO_HTTP_RETRY_BASE_MS="1", NO_PROXY="127.0.0.1,localhost",
                    **offline_pip_env)  # fmt: skip
    for name in ("NEXO_HOME", "NEXO_CONFIG_DIR", "XDG_CACHE_HOME"):
        env.pop(name, None)
    cwd = tmp_path / "work"
    cwd.mkdir()

    lines = tour()
    assert lines[:2] == ["nexo plugin new weather --lang python --owner acme", "cd weather"]
    ran: dict[str, CliResult] = {}
    for line in lines:
        words = shlex.split(line)
        if words[0] == "cd":
            cwd /= words[1]
            continue
        assert words[:2] == ["nexo", "plugin"], line
        if words[2:4] == ["trust", "add"]:
            _publish(github_server, private_sigstore, cwd / "dist")
            words.append("--yes")
        result = nexo(*words[1:], env=env, cwd=cwd, timeout=300)
        assert result.code == 0, f"{line}\n{result.stderr}"
        ran[line] = result

    assert sorted(path.name for path in (cwd / "dist").iterdir()) == [
        "nexo-plugin.toml",
        "weather-0.1.0-noarch.cdx.json",
        "weather-0.1.0-noarch.tar.gz",
        "weather-0.1.0-noarch.tar.gz.sha256",
    ]
    # The GitHub release, Sigstore-verified, in place of the same version from the file.
    [row] = ran["nexo plugin list"].stdout.splitlines()
    assert row.split()[:4] == ["weather", "0.1.0", "acme/nexo-plugin-weather@v0.1.0", "verified"]
    assert ran["nexo plugin verify weather"].stdout.split()[:3] == ["ok", "weather", "0.1.0"]
    assert "[[authors]]" in policy.read_text(encoding="utf-8")
