"""A manifest far larger than lint reads (a sparse file: gigabytes of nothing on disk) is
refused by ``pack`` from the first bytes past the limit, as ``lint`` refuses it (NX004): it is
never read whole, so the command neither takes the memory of the file nor dies without a
document, and nothing is written."""

from __future__ import annotations

import json
import resource
import subprocess
import sys
from pathlib import Path

import pytest
from support.cli import clean_env

NEXO = str(Path(sys.executable).parent / "nexo")
# Far above what pack needs, far below the file: reading it whole cannot succeed.
ADDRESS_SPACE = 768 * 1024 * 1024
HUGE = 2 * 1024 * 1024 * 1024


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))


def _tree(root: Path) -> dict[str, int]:
    return {str(path.relative_to(root)): path.lstat().st_size for path in root.rglob("*")}


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS, sparse files")
@pytest.mark.parametrize(
    ("kind", "huge"),
    [("plugin", "plugin.toml"), ("microapp", "nexo-plugin.toml")],
    ids=["plugin-manifest", "microapp-companion"],
)
def test_pack_refuses_a_huge_manifest_without_reading_it_whole(
    tmp_path: Path, kind: str, huge: str
) -> None:
    env = clean_env(NEXO_HOME=str(tmp_path / "home"))
    project = tmp_path / "demo"
    made = subprocess.run(
        [NEXO, "plugin", "new", "demo", "--kind", kind, "--dest", str(project)],
        env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    with (project / huge).open("ab") as handle:
        handle.truncate(HUGE)
    before = _tree(project)
    out = tmp_path / "dist"
    packed = subprocess.run(
        [NEXO, "plugin", "pack", str(project), "--out", str(out), "--json"],
        env=env, capture_output=True, text=True, timeout=120, check=False,
        stdin=subprocess.DEVNULL, preexec_fn=_limited,
    )  # fmt: skip
    assert "Traceback" not in packed.stderr, packed.stderr[-2000:]
    assert packed.returncode == 1, packed.stderr[-2000:]
    document = json.loads(packed.stdout)
    assert document["kind"] == "manifest_invalid"
    assert [d["code"] for d in document["diagnostics"]] == ["NX004"]
    assert huge in document["error"]
    assert not out.exists()
    assert _tree(project) == before
