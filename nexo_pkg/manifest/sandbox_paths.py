"""Sandbox allowlist paths against the host denylist, as the daemon checks them and stricter.

The daemon's check (``path_under_or_equals_denylist`` in the reference crate) is purely
lexical: ``//etc/shadow``, ``/etc/`` or ``/tmp/../etc/shadow`` slip through it, and the home
directory secrets (``~/.ssh`` …) are not checked at all. :func:`daemon_denylist_hit` reproduces
the daemon's verdict exactly; :func:`denylist_hit` and :func:`home_secret_hit` work on the
lexically normalised path, so the linter can report the daemon's findings under the daemon's
rule and the extra findings under rules that say they go beyond it.
"""

from __future__ import annotations

from pathlib import Path

__all__ = [
    "DENYLIST_HOST_PATHS",
    "HOME_SECRET_SUBPATHS",
    "STATE_DIR_TOKEN",
    "daemon_denylist_hit",
    "denylist_hit",
    "home_secret_hit",
    "host_path_exists",
    "normalise",
    "probe",
]

STATE_DIR_TOKEN = "${state_dir}"  # noqa: S105 - a path placeholder, not a secret
# The daemon substitutes this placeholder before its absolute-path and denylist checks.
STATE_DIR_PROBE = "/__sandbox_state_dir__"

DENYLIST_HOST_PATHS: tuple[str, ...] = (
    "/etc/shadow",
    "/etc/sudoers",
    "/etc/sudoers.d",
    "/proc/sys",
    "/proc/kcore",
    "/proc/kallsyms",
    "/sys/firmware",
    "/sys/kernel",
    "/dev/mem",
    "/dev/kmem",
    "/dev/port",
    "/var/run/docker.sock",
    "/run/docker.sock",
    "/private/var/run/docker.sock",
    "/root",
    "/boot",
)

HOME_SECRET_SUBPATHS: tuple[str, ...] = (
    ".aws",
    ".ssh",
    ".gnupg",
    ".netrc",
    ".docker",
    ".kube",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".npmrc",
    ".config/gh",
    ".config/git",
)

_DENYLIST_SEGMENTS = tuple((entry, entry.strip("/").split("/")) for entry in DENYLIST_HOST_PATHS)
_HOME_SECRET_SEGMENTS = tuple((secret, secret.split("/")) for secret in HOME_SECRET_SUBPATHS)

# Directories whose children are user homes (``/home/<user>``, macOS ``/Users/<user>``).
_HOME_PARENTS = ("home", "Users")


def probe(path: str) -> str:
    """``path`` with every ``${state_dir}`` replaced by the daemon's placeholder directory."""
    return path.replace(STATE_DIR_TOKEN, STATE_DIR_PROBE)


def daemon_denylist_hit(probe_path: str) -> str | None:
    """The denylisted path the daemon's lexical check reports for ``probe_path``, if any.

    Mirrors the reference crate exactly: ``/`` itself, an exact match, a path under an entry
    (``entry + "/"`` prefix), or a strict ancestor of an entry; no normalisation at all.
    """
    if probe_path == "/":
        return "/"
    for entry in DENYLIST_HOST_PATHS:
        if probe_path == entry or probe_path.startswith(entry + "/"):
            return entry
        if entry.startswith(probe_path + "/"):
            return entry
    return None


def _segments(path: str) -> list[str]:
    """Lexical segments of ``path``: empty and ``.`` segments dropped, ``..`` resolved.

    ``..`` never climbs above the first segment (the root, or ``~`` for a home path is just a
    segment that ``..`` can remove, like any other).
    """
    resolved: list[str] = []
    for segment in path.split("/"):
        if segment in ("", "."):
            continue
        if segment == "..":
            if resolved:
                resolved.pop()
            continue
        resolved.append(segment)
    return resolved


def normalise(path: str) -> str:
    """The lexical normal form of an absolute path: ``//etc/./shadow/`` becomes ``/etc/shadow``.

    Repeated slashes and ``.`` segments are removed, ``..`` is resolved against the segments
    before it (``/..`` stays ``/``), and a trailing slash is dropped. Symlinks are not followed:
    the linter runs on a different machine than the daemon.
    """
    return "/" + "/".join(_segments(path))


def _is_prefix(prefix: list[str], path: list[str]) -> bool:
    return path[: len(prefix)] == prefix


def denylist_hit(path: str) -> str | None:
    """The denylisted host path that normalised ``path`` equals, lies under, or contains."""
    segments = _segments(path)
    if not segments:
        return "/"
    for entry, entry_segments in _DENYLIST_SEGMENTS:
        if _is_prefix(entry_segments, segments) or _is_prefix(segments, entry_segments):
            return entry
    return None


def home_secret_hit(path: str) -> str | None:
    """The home-directory secret that ``path`` equals, lies under, or contains, if any.

    Homes are ``/home/<user>``, ``/Users/<user>``, ``/root`` and ``~``; ``path`` is normalised
    first. The answer names the secret in the path's own home (``/home/ana/.ssh``), or with a
    ``<user>`` placeholder when ``path`` contains whole homes (``/home``).
    """
    tilde = path == "~" or path.startswith("~/")
    segments = _segments(path[1:] if tilde else path)
    if tilde:
        home, rest = "~", segments
    elif not segments:
        return None  # "/" is reported by the host denylist already
    elif segments[0] in _HOME_PARENTS:
        if len(segments) == 1:
            return f"/{segments[0]}/<user>/{HOME_SECRET_SUBPATHS[0]}"
        home, rest = f"/{segments[0]}/{segments[1]}", segments[2:]
    elif segments[0] == "root":
        home, rest = "/root", segments[1:]
    else:
        return None
    for secret, secret_segments in _HOME_SECRET_SEGMENTS:
        if _is_prefix(secret_segments, rest) or _is_prefix(rest, secret_segments):
            return f"{home}/{secret}"
    return None


def host_path_exists(path: str) -> bool:
    """Whether ``path`` exists on this host, following links as bwrap does; never raises (a
    path the OS cannot even look up does not exist)."""
    try:
        return Path(path).exists()
    except (OSError, ValueError):
        return False
