"""The ``rm -rf`` doctor prints for a leftover works when pasted into a shell, whatever the
leftover's name holds: a name with a line feed, an escape or a tab is written as a bash
``$'…'`` string (``\\xHH`` escapes), so the printed text has no control character to escape
and the shell reads back the very name; an ordinary name keeps ``shlex.quote``'s form."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from support.cli import clean_env, nexo

pytestmark = pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")

HOSTILE = {
    "line-feed": ".staging-x\nevil-1",
    "escape": "foo\x1b[31m-0.1.0.removing-0badf00d",
    "tab-and-quote": "it's\there.removing-0badf00d",
}


def _remedies(output: str) -> list[str]:
    return [
        line.split("delete it: ", 1)[1] for line in output.splitlines() if "delete it: " in line
    ]


@pytest.mark.parametrize("as_json", [False, True], ids=["text", "json"])
@pytest.mark.parametrize("case", list(HOSTILE))
def test_the_printed_rm_deletes_the_leftover_it_names(
    case: str, as_json: bool, tmp_path: Path
) -> None:
    root = tmp_path / "root"
    leftover = root / HOSTILE[case]
    (leftover / "lib").mkdir(parents=True)
    (leftover / "lib" / "data").write_text("x\n")
    # A neighbour whose name the hostile one could be mistaken for once cut at the line feed.
    (root / ".staging-x").mkdir()
    env = clean_env(NEXO_HOME=str(tmp_path / "home"))
    result = nexo(
        "plugin", "doctor", "--dest", root, "--no-check", *(["--json"] if as_json else []),
        env=env,
    )  # fmt: skip
    if as_json:
        messages = [
            item["message"]
            for item in json.loads(result.stdout)["findings"]
            if item["path"] == str(leftover)
        ]
        [command] = _remedies("\n".join(messages))
    else:
        commands = _remedies(result.stdout)
        [command] = [c for c in commands if c != f"rm -rf -- {root / '.staging-x'}"]
    assert command.startswith("rm -rf -- $'"), command
    assert command.isprintable(), command
    pasted = subprocess.run(["bash", "-c", command], capture_output=True, text=True, check=False)
    assert pasted.returncode == 0, pasted.stderr
    assert sorted(path.name for path in root.iterdir()) == [".staging-x"]
    assert (root / ".staging-x").is_dir()


def test_an_ordinary_leftover_name_is_quoted_as_before(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "a b.removing-0badf00d").mkdir(parents=True)
    (root / ".staging-y-1").mkdir()
    env = clean_env(NEXO_HOME=str(tmp_path / "home"))
    result = nexo("plugin", "doctor", "--dest", root, "--no-check", env=env)
    assert sorted(_remedies(result.stdout)) == sorted(
        [f"rm -rf -- {root}/.staging-y-1", f"rm -rf -- '{root}/a b.removing-0badf00d'"]
    )
