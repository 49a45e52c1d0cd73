"""The editor and pre-commit snippets of docs/editors.md do what they promise.

Each client snippet attaches the server to every file type it lints: TOML for the manifests
and YAML for the daemon's ``extensions.yaml``/``agents.yaml`` (attached to TOML only, those got
no diagnostics). A ``rev`` that names a release tag names one the repository has: nexo-pkg has
none yet, and pre-commit cannot fetch a tag that does not exist.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

from nexo_pkg.lsp.server import document_kind

ROOT = Path(__file__).resolve().parents[2]
EDITORS = (ROOT / "docs" / "editors.md").read_text("utf-8")


def _blocks(language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", EDITORS, flags=re.DOTALL | re.MULTILINE)


def test_the_server_lints_yaml_documents_the_snippets_must_attach() -> None:
    # The premise: daemon config files are documents of the server, and they are YAML.
    assert document_kind("file:///etc/nexo/config/extensions.yaml") == "daemon-config"
    assert document_kind("file:///etc/nexo/config/agents.d/ops.yaml") == "daemon-config"
    assert document_kind("file:///p/plugin.toml") == "manifest"


def test_neovim_snippets_attach_toml_and_yaml() -> None:
    lua = [block for block in _blocks("lua") if "filetypes" in block]
    assert len(lua) == 2  # vim.lsp.config, and nvim-lspconfig's registration
    for block in lua:
        [filetypes] = re.findall(r"filetypes = \{([^}]*)\}", block)
        assert re.findall(r'"(\w+)"', filetypes) == ["toml", "yaml"], block


def test_helix_snippet_attaches_toml_and_yaml() -> None:
    [helix] = [block for block in _blocks("toml") if "[language-server.nexo]" in block]
    config = tomllib.loads(helix)
    assert config["language-server"]["nexo"] == {"command": "nexo", "args": ["plugin", "lsp"]}
    attached = {
        language["name"]
        for language in config["language"]
        if "nexo" in language.get("language-servers", [])
    }
    assert attached == {"toml", "yaml"}


def test_zed_and_vscode_snippets_attach_toml_and_yaml() -> None:
    [zed] = [json.loads(block) for block in _blocks("json") if '"lsp"' in block]
    assert {name for name, value in zed["languages"].items() if "nexo" in value[
        "language_servers"]} == {"TOML", "YAML"}  # fmt: skip
    [client] = [block for block in _blocks("ts") if "documentSelector" in block]
    # Both manifest names (plugin.toml is the daemon's canonical one), and the trust policy.
    assert "**/{plugin,nexo-plugin}.toml" in client
    assert "**/trusted_keys.toml" in client
    assert "{extensions,agents}.yaml" in client
    assert "agents.d/*.yaml" in client


def test_vscode_schema_associations_pick_each_file_its_shipped_schema() -> None:
    """The Even Better TOML settings: each pattern (a regular expression over the document URI)
    matches the files of its kind wherever they are and nothing else, and names the published
    address of the schema nexo-pkg ships for that kind."""
    [settings] = [
        json.loads(block)
        for block in _blocks("json")
        if "evenBetterToml.schema.associations" in block
    ]
    associations: dict[str, str] = settings["evenBetterToml.schema.associations"]
    shipped = {
        json.loads(path.read_text("utf-8"))["$id"]: path.name
        for path in (ROOT / "nexo_pkg" / "schemas").glob("*.schema.json")
    }
    expected = {"manifest": "nexo-plugin.schema.json", "policy": "trusted-keys.schema.json"}
    uris = [
        "file:///home/me/weather/nexo-plugin.toml",
        "file:///home/me/weather/plugin.toml",
        "file:///c%3A/Users/me/weather/plugin.toml",
        "file:///etc/nexo/trusted_keys.toml",
        "file:///home/me/weather/Cargo.toml",
        "file:///home/me/weather/pyproject.toml",
        "file:///home/me/weather/myplugin.toml",
        "file:///home/me/weather/nexo-plugin.toml.bak",
    ]
    for uri in uris:
        chosen = [schema for pattern, schema in associations.items() if re.search(pattern, uri)]
        kind = document_kind(uri)
        if kind in expected:
            assert [shipped.get(schema) for schema in chosen] == [expected[kind]], uri
        else:
            assert chosen == [], uri


def _revs() -> list[tuple[str, str]]:
    """Every ``rev:`` a page or the hook file shows a user."""
    pages = [*sorted((ROOT / "docs").glob("*.md")), ROOT / "README.md"]
    pages.append(ROOT / ".pre-commit-hooks.yaml")
    return [
        (page.name, rev)
        for page in pages
        for rev in re.findall(r"^[#\s-]*rev:\s*(\S+)", page.read_text("utf-8"), re.MULTILINE)
    ]


def test_pre_commit_revs_name_what_the_repository_has() -> None:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("the tags are those of a git checkout of this repository")
    shallow = subprocess.run(
        ["git", "rev-parse", "--is-shallow-repository"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    if shallow == "true":
        pytest.skip("a shallow clone holds no tags to compare with")
    revs = _revs()
    assert ("editors.md", "main") in revs
    assert (".pre-commit-hooks.yaml", "main") in revs
    tags = subprocess.run(
        ["git", "tag", "--list"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    for page, rev in revs:
        if re.fullmatch(r"v?\d+(\.\d+)*", rev):
            assert rev in tags, f"{page}: rev {rev} is no tag of this repository"
        else:
            # A branch to start from, or a full commit (what autoupdate --freeze writes).
            assert rev == "main" or re.fullmatch(r"[0-9a-f]{40}", rev), (page, rev)
