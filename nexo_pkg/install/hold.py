"""Holds: a plugin kept on its installed version, as ``apt-mark hold`` or ``brew pin`` keep a
package.

``rollback`` holds the plugin on the version it put back (so the next ``upgrade --all`` does
not bring back the release just rolled back from); ``nexo plugin hold ID`` holds one by hand.
A held plugin is skipped by ``upgrade`` and ``upgrade --all`` (each says so), shown as held by
``list`` and ``outdated``, and stays held until the operator names a version (``upgrade
ID@TAG``, ``install``) or releases the hold (``nexo plugin unhold ID``); ``remove`` releases
it too.

A hold is one small JSON file per plugin, ``<root>/.nexo/holds/<id>.json`` (``{"id",
"version", "since", "reason"}``), written atomically; it lives beside the versions ``upgrade``
keeps, so it goes wherever the root goes and receipts stay as the install wrote them.
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nexo_pkg.core.dirs import make_dirs
from nexo_pkg.core.files import read_regular_bytes, write_file_atomically
from nexo_pkg.install.receipts import utc_now
from nexo_pkg.install.root import (
    BOOKKEEPING_DIR,
    HOLDS_AREA,
    blocked_bookkeeping,
    bookkeeping_in_the_way,
    io_error,
)
from nexo_pkg.manifest.daemon import check_id, is_valid_id

MAX_HOLD_BYTES = 64 * 1024


@dataclass(frozen=True)
class Hold:
    """``plugin_id`` is held on ``version`` since ``since`` (UTC), for ``reason``
    (``rollback`` or ``hold``)."""

    plugin_id: str
    version: str
    since: str
    reason: str
    # The versions rollbacks set aside while the plugin was held: a further rollback goes
    # back past them, never forward to them.
    rolled_back_from: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.plugin_id,
            "version": self.version,
            "since": self.since,
            "reason": self.reason,
            "rolled_back_from": list(self.rolled_back_from),
        }


def _path(dest: Path, plugin_id: str) -> Path:
    """``<dest>/.nexo/holds/<id>.json``; ``usage`` for a text that is no plugin id (a name
    such as ``../x`` must never reach a path)."""
    check_id(plugin_id)
    return dest / BOOKKEEPING_DIR / HOLDS_AREA / f"{plugin_id}.json"


def _linked_area(dest: Path) -> bool:
    """Whether ``<dest>/.nexo`` or its ``holds`` is a symbolic link (planted: nexo-pkg makes
    directories there): holds are neither read through it nor written out of the root."""
    bookkeeping = dest / BOOKKEEPING_DIR
    return bookkeeping.is_symlink() or (bookkeeping / HOLDS_AREA).is_symlink()


def _refuse_blocked_area(dest: Path) -> None:
    """``io`` naming the file in place of ``.nexo`` or ``.nexo/holds``, which only moving it
    away mends, instead of the bare "Not a directory" of a path through it."""
    for blocked in blocked_bookkeeping(dest, (HOLDS_AREA,)):
        raise bookkeeping_in_the_way(blocked)


def read_hold(dest: Path, plugin_id: str) -> Hold | None:
    """The hold on ``plugin_id`` in the root ``dest``, or ``None``. A hold file that cannot
    be read as one counts as a hold on no particular version (``?``): the operator asked for
    one, and ``unhold`` removes it. Raises ``io`` for a file in place of ``.nexo`` or
    ``.nexo/holds``: the commands that read a hold (``upgrade``, ``rollback``, ``hold``) go
    on to write there, and are refused before they change anything."""
    path = _path(dest, plugin_id)
    if _linked_area(dest):
        return None
    _refuse_blocked_area(dest)
    try:
        # A regular file only, never a link followed out of the root, a FIFO or a device.
        raw = read_regular_bytes(path, MAX_HOLD_BYTES, follow_links=False)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise io_error(f"read {path}", exc) from exc
    try:
        document = json.loads(raw)
    except ValueError:
        document = {}
    if not isinstance(document, dict):
        document = {}
    version, since, reason = (document.get(key) for key in ("version", "since", "reason"))
    earlier = document.get("rolled_back_from")
    return Hold(
        plugin_id,
        version if isinstance(version, str) else "?",
        since if isinstance(since, str) else "",
        reason if isinstance(reason, str) else "hold",
        tuple(each for each in earlier if isinstance(each, str))
        if isinstance(earlier, list)
        else (),
    )


def holds(dest: Path) -> dict[str, Hold]:
    """Every hold in the root ``dest``, by plugin id."""
    area = dest / BOOKKEEPING_DIR / HOLDS_AREA
    if _linked_area(dest):
        return {}
    try:
        names = sorted(child.name for child in area.iterdir() if child.name.endswith(".json"))
    except OSError:
        return {}
    found = {}
    for name in names:
        if not is_valid_id(name.removesuffix(".json")):
            continue  # not a hold this module wrote
        hold = read_hold(dest, name.removesuffix(".json"))
        if hold is not None:
            found[hold.plugin_id] = hold
    return found


def set_hold(
    dest: Path,
    plugin_id: str,
    version: str,
    *,
    reason: str,
    rolled_back_from: tuple[str, ...] = (),
) -> Hold:
    """Hold ``plugin_id`` on ``version`` in ``dest`` (replacing any earlier hold); the
    caller holds the root's lock. Raises ``io``."""
    hold = Hold(plugin_id, version, utc_now(), reason, rolled_back_from)
    path = _path(dest, plugin_id)
    _refuse_blocked_area(dest)
    try:
        # A link planted as `.nexo` or `.nexo/holds` goes (never what it points to): the
        # hold is written inside the root, as every bookkeeping area is.
        for planted in (dest / BOOKKEEPING_DIR, path.parent):
            if planted.is_symlink():
                planted.unlink()
        make_dirs(path.parent)
        data = json.dumps(hold.to_json(), indent=2) + "\n"
        write_file_atomically(path, data.encode("utf-8"), mode=0o644)
    except OSError as exc:
        raise io_error(f"write {path}", exc) from exc
    return hold


def release_hold(dest: Path, plugin_id: str) -> Hold | None:
    """Release the hold on ``plugin_id`` in ``dest``; the hold released, or ``None`` when
    there was none, as when a file stands in place of ``.nexo`` or ``.nexo/holds`` (no hold
    can be there: an install or a removal that releases one after its work is done does not
    fail on it). Raises ``io``."""
    if blocked_bookkeeping(dest, (HOLDS_AREA,)):
        return None
    hold = read_hold(dest, plugin_id)
    if hold is None:
        return None
    path = _path(dest, plugin_id)
    try:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
    except OSError as exc:
        raise io_error(f"remove {path}", exc) from exc
    return hold


def held_message(
    plugin_id: str, version: str, *, root: Path, local: bool = False, unknown: bool = False
) -> str:
    """What a command that leaves a held plugin alone in ``root`` says about it; ``local``:
    installed from a tarball, which has no release to name (``upgrade ID@TAG`` refuses it);
    ``unknown``: its receipt names no origin nexo-pkg knows, so nothing can be named from
    it until an install records one."""
    from nexo_pkg.install.remedy import plugin_command  # noqa: PLC0415 (list shows no message)

    if unknown:
        command = plugin_command("install", "SOURCE", "--force", root=root)
        naming = f"`{command}` names a version and records where it comes from"
    elif local:
        command = plugin_command("install", "PATH", root=root)
        naming = f"installing another tarball (`{command}`) names a version"
    else:
        naming = f"`{plugin_command('upgrade', f'{plugin_id}@TAG', root=root)}` names a version"
    releasing = f"`{plugin_command('unhold', plugin_id, root=root)}` releases the hold"
    return f"{plugin_id} is held at {version}: {naming}, {releasing}"
