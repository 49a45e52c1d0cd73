"""``nexo plugin sbom``: the SBOM of installed plugins (docs/pack.md, "SBOM").

A tree installed from a tarball that carried ``sbom.cdx.json`` is vouched for only after its
files match the install receipt (as ``verify`` checks them) and the SBOM's recorded digest
of the tarball's other files equals the digest of the receipt's files: then the SBOM is the
one ``pack`` wrote for exactly these files. A tree installed before SBOMs existed (or by
another installer) gets one derived from its ``lib/*.dist-info``, marked
``nexo:sbom-origin = derived`` and without archive hashes.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from nexo_pkg.core.errors import NexoError
from nexo_pkg.core.files import read_capped_bytes
from nexo_pkg.install.receipts import RECEIPT_NAME, Installed
from nexo_pkg.install.verify import verify_installed
from nexo_pkg.sbom import MAX_SBOM_BYTES, SBOM_MEMBER, SbomError, quick_check, vendored_packages
from nexo_pkg.sbom.inventory import InventoryError, Package, files_digest, read_tree

if TYPE_CHECKING:
    from nexo_pkg.sbom.cyclonedx import PluginSbom


@dataclass(frozen=True)
class InstalledSbom:
    """One installed plugin's SBOM: the parsed inventory, the document's bytes (those the
    tarball carried, or the derived ones) and what the operator should know about it."""

    sbom: PluginSbom
    data: bytes
    warnings: tuple[str, ...] = ()


def _label(item: Installed) -> str:
    receipt = item.receipt
    return f"{receipt.id} {receipt.version}" if receipt is not None else str(item.path)


def _verified(item: Installed) -> None:
    """``verify_failed`` unless the tree matches its receipt file for file."""
    report = verify_installed(item)
    if report.ok:
        return
    changes = [
        f"{what} {', '.join(names[:3])}{' …' if len(names) > 3 else ''}"
        for what, names in (
            ("modified", report.modified),
            ("missing", report.missing),
            ("extra", report.extra),
            ("mode changed", report.mode_changed),
        )
        if names
    ]
    why = report.problem or "; ".join(changes)
    # A refusal's remedies (their module is not loaded by `list --json`, which reads this one).
    from nexo_pkg.install.remedy import plugin_command, reinstall_command  # noqa: PLC0415

    receipt = item.receipt
    verify = plugin_command("verify", *([receipt.id] if receipt else []), root=item.path.parent)
    # A receipt without file hashes: the problem already says how to record them.
    remedy = "" if receipt is not None and receipt.files is None else reinstall_command(item)
    raise NexoError(
        f"{_label(item)} ({item.path}): its files do not match the install receipt ({why}); "
        f"what it holds cannot be vouched for (see `{verify}`{'; ' if remedy else ''}{remedy})",
        kind="verify_failed",
        details={"path": str(item.path), **report.to_json()},
    )


def installed_sbom(item: Installed) -> InstalledSbom:
    """The SBOM of one installed plugin. Raises ``verify_failed`` when its files do not match
    its receipt, ``sbom_invalid`` (naming the file) when the SBOM it carries cannot be read,
    is not valid CycloneDX 1.6 or does not describe the installed files, or its
    ``*.dist-info`` cannot be read."""
    from nexo_pkg.sbom.cyclonedx import read_sbom  # noqa: PLC0415

    receipt = item.receipt
    if receipt is None:
        raise NexoError(
            f"{item.path}: {item.problem or 'no install receipt'}", kind="verify_failed"
        )
    warnings: list[str] = []
    if receipt.files is not None:
        _verified(item)
    else:
        warnings.append(
            f"{_label(item)}: its receipt has no file hashes (installed by another tool), so "
            "its files could not be checked"
        )
    path = item.path / SBOM_MEMBER
    if receipt.files is None or SBOM_MEMBER not in receipt.files:
        return _derived(item, warnings)
    try:
        data = read_capped_bytes(path, MAX_SBOM_BYTES, follow_links=False)
        sbom = read_sbom(data, receipt.target)
    except (OSError, SbomError, ValueError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        raise NexoError(
            f"{path}: {reason}", kind="sbom_invalid", details={"path": str(path)}
        ) from exc
    others = {name: digest for name, digest in receipt.files.items() if name != SBOM_MEMBER}
    expected = files_digest(others)
    problem: str | None
    if (sbom.plugin_id, sbom.version) != (receipt.id, receipt.version):
        problem = f"it describes {sbom.plugin_id} {sbom.version}"
    elif sbom.files_sha256 != expected:
        problem = (
            f"its files digest is {sbom.files_sha256}, but the installed files hash to {expected}"
        )
    elif (problem := _unlisted(item, sbom)) is None:
        return InstalledSbom(sbom, data, tuple(warnings))
    raise NexoError(
        f"{path}: {problem}; it does not describe this tree", kind="sbom_invalid",
        details={"path": str(path)},
    )  # fmt: skip


def _named(packages: Iterable[Package]) -> set[str]:
    return {f"{package.key} {package.version}" for package in packages}


def _unlisted(item: Installed, sbom: PluginSbom) -> str | None:
    """What the SBOM's packages and the tree's ``lib/*.dist-info`` disagree on (by name and
    version), or ``None``: the files digest binds the SBOM to the tree's files, not its list
    to what those files hold, and a list claiming packages the tree lacks (or hiding one it
    holds) is never printed as verified."""
    try:
        held = _named(read_tree(item.path / "lib").packages)
    except InventoryError as exc:
        return f"the packages it lists cannot be compared with the tree ({exc})"
    listed = _named(sbom.packages)
    if listed == held:
        return None
    lib = item.path / "lib"
    differences = [
        f"{what} {', '.join(sorted(names)[:3])}{' …' if len(names) > 3 else ''}{where}"
        for what, names, where in (
            ("it lists", listed - held, f", which {lib} holds no *.dist-info of"),
            ("it leaves out", held - listed, f", vendored in {lib}"),
        )
        if names
    ]
    return "; ".join(differences)


def _epoch(installed_at: str) -> int:
    try:
        return max(0, int(datetime.fromisoformat(installed_at.replace("Z", "+00:00")).timestamp()))
    except ValueError:
        return 0


#: What ``pack`` records of the target it vendored for (its marker environment included).
_VENDOR_RECORD = "nexo-vendor.json"
_MAX_VENDOR_RECORD_BYTES = 64 * 1024


def _resolved_for(lib: Path) -> dict[str, str] | None:
    """The marker environment ``lib`` was vendored for, as ``lib/nexo-vendor.json`` records
    it (the target's Python and platform, not those nexo runs on), else ``None``."""
    try:
        record = json.loads(
            read_capped_bytes(lib / _VENDOR_RECORD, _MAX_VENDOR_RECORD_BYTES, follow_links=False)
        )
    except (OSError, ValueError, RecursionError):
        return None
    markers = record.get("markers") if isinstance(record, dict) else None
    if not isinstance(markers, dict) or not all(
        isinstance(key, str) and isinstance(value, str) for key, value in markers.items()
    ):
        return None
    return markers


def _derived(item: Installed, warnings: list[str]) -> InstalledSbom:
    """An SBOM built from the tree's ``lib/*.dist-info`` (no archive hashes are known)."""
    from nexo_pkg.sbom.cyclonedx import ORIGIN_DERIVED, PluginSbom, write_sbom  # noqa: PLC0415

    receipt = item.receipt
    assert receipt is not None  # noqa: S101 - installed_sbom checked it
    try:
        inventory = read_tree(item.path / "lib")
    except InventoryError as exc:
        raise NexoError(str(exc), kind="sbom_invalid") from exc
    files = (
        None
        if receipt.files is None
        else files_digest({k: v for k, v in receipt.files.items() if k != RECEIPT_NAME})
    )
    sbom = PluginSbom(
        receipt.id,
        receipt.version,
        receipt.target,
        inventory.packages,
        origin=ORIGIN_DERIVED,
        epoch=_epoch(receipt.installed_at),
        files_sha256=files,
        environment=_resolved_for(item.path / "lib"),
    )
    notes = [
        *warnings,
        f"{_label(item)}: its tarball carried no SBOM; this one is derived from its "
        "*.dist-info (no archive hashes) and marked nexo:sbom-origin=derived",
        *inventory.warnings,
    ]
    return InstalledSbom(sbom, write_sbom(sbom), tuple(notes))


def vendored_summary(item: Installed) -> dict[str, object] | None:
    """What ``list --json`` shows of a plugin's vendored packages, cheaply (no hashing, no
    schema): ``{"from": "sbom", "packages": [...]}`` from the SBOM the tarball carried, else
    ``{"from": "dist-info", ...}`` read from ``lib/*.dist-info``; ``None`` when neither can
    be read (``nexo plugin sbom ID`` says why). Only ``sbom`` vouches for it."""
    receipt = item.receipt
    if receipt is None:
        return None
    if receipt.files is not None and SBOM_MEMBER in receipt.files:
        try:
            data = read_capped_bytes(item.path / SBOM_MEMBER, MAX_SBOM_BYTES, follow_links=False)
            document = quick_check(data, receipt.id, receipt.version)
        except (OSError, ValueError):
            return None
        return {"from": "sbom", "packages": vendored_packages(document)}
    try:
        inventory = read_tree(item.path / "lib")
    except InventoryError:
        return None
    packages = [
        {"name": p.name, "version": p.version, "purl": p.purl}
        for p in sorted(inventory.packages, key=lambda p: (p.name.lower(), p.version))
    ]
    return {"from": "dist-info", "packages": packages}
