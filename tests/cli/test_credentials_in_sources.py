"""A URL given where a source or an owner goes is refused; the token or password pasted with it
(``https://x-access-token:TOKEN@github.com/…``, a download link's ``?token=``) is never echoed,
in text or in ``--json``, as an ``oci://`` reference's credentials are not."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.cli import clean_env, nexo
from support.stderr import without_notes

SECRET = "ghp_s3cr3tT0ken"  # noqa: S105 (never sent anywhere: every run is refused first)

URLS = [
    f"https://x-access-token:{SECRET}@github.com/acme/nexo-plugin-echo",
    f"https://{SECRET}@github.com/acme/nexo-plugin-echo/releases/tag/v1.0.0",
    f"http://user:{SECRET}@example.com/echo-1.0.0-noarch.tar.gz",
    f"https://github.com/acme/echo/releases/download/v1/echo-1.0.0-noarch.tar.gz?token={SECRET}",
    f"https://github.com/acme/echo#{SECRET}",
]


def _workspace(tmp_path: Path) -> tuple[dict[str, str], Path]:
    (tmp_path / "no-config").mkdir()
    return clean_env(NEXO_HOME=str(tmp_path / "home")), tmp_path / "root"


@pytest.mark.parametrize("url", URLS)
@pytest.mark.parametrize(
    "command",
    [
        ("install", "{url}", "--dest", "{root}", "--yes", "--config", "{config}"),
        ("info", "{url}", "--config", "{config}"),
        ("mirror", "{url}", "oci://127.0.0.1:9/plugins/echo"),
        ("trust", "add", "{url}", "--yes", "--config", "{config}"),
    ],
    ids=["install", "info", "mirror", "trust-add"],
)
def test_a_url_source_is_refused_without_echoing_its_credentials(
    tmp_path: Path, url: str, command: tuple[str, ...]
) -> None:
    env, root = _workspace(tmp_path)
    config = tmp_path / "no-config"
    args = [part.format(url=url, root=root, config=config) for part in command]
    for extra in ((), ("--json",)):
        result = nexo(
            "plugin", *args, *extra, env=env, cwd=tmp_path, in_process=True,
        )  # fmt: skip
        assert result.exit_code == 2, result.stderr
        assert SECRET not in result.stdout + result.stderr, result.stdout + result.stderr
        assert "Traceback" not in result.stderr
        assert len(without_notes(result.stderr).strip().splitlines()) == 1, result.stderr
        if extra:
            assert result.document["kind"] == "source_invalid", result.document
    assert not root.exists()
    assert not (tmp_path / "home").exists() or not any((tmp_path / "home").rglob("*.toml"))


def test_a_url_in_a_wanted_set_is_refused_without_echoing_its_credentials(tmp_path: Path) -> None:
    env, _root = _workspace(tmp_path)
    wanted = tmp_path / "nexo-plugins.toml"
    wanted.write_text(f'[plugins.echo]\nsource = "{URLS[0]}"\n', encoding="utf-8")
    for extra in ((), ("--json",)):
        result = nexo(
            "plugin", "lock", "-f", str(wanted), "--config", str(tmp_path / "no-config"), *extra,
            env=env, cwd=tmp_path, in_process=True,
        )  # fmt: skip
        assert result.exit_code == 2, result.stderr
        assert SECRET not in result.stdout + result.stderr
        assert "https://***@github.com/acme/nexo-plugin-echo" in result.stderr
        if extra:
            assert result.document["kind"] == "wanted_invalid", result.document
    assert not (tmp_path / "nexo-plugins.lock").exists()
