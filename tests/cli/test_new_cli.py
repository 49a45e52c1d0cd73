"""`nexo plugin new` through the command line: exit codes and messages."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import pytest
from support.cli import clean_env, nexo

# `nexo plugin ...` in this process: these runs need no process of their own.
plugin = partial(nexo, "plugin", in_process=True)


def test_creates_the_project_in_dot_id(tmp_path: Path) -> None:
    completed = plugin("new", "demo", "--lang", "python", cwd=tmp_path)
    assert completed.code == 0, completed.stderr
    assert completed.stdout == ""
    assert "created plugin demo" in completed.stderr
    assert (tmp_path / "demo" / "plugin.toml").is_file()
    assert (tmp_path / "demo" / ".github" / "workflows" / "release.yml").is_file()


def test_dest_description_owner(tmp_path: Path) -> None:
    completed = plugin(
        "new",
        "weather",
        "--lang",
        "python",
        "--dest",
        "elsewhere/w",
        "--description",
        "Weather for agents",
        "--owner",
        "acme",
        cwd=tmp_path,
    )
    assert completed.code == 0, completed.stderr
    root = tmp_path / "elsewhere" / "w"
    assert 'description = "Weather for agents"' in (root / "plugin.toml").read_text()
    assert "nexo plugin install acme/nexo-plugin-weather" in (root / "README.md").read_text()


def test_invalid_id_exits_2_with_the_reason(tmp_path: Path) -> None:
    completed = plugin("new", "My-Plugin", "--lang", "python", cwd=tmp_path)
    assert completed.code == 2
    assert completed.stderr.count("\n") == 1
    assert "uppercase" in completed.stderr
    assert "Traceback" not in completed.stderr
    assert list(tmp_path.iterdir()) == []


def test_a_hyphenated_microapp_id_is_refused_with_the_microapp_reason(tmp_path: Path) -> None:
    completed = plugin("new", "order-tracker", "--kind", "microapp", cwd=tmp_path)
    assert completed.code == 2
    assert completed.stderr.count("\n") == 1
    assert "'order_tracker'" in completed.stderr
    assert "a microapp id may hold `-` for the daemon" in completed.stderr
    assert list(tmp_path.iterdir()) == []


def test_unknown_language_exits_2(tmp_path: Path) -> None:
    completed = plugin("new", "demo", "--lang", "rust", cwd=tmp_path)
    assert completed.code == 2
    assert "unsupported --lang 'rust'" in completed.stderr
    assert list(tmp_path.iterdir()) == []


def test_non_empty_destination_exits_2_unless_force(tmp_path: Path) -> None:
    (tmp_path / "demo").mkdir()
    (tmp_path / "demo" / "keep.txt").write_text("keep\n")
    completed = plugin("new", "demo", "--lang", "python", cwd=tmp_path)
    assert completed.code == 2
    assert "--force" in completed.stderr
    assert [p.name for p in (tmp_path / "demo").iterdir()] == ["keep.txt"]
    forced = plugin("new", "demo", "--lang", "python", "--force", cwd=tmp_path)
    assert forced.code == 0, forced.stderr
    assert (tmp_path / "demo" / "keep.txt").read_text() == "keep\n"
    assert (tmp_path / "demo" / "src" / "main.py").is_file()


def test_missing_id_is_a_usage_error(tmp_path: Path) -> None:
    completed = plugin("new", cwd=tmp_path)
    assert completed.code == 2
    assert list(tmp_path.iterdir()) == []


def test_an_id_with_a_trailing_newline_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    result = plugin("new", "demo\n", "--dest", "out", cwd=tmp_path)
    assert result.code == 2
    assert result.stderr.count("\n") == 1
    assert "invalid plugin id" in result.stderr
    assert not (tmp_path / "out").exists()


def test_force_over_an_older_manifest_name_warns_that_it_shadows_the_new_one(
    tmp_path: Path,
) -> None:
    dest = tmp_path / "demo"
    dest.mkdir()
    old = '[plugin]\nid = "demo"\nversion = "9.0.0"\n'
    (dest / "nexo-plugin.toml").write_text(old, encoding="utf-8")
    completed = plugin("new", "demo", "--force", "--nexo-pkg-spec", "nexo-pkg", cwd=tmp_path)
    assert completed.code == 0, completed.stderr
    assert (dest / "nexo-plugin.toml").read_text(encoding="utf-8") == old
    assert (dest / "plugin.toml").is_file()
    warnings = [line for line in completed.stderr.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1
    assert "nexo-plugin.toml was already in the directory and is kept" in warnings[0]
    assert "plugin.toml is shadowed by nexo-plugin.toml" in warnings[0]
    # Without an older manifest there is nothing to say.
    fresh = plugin("new", "other", "--nexo-pkg-spec", "nexo-pkg", cwd=tmp_path)
    assert fresh.code == 0, fresh.stderr
    assert "warning:" not in fresh.stderr


def _tree(root: Path) -> dict[str, bytes | None]:
    """Every path below ``root``: a file's bytes, ``None`` for a directory."""
    return {
        path.relative_to(root).as_posix(): path.read_bytes() if path.is_file() else None
        for path in sorted(root.rglob("*"))
    }


@pytest.mark.parametrize(
    ("args", "prepare", "expected"),
    [
        (["Demo"], None, (2, "invalid_id", "contains uppercase letters")),
        (["9demo"], None, (2, "invalid_id", "invalid plugin id '9demo'")),
        (["demo", "--lang", "rust"], None, (2, "usage", "unsupported --lang 'rust'")),
        (["demo", "--owner", "a/b"], None, (2, "usage", "--owner 'a/b'")),
        (["demo", "--description", "a\nb"], None, (2, "usage", "holds a line break")),
        (["demo"], "keep", (2, "destination_exists", "pass --force")),
        (["demo", "--dest", "afile"], "file", (2, "destination_exists", "is not a directory")),
        (["demo", "--dest", "afile/sub"], "file", (1, "io", "is a file, not a directory")),
        (["demo", "--force"], "src-file", (2, "destination_exists", "move it away")),
    ],
    ids=[
        "uppercase",
        "leading-digit",
        "lang",
        "owner",
        "description",
        "not-empty",
        "dest-file",
        "dest-under-file",
        "force-over-file",
    ],
)
def test_a_refusal_is_one_line_ending_with_its_kind_and_writes_nothing(
    tmp_path: Path, args: list[str], prepare: str | None, expected: tuple[int, str, str]
) -> None:
    code, kind, says = expected
    if prepare == "keep":
        (tmp_path / "demo").mkdir()
        (tmp_path / "demo" / "keep.txt").write_text("keep\n")
    elif prepare == "file":
        (tmp_path / "afile").write_text("a file\n")
    elif prepare == "src-file":
        (tmp_path / "demo").mkdir()
        (tmp_path / "demo" / "src").write_text("not a directory\n")
    before = _tree(tmp_path)
    result = nexo("plugin", "new", *args, cwd=tmp_path, env=clean_env(HOME=str(tmp_path / "h")))
    assert result.code == code, result.stderr
    assert "Traceback" not in result.stderr
    assert result.stderr.splitlines() == [result.error_line]
    assert result.error_line.endswith(f" [{kind}]"), result.error_line
    assert says in result.error_line
    assert _tree(tmp_path) == before
