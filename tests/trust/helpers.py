"""Constants and small builders shared by the trust tests."""

from __future__ import annotations

import os
from pathlib import Path

from hypothesis import strategies as st
from support.shared_fixtures import shared_fixture, shared_fixtures_dir

from nexo_pkg.trust.api import AuthorPolicy

FIXTURES = shared_fixture("sigstore")
# Fixtures taken from public repositories, shared by every checkout (read in place).
SHARED_FIXTURES = shared_fixtures_dir()
VECTOR_ARTIFACT = "rfc8785-0.1.2-py3-none-any.whl"
VECTOR_IDENTITY = (
    "https://github.com/trailofbits/rfc8785.py/.github/workflows/release.yml@refs/tags/v0.1.2"
)
VECTOR_ISSUER = "https://token.actions.githubusercontent.com"

ACME_IDENTITY = (
    "https://github.com/acme/nexo-plugin-echo/.github/workflows/release.yml@refs/tags/v1.2.3"
)
# The fields every Sigstore trusted root has, empty: a policy reads it as one; only
# sigstore-python's verifier refuses it (it names no Fulcio certificate).
ROOT_SHAPE = (
    '{"mediaType": "application/vnd.dev.sigstore.trustedroot+json;version=0.1", '
    '"tlogs": [], "ctlogs": [], "certificateAuthorities": []}'
)

ACME_REGEXP = r"https://github\.com/acme/[^/]+/\.github/workflows/release\.yml@refs/tags/v.*"


def author(**fields: object) -> AuthorPolicy:
    """An author entry for ``acme`` trusting the release workflow, with overrides."""
    values: dict[str, object] = {"owner": "acme"}
    if "identity" not in fields:
        values["identity_regexp"] = ACME_REGEXP
    values.update(fields)
    return AuthorPolicy(**values)  # type: ignore[arg-type]


def cli_env(tmp_path: Path, *, api: str | None = None) -> dict[str, str]:
    """The environment of a ``nexo`` subprocess in a test: its own home and cache, no token or
    proxy of the machine, fast retries, and the loopback GitHub API when given."""
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in {"NEXO_GITHUB_TOKEN", "GITHUB_TOKEN", "GH_TOKEN", "GITHUB_API_URL"}
        and "proxy" not in key.lower()
    }
    env.update(
        NEXO_HOME=str(tmp_path / "home"),
        NEXO_HTTP_RETRY_BASE_MS="1",
        NO_PROXY="127.0.0.1,localhost",
        XDG_CACHE_HOME=str(tmp_path / "xdg-cache"),
    )
    if api is not None:
        env["NEXO_GITHUB_API_BASE"] = api
    return env


def text_edits(max_size: int) -> st.SearchStrategy[list[tuple[float, str]]]:
    """Up to ``max_size`` characters of a bundle's text replaced, each at a relative position
    by one that matters to JSON or base64 (see :func:`edited`)."""
    return st.lists(
        st.tuples(
            st.floats(min_value=0, max_value=1, exclude_max=True),
            st.sampled_from('AZaz09+/="{}[],:x\\ \t\n'),
        ),
        min_size=1,
        max_size=max_size,
    )


def edited(text: str, edits: list[tuple[float, str]]) -> str:
    """``text`` with each ``(position, character)`` edit applied."""
    characters = list(text)
    for where, character in edits:
        characters[int(where * len(characters))] = character
    return "".join(characters)


def write_acme_policy(path: Path, identity_regexp: str, *, allow_republish: bool = False) -> Path:
    """A ``trusted_keys.toml`` at ``path`` that requires signatures, trusts the private
    Sigstore instance's root (``private_trusted_root.json`` beside it) and the author ``acme``
    signing as ``identity_regexp`` (written as a TOML literal string)."""
    republish = "allow_republish = true\n" if allow_republish else ""
    path.write_text(
        'schema_version = "1.0"\ndefault = "require"\n'
        'trusted_root = "private_trusted_root.json"\n\n[[authors]]\nowner = "acme"\n'
        f"identity_regexp = '{identity_regexp}'\n{republish}",
        encoding="utf-8",
    )
    return path
