"""Registry credentials, read the way docker, podman and oras read them (docs/fleet.md,
"Authentication"): ``--registry-config``, else ``REGISTRY_AUTH_FILE``, else the docker config;
per host ``auths`` entries or a ``docker-credential-<name>`` helper. A missing default file
means no credentials; a named file that is missing or malformed is a configuration error.
"""

from __future__ import annotations

import base64
import errno
import json
import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nexo_pkg.core.errors import ConfigError
from nexo_pkg.core.files import read_config_bytes
from nexo_pkg.core.programs import find_program, run_capped

AUTH_FILE_ENV = "REGISTRY_AUTH_FILE"
HELPER_TIMEOUT = 30.0
# What a credential helper may answer: a {Username, Secret} document is well under a KiB.
MAX_HELPER_OUTPUT_BYTES = 1024 * 1024
# A credentials file is a few KiB; anything past this is not one.
MAX_CONFIG_BYTES = 4 * 1024 * 1024
_HELPER_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")


@dataclass(frozen=True)
class Credentials:
    """A user name and secret for one registry host (``identity_token`` for OAuth2)."""

    username: str
    password: str
    identity_token: str | None = None


def config_path(explicit: Path | None) -> tuple[Path | None, bool]:
    """The registry config file to read, and whether it was named explicitly; ``None`` when
    there is no home directory to find it in (no ``HOME``, no password-database entry: a
    container under a bare uid), which docker reads as no file: anonymous pulls."""
    if explicit is not None:
        return explicit, True
    named = os.environ.get(AUTH_FILE_ENV)
    if named:
        return Path(named).expanduser(), True
    docker_config = os.environ.get("DOCKER_CONFIG")
    if docker_config:
        return Path(docker_config).expanduser() / "config.json", False
    try:
        return Path.home() / ".docker" / "config.json", False
    except RuntimeError:  # "Could not determine home directory."
        return None, False


def _load(path: Path, explicit: bool) -> dict[str, Any]:
    try:
        raw = read_config_bytes(path, MAX_CONFIG_BYTES)
        if len(raw) > MAX_CONFIG_BYTES:
            raise ConfigError(
                f"registry config {path} is larger than {MAX_CONFIG_BYTES} bytes",
                kind="registry_config",
            )
        text = raw.decode("utf-8")
    except FileNotFoundError:
        if explicit:
            raise ConfigError(
                f"registry config {path} does not exist", kind="registry_config"
            ) from None
        return {}
    except OSError as exc:
        raise ConfigError(
            f"cannot read registry config {path}: {exc.strerror or exc}", kind="registry_config"
        ) from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"cannot read registry config {path}: {exc}", kind="registry_config"
        ) from exc
    try:
        document = _json(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"{path}:{exc.lineno}: registry config is not valid JSON ({exc.msg})",
            kind="registry_config",
        ) from exc
    except RecursionError as exc:
        raise ConfigError(
            f"{path}: registry config is nested too deeply to be one", kind="registry_config"
        ) from exc
    if not isinstance(document, dict):
        raise ConfigError(f"{path}: registry config is not a JSON object", kind="registry_config")
    return document


def check_named_config(explicit: Path | None) -> None:
    """Refuse, before any request, a registry config that was named (``--registry-config``,
    else ``REGISTRY_AUTH_FILE``) and is missing or no config, as reading it for a registry's
    credentials would (``registry_config``, exit 2); a default file that is missing is no
    credentials, as ever."""
    path, named = config_path(explicit)
    if named and path is not None:
        _load(path, named)


def _json(text: str) -> Any:
    """``text`` as JSON, its integers read as floats: only strings and objects are used, and
    docker skips a field it does not know however many digits a number there has (Python's
    ``int`` refuses over 4,300)."""
    return json.loads(text, parse_int=float)


def _host_keys(host: str) -> tuple[str, ...]:
    # docker writes both bare hosts and URLs (`https://index.docker.io/v1/`).
    return (host, f"https://{host}", f"http://{host}", f"https://{host}/v1/", f"https://{host}/v2/")


def _key_host(key: object) -> str | None:
    """The host an ``auths`` key names, read as docker's ``ConvertToHostname`` does."""
    if not isinstance(key, str):
        return None
    for scheme in ("http://", "https://"):
        key = key.removeprefix(scheme)
    return key.split("/", 1)[0]


def _from_entry(entry: Any, path: Path, host: str) -> Credentials | None:
    if not isinstance(entry, dict):
        return None
    token = entry.get("identitytoken")
    username = entry.get("username")
    password = entry.get("password")
    encoded = entry.get("auth")
    if isinstance(encoded, str) and encoded:
        try:
            decoded = base64.b64decode(encoded, validate=True).decode("utf-8")
        except ValueError:  # not base64, not ASCII (b64decode), or not UTF-8 once decoded
            decoded = ""
        username, sep, password = decoded.partition(":")
        if not sep:
            raise ConfigError(
                f"{path}: the auth of {host} is not base64 of user:password",
                kind="registry_config",
            )
    where = f"{path}: the credentials of {host}"
    if isinstance(token, str) and token:
        return _sendable(Credentials(str(username or ""), "", identity_token=token), where)
    if isinstance(username, str) and isinstance(password, str) and username:
        return _sendable(Credentials(username, password), where)
    return None


def _sendable(credentials: Credentials, where: str) -> Credentials:
    """``credentials`` when each part is text that can be sent (UTF-8); a lone UTF-16
    surrogate, which a JSON ``\\ud800`` escape can put in a string, is ``registry_config``."""
    for part in (credentials.username, credentials.password, credentials.identity_token or ""):
        try:
            part.encode("utf-8")
        except UnicodeEncodeError:
            raise ConfigError(
                f"{where} hold a lone UTF-16 surrogate, which is not text",
                kind="registry_config",
            ) from None
    return credentials


def _run_helper(program: str, host: str) -> tuple[int, bytes | None]:
    """``program get`` with ``host`` on its stdin: its exit status and what it wrote to
    stdout, ``None`` past :data:`MAX_HELPER_OUTPUT_BYTES` (the helper is then killed, as it
    is when it has not ended :data:`HELPER_TIMEOUT` after it started, its stdout closed or
    not: ``subprocess.TimeoutExpired``). Its stderr is not read."""
    return run_capped(
        [program, "get"],
        limit=MAX_HELPER_OUTPUT_BYTES,
        timeout=HELPER_TIMEOUT,
        stdin=host.encode("utf-8"),
    )


def _from_helper(helper: str, host: str, path: Path) -> Credentials | None:
    """Ask ``docker-credential-<helper> get`` for ``host``. The helper is a plain name looked
    up on PATH only: one with a slash (``../../x``) would run a program relative to the
    working directory, so anything but letters, digits, ``.``, ``_`` and ``-`` is
    ``registry_config``."""
    if not _HELPER_NAME.fullmatch(helper):
        raise ConfigError(
            f"{path} names the credential helper {helper[:100]!r}, which is not a plain name "
            "(letters, digits, '.', '_', '-'); helpers are looked up on PATH only",
            kind="registry_config",
        )
    program = find_program(f"docker-credential-{helper}")
    if program is None:
        raise ConfigError(
            f"{path} names the credential helper {helper!r}, but docker-credential-{helper} "
            "is not in PATH's absolute directories (relative or empty entries, which name "
            "the working directory, are not searched)",
            kind="registry_config",
        )
    try:
        returncode, stdout = _run_helper(program, host)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        if exc.errno == errno.ENOENT and Path(program).exists():
            reason = "the interpreter its #! line names does not exist"
        raise ConfigError(
            f"credential helper docker-credential-{helper} failed: cannot run {program}: {reason}",
            kind="registry_config",
        ) from exc
    except subprocess.TimeoutExpired as exc:
        raise ConfigError(
            f"credential helper docker-credential-{helper} failed: it did not end within "
            f"{exc.timeout:g} seconds",
            kind="registry_config",
        ) from exc
    if stdout is None:
        raise ConfigError(
            f"credential helper docker-credential-{helper} answered more than "
            f"{MAX_HELPER_OUTPUT_BYTES // (1024 * 1024)} MiB, more than credentials ever are; "
            "refusing it",
            kind="registry_config",
        )
    if returncode != 0:
        # Helpers answer "credentials not found" with a non-zero exit: anonymous access.
        return None
    try:
        document = _json(stdout.decode("utf-8"))
        username, secret = document["Username"], document["Secret"]
    except (UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError, RecursionError) as exc:
        raise ConfigError(
            f"credential helper docker-credential-{helper} answered something that is not "
            "{Username, Secret} JSON",
            kind="registry_config",
        ) from exc
    if not isinstance(username, str) or not isinstance(secret, str):
        return None
    where = f"the credentials docker-credential-{helper} answered for {host}"
    if username == "<token>":
        return _sendable(Credentials("", "", identity_token=secret), where)
    return _sendable(Credentials(username, secret), where)


def credentials_for(host: str, explicit: Path | None = None) -> Credentials | None:
    """The credentials for ``host`` (``host:port`` as in the reference), or ``None``.

    Raises :class:`ConfigError` (``registry_config``, exit 2) for a named file that is missing
    and for a malformed file or helper answer.
    """
    path, named = config_path(explicit)
    if path is None:
        return None
    document = _load(path, named)
    helpers = document.get("credHelpers")
    if isinstance(helpers, dict) and isinstance(helpers.get(host), str):
        return _from_helper(helpers[host], host, path)
    auths = document.get("auths")
    if isinstance(auths, dict):
        # The exact forms first, then any key that names the host as docker's file store
        # reads it (``ConvertToHostname``: no scheme, nothing after the first ``/``), as
        # ``https://host/`` or ``http://host/v2/`` that other tools write.
        keys = [*_host_keys(host), *(key for key in auths if _key_host(key) == host)]
        for key in keys:
            found = _from_entry(auths.get(key), path, host)
            if found is not None:
                return found
    store = document.get("credsStore")
    if isinstance(store, str) and store:
        return _from_helper(store, host, path)
    return None
