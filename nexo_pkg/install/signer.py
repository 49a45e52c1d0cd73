"""Who signed a GitHub release: what ``nexo plugin trust add OWNER/REPO`` proposes to trust.

The newest (or a named) release is read through the GitHub client, its tarball and signature
material are downloaded into the shared cache, and :func:`nexo_pkg.trust.commands.release_signer`
verifies them with no author trusted, so the refusal names the signer.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from nexo_pkg.core.errors import NexoError
from nexo_pkg.manifest.daemon_config import nexo_home_from_env
from nexo_pkg.sources.download import DownloadedFile, cache_dir, download_asset
from nexo_pkg.sources.github import GitHubClient, resolve_api_base, resolve_token
from nexo_pkg.trust import entry as trust
from nexo_pkg.trust.commands import release_signer
from nexo_pkg.trust.policy import TrustPolicy

__all__ = ["read_release_signer"]

MAX_TARBALL_BYTES = 100 * 1024 * 1024
MAX_MATERIAL_BYTES = 4 * 1024 * 1024


def read_release_signer(
    owner: str,
    repo: str,
    tag: str | None,
    policy: TrustPolicy,
    api_url: str | None,
    *,
    timeout: float | None = None,
    notice: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """The signer of the newest (or ``tag``) release of ``owner/repo``: identity, issuer,
    claims, release and asset (see :func:`~nexo_pkg.trust.commands.release_signer`).
    ``notice`` hears of slow answers. Raises ``asset_not_found`` for a release without a
    tarball, and the GitHub client's and the verifier's errors."""
    cache = cache_dir(nexo_home_from_env())
    temps: list[DownloadedFile] = []
    try:
        api_base = resolve_api_base(api_url)
        with GitHubClient(
            api_base, resolve_token(api_base), timeout=timeout, notice=notice
        ) as client:
            release = client.get_release(owner, repo, tag)
            names = [asset.name for asset in release.assets]
            tarballs = [asset for asset in release.assets if asset.name.endswith(".tar.gz")]
            if not tarballs:
                raise NexoError(
                    f"release {release.tag} of {owner}/{repo} has no tarball to read a "
                    "signature from",
                    kind="asset_not_found",
                )
            tarball = next(
                (a for a in tarballs if trust.material_names(a.name, names)), tarballs[0]
            )
            downloaded = download_asset(client, tarball, cache, max_bytes=MAX_TARBALL_BYTES)
            temps.append(downloaded)
            material: dict[str, Path | bytes] = {}
            for name in trust.material_names(tarball.name, names):
                found = release.asset(name)
                if found is None:
                    continue
                file = download_asset(client, found, cache, max_bytes=MAX_MATERIAL_BYTES)
                temps.append(file)
                material[name] = file.path
            attested = trust.release_attestations(
                client,
                owner,
                repo,
                asset_name=tarball.name,
                digest=downloaded.sha256,
                material=material,
            )
            if attested is not None:
                material[attested.name] = attested.data
        return release_signer(
            downloaded.path,
            asset_name=tarball.name,
            material=material,
            owner=owner,
            repo=repo,
            tag=release.tag,
            trusted_root=policy.trusted_root,
        )
    finally:
        for temp in temps:
            temp.discard()
