"""Operator commands from the outside, as a script or a person at a shell meets them: an
empty argument (an unset shell variable) is said to be empty, with a usage error and one
JSON document, and nothing is written."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.cli import clean_env, nexo


@pytest.mark.parametrize("source", ["", "  "])
@pytest.mark.parametrize("command", ["install", "info"])
def test_an_empty_source_is_said_to_be_empty_not_a_directory(
    tmp_path: Path, command: str, source: str
) -> None:
    env = clean_env(NEXO_HOME=str(tmp_path / "home"))
    result = nexo(
        "plugin", command, source, "--json", "--dest" if command == "install" else "--timeout",
        str(tmp_path / "root") if command == "install" else "5", env=env, cwd=tmp_path,
        in_process=True,
    )  # fmt: skip
    assert (result.code, result.document["kind"]) == (2, "source_invalid"), result.stdout
    assert "it is empty" in result.document["error"]
    assert "directory" not in result.document["error"]
    assert list(tmp_path.iterdir()) == []
