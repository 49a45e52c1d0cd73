"""The wanted set, the lock file, their JSON Schemas, oci:// references and credentials."""

from __future__ import annotations

import base64
import json
import os
import tomllib
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from nexo_pkg.core.errors import NexoError
from nexo_pkg.fleet.lockfile import (
    Lock,
    LockedPlugin,
    LockedTarget,
    read_lock,
    read_registries,
    read_wanted,
    render_lock,
    stale_entries,
)
from nexo_pkg.sources.oci_auth import credentials_for
from nexo_pkg.sources.oci_reference import parse_reference
from nexo_pkg.sources.registry import RegistryClient

ROOT = Path(__file__).resolve().parent.parent.parent
SHA = "a" * 64


def _schema(name: str) -> Draft202012Validator:
    published = json.loads((ROOT / "schemas" / name).read_text())
    packaged = json.loads((ROOT / "nexo_pkg" / "schemas" / name).read_text())
    assert published == packaged
    Draft202012Validator.check_schema(published)
    return Draft202012Validator(published)


def _lock() -> Lock:
    row = LockedTarget("noarch", "echo-1.2.3-noarch.tar.gz", 10, SHA, manifest="sha256:" + SHA)
    signed = LockedTarget(
        "x86_64-unknown-linux-gnu", "echo-1.2.3-x86_64-unknown-linux-gnu.tar.gz", 11, "b" * 64,
        manifest="sha256:" + "d" * 64,
        identity="https://github.com/acme/x/.github/workflows/r.yml@refs/tags/v1",
        issuer="https://token.actions.githubusercontent.com",
    )  # fmt: skip
    lock = Lock()
    # Inserted out of order on purpose: the text is sorted whatever the order.
    lock.plugins["zeta"] = LockedPlugin(
        "zeta", "acme/zeta", "*", None, "0.1.0", "acme/zeta@v0.1.0",
        {"noarch": LockedTarget("noarch", "zeta-0.1.0-noarch.tar.gz", 1, "c" * 64)},
    )  # fmt: skip
    lock.plugins["echo"] = LockedPlugin(
        "echo", "oci://127.0.0.1:5000/plugins/echo", "^1.2",
        ("noarch", "x86_64-unknown-linux-gnu"), "1.2.3",
        "oci://127.0.0.1:5000/plugins/echo@sha256:" + SHA,
        {"x86_64-unknown-linux-gnu": signed, "noarch": row},
        published="2026-01-01T00:00:00Z", github="acme/nexo-plugin-echo@v1.2.3",
    )  # fmt: skip
    return lock


def test_the_lock_text_is_sorted_stable_and_reads_back(tmp_path: Path) -> None:
    text = render_lock(_lock())
    assert text == render_lock(_lock())
    assert text.index("[plugins.echo]") < text.index("[plugins.zeta]")
    assert text.index("[plugins.echo.targets.noarch]") < text.index(
        "[plugins.echo.targets.x86_64-unknown-linux-gnu]"
    )
    path = tmp_path / "nexo-plugins.lock"
    path.write_text(text)
    assert read_lock(path).plugins == _lock().plugins
    _schema("nexo-plugins.lock.schema.json").validate(tomllib.loads(text))


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("lock_version = 2\n", "lock_version"),
        ("lock_version = 1\nextra = 1\n", "unknown key `extra`"),
        ("lock_version = 1\nplugin = 1\n", "unknown key `plugin`; did you mean `plugins`?"),
        ("lock_version = 1\n[plugins.echo]\nsource = 'acme/echo'\n", "targets"),
        ("lock_version = 1\n[plugins.echo\n", "not valid TOML"),
        # TOML's `true` and `1.0` equal 1 in Python; the schema asks for the integer.
        ("lock_version = true\n", "lock_version"),
        ("lock_version = 1.0\n", "lock_version"),
    ],
)
def test_a_malformed_lock_is_lock_invalid(tmp_path: Path, text: str, needle: str) -> None:
    path = tmp_path / "nexo-plugins.lock"
    path.write_text(text)
    with pytest.raises(NexoError) as caught:
        read_lock(path)
    assert caught.value.kind == "lock_invalid"
    assert caught.value.exit_code == 2
    assert needle in caught.value.message


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("[plugins.zeta]", '[plugins."zeta\\n"]'),
        ("[plugins.zeta.targets.noarch]", '[plugins.zeta.targets."noarch\\n"]'),
        ('sha256 = "' + "c" * 64 + '"', 'sha256 = "' + "c" * 64 + '\\n"'),
    ],
)
def test_a_trailing_newline_never_passes_in_a_lock(tmp_path: Path, old: str, new: str) -> None:
    # Ids, targets and digests match as a whole: "zeta\n" would name a directory
    # "zeta\n-0.1.0" in the plugin root, a digest with a newline a blob "<hex>\n".
    text = render_lock(_lock())
    assert old in text
    path = tmp_path / "nexo-plugins.lock"
    path.write_text(text.replace(old, new))
    with pytest.raises(NexoError) as caught:
        read_lock(path)
    assert caught.value.kind == "lock_invalid"


WANTED_OK = """\
[plugins.echo]
source = "oci://registry.example:5000/plugins/echo"
version = "^1.2"
targets = ["noarch", "x86_64-unknown-linux-gnu"]

[plugins.slack]
source = "lordmacu/nexo-plugin-slack@v0.3.1"

[registries."registry.example:5000"]
mirrors = ["mirror.internal:5000", "cache.internal/registry.example"]
"""


def test_the_wanted_set_parses_and_matches_its_schema(tmp_path: Path) -> None:
    path = tmp_path / "nexo-plugins.toml"
    path.write_text(WANTED_OK)
    wanted = read_wanted(path)
    assert [(w.plugin_id, w.requirement, w.targets) for w in wanted] == [
        ("echo", "^1.2", ("noarch", "x86_64-unknown-linux-gnu")),
        ("slack", "*", None),
    ]
    _schema("nexo-plugins.schema.json").validate(tomllib.loads(WANTED_OK))
    assert read_registries(path) == {
        "registry.example:5000": ("mirror.internal:5000", "cache.internal/registry.example")
    }
    assert stale_entries(wanted, Lock()) == [
        "echo is wanted but not locked",
        "slack is wanted but not locked",
    ]


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ('[plugins.echo]\nsource = "acme/echo"\ncolour = 1\n', "unknown key `plugins.echo.colour`"),
        (
            '[plugins.echo]\nsource = "acme/echo"\nverison = "1"\n',
            "unknown key `plugins.echo.verison`; did you mean `version`?",
        ),
        ("plugin = {}\n", "unknown key `plugin`; did you mean `plugins`?"),
        ("[plugins.echo]\nversion = '1'\n", "source` is missing"),
        ('[plugins.echo]\nsource = "http://x/y"\n', "URLs are not accepted"),
        ('[plugins.echo]\nsource = "oci://h/UPPER"\n', "repository path"),
        ('[plugins.echo]\nsource = "acme/echo"\nversion = "^^1"\n', "plugins.echo.version"),
        ('[plugins.echo]\nsource = "acme/echo"\ntargets = []\n', "targets"),
        ('[plugins.Echo]\nsource = "acme/echo"\n', "not a plugin id: uppercase letters"),
        ('[plugins.9echo]\nsource = "acme/echo"\n', "not a plugin id: must not start with a digit"),
        ("plugins = 1\n", "table of plugin ids"),
    ],
)
def test_a_bad_wanted_set_is_wanted_invalid(tmp_path: Path, text: str, needle: str) -> None:
    path = tmp_path / "nexo-plugins.toml"
    path.write_text(text)
    with pytest.raises(NexoError) as caught:
        read_wanted(path)
    assert caught.value.kind == "wanted_invalid"
    assert caught.value.exit_code == 2
    assert needle in caught.value.message
    if "^^" not in text:  # a requirement's grammar is beyond the schema; the rest is not
        assert not _schema("nexo-plugins.schema.json").is_valid(tomllib.loads(text))


@pytest.mark.parametrize(
    ("text", "host", "repository", "tag", "digest"),
    [
        ("oci://127.0.0.1:5000/plugins/echo", "127.0.0.1:5000", "plugins/echo", None, None),
        ("oci://ghcr.io/acme/nexo/echo:v1.2.3", "ghcr.io", "acme/nexo/echo", "v1.2.3", None),
        ("oci://localhost/a@sha256:" + SHA, "localhost", "a", None, "sha256:" + SHA),
    ],
)
def test_references_parse(
    text: str, host: str, repository: str, tag: str | None, digest: str | None
) -> None:
    reference = parse_reference(text)
    assert (reference.host, reference.repository, reference.tag, reference.digest) == (
        host,
        repository,
        tag,
        digest,
    )
    assert str(reference) == text


@pytest.mark.parametrize(
    "text",
    [
        "oci://",
        "oci://host",
        "oci://host/",
        "oci://host/Upper",
        "oci://host/a/../b",
        "oci://host/a:bad tag",
        "oci://host/a@sha256:xyz",
        "oci://host/a%2f",
        "oci://ho st/a",
        "oci://host/a:" + "t" * 200,
    ],
)
def test_bad_references_are_source_invalid(text: str) -> None:
    with pytest.raises(NexoError) as caught:
        parse_reference(text)
    assert caught.value.kind == "source_invalid"
    assert caught.value.exit_code == 2  # a malformed argument, as for owner/repo sources


def test_plain_http_is_refused_for_a_remote_registry() -> None:
    assert parse_reference("oci://127.0.0.1:5000/a").is_loopback
    assert parse_reference("oci://[::1]:5000/a").is_loopback
    assert parse_reference("oci://LocalHost:5000/a").is_loopback  # names ignore case
    assert not parse_reference("oci://registry.example/a").is_loopback
    with pytest.raises(NexoError) as caught:
        RegistryClient("registry.example", plain_http=True, loopback=False)
    assert caught.value.exit_code == 2


def test_credentials_come_from_the_docker_config(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    pair = base64.b64encode(b"user:pa:ss").decode()
    path.write_text(
        json.dumps(
            {
                "auths": {
                    "r.example": {"auth": pair},
                    "https://other.example": {"username": "u", "password": "p"},
                }
            }
        )
    )
    found = credentials_for("r.example", path)
    assert found is not None
    assert (found.username, found.password) == ("user", "pa:ss")
    other = credentials_for("other.example", path)
    assert other is not None
    assert (other.username, other.password) == ("u", "p")
    assert credentials_for("none.example", path) is None


@pytest.mark.parametrize(
    "key", ["https://r.example:5000/", "http://r.example:5000/v2/", "r.example:5000/"]
)
def test_an_auths_key_is_read_as_docker_reads_it(tmp_path: Path, key: str) -> None:
    """docker's file store compares every ``auths`` key with the scheme and any path taken
    off (``ConvertToHostname``); those keys name the host, another port does not."""
    path = tmp_path / "config.json"
    entries = {key: {"username": "u", "password": "p"}, "r.example:5001": {"auth": ""}}
    path.write_text(json.dumps({"auths": entries}))
    found = credentials_for("r.example:5000", path)
    assert found is not None
    assert (found.username, found.password) == ("u", "p")
    assert credentials_for("r.example", path) is None
    assert credentials_for("r.example:5001", path) is None


@pytest.mark.parametrize("text", ["{", "[]", '{"auths": {"r.example": {"auth": "!!notbase64"}}}'])
def test_a_malformed_registry_config_is_a_configuration_error(tmp_path: Path, text: str) -> None:
    path = tmp_path / "config.json"
    path.write_text(text)
    with pytest.raises(NexoError) as caught:
        credentials_for("r.example", path)
    assert caught.value.kind == "registry_config"
    assert caught.value.exit_code == 2


def test_a_named_registry_config_must_exist(tmp_path: Path) -> None:
    with pytest.raises(NexoError) as caught:
        credentials_for("r.example", tmp_path / "missing.json")
    assert caught.value.kind == "registry_config"


def test_a_credential_helper_is_asked_for_its_host(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    helpers = tmp_path / "bin"
    helpers.mkdir()
    helper = helpers / "docker-credential-nexotest"
    log = tmp_path / "asked.txt"
    helper.write_text(
        "#!/bin/sh\n"
        f'read host; echo "$1 $host" >> {log}\n'
        'if [ "$host" = "r.example" ]; then\n'
        '  echo \'{"ServerURL": "r.example", "Username": "robot", "Secret": "s3"}\'\n'
        "else echo 'credentials not found' >&2; exit 1; fi\n"
    )
    helper.chmod(0o755)
    monkeypatch.setenv("PATH", f"{helpers}:{os.environ['PATH']}")
    path = tmp_path / "config.json"
    path.write_text(
        json.dumps({"credHelpers": {"r.example": "nexotest"}, "credsStore": "nexotest"})
    )
    found = credentials_for("r.example", path)
    assert found is not None
    assert (found.username, found.password) == ("robot", "s3")
    assert credentials_for("other.example", path) is None
    assert log.read_text().splitlines() == ["get r.example", "get other.example"]
    path.write_text(json.dumps({"credsStore": "missing-helper"}))
    with pytest.raises(NexoError) as caught:
        credentials_for("r.example", path)
    assert caught.value.kind == "registry_config"


def test_a_missing_wanted_set_or_lock_says_how_to_get_one(tmp_path: Path) -> None:
    with pytest.raises(NexoError) as wanted:
        read_wanted(tmp_path / "nexo-plugins.toml")
    assert (wanted.value.kind, wanted.value.exit_code) == ("wanted_invalid", 2)
    assert "does not exist" in wanted.value.message
    assert "--file" in wanted.value.message
    with pytest.raises(NexoError) as lock:
        read_lock(tmp_path / "nexo-plugins.lock")
    assert (lock.value.kind, lock.value.exit_code) == ("lock_invalid", 2)
    assert "`nexo plugin lock`" in lock.value.message
    assert "--lock" in lock.value.message
    assert list(tmp_path.iterdir()) == []


def test_a_byte_order_mark_or_crlf_line_ends_read_as_the_plain_files(tmp_path: Path) -> None:
    """Windows editors save with a BOM (Notepad, PowerShell's ``-Encoding utf8``) and CRLF;
    the wanted set and the lock read as the language server and cargo read them."""
    wanted = tmp_path / "nexo-plugins.toml"
    lock = tmp_path / "nexo-plugins.lock"
    for prefix, newline in (("\ufeff", "\n"), ("", "\r\n"), ("\ufeff", "\r\n")):
        wanted.write_bytes((prefix + WANTED_OK.replace("\n", newline)).encode("utf-8"))
        assert read_wanted(wanted) == read_wanted_text(tmp_path, WANTED_OK)
        assert read_registries(wanted) == {
            "registry.example:5000": ("mirror.internal:5000", "cache.internal/registry.example")
        }
        lock.write_bytes((prefix + render_lock(_lock()).replace("\n", newline)).encode("utf-8"))
        assert read_lock(lock).plugins == _lock().plugins


def read_wanted_text(directory: Path, text: str) -> list[object]:
    plain = directory / "plain" / "nexo-plugins.toml"
    plain.parent.mkdir(exist_ok=True)
    plain.write_text(text, encoding="utf-8")
    return list(read_wanted(plain))


@pytest.mark.parametrize(
    ("old", "new", "needle"),
    [
        ("size = 10\n", "size = true\n", "size` is missing or not a byte count"),
        ("size = 10\n", "size = 10.0\n", "size` is missing or not a byte count"),
        (f'manifest = "sha256:{SHA}"', f'manifest = "sha256:{SHA.upper()}"', "manifest"),
        (f'manifest = "sha256:{SHA}"', f'manifest = "{SHA}"', "manifest"),
        (f'manifest = "sha256:{SHA}"', 'manifest = "sha256:abc"', "manifest"),
    ],
)
def test_a_hand_edited_value_the_schema_refuses_is_lock_invalid(
    tmp_path: Path, old: str, new: str, needle: str
) -> None:
    """What the lock's JSON Schema (and so the language server) refuses, sync refuses too:
    a `true` size, a digest that is not ``sha256:`` and 64 lowercase hex digits."""
    text = render_lock(_lock())
    assert old in text
    path = tmp_path / "nexo-plugins.lock"
    path.write_text(text.replace(old, new, 1))
    with pytest.raises(NexoError) as caught:
        read_lock(path)
    assert (caught.value.kind, caught.value.exit_code) == ("lock_invalid", 2)
    assert needle in caught.value.message


ISSUER = "https://token.actions.githubusercontent.com"


@pytest.mark.parametrize(
    ("old", "new", "needle"),
    [
        # A signer is recorded whole (lock writes both keys or neither): half of one would
        # bind sync to an issuer of None, or to any issuer.
        (f'issuer = "{ISSUER}"\n', "", "issuer"),
        (
            'identity = "https://github.com/acme/x/.github/workflows/r.yml@refs/tags/v1"\n',
            "",
            "identity",
        ),
        # The release a mirrored version was copied from names the owner whose policy entries
        # judge its signature: a value that is no release would judge it by no owner's.
        ('github = "acme/nexo-plugin-echo@v1.2.3"', 'github = "acme/nexo-plugin-echo"', "github"),
        ('github = "acme/nexo-plugin-echo@v1.2.3"', 'github = "not a release"', "github"),
        ('github = "acme/nexo-plugin-echo@v1.2.3"', 'github = "acme/x@v1 "', "github"),
    ],
)
def test_a_half_recorded_signer_or_origin_is_lock_invalid_as_the_schema_says(
    tmp_path: Path, old: str, new: str, needle: str
) -> None:
    text = render_lock(_lock())
    assert old in text
    edited = text.replace(old, new, 1)
    assert not _schema("nexo-plugins.lock.schema.json").is_valid(tomllib.loads(edited))
    path = tmp_path / "nexo-plugins.lock"
    path.write_text(edited)
    with pytest.raises(NexoError) as caught:
        read_lock(path)
    assert (caught.value.kind, caught.value.exit_code) == ("lock_invalid", 2)
    assert f".{needle}`" in caught.value.message
