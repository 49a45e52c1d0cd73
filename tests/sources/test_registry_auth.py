"""Bearer-token auth as public and cloud registries do it, against the real registry behind a
loopback token service: anonymous tokens for public repositories, an ``identitytoken`` from
the docker config exchanged as an OAuth2 refresh token (with the GET fallback for token
services without OAuth2)."""

from __future__ import annotations

import base64
import json
import time
from pathlib import Path

import pytest
from support.cli import CliResult, nexo
from support.registry import PASSWORD, USER, Registry
from support.registry_proxy import RegistryProxy
from support.stderr import without_notes
from support.token_server import SERVICE, TokenServer

from .conftest import MakeDist, auth_config, fleet_run, push_dist

REFRESH_TOKEN = "refresh-7d1f0c2a"  # noqa: S105 (a test value sent only to 127.0.0.1)


def _installed(dest: Path) -> list[str]:
    if not dest.exists():
        return []
    return sorted(p.name for p in dest.iterdir() if not p.name.startswith("."))


def _install(
    env: dict[str, str], reference: str, dest: Path, config: Path | None = None
) -> CliResult:
    """``nexo plugin install REFERENCE --dest DEST`` over plain http, with ``config`` as the
    registry credentials when given."""
    extra = ("--registry-config", str(config)) if config is not None else ()
    return nexo(
        "plugin",
        "install",
        reference,
        "--dest",
        str(dest),
        "--plain-http",
        *extra,
        "--yes",
        "--json",
        env=env,
        in_process=True,
    )


def _identity_config(tmp_path: Path, running: Registry, token: str) -> Path:
    """A docker config as `docker login` leaves it for an OAuth2 registry (ACR, GCR)."""
    path = tmp_path / f"identity-{token}.json"
    entry = {"auth": base64.b64encode(b"<token>:").decode(), "identitytoken": token}
    path.write_text(json.dumps({"auths": {running.host: entry}}), encoding="utf-8")
    return path


def _publish(
    tmp_path: Path, env: dict[str, str], running: Registry, make_dist: MakeDist, path: str
) -> str:
    reference = running.ref(path)
    push_dist(
        make_dist(identity=None), reference, Path(env["NEXO_HOME"]), auth_config(tmp_path, running)
    )
    return reference


def test_an_anonymous_token_pulls_a_public_repository_and_pushes_nothing(
    *,
    tmp_path: Path,
    fleet_env: dict[str, str],
    token_registry: tuple[Registry, TokenServer],
    make_dist: MakeDist,
) -> None:
    running, tokens = token_registry
    tokens.anonymous_pull = True
    reference = _publish(tmp_path, fleet_env, running, make_dist, "public/echo")
    seen = len(tokens.requests)

    dest = tmp_path / "plugins"
    installed = _install(fleet_env, reference + ":1.2.3", dest)
    assert installed.code == 0, installed.stderr
    assert _installed(dest) == ["echo-1.2.3"]
    asked = tokens.requests[seen:]
    assert asked, "the registry wants a token even for a public pull"
    assert all(r.authorization is None and r.method == "GET" and r.granted for r in asked)
    assert {r.scope for r in asked} == {"repository:public/echo:pull"}

    # The anonymous token grants pull only: a push without credentials is refused.
    refused = nexo(
        "plugin",
        "push",
        str(make_dist("echo", "1.3.0", identity=None)),
        reference,
        "--plain-http",
        "--json",
        env=fleet_env,
        in_process=True,
    )
    assert refused.code == 1, refused.stderr
    document = refused.document
    assert document["kind"] == "registry_auth", document
    assert "no credentials" in document["error"]
    missing = _install(fleet_env, reference + ":1.3.0", tmp_path / "other")
    assert missing.document["kind"] == "release_not_found"


def test_an_identity_token_is_exchanged_as_an_oauth2_refresh_token(
    *,
    tmp_path: Path,
    fleet_env: dict[str, str],
    token_registry: tuple[Registry, TokenServer],
    make_dist: MakeDist,
) -> None:
    running, tokens = token_registry
    tokens.refresh_token = REFRESH_TOKEN
    reference = _publish(tmp_path, fleet_env, running, make_dist, "plugins/echo")
    seen = len(tokens.requests)

    dest = tmp_path / "plugins"
    config = _identity_config(tmp_path, running, REFRESH_TOKEN)
    installed = _install(fleet_env, reference + ":1.2.3", dest, config)
    assert installed.code == 0, installed.stderr
    assert _installed(dest) == ["echo-1.2.3"]
    asked = tokens.requests[seen:]
    assert [r.method for r in asked] == ["POST"]
    form = asked[0].form
    assert form["grant_type"] == "refresh_token"
    assert form["refresh_token"] == REFRESH_TOKEN
    assert form["client_id"] == "nexo-pkg"
    assert (form["service"], form["scope"]) == (SERVICE, "repository:plugins/echo:pull")
    assert asked[0].authorization is None  # the secret travels in the form only

    # A token the service does not know: registry_auth, one line, nothing installed.
    other = tmp_path / "other"
    wrong = _identity_config(tmp_path, running, "revoked-token")
    refused = _install(fleet_env, reference + ":1.2.3", other, wrong)
    assert refused.code == 1
    assert refused.document["kind"] == "registry_auth"
    assert len(without_notes(refused.stderr).strip().splitlines()) == 1, refused.stderr
    assert _installed(other) == []


def test_a_token_service_without_oauth2_gets_the_identity_token_as_basic_auth(
    *,
    tmp_path: Path,
    fleet_env: dict[str, str],
    token_registry: tuple[Registry, TokenServer],
    make_dist: MakeDist,
) -> None:
    running, tokens = token_registry
    tokens.refresh_token = REFRESH_TOKEN
    tokens.oauth_post = False  # GCR answers the OAuth2 POST with 404
    reference = _publish(tmp_path, fleet_env, running, make_dist, "plugins/echo")
    seen = len(tokens.requests)
    dest = tmp_path / "plugins"
    config = _identity_config(tmp_path, running, REFRESH_TOKEN)
    installed = _install(fleet_env, reference + ":1.2.3", dest, config)
    assert installed.code == 0, installed.stderr
    asked = tokens.requests[seen:]
    assert [(r.method, r.granted) for r in asked] == [("POST", False), ("GET", True)]
    pair = base64.b64encode(f"<token>:{REFRESH_TOKEN}".encode()).decode()
    assert asked[1].authorization == f"Basic {pair}"


def test_a_token_that_runs_out_mid_run_is_fetched_again(
    *,
    tmp_path: Path,
    fleet_env: dict[str, str],
    token_registry: tuple[Registry, TokenServer],
    make_dist: MakeDist,
) -> None:
    """Registries issue tokens for minutes (distribution: five by default, often one); a sync
    of many plugins outlives them. A proxy makes each token good for one request (a frozen
    sync asks two or three per plugin, some side by side, so with two a plugin's token could
    last it the whole run): every refusal of a held token is answered with one fresh token,
    and the sync completes."""
    running, tokens = token_registry
    config = auth_config(tmp_path, running)
    home = Path(fleet_env["NEXO_HOME"])
    for plugin_id in ("echo", "weather"):
        push_dist(
            make_dist(plugin_id, identity=None), running.ref(f"plugins/{plugin_id}"), home, config
        )
    proxy = RegistryProxy(running.host, token_uses=1).start()
    try:
        wanted = tmp_path / "nexo-plugins.toml"
        wanted.write_text(
            "".join(
                f'[plugins.{name}]\nsource = "{proxy.ref(f"plugins/{name}")}"\n'
                for name in ("echo", "weather")
            ),
            encoding="utf-8",
        )
        # The same credentials, for the registry as the client sees it (behind the proxy).
        through = tmp_path / "through-proxy.json"
        entry = json.loads(config.read_text())["auths"][running.host]
        through.write_text(json.dumps({"auths": {proxy.host: entry}}), encoding="utf-8")
        common = ("--plain-http", "--registry-config", str(through))
        locked = nexo("plugin", "lock", "-f", str(wanted), *common, env=fleet_env, in_process=True)
        assert locked.code == 0, locked.stderr
        seen = len(tokens.requests)
        dest = tmp_path / "root"
        synced = fleet_run(
            "sync",
            "--lock",
            tmp_path / "nexo-plugins.lock",
            "--dest",
            str(dest),
            "--frozen",
            *common,
            env={**fleet_env, "NEXO_HOME": str(tmp_path / "host-home")},
        )
        assert synced.code == 0, synced.stderr
        assert [p["action"] for p in synced.document["plugins"]] == ["installed", "installed"]
        assert _installed(dest) == ["echo-1.2.3", "weather-1.2.3"]
        fetched = tokens.requests[seen:]
        assert len(fetched) >= 3  # each plugin's scope, and again when its token ran out
        assert all(r.granted for r in fetched)
        assert proxy.count("GET", "/", 401) >= 1
    finally:
        proxy.stop()


@pytest.mark.parametrize(
    "forged",
    ["tok\r\nX-Injected: 1", "tok\nen", "tökén-ünïcode", "tok\ten"],
    ids=["crlf", "lone-lf", "non-ascii", "tab"],
)
def test_a_token_that_cannot_be_a_header_is_one_registry_line(
    *,
    tmp_path: Path,
    fleet_env: dict[str, str],
    token_registry: tuple[Registry, TokenServer],
    make_dist: MakeDist,
    forged: str,
) -> None:
    running, tokens = token_registry
    tokens.anonymous_pull = True
    reference = _publish(tmp_path, fleet_env, running, make_dist, "public/echo")
    tokens.forged_token = forged
    dest = tmp_path / "plugins"
    for command in (
        ("install", reference + ":1.2.3", "--dest", str(dest), "--yes"),
        ("info", reference),
    ):
        result = nexo("plugin", *command, "--plain-http", "--json", env=fleet_env, in_process=True)
        assert result.code == 1, (command, result.stdout, result.stderr)
        document = result.document
        assert document["kind"] == "registry_auth", document
        assert running.host in document["error"]
        assert "Traceback" not in result.stderr
        assert forged not in result.stdout + result.stderr
        assert not dest.exists() or _installed(dest) == []
        # Without --json: the same one line, ending in its kind, the token never printed.
        text = nexo("plugin", *command, "--plain-http", env=fleet_env, in_process=True)
        assert text.code == 1, (command, text.stderr)
        (line,) = without_notes(text.stderr).splitlines()
        assert line == f"error: {document['error']} [registry_auth]", line
        assert forged not in text.stdout + text.stderr
        assert not dest.exists() or _installed(dest) == []


def test_a_wrong_password_is_one_line_naming_the_user_and_what_to_do(
    tmp_path: Path, fleet_env: dict[str, str], auth_registry: Registry, make_dist: MakeDist
) -> None:
    """htpasswd basic auth refusing the configured pair: one line that says which user was
    refused and how to fix it, never the password; nothing is installed."""
    reference = _publish(tmp_path, fleet_env, auth_registry, make_dist, "plugins/echo:1.2.3")
    wrong = tmp_path / "wrong.json"
    pair = base64.b64encode(b"fleet:not-the-password").decode()
    wrong.write_text(json.dumps({"auths": {auth_registry.host: {"auth": pair}}}))
    dest = tmp_path / "root"
    result = _install(fleet_env, reference, dest, wrong)
    assert result.code == 1, result.stderr
    assert result.document["kind"] == "registry_auth"
    message = result.document["error"]
    assert auth_registry.host in message
    assert "'fleet'" in message
    assert "docker login" in message
    assert "not-the-password" not in result.stderr + result.stdout
    assert without_notes(result.stderr) == f"error: {message} [registry_auth]\n"
    assert _installed(dest) == []


def test_no_home_directory_means_no_registry_config_not_a_crash(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A container run under a bare numeric uid has no ``HOME`` and no password-database
    entry, so there is no ``~/.docker/config.json``: docker pulls anonymously, and so do we
    (``Path.home()`` raised ``RuntimeError`` there: an internal error on every sync)."""
    import pwd

    from nexo_pkg.sources.oci_auth import credentials_for

    def no_entry(uid: int) -> pwd.struct_passwd:
        raise KeyError(f"getpwuid(): uid not found: {uid}")

    monkeypatch.setattr(pwd, "getpwuid", no_entry)
    for name in ("HOME", "DOCKER_CONFIG", "REGISTRY_AUTH_FILE"):
        monkeypatch.delenv(name, raising=False)
    assert credentials_for("127.0.0.1:5000") is None


_NOT_TEXT = "\ud800"  # a lone UTF-16 surrogate: json.dumps writes it as the escape \ud800


@pytest.mark.parametrize(
    ("entry", "says"),
    [
        ({"auth": _NOT_TEXT}, "is not base64 of user:password"),
        ({"auth": "fléet:pässword"}, "is not base64 of user:password"),
        ({"username": "fleet", "password": _NOT_TEXT}, "lone UTF-16 surrogate"),
        ({"username": _NOT_TEXT, "password": "s3cret"}, "lone UTF-16 surrogate"),
        ({"identitytoken": _NOT_TEXT}, "lone UTF-16 surrogate"),
        ({"helper": "nexo-test"}, "lone UTF-16 surrogate"),
    ],
    ids=["auth-surrogate", "auth-not-ascii", "password", "username", "identitytoken", "helper"],
)
def test_credentials_that_are_not_text_are_one_registry_config_line(
    *,
    tmp_path: Path,
    fleet_env: dict[str, str],
    auth_registry: Registry,
    entry: dict[str, str],
    says: str,
) -> None:
    """A docker config (or a credential helper's answer) whose credentials are not text that
    can be sent — an ``auth`` with non-ASCII characters, a JSON ``\\ud800`` escape in any
    part — is one ``registry_config`` line naming the file and the host (exit 2), not an
    internal error; nothing is installed."""
    helpers = tmp_path / "helpers"
    helpers.mkdir()
    helper = helpers / "docker-credential-nexo-test"
    helper.write_text(
        '#!/bin/sh\nprintf \'%s\' \'{"Username": "fleet", "Secret": "\\ud800"}\'\n',
        encoding="utf-8",
    )
    helper.chmod(0o755)
    env = {**fleet_env, "PATH": f"{helpers}:{fleet_env['PATH']}"}
    config = tmp_path / "config.json"
    if "helper" in entry:
        document: dict[str, object] = {"credHelpers": {auth_registry.host: entry["helper"]}}
    else:
        document = {"auths": {auth_registry.host: entry}}
    config.write_text(json.dumps(document), encoding="utf-8")
    dest = tmp_path / "root"
    for command in (
        ("install", auth_registry.ref("plugins/echo:1.2.3"), "--dest", str(dest), "--yes"),
        ("info", auth_registry.ref("plugins/echo")),
    ):
        result = nexo(
            "plugin", *command, "--registry-config", str(config), "--plain-http", "--json",
            env=env, in_process=True,
        )  # fmt: skip
        assert result.code == 2, (command, result.stderr)
        assert result.document["kind"] == "registry_config", result.document
        assert says in result.document["error"]
        assert auth_registry.host in result.document["error"]
        assert (
            without_notes(result.stderr)
            == f"error: {result.document['error']} [{result.document['kind']}]\n"
        )
        assert _installed(dest) == []


@pytest.mark.parametrize("where", ["config", "helper"])
def test_a_number_of_many_digits_beside_the_credentials_is_skipped_as_docker_skips_it(
    *,
    tmp_path: Path,
    fleet_env: dict[str, str],
    auth_registry: Registry,
    make_dist: MakeDist,
    where: str,
) -> None:
    """A field nexo does not read holding a number of 5,000 digits (valid JSON; docker's
    decoder skips a field it does not know) beside the credentials, in the config file or in
    a credential helper's answer: the credentials are used and the install goes through, not
    an internal error from Python's limit on integer digits."""
    reference = _publish(tmp_path, fleet_env, auth_registry, make_dist, "plugins/echo:1.2.3")
    huge = "9" * 5000
    helpers = tmp_path / "helpers"
    helpers.mkdir()
    helper = helpers / "docker-credential-nexo-test"
    helper.write_text(
        f'#!/bin/sh\nprintf \'%s\' \'{{"Username": "{USER}", "Secret": "{PASSWORD}", '
        f'"Expires": {huge}}}\'\n',
        encoding="utf-8",
    )
    helper.chmod(0o755)
    env = {**fleet_env, "PATH": f"{helpers}:{fleet_env['PATH']}"}
    config = tmp_path / "config.json"
    if where == "helper":
        text = f'{{"credHelpers": {{"{auth_registry.host}": "nexo-test"}}, "n": {huge}}}'
    else:
        pair = base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
        text = f'{{"auths": {{"{auth_registry.host}": {{"auth": "{pair}", "n": {huge}}}}}}}'
    config.write_text(text, encoding="utf-8")
    dest = tmp_path / "root"
    result = _install(env, reference, dest, config)
    assert result.code == 0, result.stderr
    assert _installed(dest) == ["echo-1.2.3"]


def test_a_credential_helper_answering_bytes_that_are_not_utf8_is_one_registry_config_line(
    tmp_path: Path, fleet_env: dict[str, str], auth_registry: Registry
) -> None:
    """docker's helper protocol is UTF-8 JSON: an answer that is not (a stray byte 0xff) is
    the helper's ``registry_config`` line naming it (exit 2), not an internal error; nothing
    is installed."""
    helpers = tmp_path / "helpers"
    helpers.mkdir()
    helper = helpers / "docker-credential-nexo-test"
    helper.write_text(
        '#!/bin/sh\nprintf \'\\377{"Username": "fleet", "Secret": "s"}\'\n', encoding="utf-8"
    )
    helper.chmod(0o755)
    env = {**fleet_env, "PATH": f"{helpers}:{fleet_env['PATH']}"}
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"credsStore": "nexo-test"}), encoding="utf-8")
    dest = tmp_path / "root"
    for command in (
        ("install", auth_registry.ref("plugins/echo:1.2.3"), "--dest", str(dest), "--yes"),
        ("info", auth_registry.ref("plugins/echo")),
    ):
        result = nexo(
            "plugin", *command, "--registry-config", str(config), "--plain-http", "--json",
            env=env, in_process=True,
        )  # fmt: skip
        assert result.code == 2, (command, result.stderr)
        assert result.document["kind"] == "registry_config", result.document
        assert "docker-credential-nexo-test" in result.document["error"]
        assert (
            without_notes(result.stderr)
            == f"error: {result.document['error']} [{result.document['kind']}]\n"
        )
        assert _installed(dest) == []


@pytest.mark.parametrize("answer", ["padded", "endless"])
def test_a_credential_helper_answering_more_than_a_mebibyte_is_refused(
    *,
    tmp_path: Path,
    fleet_env: dict[str, str],
    auth_registry: Registry,
    make_dist: MakeDist,
    answer: str,
) -> None:
    """A helper's answer is read up to 1 MiB, as other capped reads: past it (valid
    credentials after 2 MiB of blanks, or output that never ends) the helper is killed and
    refused (``registry_config``, exit 2) at once, not read whole into memory; nothing is
    installed."""
    reference = _publish(tmp_path, fleet_env, auth_registry, make_dist, "plugins/echo:1.2.3")
    helpers = tmp_path / "helpers"
    helpers.mkdir()
    helper = helpers / "docker-credential-nexo-test"
    body = (
        f"head -c 2097152 /dev/zero | tr '\\0' ' '\n"
        f'printf \'%s\' \'{{"Username": "{USER}", "Secret": "{PASSWORD}"}}\'\n'
        if answer == "padded"
        else "exec yes\n"
    )
    helper.write_text("#!/bin/sh\n" + body, encoding="utf-8")
    helper.chmod(0o755)
    env = {**fleet_env, "PATH": f"{helpers}:{fleet_env['PATH']}"}
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"credHelpers": {auth_registry.host: "nexo-test"}}))
    dest = tmp_path / "root"
    started = time.monotonic()
    result = _install(env, reference, dest, config)
    assert time.monotonic() - started < 20
    assert result.code == 2, result.stderr
    assert result.document["kind"] == "registry_config", result.document
    assert "docker-credential-nexo-test answered more than 1 MiB" in result.document["error"]
    assert (
        without_notes(result.stderr)
        == f"error: {result.document['error']} [{result.document['kind']}]\n"
    )
    assert _installed(dest) == []


def test_a_credential_helper_that_closes_its_output_and_stays_is_stopped_at_the_timeout(
    *,
    tmp_path: Path,
    fleet_env: dict[str, str],
    auth_registry: Registry,
    make_dist: MakeDist,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A helper that answers, closes its stdout and then never ends is held to the helper's
    timeout as one that never answers is (``registry_config``, exit 2), not waited for
    without end; nothing is installed."""
    from nexo_pkg.sources import oci_auth

    monkeypatch.setattr(oci_auth, "HELPER_TIMEOUT", 2.0)
    reference = _publish(tmp_path, fleet_env, auth_registry, make_dist, "plugins/echo:1.2.3")
    helpers = tmp_path / "helpers"
    helpers.mkdir()
    helper = helpers / "docker-credential-nexo-test"
    helper.write_text(
        "#!/bin/sh\n"
        f'printf \'%s\' \'{{"Username": "{USER}", "Secret": "{PASSWORD}"}}\'\n'
        "exec >&-\nexec sleep 25\n",
        encoding="utf-8",
    )
    helper.chmod(0o755)
    env = {**fleet_env, "PATH": f"{helpers}:{fleet_env['PATH']}"}
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"credHelpers": {auth_registry.host: "nexo-test"}}))
    dest = tmp_path / "root"
    started = time.monotonic()
    result = _install(env, reference, dest, config)
    assert time.monotonic() - started < 15
    assert result.code == 2, result.stderr
    assert result.document["kind"] == "registry_config", result.document
    assert "docker-credential-nexo-test failed" in result.document["error"]
    assert _installed(dest) == []


def _running(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie waiting to be reaped is not)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8").rsplit(")", 1)[1].split()
    except OSError:
        return False
    return fields[0] not in {"Z", "X"}


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_a_credential_helper_leaving_a_process_on_its_output_is_answered_when_it_exits(
    *,
    tmp_path: Path,
    fleet_env: dict[str, str],
    auth_registry: Registry,
    make_dist: MakeDist,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A helper that answers and exits while a process it started still holds its stdout
    (``sleep &``) is answered when it exits: its credentials are used at once, not after the
    helper's timeout or the leftover's life, and the leftover does not outlive the command."""
    from nexo_pkg.sources import oci_auth

    monkeypatch.setattr(oci_auth, "HELPER_TIMEOUT", 5.0)
    reference = _publish(tmp_path, fleet_env, auth_registry, make_dist, "plugins/echo:1.2.3")
    helpers = tmp_path / "helpers"
    helpers.mkdir()
    leftover = tmp_path / "leftover.pid"
    helper = helpers / "docker-credential-nexo-test"
    helper.write_text(
        "#!/bin/sh\n"
        f'printf \'%s\' \'{{"Username": "{USER}", "Secret": "{PASSWORD}"}}\'\n'
        f"sleep 20 &\necho $! > '{leftover}'\nexit 0\n",
        encoding="utf-8",
    )
    helper.chmod(0o755)
    env = {**fleet_env, "PATH": f"{helpers}:{fleet_env['PATH']}"}
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"credHelpers": {auth_registry.host: "nexo-test"}}))
    dest = tmp_path / "root"
    started = time.monotonic()
    result = _install(env, reference, dest, config)
    assert time.monotonic() - started < 4, result.stderr
    assert result.code == 0, result.stderr
    assert _installed(dest) == ["echo-1.2.3"]
    pid = int(leftover.read_text(encoding="utf-8"))
    for _ in range(40):
        if not _running(pid):
            break
        time.sleep(0.05)
    assert not _running(pid)


@pytest.mark.parametrize(
    "spelling",
    [
        'Bearer Realm="{realm}",Service="{service}",Scope="repository:plugins/echo:pull"',
        "bearer realm={quoted},service={service}",
        'Basic realm="Registry Realm", Bearer realm="{realm}", service="{service}"',
        'Bearer realm="{realm}",service="{escaped}"',
    ],
    ids=["capitalised-names", "unquoted-service", "basic-offered-too", "escaped-character"],
)
def test_a_bearer_challenge_is_read_as_docker_reads_it(
    *,
    tmp_path: Path,
    fleet_env: dict[str, str],
    token_registry: tuple[Registry, TokenServer],
    make_dist: MakeDist,
    spelling: str,
) -> None:
    """WWW-Authenticate as RFC 9110 spells it and docker's and containerd's parsers read it:
    parameter names in any case, token or quoted values (backslash escapes), and a Bearer
    challenge offered beside Basic answered with a token. The token service is asked with the
    challenge's realm and service, and the install goes through."""
    running, tokens = token_registry
    config = auth_config(tmp_path, running)
    push_dist(
        make_dist(identity=None), running.ref("plugins/echo"), Path(fleet_env["NEXO_HOME"]), config
    )
    proxy = RegistryProxy(running.host).start()
    try:
        realm = tokens.realm
        proxy.challenge = spelling.format(
            realm=realm,
            quoted=f'"{realm}"',
            escaped=SERVICE.replace("-", "\\-"),
            service=SERVICE,
        )
        through = tmp_path / "through-proxy.json"
        entry = json.loads(config.read_text())["auths"][running.host]
        through.write_text(json.dumps({"auths": {proxy.host: entry}}), encoding="utf-8")
        seen = len(tokens.requests)
        dest = tmp_path / "plugins"
        installed = _install(fleet_env, proxy.ref("plugins/echo") + ":1.2.3", dest, through)
        assert installed.code == 0, installed.stderr
        assert _installed(dest) == ["echo-1.2.3"]
        asked = tokens.requests[seen:]
        assert asked
        assert all(r.granted and r.service == SERVICE for r in asked), asked
        # The password went to the token service only: the registry saw bearer tokens.
        assert proxy.authorizations
        assert all(value.startswith("Bearer ") for _, value in proxy.authorizations)
        assert PASSWORD not in installed.stdout + installed.stderr
    finally:
        proxy.stop()
