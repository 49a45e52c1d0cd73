"""The ``nexo plugin …`` commands a message tells its reader to run, written so that, pasted
into a shell as printed, they act on the same plugin: every word quoted as a POSIX shell
reads it, and ``--dest ROOT`` named when the plugin's root is not the one the command uses
by default (the daemon's install root)."""

from __future__ import annotations

import shlex
from pathlib import Path

from nexo_pkg.core.errors import NexoError
from nexo_pkg.install.config import config_dir, load_daemon_config
from nexo_pkg.install.receipts import LATEST_TAG, Installed


def default_root() -> Path | None:
    """The root a command without ``--dest`` installs into (``search_paths[0]``, else
    ``$NEXO_HOME/state/plugins``); ``None`` when the daemon's configuration cannot be read
    (a remedy then names its root)."""
    try:
        return load_daemon_config(config_dir(announce=False)).install_root()
    except (NexoError, OSError):
        return None


def plugin_command(*words: str, root: Path | None = None) -> str:
    """``nexo plugin WORDS``, with ``--dest ROOT`` unless ``root`` is :func:`default_root`;
    a registry reference on this machine among ``WORDS`` brings ``--plain-http`` (see
    :func:`nexo_pkg.sources.route.reach_flags`)."""
    from nexo_pkg.sources.api import reach_flags  # noqa: PLC0415 (list shows no remedy)

    parts = ["nexo", "plugin", *words]
    parts += [flag for word in words for flag in reach_flags(word) if flag not in words]
    if root is not None and root.absolute() != default_root():
        parts += ["--dest", str(root.absolute())]
    return shlex.join(parts)


def _source(item: Installed) -> tuple[str, bool] | None:
    """The source :func:`reinstall_source` names, and whether it is a release followed as
    the latest one, the receipt not recording which release it got."""
    receipt = item.receipt
    if receipt is None:
        return None
    from nexo_pkg.sources.api import origin_place  # noqa: PLC0415 (a refusal)

    origin = receipt.origin()
    place = origin_place(origin) if receipt.upgradable else None
    if place is None:
        return None  # a tarball, or an origin that names no place to ask
    if receipt.binds_upgrade and origin["tag"] in {None, "", LATEST_TAG}:
        return place, True  # the latest release, as it was installed
    return origin_place(origin, exact=True) or place, False


def reinstall_source(item: Installed) -> str | None:
    """What ``install`` takes to install ``item`` again: ``owner/repo@tag`` (the release
    installed; ``owner/repo`` for a receipt that followed the latest one without recording
    which), the pinned ``oci://`` reference; ``None`` for a tarball (a receipt does not
    record its path) or a receipt that cannot be read."""
    found = _source(item)
    return None if found is None else found[0]


def version_source(item: Installed) -> tuple[str, bool] | None:
    """What ``install`` takes to install the very version ``item`` is: the release
    installed (``owner/repo@tag``) or the pinned ``oci://`` reference, with ``False``; for
    a receipt that followed the latest release without recording which,
    ``owner/repo@TAG`` with ``True``: ``TAG`` is to be filled in with the release of its
    version. ``None`` as :func:`reinstall_source`."""
    found = _source(item)
    if found is None:
        return None
    source, latest = found
    return (f"{source}@TAG", True) if latest else (source, False)


def reinstall_command(item: Installed) -> str:
    """How to install ``item`` again over itself, as a message's remedy: the ``install
    --force`` command naming its source and root, or, when its receipt names no source,
    the same command with ``SOURCE`` to fill in and what it stands for."""
    root = item.path.parent
    source = reinstall_source(item)
    if source is not None:
        return f"reinstall it with `{plugin_command('install', source, '--force', root=root)}`"
    command = plugin_command("install", "SOURCE", "--force", root=root)
    what = "where it came from: OWNER/REPO@TAG, an oci:// reference or a tarball's path"
    if item.receipt is None:
        why = "its receipt cannot be read"
    elif not item.receipt.origin_known:
        return (
            f"reinstall it with `{command}` to record where it comes from (SOURCE: its "
            "OWNER/REPO@TAG, oci:// reference or tarball's path)"
        )
    else:
        why = "a receipt does not record a tarball's path"
        what = "the path of the tarball it was installed from"
    return f"reinstall it with `{command}`, SOURCE being {what} ({why})"
