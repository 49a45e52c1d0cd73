"""``nexo plugin list`` runs without Typer (``cli/listing.py``'s own argument parser): what
it prints, and its exit code, are exactly what the Typer command prints for the same
arguments; anything the small parser does not take goes to Typer.

A receipt's modes are converted at once, and one by one only to name a bad one; a field the
reference installer reads, repeated however it is spelt, still makes the receipt unreadable.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.cli import fast_path_output
from support.tarballs import write_plugin

from nexo_pkg.cli.app import run as typer_run
from nexo_pkg.cli.listing import fast_list
from nexo_pkg.core.output import OUTPUT
from nexo_pkg.install.options import InstallOptions
from nexo_pkg.install.pipeline import install
from nexo_pkg.install.receipts import RECEIPT_NAME, read_receipt, scan_installed


@pytest.fixture(autouse=True)
def _output_settings() -> Iterator[None]:
    """``--quiet``, ``--verbose`` and ``--color`` set process-wide settings: put them back."""
    saved = vars(OUTPUT).copy()
    yield
    vars(OUTPUT).update(saved)


def _root(tmp_path: Path) -> Path:
    """A root with an installed plugin, a receipt that cannot be read (a repeated `id`
    spelt with an escape), a directory without a receipt and a hold-free kept area."""
    dest = tmp_path / "plugins"
    options = InstallOptions(dest=dest, nexo_home=tmp_path / "home")
    install(str(write_plugin(tmp_path / "src", "hello", "1.2.3")), options)
    broken = dest / "broken-1.0.0"
    broken.mkdir()
    document = json.loads(((dest / "hello-1.2.3") / RECEIPT_NAME).read_text())
    text = json.dumps(document, indent=2).replace("{", '{"\\u0069d": "other", ', 1)
    (broken / RECEIPT_NAME).write_text(text)
    (dest / "stray").mkdir()
    return dest


@pytest.mark.parametrize(
    "extra",
    [
        [],
        ["--json"],
        ["--include-orphan"],
        ["--json", "--include-orphan"],
        ["-q", "--color", "never"],
        ["--color=always", "--json"],
    ],
    ids=["text", "json", "orphans", "json-orphans", "quiet", "colour-json"],
)
def test_list_without_typer_prints_what_typer_prints(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    extra: list[str],
) -> None:
    monkeypatch.setenv("NEXO_CONFIG_DIR", str(tmp_path / "config"))
    dest = _root(tmp_path)
    arguments = ["--dest", str(dest), *extra]
    fast = fast_path_output(capsys, fast_list, arguments)
    slow = fast_path_output(capsys, lambda a: typer_run(["plugin", "list", *a]), arguments)
    assert fast == slow
    assert fast[0] == 0
    assert "hello" in fast[1]
    if "--json" in extra:
        document = json.loads(fast[1])
        assert [plugin["id"] for plugin in document["plugins"]] == ["hello"]
        assert document["unreadable"][0]["problem"].endswith("duplicate field `id`")


@pytest.mark.parametrize(
    "arguments",
    [
        ["--help"],
        ["extra-argument"],
        ["--dest"],
        ["--dest", ""],
        ["--dest", "a", "--dest", "b"],
        ["--json=yes"],
        ["--color", "sometimes"],
        ["-q", "-v"],
        ["--no-such-flag"],
    ],
)
def test_what_the_small_parser_does_not_take_goes_to_typer(arguments: list[str]) -> None:
    assert fast_list(arguments) is None


def test_receipts_read_the_same_whatever_their_keys(tmp_path: Path) -> None:
    dest = _root(tmp_path)
    plain = read_receipt(dest / "hello-1.2.3")
    # A file named like a reference field: its key appears twice in the text, once as a
    # field; the receipt reads the same.
    receipt_path = dest / "hello-1.2.3" / RECEIPT_NAME
    document = json.loads(receipt_path.read_text())
    document["files"] = {"id": "0" * 64, **document["files"]}
    receipt_path.write_text(json.dumps(document, indent=2))
    kept_pairs = read_receipt(dest / "hello-1.2.3")
    assert kept_pairs.files == {"id": "0" * 64, **(plain.files or {})}
    assert (kept_pairs.id, kept_pairs.version, kept_pairs.modes) == (
        plain.id,
        plain.version,
        plain.modes,
    )
    # A repeated field written plainly, or through an escape, is refused either way.
    for spelt in ('"id"', '"\\u0069d"'):
        receipt_path.write_text(receipt_path.read_text().replace("{", f'{{{spelt}: "x", ', 1))
        with pytest.raises(ValueError, match="duplicate field `id`"):
            read_receipt(dest / "hello-1.2.3")
        receipt_path.write_text(json.dumps(document, indent=2))
    document["modes"] = {**document["modes"], "bin/hello": "0o9"}
    receipt_path.write_text(json.dumps(document, indent=2))
    with pytest.raises(ValueError, match="`modes` holds '0o9' for 'bin/hello', not an octal"):
        read_receipt(dest / "hello-1.2.3")
    problems = {item.path.name: item.problem for item in scan_installed(dest)}
    assert problems["broken-1.0.0"] is not None
    assert problems["broken-1.0.0"].endswith("duplicate field `id`")
