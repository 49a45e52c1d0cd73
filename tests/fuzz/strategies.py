"""Hypothesis strategies for the inputs nexo-pkg reads from strangers.

Manifests come in two flavours: TOML-ish text built from the manifest's own vocabulary (so the
generator reaches past the parser into the rules), and mutations of the valid seed manifests
in ``seeds/`` (a value swapped for one of another type, a key renamed, dropped or duplicated,
bytes inserted, deleted or flipped). Trust policies, install sources and release JSON
documents get the same treatment from their own valid examples.
"""

from __future__ import annotations

import datetime as dt
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import tomlkit
from hypothesis import strategies as st

from nexo_pkg.core.errors import NexoError

T = TypeVar("T")

SEEDS_DIR = Path(__file__).resolve().parent / "seeds"
VALID_FIXTURES_DIR = Path(__file__).resolve().parents[1] / "fixtures" / "manifests" / "valid"
# The reference daemon's manifests plus the project's valid fixtures (one of which fills in
# every section), so mutations reach every rule.
SEED_MANIFESTS: tuple[str, ...] = tuple(
    path.read_text(encoding="utf-8")
    for path in [*sorted(SEEDS_DIR.glob("*.toml")), *sorted(VALID_FIXTURES_DIR.glob("*.toml"))]
)

# Keys and tables of nexo-plugin.toml, so random documents hit real rules, not only "unknown key".
MANIFEST_KEYS = (
    "id", "version", "name", "description", "min_nexo_version", "manifest_version", "command",
    "args", "env", "enabled", "network", "fs_read_paths", "fs_write_paths", "respawn",
    "max_attempts", "backoff_ms", "stderr_tail_lines", "tools", "channels", "llm_providers",
    "memory_backends", "hooks", "expose", "deferred", "kind", "adapter", "contributes_dir",
    "schema_path", "nexo_capabilities", "author", "license", "homepage", "transport", "schema",
    "drop_user", "extra_env_passthrough", "capabilities", "gates", "pairing", "public_tunnel",
)  # fmt: skip
MANIFEST_TABLES = (
    "plugin", "plugin.entrypoint", "plugin.entrypoint.env", "plugin.extends", "plugin.sandbox",
    "plugin.supervisor", "plugin.requires", "plugin.tools", "plugin.agents", "plugin.skills",
    "plugin.config", "plugin.config_schema", "plugin.capabilities", "plugin.pairing",
    "plugin.public_tunnel", "plugin.admin_ui", "transport", "plugin.meta",
)  # fmt: skip
ARRAY_TABLES = ("plugin.channels.register", "plugin.outbound_bindings", "plugin.capability_gates")

# Strings that exercise the rules: ids, versions, paths, env names, requirements, odd unicode.
INTERESTING_STRINGS = (
    "", " ", "a", "A", "0abc", "x" * 33, "ok_id", "ext_ok_id_tool", "1.2.3", "v1.2.3",
    "1.2.3-rc.1+b", ">=0.1.0", "^0.2", "~1.2", "0.3.*", ">=0.1, <0.5", "0.2", ">=", "*",
    "./bin/x", "../x", "/etc/shadow", "//etc/shadow", "/etc/./shadow", "/etc/", "/", "${state_dir}",
    "${state_dir}/x", "/x/${state_dir}", "~/.ssh", "/root", "/proc/sys", "deny", "host", "NEXO_X",
    "PATH", "\u0000", "\ud7ff", "\U0001f600", "e\u0301", "\u202e", "\\", '"', "'''", "\n",
    "{}", '{"type": "object"}', "[", "null",
)  # fmt: skip


def _toml_scalar_text() -> st.SearchStrategy[str]:
    """Text of one TOML value, valid or nearly so."""
    strings = st.one_of(st.sampled_from(INTERESTING_STRINGS), st.text(max_size=20))
    return st.one_of(
        strings.map(lambda s: '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'),
        strings.map(lambda s: "'" + s.replace("'", "") + "'"),
        st.integers(min_value=-(2**70), max_value=2**70).map(str),
        st.floats(allow_nan=True, allow_infinity=True).map(
            lambda f: {"nan": "nan", "inf": "inf", "-inf": "-inf"}.get(repr(f), repr(f))
        ),
        st.sampled_from(["true", "false", "1979-05-27T07:32:00Z", "07:32:00", "0x1F", "1_000"]),
        st.sampled_from(["[]", "{}", "[1, 'a']", "{ a = 1 }", "[[1], [2]]", '"""\nx"""', "tru"]),
        st.text(max_size=12),  # anything at all, usually a syntax error
    )


def toml_ish_documents() -> st.SearchStrategy[str]:
    """Random documents of table headers, ``key = value`` lines and noise."""
    key = st.one_of(
        st.sampled_from(MANIFEST_KEYS),
        st.text(min_size=1, max_size=10),
        st.sampled_from(MANIFEST_KEYS).map(lambda k: f'"{k}"'),
        st.tuples(st.sampled_from(MANIFEST_KEYS), st.sampled_from(MANIFEST_KEYS)).map(".".join),
    )
    line = st.one_of(
        st.tuples(key, _toml_scalar_text()).map(lambda kv: f"{kv[0]} = {kv[1]}"),
        st.sampled_from(MANIFEST_TABLES).map(lambda t: f"[{t}]"),
        st.sampled_from(ARRAY_TABLES).map(lambda t: f"[[{t}]]"),
        st.text(max_size=30).map(lambda t: "# " + t.replace("\n", " ")),
        st.text(max_size=30),
    )
    return st.lists(line, max_size=40).map("\n".join)


def _random_value() -> st.SearchStrategy[Any]:
    scalar = st.one_of(
        st.sampled_from(INTERESTING_STRINGS),
        st.text(max_size=20),
        st.integers(min_value=-(2**63), max_value=2**63 - 1),
        st.floats(allow_nan=False),
        st.booleans(),
        st.datetimes(timezones=st.just(dt.UTC)),
        st.dates(),
    )
    return st.recursive(
        scalar,
        lambda children: st.one_of(
            st.lists(children, max_size=4),
            st.dictionaries(st.sampled_from(MANIFEST_KEYS), children, max_size=4),
        ),
        max_leaves=8,
    )


def _paths(document: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every address (tuple of keys / indexes) inside a parsed TOML document."""
    found: list[tuple[Any, ...]] = [prefix] if prefix else []
    if isinstance(document, dict):
        for key, value in document.items():
            found.extend(_paths(value, (*prefix, key)))
    elif isinstance(document, list):
        for index, value in enumerate(document):
            found.extend(_paths(value, (*prefix, index)))
    return found


def _container(document: Any, address: tuple[Any, ...]) -> Any:
    for step in address[:-1]:
        document = document[step]
    return document


@st.composite
def structurally_mutated_manifests(draw: st.DrawFn) -> str:
    """A seed manifest with one to three values replaced, keys renamed, deleted or added."""
    document: Any = tomllib.loads(draw(st.sampled_from(SEED_MANIFESTS)))
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        addresses = _paths(document)
        if not addresses:
            break
        address = draw(st.sampled_from(addresses))
        parent = _container(document, address)
        last = address[-1]
        action = draw(st.sampled_from(["replace", "rename", "delete", "add"]))
        if action == "replace":
            parent[last] = draw(_random_value())
        elif action == "delete":
            del parent[last]
        elif action == "rename" and isinstance(parent, dict):
            parent[draw(st.sampled_from(MANIFEST_KEYS))] = parent.pop(last)
        elif action == "add" and isinstance(parent, dict):
            parent[draw(st.sampled_from(MANIFEST_KEYS))] = draw(_random_value())
    try:
        return tomlkit.dumps(document)
    except (ValueError, TypeError):  # tomlkit cannot write some shapes (mixed nesting)
        return tomlkit.dumps(tomllib.loads(SEED_MANIFESTS[0]))


@st.composite
def byte_mutated_text(draw: st.DrawFn, seeds: tuple[str, ...]) -> str:
    """A seed with a few bytes inserted, deleted, flipped, or lines duplicated or swapped."""
    raw = bytearray(draw(st.sampled_from(seeds)).encode("utf-8"))
    for _ in range(draw(st.integers(min_value=1, max_value=4))):
        if not raw:
            break
        position = draw(st.integers(min_value=0, max_value=len(raw) - 1))
        action = draw(st.sampled_from(["insert", "delete", "flip", "dup_line", "truncate"]))
        if action == "insert":
            raw[position:position] = draw(
                st.one_of(
                    st.binary(min_size=1, max_size=8),
                    st.sampled_from([b"[", b"]", b'"', b"=", b"\n", b".", b"\\", b"\xc3", b"\x00"]),
                )
            )
        elif action == "delete":
            del raw[position : position + draw(st.integers(min_value=1, max_value=16))]
        elif action == "flip":
            raw[position] ^= 1 << draw(st.integers(min_value=0, max_value=7))
        elif action == "dup_line":
            lines = bytes(raw).split(b"\n")
            index = draw(st.integers(min_value=0, max_value=len(lines) - 1))
            lines.insert(index, lines[index])
            raw = bytearray(b"\n".join(lines))
        else:
            del raw[position:]
    return raw.decode("utf-8", errors="replace")


def manifests() -> st.SearchStrategy[str]:
    """Every manifest flavour, mixed."""
    return st.one_of(
        toml_ish_documents(),
        structurally_mutated_manifests(),
        byte_mutated_text(SEED_MANIFESTS),
        st.text(max_size=200),
    )


# -- trust policies --------------------------------------------------------------------------

SEED_POLICIES: tuple[str, ...] = (
    'schema_version = "1.0"\ndefault = "warn"\n',
    """\
schema_version = "1.0"
default = "require"
cosign_binary = "/usr/bin/cosign"

[[authors]]
owner = "lordmacu"
identity_regexp = "^https://github.com/lordmacu/[^/]+/\\\\.github/workflows/release\\\\.yml@refs/tags/v.*$"
oidc_issuer = "https://token.actions.githubusercontent.com"
repos = ["nexo-plugin-slack"]
mode = "require"

[[authors]]
owner = "other"
identity = "https://github.com/other/p/.github/workflows/release.yml@refs/tags/v1.0.0"
mode = "warn"
""",
)
POLICY_KEYS = (
    "schema_version", "default", "cosign_binary", "trusted_root", "authors", "owner",
    "identity", "identity_regexp", "oidc_issuer", "repos", "mode",
)  # fmt: skip
REGEX_PIECES = ("(", ")", "[", "]", "*", "+?", "\\", "{2,1}", "(?P<x>", "(?<=a)", "^", "$", ".*")


def policies() -> st.SearchStrategy[str]:
    """Trust policy text: mutated seeds and documents of policy keys with odd values."""
    line = st.tuples(
        st.sampled_from(POLICY_KEYS),
        st.one_of(
            _toml_scalar_text(),
            st.lists(st.sampled_from(REGEX_PIECES), max_size=5).map(
                lambda parts: '"' + "".join(parts).replace("\\", "\\\\") + '"'
            ),
            st.sampled_from(['"ignore"', '"warn"', '"require"', '"REQUIRE"', '"1.0"', '"2.0"']),
        ),
    ).map(lambda kv: f"{kv[0]} = {kv[1]}")
    documents = st.lists(
        st.one_of(line, st.just("[[authors]]"), st.just("[authors]"), st.text(max_size=10)),
        max_size=15,
    ).map("\n".join)
    return st.one_of(documents, byte_mutated_text(SEED_POLICIES))


# -- install sources -------------------------------------------------------------------------

SOURCE_PIECES = (
    "owner", "repo", "/", "@", "v1.2.3", "..", ".", "-", "_", "%2e", "https://", "git@",
    "github.com", " ", "\t", "\x00", "\x7f", "~", "*", ":", "?", "#", "\\", "é", "\u202e",
    ".tar.gz", ".tgz", "x" * 40, "y" * 101, "+build",
)  # fmt: skip


def install_sources() -> st.SearchStrategy[str]:
    """SOURCE arguments: glued pieces of the grammar, and anything at all."""
    return st.one_of(
        st.lists(st.sampled_from(SOURCE_PIECES), max_size=8).map("".join),
        st.text(max_size=60),
        st.from_regex(r"[A-Za-z0-9._-]{0,40}/[A-Za-z0-9._-]{0,101}(@[A-Za-z0-9._+-]{0,130})?"),
    )


# -- release JSON ----------------------------------------------------------------------------

ASSET_NAMES = (
    "p-1.0.0-noarch.tar.gz", "p-1.0.0-x86_64-unknown-linux-gnu.tar.gz",
    "p-1.0.0-x86_64-unknown-linux-musl.tar.gz", "q-1.0.0-noarch.tar.gz",
    "p-1.0.0-noarch.tar.gz.sha256", "p-1.0.0-noarch.tar.gz.sigstore.json", "nexo-plugin.toml",
    "p-1.0.0-rc.1-noarch.tar.gz", "P-1.0.0-noarch.tar.gz", "p-1.0-noarch.tar.gz", ".tar.gz",
    "p--noarch.tar.gz", "../p-1.0.0-noarch.tar.gz",
)  # fmt: skip
JSON_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**64), max_value=2**64),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20),
)


def _json_values() -> st.SearchStrategy[Any]:
    return st.recursive(
        JSON_SCALARS,
        lambda children: st.one_of(
            st.lists(children, max_size=3),
            st.dictionaries(st.text(max_size=8), children, max_size=3),
        ),
        max_leaves=6,
    )


def _assets() -> st.SearchStrategy[Any]:
    asset = st.fixed_dictionaries(
        {},
        optional={
            "name": st.one_of(st.sampled_from(ASSET_NAMES), _json_values()),
            "url": st.one_of(st.just("http://127.0.0.1:9/asset"), _json_values()),
            "browser_download_url": _json_values(),
            "size": st.one_of(st.integers(min_value=-1, max_value=2**40), _json_values()),
            "digest": st.one_of(
                st.just("sha256:" + "0" * 64), st.just("sha512:abc"), _json_values()
            ),
        },
    )
    return st.one_of(st.lists(st.one_of(asset, _json_values()), max_size=6), _json_values())


def release_documents() -> st.SearchStrategy[Any]:
    """Release API answers: the right shape with wrong parts, and arbitrary JSON."""
    shaped = st.fixed_dictionaries(
        {},
        optional={
            "tag_name": st.one_of(
                st.sampled_from(["v1.0.0", "1.0.0", "v1.0", "latest", "", "v1.0.0-rc.1"]),
                _json_values(),
            ),
            "assets": _assets(),
            "html_url": _json_values(),
            "draft": _json_values(),
            "prerelease": _json_values(),
        },
    )
    return st.one_of(shaped, _json_values())


def attempt(call: Callable[[], T]) -> tuple[T | None, NexoError | None]:
    """Run ``call``; return its value, or the :class:`NexoError` it raised (anything else
    propagates and fails the property)."""
    try:
        return call(), None
    except NexoError as error:
        return None, error
