"""Download step: stream a release asset into the blob cache, hashing as it goes."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING

from nexo_pkg.core.errors import NexoError
from nexo_pkg.sources.cache import BlobCache, BlobSink
from nexo_pkg.sources.checksum import verify_checksums

# httpx is only imported when a download really happens.
if TYPE_CHECKING:
    from nexo_pkg.sources.github import GitHubClient, ReleaseAsset

# How a download is shown (the CLI draws a bar on a terminal): called with the asset's name,
# it gives a context entered before the first byte and left before the blob is used (a
# confirmation may follow); what the context yields is told (bytes so far, total if known).
ProgressBar = Callable[[str], AbstractContextManager[Callable[[int, int | None], None]]]


def check_listed_size(asset: ReleaseAsset, max_bytes: int) -> None:
    """Refuse (``archive_unsafe``) an asset whose listed size is over ``max_bytes``."""
    if asset.size and asset.size > max_bytes:
        raise NexoError(
            f"{asset.name} is {asset.size} bytes, over the download limit of {max_bytes} "
            "bytes (raise it with --max-download-size)",
            kind="archive_unsafe",
        )


@contextlib.contextmanager
def cached_asset(
    client: GitHubClient,
    asset: ReleaseAsset,
    blobs: BlobCache,
    *,
    sidecar: str | None = None,
    sidecar_name: str | None = None,
    digest: str | None,
    max_bytes: int,
    progress: ProgressBar | None = None,
) -> Iterator[Path]:
    """``asset`` as a blob of the shared cache, read in place while the context is open; its
    sha256 must be known beforehand (its ``.sha256`` ``sidecar``, or the checksums file
    ``sidecar_name`` that lists it, or the API's ``digest``).

    A cached blob is re-hashed and used without a request; a missing or damaged one is
    downloaded into the cache, and kept only when its bytes hash to that sha256. Raises
    ``checksum_missing`` when neither is known (nothing is downloaded), ``checksum_mismatch``
    (worded by :func:`verify_checksums`; nothing is cached), ``archive_unsafe`` over
    ``max_bytes``, and what :meth:`GitHubClient.download` raises.
    """
    expected = sidecar or digest
    if expected is None:
        verify_checksums("", asset.name, sidecar=None, digest=None, listed_digest=asset.digest)
        raise AssertionError("unreachable: verify_checksums refuses a missing checksum")
    check_listed_size(asset, max_bytes)

    def fetch(sink: BlobSink) -> None:
        client.download(asset, sink, max_bytes=max_bytes)

    with contextlib.ExitStack() as held:
        # The bar is gone before the blob is used (a confirmation may follow).
        shown = progress(asset.name) if progress is not None else contextlib.nullcontext(None)
        with shown as update:
            try:
                blob = held.enter_context(blobs.open_blob(expected, fetch, update))
            except NexoError as error:
                actual = error.details.get("actual")
                if error.kind == "checksum_mismatch" and isinstance(actual, str):
                    verify_checksums(
                        actual,
                        asset.name,
                        sidecar=sidecar,
                        digest=digest,
                        sidecar_name=sidecar_name,
                    )
                raise
        yield blob
