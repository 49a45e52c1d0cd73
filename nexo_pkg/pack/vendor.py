"""Vendoring: ``pip install --target`` of the plugin's requirements with the current Python
and the pip nexo-pkg depends on, never uv, so every machine vendors the same bytes (why:
docs/cli.md).

The tree is resolved for the interpreter the daemon runs a noarch plugin with
(:class:`VendorTarget`), not for the one packing: pip is told its Python version and
implementation (``--python-version``, ``--implementation``) and takes wheels only
(``--only-binary=:all:``, which those flags require; a compiled wheel is then refused by
the audit whatever the packing OS, as only ``none-any`` wheels pass it). pip evaluates
environment markers (``python_version < "3.13"``, ``sys_platform == "win32"``) in the
running interpreter's environment whatever ``--python-version`` says, so the launch below
hands pip's own ``packaging`` the target's marker environment before pip starts.

A Python plugin packed for a target triple (``pack --target TRIPLE`` without ``--binary``) is
resolved for that platform too: pip takes that OS and CPU's wheels (``--platform``, a list
of the tags that platform's interpreter accepts) and the markers are that OS and CPU's, so
the tarball holds the compiled wheels the operator's host loads, whatever machine packs.
"""

from __future__ import annotations

import csv
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nexo_pkg.pack.errors import PackError, usage_error
from nexo_pkg.pack.layout import NOARCH

_SUMMARY_LIMIT = 600
# What pip (urllib3, requests) prints when the index cannot be reached at all, as opposed to
# reached and found without the package.
_NETWORK_FAILURE = re.compile(
    r"NewConnectionError|Failed to establish a new connection|Connection refused|"
    r"Temporary failure in name resolution|Name or service not known|Network is unreachable|"
    r"ConnectTimeoutError|Read timed out|ProxyError|SSLError|No route to host|"
    r"nodename nor servname provided|"
    # What pip says of an index whose certificate it does not trust when it does not retry
    # (`--retries 0`, PIP_RETRIES=0): its other lines then say only "No matching distribution".
    r"problem confirming the ssl certificate|CERTIFICATE_VERIFY_FAILED"
)
# What pip says of a certificate it does not trust, with or without retries.
_UNTRUSTED_CERTIFICATE = re.compile(
    r"problem confirming the ssl certificate|CERTIFICATE_VERIFY_FAILED", re.IGNORECASE
)
# OpenSSL's words for a certificate no CA setting makes acceptable: one for another host,
# one out of date.
_WRONG_HOST_CERTIFICATE = re.compile(r"(Hostname|IP address) mismatch", re.IGNORECASE)
_OUT_OF_DATE_CERTIFICATE = re.compile(
    r"certificate has expired|certificate is not yet valid", re.IGNORECASE
)
# The time stamp `pip --log` puts before each line of its log file.
_LOG_STAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[,.]\d+ ")


#: The oldest Python a noarch tarball is vendored for unless ``pack --python`` says otherwise.
DEFAULT_PYTHON = "3.11"

_PYTHON_VERSION = re.compile(r"3\.(?:[0-9]|[1-9][0-9])")

#: The oldest pip that vendors for the target: before 24.2, ``pip install`` judged each
#: distribution's ``Requires-Python`` against the interpreter running pip, not
#: ``--python-version`` (pypa/pip#12216), so Python 3.11 and 3.13 chose different releases.
MIN_PIP = (24, 2)
# The launcher's exit status and stderr line for an older pip (never pip's own: pip exits 0-23).
_OLD_PIP_EXIT = 86
_OLD_PIP_LINE = re.compile(r"^nexo-pkg: old pip (\S+)$", re.MULTILINE)

# Run as `python -c`: pip with the target's marker environment (see the module docstring),
# once pip is known to be new enough (MIN_PIP). pip sets the execute bit of a file whose
# wheel entry has one, and Windows keeps no execute bit: every file pip marks is also written
# (as a JSON string per line) to the file named by the second argument, created empty first,
# so the tarball's modes come from the wheels on every OS (no file: this pip has no such hook).
_LAUNCH_PIP = """\
import json, os, re, runpy, sys
import pip
found = re.match(r"([0-9]+)[.]([0-9]+)", pip.__version__)
if found is None or tuple(map(int, found.groups())) < MIN_PIP:
    sys.stderr.write("nexo-pkg: old pip " + pip.__version__ + "\\n")
    sys.exit(OLD_PIP_EXIT)
from pip._vendor.packaging import markers
target = json.loads(sys.argv.pop(1))
executables = sys.argv.pop(1)
running = markers.default_environment
markers.default_environment = lambda: {**running(), **target}
try:
    from pip._internal.operations.install import wheel as installing
    mark = installing.set_extracted_file_to_default_mode_plus_executable
except (ImportError, AttributeError):
    installing = None
if installing is not None:
    def recording(path, mark=mark):
        with open(executables, "a", encoding="utf-8", newline="\\n") as log:
            log.write(json.dumps(os.path.abspath(path)) + "\\n")
        mark(path)
    open(executables, "a", encoding="utf-8", newline="\\n").close()
    installing.set_extracted_file_to_default_mode_plus_executable = recording
sys.argv[0] = "pip"
runpy.run_module("pip", run_name="__main__", alter_sys=True)
""".replace("MIN_PIP", repr(MIN_PIP)).replace("OLD_PIP_EXIT", str(_OLD_PIP_EXIT))


#: The newest glibc a Linux (``-gnu``) target's wheels may need: manylinux_2_28 (Debian 10,
#: RHEL 8, Ubuntu 18.10 and later); older manylinux wheels are taken too.
MANYLINUX_GLIBC = 28
#: The macOS a ``-apple-darwin`` target's wheels may need (the first with Apple silicon);
#: pip takes the older macOS wheels and universal2 ones of that CPU too.
MACOS_VERSION = "11_0"

# A target triple's CPU as Python's platform tags and `platform.machine()` name it.
_LINUX_MACHINES = {
    "x86_64": "x86_64",
    "aarch64": "aarch64",
    "armv7": "armv7l",
    "i686": "i686",
    "riscv64gc": "riscv64",
    "powerpc64le": "ppc64le",
    "s390x": "s390x",
}
_DARWIN_MACHINES = {"x86_64": "x86_64", "aarch64": "arm64"}
# manylinux2014/2010/1 are the legacy names of manylinux_2_17/2_12/2_5.
_LEGACY_MANYLINUX = {17: "manylinux2014", 12: "manylinux2010", 5: "manylinux1"}


@dataclass(frozen=True)
class _Platform:
    """What a target triple's host looks like to pip: its wheel platform tags and the PEP 508
    markers that depend on the OS and CPU."""

    tags: tuple[str, ...]
    sys_platform: str
    platform_system: str
    machine: str


def _platform(triple: str) -> _Platform | None:
    """The platform of a Linux or macOS ``triple``, else ``None`` (the daemon runs nowhere
    else)."""
    cpu, _, rest = triple.partition("-")
    if rest == "apple-darwin" and cpu in _DARWIN_MACHINES:
        darwin = _DARWIN_MACHINES[cpu]
        return _Platform((f"macosx_{MACOS_VERSION}_{darwin}",), "darwin", "Darwin", darwin)
    machine = _LINUX_MACHINES.get(cpu)
    if machine is None or not rest.startswith("unknown-linux-"):
        return None
    tags: tuple[str, ...]
    if rest.removeprefix("unknown-linux-").startswith("musl"):
        tags = (f"musllinux_1_2_{machine}", f"musllinux_1_1_{machine}")
    else:
        tags = tuple(
            tag
            for glibc in range(MANYLINUX_GLIBC, 4, -1)
            for tag in (
                f"manylinux_2_{glibc}_{machine}",
                *([f"{_LEGACY_MANYLINUX[glibc]}_{machine}"] if glibc in _LEGACY_MANYLINUX else []),
            )
        )
    return _Platform(tags, "linux", "Linux", machine)


# noarch: markers as on the Linux host the daemon runs python3 on; wheels of no platform.
_NOARCH_PLATFORM = _Platform((), "linux", "Linux", "x86_64")


@dataclass(frozen=True)
class VendorTarget:
    """The interpreter a plugin's requirements are resolved for: CPython ``python_version``
    on a Linux host, where the daemon runs ``python3``, for a noarch tarball; on the OS and
    CPU of ``triple`` for a tarball of that target."""

    python_version: str = DEFAULT_PYTHON
    triple: str = NOARCH

    def __post_init__(self) -> None:
        if not _PYTHON_VERSION.fullmatch(self.python_version):
            raise usage_error(
                f"--python {self.python_version!r} is not a Python 3 version as X.Y (e.g. 3.11)"
            )
        if self.triple != NOARCH and _platform(self.triple) is None:
            raise usage_error(
                f"a Python plugin cannot be packed for {self.triple}: the daemon runs plugins "
                "on Linux and macOS, so use a Linux or macOS triple (or noarch), or pass "
                "--binary PATH for a compiled plugin"
            )

    @property
    def _platform(self) -> _Platform:
        return _platform(self.triple) or _NOARCH_PLATFORM

    def marker_environment(self) -> dict[str, str]:
        """PEP 508 marker values of that interpreter (``platform_release`` and
        ``platform_version`` are left as the running host has them: no plugin should pin
        a kernel)."""
        full = f"{self.python_version}.0"
        platform = self._platform
        return {
            "implementation_name": "cpython",
            "implementation_version": full,
            "os_name": "posix",
            "platform_machine": platform.machine,
            "platform_python_implementation": "CPython",
            "platform_system": platform.platform_system,
            "python_full_version": full,
            "python_version": self.python_version,
            "sys_platform": platform.sys_platform,
        }

    def pip_flags(self, *, pure_only: bool = False) -> list[str]:
        """pip's resolution flags for this target; ``pure_only`` takes ``none-any`` wheels only
        (``--platform any``), whatever the packing OS offers."""
        flags = ["--python-version", self.python_version, "--implementation", "cp"]
        if pure_only:
            flags += ["--platform", "any"]
        for tag in self._platform.tags:
            flags += ["--platform", tag]
        return [*flags, "--only-binary=:all:"]

    def to_json(self) -> dict[str, Any]:
        """What the tarball records (``lib/nexo-vendor.json``)."""
        recorded: dict[str, Any] = {
            "python_version": self.python_version,
            "implementation": "cp",
            "markers": self.marker_environment(),
        }
        if self.triple != NOARCH:
            recorded |= {"target": self.triple, "platforms": list(self._platform.tags)}
        return recorded

    def record(self) -> bytes:
        """:meth:`to_json` as the bytes stored in the tarball."""
        return (json.dumps(self.to_json(), indent=2, sort_keys=True) + "\n").encode()


def pip_command(
    requirements: Path,
    target: Path,
    log: Path,
    report: Path,
    vendor_for: VendorTarget | None = None,
    *,
    pure_only: bool = False,
) -> list[str]:
    """The pip invocation; ``PIP_*`` variables (index, find-links, proxies) still apply.

    ``log`` asks pip for its full log (connection errors included, which ``--quiet`` hides);
    ``report`` for its installation report (what the SBOM's archive hashes come from); the
    files pip marks executable are listed in :func:`executables_log` of ``target``.
    """
    vendor_for = vendor_for or VendorTarget()
    markers = json.dumps(vendor_for.marker_environment(), sort_keys=True)
    command = [sys.executable, "-c", _LAUNCH_PIP, markers, str(executables_log(target))]
    # `--no-user`: a pip configured for user installs (pip.conf `user = true`, PIP_USER)
    # refuses --target otherwise.
    command += ["install", "--no-user", "--target", str(target)]
    command += vendor_for.pip_flags(pure_only=pure_only)
    command += ["--requirement", str(requirements)]
    # Byte code is interpreter-specific and would make the tarball differ per host.
    command += ["--no-compile", "--quiet", "--no-input", "--disable-pip-version-check"]
    return [*command, "--log", str(log), "--report", str(report)]


def executables_log(target: Path) -> Path:
    """Where the pip run installing into ``target`` lists the files it marks executable."""
    return target.parent / f".{target.name}-executables.jsonl"


def executable_files(target: Path) -> frozenset[Path] | None:
    """The files of the vendored tree ``target`` whose wheel entries carry an execute bit, as
    pip marked them (resolved paths), matched to the trees' ``RECORD`` paths; ``None`` when
    the pip that ran gave no such list. The list is removed once read."""
    log = executables_log(target)
    try:
        lines = log.read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    finally:
        log.unlink(missing_ok=True)
    recorded: set[str] = set()
    for record in target.glob("*.dist-info/RECORD"):
        try:
            rows = record.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            continue
        recorded.update(row[0] for row in csv.reader(rows) if row)
    found = set()
    for line in lines:
        try:
            marked = json.loads(line)
        except ValueError:
            continue
        if not isinstance(marked, str):
            continue
        # pip installs into a temporary directory and then moves the files into the tree:
        # a marked path ends with the file's RECORD path.
        parts = marked.replace("\\", "/").split("/")
        for depth in range(len(parts), 0, -1):
            relative = "/".join(parts[-depth:])
            if relative in recorded:
                found.add((target / relative).resolve())
                break
    return frozenset(found)


def summarise_pip_output(output: str) -> str:
    """Keep pip's ``ERROR:`` lines (or its last line) as one line for the error message."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    errors = [line.removeprefix("ERROR:").strip() for line in lines if line.startswith("ERROR:")]
    crash = _crash_line(output)
    if crash is not None:
        # pip's own crash says only `ERROR: Exception:` above its traceback; the exception
        # itself is the line that closes the traceback.
        errors = [
            f"pip failed with {crash}" if error == "Exception:" else error for error in errors
        ]
    summary = "; ".join(errors) if errors else (lines[-1] if lines else "no output")
    if len(summary) > _SUMMARY_LIMIT:
        summary = summary[: _SUMMARY_LIMIT - 1] + "…"
    return summary


def _crash_line(output: str) -> str | None:
    """The exception line closing the last Python traceback in ``output``, if any."""
    raw = output.splitlines()
    starts = [at for at, line in enumerate(raw) if line.startswith("Traceback (most recent call")]
    if not starts:
        return None
    closing = [line.strip() for line in raw[starts[-1] + 1 :] if line[:1] not in ("", " ", "\t")]
    return closing[0] if closing else None


def _tail(log: Path, limit: int = 256 * 1024) -> str:
    """The end of pip's log (it can be long), then the log is removed."""
    try:
        with log.open("rb") as handle:
            handle.seek(0, os.SEEK_END)
            handle.seek(max(0, handle.tell() - limit))
            return handle.read().decode("utf-8", errors="replace")
    except OSError:
        return ""
    finally:
        log.unlink(missing_ok=True)


def pip_missing_message() -> str:
    """What to do when this Python has no pip (nexo-pkg installed without its dependencies)."""
    return (
        f"pip is not installed for {sys.executable}, and nexo-pkg needs it to vendor "
        "requirements; reinstall nexo-pkg with its dependencies (`pipx reinstall nexo-pkg`, "
        "`uv tool install --reinstall nexo-pkg`) or run "
        f"`{sys.executable} -m ensurepip`"
    )


def old_pip_message(version: str) -> str:
    """What to do when this Python's pip is older than :data:`MIN_PIP`."""
    wanted = ".".join(map(str, MIN_PIP))
    return (
        f"pip {version} of {sys.executable} is too old to vendor requirements: before "
        f"{wanted}, pip judges each package's Requires-Python against the Python running it "
        "rather than the one the tarball is for (--python), so the tarball would depend on "
        f"which Python packs; upgrade it (`{sys.executable} -m pip install 'pip>={wanted}'`) "
        "or reinstall nexo-pkg with its dependencies"
    )


def vendor_requirements(
    requirements: Path, target: Path, *, cwd: Path, vendor_for: VendorTarget | None = None
) -> Any:
    """Install ``requirements`` into the (new) directory ``target``, resolved for
    ``vendor_for`` (:data:`DEFAULT_PYTHON` when not given); return pip's installation report
    (``pip install --report``, parsed JSON).

    Runs in ``cwd`` so relative paths in the requirements resolve against the project.
    Raises ``network`` (exit 1) when pip could not reach the package index, ``vendor_failed``
    (exit 1) with pip's error summarised when pip fails otherwise or is missing, or when it
    wrote no readable installation report.
    """
    if importlib.util.find_spec("pip") is None:
        raise PackError(pip_missing_message(), kind="vendor_failed")
    log = target.parent / f".{target.name}-pip.log"
    report = target.parent / f".{target.name}-pip-report.json"
    completed, logged = _run_pip(requirements, target, log, report, vendor_for, cwd)
    if completed.returncode != 0:
        output = completed.stderr + "\n" + completed.stdout
        if re.search(r"No module named '?pip\b", output):
            raise PackError(pip_missing_message(), kind="vendor_failed")
        old_pip = _OLD_PIP_LINE.search(completed.stderr)
        if completed.returncode == _OLD_PIP_EXIT and old_pip is not None:
            raise PackError(old_pip_message(old_pip.group(1)), kind="vendor_failed")
        network = _network_lines(completed, logged)
        if network:
            reason = summarise_pip_output(network[-1])
            remedy = _network_remedy("\n".join(network))
            raise PackError(
                f"could not vendor {requirements.name}: the package index could not be "
                f"reached ({reason}); {remedy}, or point PIP_INDEX_URL or PIP_FIND_LINKS at a "
                "reachable index or a wheel directory",
                kind="network",
                details={"pip_exit_code": completed.returncode},
            )
        raise PackError(
            f"could not vendor {requirements.name}: {summarise_pip_output(output)}"
            f"{_sdist_only_hint(logged)}",
            kind="vendor_failed",
            details={"pip_exit_code": completed.returncode},
        )
    _refuse_editable(requirements, target)
    if vendor_for is None or vendor_for.triple == NOARCH:
        # A tarball for a triple takes that platform's compiled wheels by design.
        _prefer_pure_wheels(requirements, target, report, vendor_for, cwd)
    strip_machine_paths(target)
    return read_report(report, requirements)


def _prefer_pure_wheels(
    requirements: Path, target: Path, report: Path, vendor_for: VendorTarget | None, cwd: Path
) -> None:
    """When pip took this OS's compiled wheel for a release that also ships a ``none-any``
    one (as mypyc-built packages do), install the same versions again from pure wheels only
    (``--platform any``), so every OS vendors the same tree; when some release has no pure
    wheel, keep the tree as it is for the audit to name."""
    installed = sorted(target.glob("*.dist-info"))
    if not any(_compiled(dist_info) for dist_info in installed):
        return
    pins = target.parent / f".{target.name}-pins.txt"
    pins.write_text(
        "".join(f"{_pin(dist_info)}\n" for dist_info in installed), encoding="utf-8", newline="\n"
    )
    pure = target.parent / f"{target.name}-pure"
    pure_report = target.parent / f".{target.name}-pure-report.json"
    pure_executables = executables_log(pure)
    log = target.parent / f".{target.name}-pure-pip.log"
    try:
        completed, _ = _run_pip(
            requirements, pure, log, pure_report, vendor_for, cwd, pure=True, constraints=pins
        )
        if completed.returncode == 0 and not any(
            _compiled(dist_info) for dist_info in pure.glob("*.dist-info")
        ):
            shutil.rmtree(target)
            pure.rename(target)
            pure_report.replace(report)
            if pure_executables.exists():
                pure_executables.replace(executables_log(target))
            else:
                executables_log(target).unlink(missing_ok=True)
    finally:
        shutil.rmtree(pure, ignore_errors=True)
        pure_report.unlink(missing_ok=True)
        pure_executables.unlink(missing_ok=True)
        pins.unlink(missing_ok=True)


def _refuse_editable(requirements: Path, target: Path) -> None:
    """``vendor_failed`` for a requirement pip installed in editable mode (``-e``): the tree
    then holds only a finder pointing at the packing machine's checkout, not the code."""
    editable = []
    for dist_info in sorted(target.glob("*.dist-info")):
        try:
            document = json.loads((dist_info / "direct_url.json").read_bytes())
        except (OSError, ValueError, RecursionError):
            continue
        info = document.get("dir_info") if isinstance(document, dict) else None
        if isinstance(info, dict) and info.get("editable") is True:
            editable.append(_pin(dist_info).replace("==", " "))
    if editable:
        raise PackError(
            f"{requirements.name} installs {', '.join(editable)} in editable mode (-e): the "
            "tarball would hold only a pointer to this machine's checkout, not the code; "
            "drop the -e (a plain path such as ./vendor/pkg installs a copy)",
            kind="vendor_failed",
        )


def _pin(dist_info: Path) -> str:
    """``name==version`` of an installed ``name-version.dist-info``."""
    name, _, version = dist_info.name.removesuffix(".dist-info").rpartition("-")
    return f"{name}=={version}"


def _compiled(dist_info: Path) -> bool:
    """Whether the wheel behind ``dist_info`` was tagged for an ABI or platform."""
    try:
        text = (dist_info / "WHEEL").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    lines = text.splitlines()
    tags = [line.partition(":")[2].strip() for line in lines if line.startswith("Tag:")]
    return any(not tag.endswith("-none-any") for tag in tags)


def _run_pip(  # noqa: PLR0917 - one pip run, all of it
    requirements: Path,
    target: Path,
    log: Path,
    report: Path,
    vendor_for: VendorTarget | None,
    cwd: Path,
    *,
    pure: bool = False,
    constraints: Path | None = None,
) -> tuple[subprocess.CompletedProcess[str], str]:
    """One pip run and the tail of its log; ``vendor_failed`` when pip cannot be started."""
    command = pip_command(requirements, target, log, report, vendor_for, pure_only=pure)
    if constraints is not None:
        command += ["--constraint", str(constraints)]
    # pip's own temporary directories (its --target staging, unpacked wheels) go beside
    # ``target``, into the pack's scratch directory: a pack stopped by a signal kills pip,
    # which then cannot remove them, and the scratch directory is removed as the stop unwinds.
    scratch = target.parent / f".{target.name}-pip-tmp"
    try:
        scratch.mkdir(exist_ok=True)
        completed = subprocess.run(
            command,
            cwd=cwd,
            env={**os.environ, "TMPDIR": str(scratch)},
            capture_output=True,
            text=True,
            check=False,
        )
    except OSError as exc:
        log.unlink(missing_ok=True)
        raise PackError(
            f"cannot run pip with {sys.executable}: {exc.strerror}", kind="vendor_failed"
        ) from exc
    return completed, _tail(log)


# pip's log line for an sdist it passed over under --only-binary=:all:, and for a wheel it
# passed over for its tags or Requires-Python (its file name is the last path segment).
_SDIST_SKIPPED = re.compile(r"Skipping link: No sources permitted for ([A-Za-z0-9._-]+)")
_WHEEL_SKIPPED = re.compile(r"Skipping link: (?!wrong project name).*/([^/\s]+)\.whl\b")


def _normalised(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def _sdist_only_hint(logged: str) -> str:
    """A hint for the distributions pip found only as sdists (pack takes wheels only), or
    nothing when there were none: one with a wheel pip passed over (another Python, a
    platform tag) is not sdist-only, and pip's own message says why."""
    wheels = {
        _normalised(match.group(1).split("-")[0]) for match in _WHEEL_SKIPPED.finditer(logged)
    }
    names = sorted(
        {
            match.group(1)
            for match in _SDIST_SKIPPED.finditer(logged)
            if _normalised(match.group(1)) not in wheels
        }
    )
    if not names:
        return ""
    listed = ", ".join(names)
    return (
        f" (found only as source distributions: {listed}; pack vendors wheels only, so build "
        f"the wheel with `pip wheel --no-deps <requirement> -w wheels` and require "
        "./wheels/<file>.whl, or add that directory to PIP_FIND_LINKS)"
    )


def _network_remedy(said: str) -> str:
    """What to do about an index pip could not reach, by what pip ``said`` of it."""
    if not _UNTRUSTED_CERTIFICATE.search(said):
        return "check the network or proxy (HTTPS_PROXY)"
    if _WRONG_HOST_CERTIFICATE.search(said):
        return "the index's certificate is not for this host name: check the host in the index URL"
    if _OUT_OF_DATE_CERTIFICATE.search(said):
        return (
            "the index's certificate has expired or is not valid yet: check this machine's "
            "clock, or have the index's certificate renewed"
        )
    return (
        "the index's certificate is not trusted here: if your own CA signs it, name that CA's "
        "certificate with SSL_CERT_FILE (or a directory of them with SSL_CERT_DIR), or add it "
        "to the system trust store"
    )


def _network_lines(completed: subprocess.CompletedProcess[str], logged: str) -> list[str]:
    """The lines of a failed pip run that say the index could not be reached."""
    output = completed.stderr + "\n" + completed.stdout + "\n" + logged
    return [
        _LOG_STAMP.sub("", line.strip())
        for line in output.splitlines()
        if _NETWORK_FAILURE.search(line)
    ]


def strip_machine_paths(target: Path) -> None:
    """Take what says where and with which interpreter the tree was vendored out of its
    ``*.dist-info`` records, so the same requirements give the same bytes on every machine:

    * the ``direct_url.json`` (PEP 610) of a requirement installed from a local file or
      directory, whose ``file://`` URL is the packing checkout's absolute path (a remote URL
      or VCS reference says the same everywhere and stays);
    * the ``RECORD`` lines of files outside the tree (``../../bin/<script>``): the console
      scripts, which are not packed, and whose hash is that of a ``#!`` line naming the
      packing interpreter.
    """
    for dist_info in sorted(target.glob("*.dist-info")):
        dropped = {f"{dist_info.name}/direct_url.json"} if _local_direct_url(dist_info) else set()
        if dropped:
            (dist_info / "direct_url.json").unlink()
        record = dist_info / "RECORD"
        if not record.is_file():
            continue
        lines = record.read_bytes().splitlines(keepends=True)
        kept = [line for line in lines if not _outside_or_dropped(line, dropped)]
        if len(kept) != len(lines):
            record.write_bytes(b"".join(kept))


def _local_direct_url(dist_info: Path) -> bool:
    try:
        document = json.loads((dist_info / "direct_url.json").read_bytes())
    except (OSError, ValueError, RecursionError):
        return False
    url = document.get("url") if isinstance(document, dict) else None
    return isinstance(url, str) and url.lower().startswith("file:")


def _outside_or_dropped(line: bytes, dropped: set[str]) -> bool:
    path = line.split(b",", 1)[0].decode("utf-8", "replace").strip('"')
    return path in dropped or path.startswith(("../", "/")) or "/../" in path


def read_report(report: Path, requirements: Path) -> Any:
    """pip's installation report for ``requirements`` (removed once read); ``vendor_failed``
    naming the requirements file when pip wrote none or an unreadable one."""
    try:
        return json.loads(report.read_bytes())
    except (OSError, ValueError, RecursionError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise PackError(
            f"pip installed {requirements.name} but its installation report (--report), which "
            f"the SBOM is built from, cannot be read: {reason}",
            kind="vendor_failed",
        ) from exc
    finally:
        report.unlink(missing_ok=True)
