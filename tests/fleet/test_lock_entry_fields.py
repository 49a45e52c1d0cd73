"""Every field of a lock entry is held to what ``lock`` writes when the lock is read: a
malformed one (wrong type, empty, a part missing, a URL or a path where a name goes, a version
that is no pin) is ``lock_invalid``, exit 2, one line naming the entry and the field, and
``sync`` neither reaches a source for it nor writes anything."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.cli import nexo

HOST = "oci://127.0.0.1:9/plugins/echo"  # the discard port: a request would fail, exit 1
DIGEST = "sha256:" + "c" * 64
SHA = "b" * 64
IDENTITY = "https://github.com/acme/echo/.github/workflows/release.yml@refs/tags/v1.0.0"
ISSUER = "https://token.actions.githubusercontent.com"


class _Drop:
    def __repr__(self) -> str:
        return "DROP"


DROP = _Drop()  # the field is left out


def _entry(kind: str) -> dict[str, Any]:
    """A whole, well-formed entry of ``kind`` (``registry`` or ``release``) for echo 1.0.0."""
    row: dict[str, Any] = {
        "asset": "echo-1.0.0-noarch.tar.gz",
        "size": 10,
        "sha256": SHA,
        "tree": "n1:" + "d" * 64,
        "sbom": "sha256:" + "e" * 64,
        "identity": IDENTITY,
        "issuer": ISSUER,
    }
    if kind == "registry":
        row["manifest"] = "sha256:" + "f" * 64
        return {
            "source": HOST,
            "requirement": "^1.0",
            "targets_wanted": ["noarch"],
            "version": "1.0.0",
            "resolved": f"{HOST}@{DIGEST}",
            "published": "2026-01-01T00:00:00Z",
            "github": "acme/echo@v1.0.0",
            "targets": {"noarch": row},
        }
    return {
        "source": "acme/echo",
        "requirement": "*",
        "version": "1.0.0",
        "resolved": "acme/echo@v1.0.0",
        "targets": {"noarch": row},
    }


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)  # a TOML basic string
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(item) for item in value) + "]"
    if isinstance(value, dict):
        return (
            "{" + ", ".join(f"{json.dumps(k)} = {_toml_value(v)}" for k, v in value.items()) + "}"
        )
    raise TypeError(value)


def _lock_text(entry: dict[str, Any]) -> str:
    lines = ["lock_version = 1", "", "[plugins.echo]"]
    tables: list[str] = []
    for key, value in entry.items():
        if key == "targets" and isinstance(value, dict) and value:
            for target, row in value.items():
                if isinstance(row, dict):
                    tables += ["", f"[plugins.echo.targets.{json.dumps(target)}]"]
                    tables += [f"{k} = {_toml_value(v)}" for k, v in row.items()]
                else:
                    tables += [
                        "",
                        "[plugins.echo.targets]",
                        f"{json.dumps(target)} = {_toml_value(row)}",
                    ]
        else:
            lines.append(f"{key} = {_toml_value(value)}")
    return "\n".join([*lines, *tables]) + "\n"


def _with(kind: str, field: str, value: Any) -> dict[str, Any]:
    """The entry of ``kind`` with ``field`` (``targets.noarch.asset`` for a row's) set to
    ``value`` (:data:`DROP`: left out)."""
    entry = _entry(kind)
    *parents, key = field.split(".")
    table = entry
    for part in parents:
        table = table[part]
    if value is DROP:
        del table[key]
    else:
        table[key] = value
    return entry


ROW = "targets.noarch"
# (kind, field, malformed value, the field the refusal names below `plugins.echo`)
CASES: list[tuple[str, str, Any, str]] = [
    # The source: a type, empty, a part missing, a URL, a path.
    *[("registry", "source", value, "source") for value in (DROP, 42, "", "oci://", "http://x/y")],
    *[("release", "source", value, "source") for value in ("acme", "acme/", "./echo.tar.gz")],
    *[("release", "source", value, "source") for value in ("https://github.com/acme/echo",)],
    # The wanted requirement it was locked from.
    *[("registry", "requirement", v, "requirement") for v in (DROP, 1, "", "newest", ">=x")],
    *[
        ("registry", "targets_wanted", value, "targets_wanted")
        for value in ("noarch", [], [1], ["../x"], ["noarch", ""])
    ],
    # Wanted targets that are not the targets locked: not what `lock` wrote.
    ("registry", "targets_wanted", ["x86_64-unknown-linux-gnu"], "targets"),
    # The version names the plugin's directory: semver only.
    *[
        ("registry", "version", value, "version")
        for value in (DROP, 1, "", "1.0", "v1.0.0", "../../x", "1.0.0\u001b[2J")
    ],
    # What sync reopens: a pin of the entry's own source, of its kind.
    *[
        ("registry", "resolved", value, "resolved")
        for value in (
            DROP,
            7,
            "",
            HOST,
            f"{HOST}:1.0.0",
            f"oci://127.0.0.1:9/plugins/other@{DIGEST}",
            "acme/echo@v1.0.0",
            f"{HOST}@sha256:{'c' * 63}",
        )
    ],
    *[
        ("release", "resolved", value, "resolved")
        for value in ("acme/echo", "evil/echo@v1.0.0", f"{HOST}@{DIGEST}", "./echo.tar.gz")
    ],
    *[("registry", "published", value, "published") for value in ("", 5, "yesterday")],
    # The release a registry copy came from: owner/repo@tag, and only for a registry copy.
    *[
        ("registry", "github", value, "github")
        for value in (
            "",
            42,
            ["acme/echo@v1.0.0"],
            "https://github.com/acme/echo",
            "acme/echo",
            "acme@v1.0.0",
            "/echo@v1.0.0",
            "acme/@v1.0.0",
            "acme/echo@",
            "acme/echo/x@v1.0.0",
            "acme/../echo@v1.0.0",
            "acme/echo@v1 0",
            "acme/echo@../v1",
            "-acme/echo@v1.0.0",
            "acme/echo@v1.0.0\n",
        )
    ],
    ("release", "github", "acme/echo@v1.0.0", "github"),
    # The targets and each target's row.
    ("registry", "targets", DROP, "targets"),
    ("registry", "targets", "noarch", "targets"),
    ("registry", "targets", {}, "targets"),
    ("registry", ROW, "echo-1.0.0-noarch.tar.gz", ROW),
    *[
        ("registry", f"{ROW}.asset", value, f"{ROW}.asset")
        for value in (
            DROP,
            1,
            "",
            "../echo-1.0.0-noarch.tar.gz",
            "echo-2.0.0-noarch.tar.gz",
            "other-1.0.0-noarch.tar.gz",
            "echo-1.0.0-x86_64-unknown-linux-gnu.tar.gz",
            "echo-1.0.0-noarch.tgz",
        )
    ],
    *[("registry", f"{ROW}.size", v, f"{ROW}.size") for v in (DROP, -1, "10", True, 1.5)],
    *[
        ("registry", f"{ROW}.sha256", value, f"{ROW}.sha256")
        for value in (DROP, "", 5, SHA.upper(), SHA[:-1], "sha256:" + SHA)
    ],
    *[("registry", f"{ROW}.tree", v, f"{ROW}.tree") for v in ("", 1, "n1:xyz", "d" * 64)],
    *[("registry", f"{ROW}.sbom", v, f"{ROW}.sbom") for v in ("", 1, "e" * 64)],
    *[
        ("registry", f"{ROW}.manifest", value, f"{ROW}.manifest")
        for value in (DROP, "", 1, "f" * 64, "sha256:" + "F" * 64)
    ],
    ("release", f"{ROW}.manifest", "sha256:" + "f" * 64, f"{ROW}.manifest"),
    *[("registry", f"{ROW}.identity", value, f"{ROW}.identity") for value in ("", 1)],
    # Half a signer (an issuer without its identity, or the other way round) binds none.
    ("registry", f"{ROW}.identity", DROP, f"{ROW}.identity"),
    ("registry", f"{ROW}.issuer", DROP, f"{ROW}.issuer"),
    *[("registry", f"{ROW}.issuer", value, f"{ROW}.issuer") for value in ("", 1)],
    # Keys the lock never writes.
    ("registry", "extra", "x", "extra"),
    ("registry", f"{ROW}.extra", "x", f"{ROW}.extra"),
]


def _snapshot(root: Path) -> dict[str, tuple[bytes | None, int]]:
    """Every entry below ``root``: its bytes (a directory: ``None``) and modification time."""
    return {
        str(path.relative_to(root)): (
            None if path.is_dir() else path.read_bytes(),
            path.lstat().st_mtime_ns,
        )
        for path in sorted(root.rglob("*"))
    }


@pytest.mark.parametrize("kind", ["registry", "release"])
def test_the_well_formed_entries_read(tmp_path: Path, fleet_env: dict[str, str], kind: str) -> None:
    """The entries every case below breaks one field of are read and planned (a dry run asks
    no source): each refusal below is its one field's."""
    lock = tmp_path / "nexo-plugins.lock"
    lock.write_text(_lock_text(_entry(kind)), encoding="utf-8")
    planned = nexo("plugin", "sync", "--lock", lock, "--dest", tmp_path / "root", "--dry-run",
                   "--json", env=fleet_env, in_process=True)  # fmt: skip
    assert planned.code == 0, planned.stderr
    assert [step["action"] for step in planned.document["plan"]] == ["install"]


@pytest.mark.parametrize(
    "case", CASES, ids=[f"{kind}-{field}-{value!r}"[:80] for kind, field, value, _ in CASES]
)
def test_a_malformed_field_is_refused_when_the_lock_is_read(
    tmp_path: Path, fleet_env: dict[str, str], case: tuple[str, str, Any, str]
) -> None:
    kind, field, value, named = case
    lock = tmp_path / "nexo-plugins.lock"
    lock.write_text(_lock_text(_with(kind, field, value)), encoding="utf-8")
    root = tmp_path / "root"
    (root / "other-1.0.0").mkdir(parents=True)
    (root / "other-1.0.0" / "nexo-plugin.toml").write_text("[plugin]\n", encoding="utf-8")
    before = _snapshot(tmp_path)
    for output in (["--json"], []):
        result = nexo("plugin", "sync", "--lock", lock, "--dest", root, "--yes", *output,
                      env=fleet_env, in_process=True)  # fmt: skip
        assert result.code == 2, (result.stdout, result.stderr)
        if output:
            document = result.document
            assert (document["ok"], document["kind"]) == (False, "lock_invalid"), document
            message = document["error"]
        else:
            assert result.stdout == ""
            errors = [line for line in result.stderr.splitlines() if line.startswith("error")]
            assert len(errors) == 1, result.stderr
            assert errors[0].endswith(" [lock_invalid]"), errors
            message = errors[0]
        assert f"`plugins.echo.{named}" in message, message
        assert "\n" not in message, message
        assert "\x1b" not in message, message
        # Nothing written: not the plugin root, not the lock, not NEXO_HOME's cache.
        assert _snapshot(tmp_path) == before
