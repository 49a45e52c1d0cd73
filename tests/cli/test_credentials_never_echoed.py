"""A URL carrying credentials (``https://x-access-token:TOKEN@github.com/…``) given where a
plugin id, a source or a path is expected is refused by every command without echoing the
token, in the error line or in ``--json``: every message goes through one masking."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.cli import clean_env, nexo

SECRET = "ghp_n0tEch0edT0ken"  # noqa: S105 (never sent anywhere: every run is refused first)
URL = f"https://x-access-token:{SECRET}@github.com/acme/nexo-plugin-echo"
SHOWN = "***@github.com/acme/nexo-plugin-echo"

# (argument list, the kind the --json document names); every one is a usage error (exit 2).
COMMANDS = {
    "upgrade": (("upgrade", URL, "--dest", "{root}"), "usage"),
    "upgrade-at": (("upgrade", f"{URL}@v1.0.0", "--dest", "{root}"), "usage"),
    "outdated": (("outdated", URL, "--dest", "{root}"), "usage"),
    "remove": (("remove", URL, "--dest", "{root}", "--yes"), "usage"),
    "rollback": (("rollback", URL, "--dest", "{root}", "--yes"), "usage"),
    "verify": (("verify", URL, "--dest", "{root}"), "usage"),
    "enable": (("enable", URL, "--config", "{config}"), "usage"),
    "disable": (("disable", URL, "--config", "{config}"), "usage"),
    "check": (("check", URL), "target_invalid"),
    "info": (("info", URL, "--config", "{config}"), "source_invalid"),
    "push-dist": (("push", URL, "oci://127.0.0.1:9/plugins/echo"), "usage"),
    "push-reference": (("push", "{dist}", URL), "source_invalid"),
    "lock": (("lock", "-f", "{wanted}", "--config", "{config}"), "wanted_invalid"),
}


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_a_url_with_credentials_is_never_echoed(tmp_path: Path, name: str) -> None:
    command, kind = COMMANDS[name]
    (tmp_path / "config").mkdir()
    (tmp_path / "dist").mkdir()
    wanted = tmp_path / "nexo-plugins.toml"
    wanted.write_text(f'[plugins.echo]\nsource = "{URL}"\n', encoding="utf-8")
    before = sorted(path.relative_to(tmp_path) for path in tmp_path.rglob("*"))
    fields = {
        "root": tmp_path / "root",
        "config": tmp_path / "config",
        "dist": tmp_path / "dist",
        "wanted": wanted,
    }
    args = [part.format(**fields) for part in command]
    env = clean_env(NEXO_HOME=str(tmp_path / "home"))
    for extra in ((), ("--json",)):
        result = nexo("plugin", *args, *extra, env=env, cwd=tmp_path, in_process=True)
        output = result.stdout + result.stderr
        assert SECRET not in output, output
        assert "x-access-token" not in output, output
        assert result.exit_code == 2, output
        error = next(line for line in result.stderr.splitlines() if line.startswith("error:"))
        assert SHOWN in error, error
        if extra:
            assert result.document["ok"] is False
            assert result.document["kind"] == kind, result.document
            assert SHOWN in result.document["error"], result.document
    # Nothing written: no lock, no root, no home.
    assert sorted(path.relative_to(tmp_path) for path in tmp_path.rglob("*")) == before
