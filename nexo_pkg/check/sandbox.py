"""The daemon's plugin sandbox: the ``bwrap`` command line it wraps a plugin in, or why none.

On Linux the daemon does not spawn a plugin whose manifest enables ``[plugin.sandbox]``
directly: its sandbox runner wraps the command in ``bwrap`` with an argv built from the
sandbox section (``build_bwrap_args``). :func:`plan_sandbox` builds the same argv from the
same inputs: the manifest, the state directory, ``NEXO_PLUGIN_SANDBOX_REQUIRE``,
``NEXO_PLUGIN_SANDBOX_HOST_NET_ALLOW``, the platform and whether ``bwrap`` is on ``PATH``.

It never raises on a manifest: a spawn the daemon refuses comes back as a refused plan
carrying the daemon's reason; a mount ``bwrap`` cannot make (a source path that does not
exist) comes back as a problem naming the manifest entry and its line.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from nexo_pkg.manifest.model import Sandbox
from nexo_pkg.manifest.names import find_manifest
from nexo_pkg.manifest.rules_sandbox import HOST_NET_ENV, REQUIRE_ENV, env_flag
from nexo_pkg.manifest.sandbox_paths import (
    HOME_SECRET_SUBPATHS,
    STATE_DIR_TOKEN,
    daemon_denylist_hit,
    denylist_hit,
    home_secret_hit,
    host_path_exists,
    normalise,
)

# `nobody:nogroup`, what the daemon maps the plugin to with `drop_user = true`.
_NOBODY = "65534"

# System directories bound read-only when they exist, then resolv.conf, in the daemon's order.
_SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib64", "/etc/ssl")

Platform = Literal["linux", "macos", "other"]


@dataclass(frozen=True)
class MountProblem:
    """A mount ``bwrap`` cannot make: its source is missing on this host."""

    path: str
    entry: str
    key: str
    line: int | None

    def describe(self, manifest_name: str) -> str:
        """One line naming the path, the manifest entry and where it is written."""
        where = f"{manifest_name}:{self.line}" if self.line is not None else manifest_name
        expanded = f" (expanded from `{self.entry}`)" if self.entry != self.path else ""
        return (
            f"bwrap cannot mount `{self.path}`{expanded}: no such path on this host "
            f"(plugin.sandbox.{self.key}, {where}); the daemon's spawn fails with "
            f"`bwrap: Can't find source path {self.path}`"
        )


@dataclass(frozen=True)
class SandboxPlan:
    """How the daemon would start the plugin.

    ``argv`` is the command to spawn (``bwrap …`` when ``wrapped``), or None when the daemon
    refuses to spawn; ``refusal`` then holds its reason. ``note`` is the daemon's warning
    for an unsandboxed run of a sandboxed plugin (no ``bwrap``, macOS). ``problems`` are the
    mounts that make ``bwrap`` fail on this host.
    """

    argv: list[str] | None
    reason: str
    manifest_name: str
    wrapped: bool = False
    enabled: bool = True
    refusal: str | None = None
    note: str | None = None
    problems: tuple[MountProblem, ...] = ()
    state_dir: str | None = None
    skipped: bool = False
    #: The refusal is ``check``'s own: the daemon would spawn the plugin (and bind the path).
    daemon_spawns: bool = False

    def to_json(self) -> dict[str, Any]:
        """``{"enabled", "wrapped", "argv", "reason", ...}`` for the ``--json`` report."""
        return {
            "enabled": self.enabled,
            "wrapped": self.wrapped,
            "skipped": self.skipped,
            "argv": None if self.argv is None else list(self.argv),
            "reason": self.reason,
            "refusal": self.refusal,
            "daemon_spawns": self.daemon_spawns,
            "state_dir": self.state_dir,
            "mount_problems": [problem.describe(self.manifest_name) for problem in self.problems],
        }


def current_platform() -> Platform:
    """``linux``, ``macos`` or ``other``, the branches of the daemon's runner."""
    if sys.platform.startswith("linux"):
        return "linux"
    if sys.platform == "darwin":
        return "macos"
    return "other"


def find_bwrap(platform: Platform) -> str | None:
    """Where ``bwrap`` is on ``PATH`` (looked for on Linux only, as the daemon does)."""
    return shutil.which("bwrap") if platform == "linux" else None


def plan_sandbox(
    sandbox: Sandbox,
    plugin_id: str,
    argv: Sequence[str],
    *,
    root: Path,
    state_dir: Path,
    env: Mapping[str, str],
    bwrap: str | None,
    platform: Platform,
    skip: bool = False,
    program: str | None = None,
    manifest_file: tuple[Path, bytes] | None = None,
) -> SandboxPlan:
    """The daemon's ``SandboxRunner::wrap_command`` for this plugin and its manifest's
    ``sandbox`` section.

    ``program``, when given, replaces ``argv[0]`` inside the wrapper (the manifest's bare
    command name, which the daemon hands to bwrap as written, to be found on the sandbox's
    ``PATH``); ``env`` supplies the two ``NEXO_PLUGIN_SANDBOX_*`` flags. With ``skip``
    (``--no-sandbox``) the command is not wrapped, and the plan says what that leaves out.
    ``manifest_file``: the manifest the sandbox section was read from and its bytes as read
    (where the plan's lines point; without it, the root's manifest is read). Never raises.
    """
    enabled = sandbox.enabled
    command = list(argv)
    manifest = manifest_file[0] if manifest_file is not None else find_manifest(root).path
    manifest_name = manifest.name if manifest is not None else "nexo-plugin.toml"
    refusal = _refusal(sandbox, plugin_id, env, bwrap=bwrap, platform=platform, skip=skip)
    if refusal is not None:
        return SandboxPlan(None, "refused", manifest_name, enabled=enabled, refusal=refusal)
    if not enabled or skip:
        reason = (
            "--no-sandbox: run without the daemon's bwrap wrapper, so the filesystem "
            "allowlist, the network policy, the user drop and the sandbox's PATH are not "
            "exercised"
            if enabled
            else "[plugin.sandbox] is not enabled: the daemon runs the command as it is"
        )
        return SandboxPlan(command, reason, manifest_name, enabled=enabled, skipped=enabled)
    if platform != "linux" or bwrap is None:
        if platform == "macos":
            note = (
                f"macOS — sandbox not enforced for plugin `{plugin_id}` (native sandbox-exec "
                "deferred)"
            )
        elif platform != "linux":
            note = f"sandbox not enforced for plugin `{plugin_id}` on this platform"
        else:
            note = (
                f"plugin `{plugin_id}` declares sandbox but `bwrap` is not in PATH — running "
                "without sandbox"
            )
        return SandboxPlan(command, note, manifest_name, note=note)
    if program is not None:
        command = [program, *command[1:]]
    source = manifest_file[1] if manifest_file is not None else manifest
    return _wrapped_plan(sandbox, plugin_id, command, source, state_dir, bwrap, manifest_name)


def daemon_program(command: str | None, argv: Sequence[str]) -> str | None:
    """The manifest's ``entrypoint.command`` when it is a bare name that ``argv[0]`` was
    found from on ``PATH``: the daemon passes such a name on as written. None otherwise."""
    if command and "/" not in command:
        return command if argv and argv[0].rpartition("/")[2] == command else None
    return None


def _refusal(
    sandbox: Sandbox,
    plugin_id: str,
    env: Mapping[str, str],
    *,
    bwrap: str | None,
    platform: Platform,
    skip: bool,
) -> str | None:
    """The daemon's reason for refusing to spawn, in ``wrap_command``'s order, or None."""
    require = env_flag(REQUIRE_ENV, env)
    if not sandbox.enabled:
        if require:
            return (
                f"plugin `{plugin_id}`: sandbox required ({REQUIRE_ENV}=1) but manifest sets "
                "sandbox.enabled = false"
            )
        return None
    if sandbox.network == "host" and not env_flag(HOST_NET_ENV, env):
        return f'plugin `{plugin_id}`: sandbox.network = "host" requires {HOST_NET_ENV}=1'
    if skip or not require:
        return None
    if platform != "linux":
        return (
            f"plugin `{plugin_id}`: sandbox required but the current platform is unsupported "
            "(macOS sandbox path deferred)"
        )
    if bwrap is None:
        return (
            f"plugin `{plugin_id}`: sandbox required but `bwrap` not found in PATH "
            "(apt install bubblewrap)"
        )
    return None


def _wrapped_plan(  # noqa: PLR0917  # the pieces of the argv
    sandbox: Sandbox,
    plugin_id: str,
    command: list[str],
    manifest: Path | bytes | None,
    state_dir: Path,
    bwrap: str,
    manifest_name: str,
) -> SandboxPlan:
    """``build_bwrap_args``: the argv after ``bwrap``, its refusals and missing sources."""

    def refused(reason: str, *, daemon_spawns: bool) -> SandboxPlan:
        # Nothing starts; ``daemon_spawns``: the daemon would spawn the plugin all the same.
        return SandboxPlan(None, "refused", manifest_name, wrapped=True, refusal=reason,
                           state_dir=str(state_dir), daemon_spawns=daemon_spawns)  # fmt: skip

    args = ["--die-with-parent", "--unshare-pid", "--unshare-uts", "--unshare-ipc", "--new-session"]
    # The sandbox's own fresh /proc, /dev and /tmp.
    args += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]  # noqa: S108
    for directory in _SYSTEM_DIRS:
        if Path(directory).exists():
            args += ["--ro-bind-try", directory, directory]
    args += ["--ro-bind-try", "/etc/resolv.conf", "/etc/resolv.conf"]
    if sandbox.network != "host":
        args.append("--unshare-net")
    if sandbox.drop_user is True:
        args += ["--unshare-user", "--uid", _NOBODY, "--gid", _NOBODY]
    args += ["--setenv", "PATH", "/usr/bin:/bin"]
    # Rust's `Path::parent`: nothing for a bare program name, `/` for `/prog`.
    parent = command[0].rpartition("/")[0] or ("/" if command[0].startswith("/") else "")
    if ".." in parent.split("/"):
        # bwrap is never handed a path that still climbs: the directory as bwrap would reach
        # it (links, then `..`, as the kernel resolves them) and the command in it.
        parent = os.path.realpath(parent)
        command = [f"{parent.rstrip('/')}/{command[0].rpartition('/')[2]}", *command[1:]]
    if parent and Path(parent).exists():
        # A command at `/x` (or in a home, or under /proc) has the daemon bind that whole
        # directory, read-only: judged as every bind source is.
        danger = _bind_danger(
            plugin_id,
            command[0],
            parent,
            "",
            where=f"the directory of the command `{command[0]}`",
            climbing=False,  # under /root outside its secrets: a pyenv interpreter
        )
        if danger is not None:
            return refused(danger, daemon_spawns=True)
        args += ["--ro-bind-try", parent, parent]
    spans = _entry_lines(manifest)
    problems: list[MountProblem] = []
    for key, flag, paths in (
        ("fs_read_paths", "--ro-bind", sandbox.fs_read_paths),
        ("fs_write_paths", "--bind", sandbox.fs_write_paths),
    ):
        for index, entry in enumerate(paths):
            resolved = entry.replace(STATE_DIR_TOKEN, str(state_dir))
            refusal = _resolved_path_refusal(plugin_id, entry, resolved)
            if refusal is not None:
                return refused(refusal, daemon_spawns=False)
            danger = _bind_danger(plugin_id, entry, resolved, key)
            if danger is not None:
                return refused(danger, daemon_spawns=True)
            args += [flag, resolved, resolved]
            if not host_path_exists(resolved):
                problems.append(MountProblem(resolved, entry, key, spans.get((key, index))))
    args += ["--", *command]
    return SandboxPlan(
        [bwrap, *args],
        "wrapped in bwrap as the daemon wraps it",
        manifest_name,
        wrapped=True,
        problems=tuple(problems),
        state_dir=str(state_dir),
    )


def _resolved_path_refusal(plugin_id: str, entry: str, resolved: str) -> str | None:
    """The daemon's spawn-time re-check of an expanded allowlist entry."""
    if not resolved.startswith("/"):
        return (
            f"plugin `{plugin_id}`: sandbox path resolution failed for `{entry}`: resolved "
            "path is not absolute"
        )
    hit = daemon_denylist_hit(resolved)
    if hit is not None:
        return (
            f"plugin `{plugin_id}`: resolved sandbox path `{resolved}` (from manifest entry "
            f"`{entry}`) hits denylisted host path `{hit}`"
        )
    return None


def _bind_danger(
    plugin_id: str,
    entry: str,
    resolved: str,
    key: str,
    *,
    where: str | None = None,
    climbing: bool = True,
) -> str | None:
    """Why ``check`` does not bind ``resolved`` although the daemon would: the path as
    ``bwrap`` reaches it (symlinks followed, ``..`` gone) is, lies under or covers a
    denylisted host path or a home secret, or the text still climbs with ``..``. The daemon
    judges the text alone, and ``bwrap`` follows links, so on this host the daemon would hand
    the plugin that path. ``where`` says where the path comes from when it is no allowlist
    entry (the command's directory); without ``climbing`` (the command's directory), ``..``
    in the text is no danger of its own (where it leads still is), nor is lying under
    ``/root`` outside its secrets."""
    source = where or f"from manifest entry `{entry}`, plugin.sandbox.{key}"
    where = f"sandbox path `{resolved}` ({source})"
    try:
        real = os.path.realpath(resolved)
    except OSError as exc:
        return (
            f"plugin `{plugin_id}`: {where} cannot be resolved on this host "
            f"({exc.strerror or exc}: {exc.filename}); not started: check cannot tell what "
            "bwrap would bind there"
        )
    denied = denylist_hit(real)
    if not climbing and denied == "/root" and real.startswith("/root/"):
        # A command under root's home (a pyenv interpreter): its directory, read-only, shows
        # root's secrets only if it is one of them, which the home secrets below judge.
        denied = None
    hit = denied or home_secret_hit(real) or _own_home_secret_hit(real)
    climbs = climbing and ".." in resolved.split("/")
    # /proc/self/cwd, /proc/self/root, /proc/<pid>/…: what they name is the view of the
    # process that resolves them (the daemon's bwrap, with the daemon's working directory
    # and root), not this one's; the sandbox has a /proc of its own anyway.
    in_proc = "proc" in (normalise(resolved).split("/")[1], real.split("/")[1])
    if hit is None and not climbs and not in_proc:
        return None
    how = "writable" if key == "fs_write_paths" else "read-only"
    via = "" if real == resolved else f", which resolves to `{real}` on this host"
    gets = f"`{real}`"
    if hit is not None:
        why = f"is, lies under or covers denylisted host path `{hit}`"
    elif climbs:
        why = "still has `..` components after expansion, which check never passes to bwrap"
    else:
        why = (
            "lies under the host's /proc, whose entries name the view of the process that "
            "binds them (the daemon's working directory, root or files), not this one's"
        )
        gets = f"what `{resolved}` names in the daemon's own process (for nexo, `{real}`)"
    return (
        f"plugin `{plugin_id}`: {where}{via}, {why}; not started. THE DAEMON WOULD SPAWN IT: "
        "it checks the path as written and bwrap follows links and `..`, so the plugin would "
        f"get {gets} {how}"
    )


def _own_home_secret_hit(real: str) -> str | None:
    """The secret of this user's own home (``$HOME``, wherever it is: a service user's
    ``/var/lib/nexo``) that exists on this host and that the resolved path ``real`` is, lies
    under or covers, if any."""
    try:
        home = os.path.realpath(Path.home())
    except (OSError, RuntimeError):
        return None
    if home == "/":
        return None  # `/` itself is denylisted already
    for secret in HOME_SECRET_SUBPATHS:
        path = f"{home}/{secret}"
        reached = real == path or real.startswith(path + "/")
        covered = real == "/" or path.startswith(real.rstrip("/") + "/")
        if (reached or covered) and os.path.lexists(path):
            return path
    return None


def _entry_lines(manifest: Path | bytes | None) -> dict[tuple[str, int], int]:
    """The 1-based line of every sandbox allowlist entry in ``manifest`` (its path, or its
    bytes as already read; best effort)."""
    from nexo_pkg.core.toml_spans import scan_spans  # noqa: PLC0415 - only for a wrapped plan

    if manifest is None:
        return {}
    try:
        text = (
            manifest.decode("utf-8")
            if isinstance(manifest, bytes)
            else manifest.read_text(encoding="utf-8")
        )
        spans, _duplicates = scan_spans(text)
    except (OSError, UnicodeDecodeError, ValueError):
        return {}
    lines: dict[tuple[str, int], int] = {}
    for path in spans.values:
        if len(path) == 4 and path[:2] == ("plugin", "sandbox"):
            key, index = path[2], path[3]
            if isinstance(key, str) and isinstance(index, int):
                lines[(key, index)] = spans.value_span(path).start.line
    return lines
