"""A mutation fuzzer for the files the command line reads, run through the real console script.

Each :class:`Target` is one kind of file (a manifest, a trust policy, a receipt in an installed
root, a tarball, ...): :meth:`Target.build` lays out a valid workspace around it and names the
commands that read it. :func:`fuzz` then writes mutants of the valid bytes over that file
(stdlib :mod:`random` with a fixed seed, so a run is repeatable) and runs each command in a
subprocess of the installed ``nexo`` script, judging every run by SPEC §1 (:func:`judge`):

- the exit code is 0, 1 or 2, and stderr holds no Python traceback, nor the last-resort
  handler's line for an exception nothing expected (kind ``internal``);
- with ``--json`` (or ``--format json|sarif``), stdout is exactly one JSON document, and a
  failure document names a kind the command line knows;
- a usage or configuration failure (exit 2), and any ``--json`` failure document, comes with
  exactly one ``error:`` line on stderr.

Mutants are byte-level (flips, interesting bytes and tokens of the file's format, deletions,
duplications, truncation) or structural (a value of a parsed JSON, TOML or YAML document
replaced by one of another type, a key dropped or renamed, a document nested deep); a tarball
is mutated either as gzip bytes or as the tar inside (its 512-byte headers most of all).
"""

from __future__ import annotations

import gzip
import io
import json
import os
import random
import shutil
import subprocess
import sys
import tomllib
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import tomlkit
import yaml

from nexo_pkg.core.kinds import ErrorKind

from .strategies import _paths

NEXO = str(Path(sys.executable).with_name("nexo"))
KINDS = frozenset(kind.value for kind in ErrorKind)
TIMEOUT = 60.0
# What the last-resort handler says of an exception no code path expected (kind `internal`).
INTERNAL = "a bug in nexo-pkg"

TOKENS: dict[str, tuple[bytes, ...]] = {
    "toml": (
        b"=", b"[", b"]", b"[[", b"]]", b'"', b"'", b"'''", b'"""', b"\\u0000", b"\\uD800",
        b"\\U0010FFFF", b"1e999", b"-0", b"inf", b"nan", b"+inf", b"0x7fffffffffffffffff",
        b"99999999999999999999", b"-9223372036854775809", b"1979-05-27T07:32:00Z",
        b"1979-05-27", b"07:32:00", b"9999-12-31T23:59:60Z", b"true", b"{}", b"[]", b"{a=1}",
        b"\n[plugin]\n", b"\n[[plugin]]\n", b"\n[plugin.entrypoint]\n", b"a.b.c", b"\t",
        b"\r\n", b"\r", b"#", b"\xff", b"\xc3", b"\x00", b"\xef\xbb\xbf", b"${X}", b"../",
        b"/", b"~", b" ", b"\n", b"0.0.0", b"*", b">=", b"\xe2\x80\xae",
    ),
    "yaml": (
        b": ", b"- ", b"&a ", b"*a", b"<<: *a", b"!!binary ", b"!!int ", b"!!str ", b"!tag ",
        b"? ", b"{", b"}", b"[", b"]", b"|", b">", b"---\n", b"...\n", b"~", b"null", b"\t",
        b"${X}", b"0x", b"99999999999999999999999", b".inf", b".nan", b"'", b'"', b"%YAML 1.2\n",
        b"\n  ", b"\n", b"#", b"\xff", b"\x00", b"\xef\xbb\xbf", b"yes", b"on", b"1e999", b"-",
        b",", b"@", b"`", b"%", b"\r\n", b"\\", b"2001-12-14t21:59:43.10-05:00",
    ),
    "json": (
        b"{", b"}", b"[", b"]", b"null", b"1e400", b"-1", b'"\\ud800"', b'""', b"true", b":",
        b",", b"[" * 40, b"0.0", b"18446744073709551616", b"-0", b"NaN", b"Infinity", b'"',
        b"\\", b"\x00", b"\xff", b"\n", b"{}", b"[]", b'"a"', b"1" * 400,
    ),
    "text": (
        b" ", b"  ", b"*", b"\n", b"\r\n", b"0" * 64, b"g", b"\t", b"\x00", b"\xff", b"/",
        b"../", b"sha256:", b"SHA256 (", b") = ", b"\xe2\x80\xae",
    ),
    "binary": (b"\x00" * 8, b"\xff" * 8, b"ustar\x00", b"ustar  \x00", b"0" * 12, b"7" * 11),
}  # fmt: skip


# Values a structural mutation swaps in: every JSON/TOML/YAML type, edges of each.
def _values(rng: random.Random, old: Any) -> Any:
    pool: list[Any] = [
        None, True, False, 0, -1, 2**63, 2**64, -(2**63) - 1, 1.5, float("inf"), float("nan"),
        "", " ", "x" * rng.choice((1, 64, 300, 70_000)), "\x00", "a\x00b", "/tmp/\x00", "\ud800",
        "../../etc/passwd", "/", "1.2.3", ">=0.1.0", "sha256:" + "0" * 64, "0" * 64, "https://",
        "\u202e", [], {}, [old], {"k": old}, [[[[]]]], {"": None},
    ]  # fmt: skip
    return rng.choice(pool)


def _nest(value: Any, depth: int) -> Any:
    for _ in range(depth):
        value = [value]
    return value


def _restructure(rng: random.Random, document: Any) -> Any:
    """``document`` with one node replaced, dropped, renamed or nested deep."""
    paths = [(), *_paths(document)]
    path = rng.choice(paths)
    if not path:
        return _values(rng, document) if rng.random() < 0.3 else _nest(document, 3000)
    parent = document
    for step in path[:-1]:
        parent = parent[step]
    last = path[-1]
    action = rng.random()
    if action < 0.6:
        parent[last] = _values(rng, parent[last])
    elif action < 0.75:
        del parent[last]
    elif action < 0.85 and isinstance(parent, dict):
        parent[rng.choice(("", "x", "ID", "\u00e9", "a.b", "\x00", str(last) + "_"))] = parent.pop(
            last
        )
    else:
        parent[last] = _nest(parent[last], rng.choice((50, 1000, 5000)))
    return document


def _dump(fmt: str, document: Any) -> bytes:
    if fmt == "json":
        return json.dumps(document).encode("utf-8", "surrogatepass")
    if fmt == "toml":
        return tomlkit.dumps(document).encode("utf-8", "surrogatepass")
    return yaml.safe_dump(document, allow_unicode=True).encode("utf-8", "surrogatepass")


def _load(fmt: str, data: bytes) -> Any:
    if fmt == "json":
        return json.loads(data)
    if fmt == "toml":
        return tomllib.loads(data.decode("utf-8"))
    return yaml.safe_load(data)


def mutate_bytes(rng: random.Random, data: bytes, fmt: str) -> bytes:
    """``data`` with one to four byte-level changes."""
    out = bytearray(data)
    tokens = TOKENS.get(fmt, TOKENS["text"]) + TOKENS["text"]
    for _ in range(rng.randint(1, 4)):
        where = rng.randint(0, len(out))
        choice = rng.random()
        if choice < 0.15 and out:
            index = min(where, len(out) - 1)
            out[index] ^= 1 << rng.randrange(8)
        elif choice < 0.45:
            out[where:where] = rng.choice(tokens)
        elif choice < 0.6 and out:
            out[where : where + rng.randint(1, 16)] = rng.choice(tokens)
        elif choice < 0.75:
            del out[where : where + rng.randint(1, 32)]
        elif choice < 0.85 and out:
            start = rng.randrange(len(out))
            out[where:where] = out[start : start + rng.randint(1, 64)]
        elif choice < 0.9:
            del out[where:]
        else:
            out[where:where] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
    return bytes(out)


def mutate(rng: random.Random, data: bytes, fmt: str) -> bytes:
    """A mutant of ``data`` (a document in ``fmt``: toml, yaml, json, text or tar.gz)."""
    if fmt == "tar.gz":
        return mutate_tarball(rng, data)
    if fmt in {"json", "toml", "yaml"} and rng.random() < 0.4:
        try:
            return _dump(fmt, _restructure(rng, _load(fmt, data)))
        except (ValueError, TypeError, RecursionError, yaml.YAMLError, OverflowError):
            pass  # a mutant the dumper cannot write: fall back to bytes
    return mutate_bytes(rng, data, fmt)


def mutate_tarball(rng: random.Random, data: bytes) -> bytes:
    """A gzip-level mutant of ``data``, or the tar inside it mutated and compressed again."""
    if rng.random() < 0.35:
        return mutate_bytes(rng, data, "binary")
    tar = bytearray(gzip.decompress(data))
    headers = [at for at in range(0, len(tar), 512) if tar[at + 257 : at + 262] == b"ustar"]
    for _ in range(rng.randint(1, 3)):
        if headers and rng.random() < 0.7:
            header = rng.choice(headers)
            # name, mode, uid, gid, size, mtime, chksum, typeflag, linkname, magic, prefix
            field_at = rng.choice((0, 100, 108, 116, 124, 136, 148, 156, 157, 257, 345))
            where = header + field_at + rng.randrange(8)
            value = rng.choice(
                (b"\x00", b"\xff", b"7", b"0", b"/", b".", b"x", b"L", b"K", b"x", b"g", b"2",
                 b"1", b"3", b"5", b"6", b"S", b"\x80", b" ", b"9")
            )  # fmt: skip
            tar[where : where + 1] = value
            if rng.random() < 0.8:  # keep the checksum right so the reader goes on
                _fix_checksum(tar, header)
        else:
            tar = bytearray(mutate_bytes(rng, bytes(tar), "binary"))
    stream = io.BytesIO()
    with gzip.GzipFile(fileobj=stream, mode="wb", mtime=0) as gz:
        gz.write(bytes(tar))
    return stream.getvalue()


def _fix_checksum(tar: bytearray, header: int) -> None:
    block = tar[header : header + 512]
    if len(block) < 512:
        return
    block[148:156] = b" " * 8
    tar[header + 148 : header + 156] = b"%06o\x00 " % (sum(block) & 0o777777)


@dataclass
class Workspace:
    """A valid layout around one file: the file, its valid bytes and the commands reading it."""

    file: Path
    valid: bytes
    fmt: str
    commands: list[list[str]]
    env: dict[str, str]
    cwd: Path
    # Directories a command may write into, emptied after each mutant.
    scratch: list[Path] = field(default_factory=list)
    # Called with each mutant's bytes after they are written (a sidecar made to match, ...).
    after_write: Callable[[bytes], None] | None = None
    # The file is consumed by a run (a journal replayed and removed): write it before each.
    consumed: bool = False


@dataclass(frozen=True)
class Target:
    """One kind of file: builds its :class:`Workspace` under a directory."""

    name: str
    build: Callable[[Path], Workspace]


@dataclass
class Finding:
    """A run that broke the contract: what was run on which bytes, and how it answered."""

    target: str
    problem: str
    argv: list[str]
    data: bytes
    code: int
    stdout: str
    stderr: str

    def summary(self) -> str:
        tail = self.stderr.strip().splitlines()[-3:]
        return f"{self.target}: {self.problem}: nexo {' '.join(self.argv)} -> {self.code}: {tail}"


@dataclass
class Tally:
    """What a run of :func:`fuzz` did."""

    mutants: int = 0
    runs: int = 0
    findings: list[Finding] = field(default_factory=list)
    # (command, exit code) -> runs: how far the mutants got.
    outcomes: Counter[tuple[str, int]] = field(default_factory=Counter)


def _error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("error")]


def judge(argv: Sequence[str], code: int, stdout: str, stderr: str) -> str | None:
    """What is wrong with one run by SPEC §1, or ``None``."""
    if "Traceback" in stderr:
        return "traceback"
    if code not in {0, 1, 2}:
        return f"exit code {code}"
    if INTERNAL in stderr:
        return "an unexpected exception (kind internal)"
    wants_json = "--json" in argv or any(
        argv[i] == "--format" and argv[i + 1] in {"json", "sarif"} for i in range(len(argv) - 1)
    )
    if wants_json:
        try:
            document = json.loads(stdout)
        except ValueError:
            return "stdout is not one JSON document"
        # A failure document ({"ok": false, "kind", "error", ...}); a report answering "no"
        # (verify's, lint's) carries no error of its own.
        if isinstance(document, dict) and document.get("ok") is False and "error" in document:
            if document.get("kind") not in KINDS:
                return f"failure document without a known kind: {document.get('kind')!r}"
            if len(_error_lines(stderr)) != 1:
                return "a --json failure without exactly one error line"
    if code == 2:
        rest = [line for line in stderr.splitlines() if not line.startswith(("note: ", "warning"))]
        if len(rest) != 1 or not rest[0].startswith("error: "):
            return "exit 2 without exactly one error line"
    return None


def run(argv: Sequence[str], env: dict[str, str], cwd: Path) -> tuple[int, str, str]:
    """``nexo ARGV`` in a subprocess; a run past :data:`TIMEOUT` is exit code -1."""
    try:
        done = subprocess.run(
            [NEXO, *argv], env=env, cwd=cwd, capture_output=True, timeout=TIMEOUT,
            stdin=subprocess.DEVNULL, check=False,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        return -1, "", "timed out"
    text = [part.decode("utf-8", "replace") for part in (done.stdout, done.stderr)]
    return done.returncode, text[0], text[1]


def fuzz(
    target: Target, directory: Path, *, seed: int, seconds: float, most: int | None = None
) -> Tally:
    """Mutants of ``target``'s file through its commands for ``seconds`` (or ``most`` mutants)."""
    import time

    workspace = target.build(directory)
    rng = random.Random(seed)  # noqa: S311 (reproducible mutants, not cryptography)
    tally = Tally()
    seen: set[tuple[str, str, str]] = set()
    end = time.monotonic() + seconds
    while time.monotonic() < end and (most is None or tally.mutants < most):
        data = mutate(rng, workspace.valid, workspace.fmt)
        tally.mutants += 1
        _write(workspace.file, data)
        if workspace.after_write is not None:
            workspace.after_write(data)
        for argv in workspace.commands:
            if workspace.consumed:
                _write(workspace.file, data)
            code, out, err = run(argv, workspace.env, workspace.cwd)
            tally.runs += 1
            tally.outcomes[(" ".join(argv[1:3]), code)] += 1
            problem = judge(argv, code, out, err)
            if problem is not None:
                last = err.strip().splitlines()[-1:] or [""]
                key = (argv[1] if len(argv) > 1 else argv[0], problem, last[0][:80])
                if key not in seen:
                    seen.add(key)
                    tally.findings.append(Finding(target.name, problem, list(argv), data,
                                                  code, out, err))  # fmt: skip
            for scratch in workspace.scratch:
                shutil.rmtree(scratch, ignore_errors=True)
    _write(workspace.file, workspace.valid)
    return tally


def _write(path: Path, data: bytes) -> None:
    """``data`` as ``path`` (its directory made again when a run removed it, as a replayed
    journal's is)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def save(findings: Sequence[Finding], into: Path) -> None:
    """Each finding's input and answer under ``into`` (to make a regression test from)."""
    into.mkdir(parents=True, exist_ok=True)
    for number, finding in enumerate(findings):
        stem = into / f"{finding.target}-{number}"
        stem.with_suffix(".bin").write_bytes(finding.data)
        stem.with_suffix(".txt").write_text(
            f"{finding.summary()}\n\nargv: {finding.argv}\n\nstdout:\n{finding.stdout}\n\n"
            f"stderr:\n{finding.stderr}\n",
            encoding="utf-8",
        )


def base_env(home: Path, **extra: str) -> dict[str, str]:
    """An environment that reaches no real server: a closed port for GitHub and proxies."""
    closed = "http://127.0.0.1:9"
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("NEXO_", "GITHUB_", "GH_")) and "proxy" not in key.lower()
    }
    env.update(
        NEXO_HOME=str(home), NO_COLOR="1", NEXO_GITHUB_API_BASE=closed, HTTPS_PROXY=closed,
        HTTP_PROXY=closed, NO_PROXY="127.0.0.1,localhost", NEXO_HTTP_RETRY_BASE_MS="1",
        NEXO_HTTP_TIMEOUT="5", GH_CONFIG_DIR=str(home / "gh"), DOCKER_CONFIG=str(home / "docker"),
    )  # fmt: skip
    env.update(extra)
    return env
