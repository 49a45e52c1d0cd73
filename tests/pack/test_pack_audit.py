"""The pure-Python audit on hand-made dist-info trees."""

from __future__ import annotations

from pathlib import Path

import pytest

from nexo_pkg.core.errors import NexoError
from nexo_pkg.pack.archive import ArchiveEntry
from nexo_pkg.pack.audit import audit_noarch, find_distributions, find_offenders, is_native_file


@pytest.mark.parametrize(
    ("name", "native"),
    [
        ("lib/x/_speed.cpython-311-x86_64-linux-gnu.so", True),
        ("lib/x/mod.PYD", True),
        ("lib/x/libfoo.dylib", True),
        ("lib/x/foo.dll", True),
        ("lib/x/libssl.so.3", True),
        ("lib/x/module.py", False),
        ("lib/x/solver.py", False),
        ("lib/x/notes.sol", False),
    ],
)
def test_native_file_names(name: str, native: bool) -> None:
    assert is_native_file(name) is native


def _dist_info(root: Path, name: str, wheel: str, record: list[str]) -> None:
    info = root / f"{name}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    (info / "WHEEL").write_text(wheel)
    (info / "RECORD").write_text("".join(f"{path},,\n" for path in record))


def test_every_offender_is_listed_with_its_distribution(tmp_path: Path) -> None:
    _dist_info(
        tmp_path,
        "fast",
        "Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: cp311-cp311-linux_x86_64\n",
        ["fast/_a.so", "fast/_b.so", "fast/__init__.py"],
    )
    _dist_info(
        tmp_path,
        "pure",
        "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        ["pure/__init__.py"],
    )
    entries = [
        ArchiveEntry("lib/fast/_a.so", data=b""),
        ArchiveEntry("lib/fast/_b.so", data=b""),
        ArchiveEntry("lib/fast/__init__.py", data=b""),
        ArchiveEntry("lib/pure/__init__.py", data=b""),
        ArchiveEntry("lib/plugin/helper.pyd", data=b""),
        ArchiveEntry("lib/stray.dll", data=b""),
    ]
    offenders = find_offenders(entries, find_distributions(tmp_path, "lib"))
    found = {(o.path, o.distribution) for o in offenders}
    assert found == {
        ("lib/fast-1.0.dist-info/WHEEL", "fast 1.0"),
        ("lib/fast/_a.so", "fast 1.0"),
        ("lib/fast/_b.so", "fast 1.0"),
        ("lib/plugin/helper.pyd", "the plugin's own src/"),
        ("lib/stray.dll", "no installed distribution"),
    }
    reasons = " ".join(o.reason for o in offenders)
    assert "Root-Is-Purelib: false" in reasons
    assert "cp311-cp311-linux_x86_64" in reasons


def test_platform_tag_alone_is_an_offender(tmp_path: Path) -> None:
    _dist_info(
        tmp_path,
        "tagged",
        "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\nTag: py3-none-win32\n",
        [],
    )
    offenders = find_offenders([], find_distributions(tmp_path, "lib"))
    assert len(offenders) == 1
    assert "py3-none-win32" in offenders[0].reason


def test_pure_tree_passes_and_impure_raises_native_code(tmp_path: Path) -> None:
    _dist_info(tmp_path, "pure", "Root-Is-Purelib: true\nTag: py2.py3-none-any\n", [])
    distributions = find_distributions(tmp_path, "lib")
    audit_noarch([ArchiveEntry("lib/pure/x.py", data=b"")], distributions)
    with pytest.raises(NexoError) as caught:
        audit_noarch([ArchiveEntry("lib/pure/x.so", data=b"")], distributions)
    assert caught.value.kind == "native_code"
    assert caught.value.exit_code == 1
    assert "--target TRIPLE" in caught.value.message
    assert caught.value.details["offenders"][0]["path"] == "lib/pure/x.so"
