"""The context of one command: built once, it holds what every source of the command shares.

One HTTP client per GitHub API and per registry host *per worker thread* (clients keep
per-request state: deadline, auth answers, a kept-alive connection); the trust policy, read
once before any network work; the blobs the command is reading, held open until it ends so a
concurrent ``cache prune`` never takes one away mid-read. The user's choices it is built from
are the frozen :class:`NetworkChoices` and :class:`TrustChoices`.
"""

from __future__ import annotations

import contextlib
import sys
import tempfile
import threading
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from nexo_pkg.core.errors import NexoError
from nexo_pkg.sources.archive import ArchiveLimits
from nexo_pkg.sources.cache import BlobCache
from nexo_pkg.trust import api as trust

if TYPE_CHECKING:
    from nexo_pkg.net.api import Deadline
    from nexo_pkg.sources.download import ProgressBar
    from nexo_pkg.sources.github import GitHubClient
    from nexo_pkg.sources.oci_reference import OciReference
    from nexo_pkg.sources.registry import HostFacts, RegistryClient

_T = TypeVar("_T")
_Client = TypeVar("_Client", bound=contextlib.AbstractContextManager[Any])
# The key of a thread's GitHub client among its clients (registry hosts are the others).
_GITHUB = "<github>"


@dataclass(frozen=True)
class NetworkChoices:
    """What the user chose about the network: the GitHub API, the registries, time limits."""

    github_api_url: str | None = None
    # Seconds one HTTP request may take in all (--timeout); None: NEXO_HTTP_TIMEOUT or 300.
    http_timeout: float | None = None
    retry_base_delay: float | None = None
    registry_config: Path | None = None
    plain_http: bool = False
    # Registry host -> mirrors that may serve the bytes a lock pins (sources.mirrors).
    registry_mirrors: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class TrustChoices:
    """What the user chose about signatures: the policy file and the two overriding flags."""

    trusted_keys: Path | None = None
    # The daemon's policy file (<config dir>/extensions/trusted_keys.toml), used when
    # `trusted_keys` is not given; a missing one means "warn" with no authors.
    policy_path: Path | None = None
    require_signature: bool = False
    skip_signature_verify: bool = False

    def load_policy(self, nexo_home: Path) -> trust.TrustPolicy:
        """The policy these choices name: ``--trusted-keys`` (which must exist), else the
        daemon's policy file, else ``$NEXO_HOME``'s; ``policy_invalid`` for a bad one."""
        explicit = self.trusted_keys
        path = explicit or self.policy_path or trust.default_policy_path(nexo_home)
        return trust.load_policy(path, explicit=explicit is not None)


class SourceContext(contextlib.AbstractContextManager["SourceContext"]):
    """Clients, cache, deadline and trust policy of one command; a context manager (on exit
    the clients close and the held blobs are let go). ``deadline`` bounds all the command's
    requests together (``install`` sets one; ``sync`` bounds each request only); ``notice``
    hears "still waiting" lines about slow answers; ``progress`` shows a download (see
    :data:`~nexo_pkg.sources.download.ProgressBar`).
    """

    def __init__(
        self,
        nexo_home: Path,
        network: NetworkChoices | None = None,
        trust_choices: TrustChoices | None = None,
        *,
        max_download: int | None = None,
        deadline: Deadline | None = None,
        notice: Callable[[str], None] | None = None,
        progress: ProgressBar | None = None,
    ) -> None:
        self.nexo_home = nexo_home
        self.network = network or NetworkChoices()
        self.trust = trust_choices or TrustChoices()
        self.max_download = ArchiveLimits().max_download if max_download is None else max_download
        self.deadline = deadline
        self.notice = notice
        self.progress = progress
        self.cache = BlobCache(nexo_home)
        self._local = threading.local()
        self._registries: list[tuple[str, RegistryClient]] = []
        # What the clients of each registry host learned about it (shared by the threads').
        self._host_facts: dict[str, HostFacts] = {}
        self._github_used = False
        self._github_origin: tuple[str, str | None] | None = None
        self._policy: trust.TrustPolicy | None = None
        # API answers kept for conditional requests (`outdated` only, which reports and never
        # installs: what it reads from a kept answer decides nothing that gets installed).
        self.conditional_requests = False
        self._stack = contextlib.ExitStack()
        self._guard = threading.Lock()
        # With :meth:`limit_downloads`: the tarball downloads under way at once.
        self._downloads: threading.Semaphore | None = None
        # Every thread's clients, for :meth:`stop_requests`; once it has run, a client made
        # later (a thread whose step began before the interrupt) is stopped as it is made.
        self._clients: list[Any] = []
        self._requests_stopped = False

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the clients, let the held blobs go and remove the temp directories."""
        self._stack.close()

    # -- what the command holds -----------------------------------------------------------

    def hold(self, manager: contextlib.AbstractContextManager[_T]) -> _T:
        """Enter ``manager`` until the command ends (a blob stays readable meanwhile).

        ``manager`` is entered outside the guard, which covers only its registration: a
        blob's manager downloads it on entry, and the threads of one command download side
        by side, not one after another."""
        value = manager.__enter__()
        try:
            with self._guard:
                self._stack.push(manager)
        except BaseException:
            # Not registered: leave it now, and never hand out what was left.
            manager.__exit__(*sys.exc_info())
            raise
        return value

    def limit_downloads(self, count: int) -> None:
        """From now on, at most ``count`` tarballs download at once (:meth:`download_slot`);
        the threads that wait go in the order they came (``sync``: the plugins' order)."""
        self._downloads = threading.Semaphore(count)

    def download_slot(self) -> contextlib.AbstractContextManager[object]:
        """Held while a source downloads a tarball: one of the slots :meth:`limit_downloads`
        made, else nothing to wait for."""
        return self._downloads if self._downloads is not None else contextlib.nullcontext()

    def temp_dir(self) -> Path:
        """A private directory removed when the command ends (signature files)."""
        return Path(self.hold(tempfile.TemporaryDirectory(prefix="nexo-source-")))

    # -- the trust policy -----------------------------------------------------------------

    def policy(self) -> trust.TrustPolicy:
        """The trust policy, read on first use (``policy_invalid`` for a bad one)."""
        if self._policy is None:
            self._policy = self.trust.load_policy(self.nexo_home)
        return self._policy

    def trust_mode(self, owner: str | None, repo: str | None = None) -> trust.Mode:
        """The trust mode for a release of ``owner/repo`` (``owner`` ``None``: no GitHub
        author), under the policy and the command's flags: resolved once per artifact, by
        the command."""
        return trust.resolve_mode(
            self.policy(),
            owner,
            require_signature=self.trust.require_signature,
            skip_verify=self.trust.skip_signature_verify,
            repo=repo,
        )

    # -- clients --------------------------------------------------------------------------

    def client(self, key: str, make: Callable[[], _Client]) -> _Client:
        """This thread's client under ``key``, made (and closed with the command) on first use:
        the GitHub API's, each registry host's, and a new source's own."""
        clients: dict[str, Any] | None = getattr(self._local, "clients", None)
        if clients is None:
            clients = self._local.clients = {}
        client: _Client | None = clients.get(key)
        if client is None:
            client = clients[key] = make()
            self.hold(client)
            with self._guard:
                self._clients.append(client)
                stopped = self._requests_stopped
            if stopped:
                _stop(client)
        return client

    def stop_requests(self) -> None:
        """Stop every thread's requests (the command was interrupted and waits for its
        threads): a request under way or waiting to try again fails at once
        (``interrupted``), and so does any request after it, so that each thread ends the
        step it is in instead of waiting for the network."""
        with self._guard:
            self._requests_stopped = True
            clients = list(self._clients)
        for client in clients:
            _stop(client)

    def registry(self, reference: OciReference) -> RegistryClient:
        """This thread's client for the registry of ``reference``."""

        def make() -> RegistryClient:
            from nexo_pkg.sources.oci_auth import credentials_for  # noqa: PLC0415
            from nexo_pkg.sources.registry import (  # noqa: PLC0415 - httpx on use
                HostFacts,
                RegistryClient,
            )

            with self._guard:
                facts = self._host_facts.setdefault(reference.host, HostFacts())
            client = RegistryClient(
                reference.host,
                credentials=credentials_for(reference.host, self.network.registry_config),
                plain_http=self.network.plain_http,
                loopback=reference.is_loopback,
                timeout=self.network.http_timeout,
                retry_base_delay=self.network.retry_base_delay,
                facts=facts,
                notice=self.notice,
            )
            with self._guard:
                self._registries.append((reference.host, client))
            return client

        return self.client(reference.host, make)

    def github(self) -> GitHubClient:
        """This thread's GitHub API client (small assets go through the blob cache)."""

        def make() -> GitHubClient:
            from nexo_pkg.sources.github import (  # noqa: PLC0415 - httpx on use
                GitHubClient,
                resolve_api_base,
                resolve_token,
            )

            with self._guard:
                # Resolved once per command, not once per worker thread: the last resort
                # runs `gh auth token`, a process of its own.
                if self._github_origin is None:
                    api_base = resolve_api_base(self.network.github_api_url)
                    self._github_origin = (api_base, resolve_token(api_base))
                api_base, token = self._github_origin
            github = GitHubClient(
                api_base,
                token,
                retry_base_delay=self.network.retry_base_delay,
                timeout=self.network.http_timeout,
                blobs=self.cache,
                overall=self.deadline,
                notice=self.notice,
                answers=self.conditional_requests,
            )
            self._github_used = True
            return github

        return self.client(_GITHUB, make)

    def mirrored(self, reference: OciReference) -> bool:
        """Whether the registry of ``reference`` has mirrors (:meth:`pinned_registry`)."""
        return bool(self.network.registry_mirrors.get(reference.host))

    def pinned_registry(
        self, reference: OciReference, fetch: Callable[[OciReference, RegistryClient], _T]
    ) -> tuple[OciReference, RegistryClient, _T]:
        """``fetch`` from the first of ``reference``'s mirrors that answers it, else from its
        own registry (:mod:`nexo_pkg.sources.mirrors`). A mirror that is down, refuses or
        lacks it is passed over; ``checksum_mismatch`` and the registry's own failure are
        raised. Only for what a digest pins, so a mirror cannot change it."""
        from nexo_pkg.sources.mirrors import candidates  # noqa: PLC0415

        for candidate in candidates(reference, dict(self.network.registry_mirrors)):
            client = self.registry(candidate)
            try:
                return candidate, client, fetch(candidate, client)
            except NexoError as error:
                if candidate == reference or error.kind == "checksum_mismatch":
                    raise
        raise AssertionError("unreachable: the registry itself is the last candidate")

    def request_counts(self) -> dict[str, Any]:
        """Requests made so far: per registry host asked and kind (summed over the clients of
        every thread), whether GitHub was asked, and the cache's hits and misses."""
        totals: dict[str, Counter[str]] = {}
        with self._guard:
            clients = list(self._registries)
        for host, client in clients:
            totals.setdefault(host, Counter()).update(client.requests)
        # A host whose client was made but never asked anything is not named.
        registries = {
            host: dict(sorted(totals[host].items())) for host in sorted(totals) if totals[host]
        }
        return {
            "registries": registries,
            "github_client_used": self._github_used,
            "cache": {"hits": self.cache.hits, "misses": self.cache.misses},
        }


def check_registry_config(explicit: Path | None) -> None:
    """Refuse, before any request, a registry config that was named (``--registry-config``,
    else ``REGISTRY_AUTH_FILE``) and is missing or no config, as reading it for a registry's
    credentials would (``registry_config``, exit 2); a missing default file is no credentials."""
    from nexo_pkg.sources.oci_auth import check_named_config  # noqa: PLC0415

    check_named_config(explicit)


def _stop(client: Any) -> None:
    """Stop ``client``'s requests for good, if it has requests to stop."""
    stop = getattr(client, "stop", None)
    if stop is not None:
        stop()
