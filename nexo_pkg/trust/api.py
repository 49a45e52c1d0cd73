"""The face of ``trust``: every name another package may use, and only these.

Callers outside ``nexo_pkg.trust`` import from here (the ``faces`` import contract in
pyproject.toml keeps it so; the lint path alone reads ``trust.policy`` itself, so that
``nexo plugin lint`` loads no signature code). The signature verifiers load on first use,
inside :func:`verify_asset_signature`.
"""

from __future__ import annotations

from nexo_pkg.trust.base import (
    SignatureInvalidError,
    SignatureMissingError,
    SignatureOutcome,
    SignerUntrustedError,
)
from nexo_pkg.trust.commands import (
    author_json,
    chosen_author,
    needs_release_signer,
    record_author,
    release_signer,
    remove_entries,
    verification_policy,
    verify_file,
    with_overrides,
)
from nexo_pkg.trust.entry import default_policy_path, resolve_mode, verify_asset_signature
from nexo_pkg.trust.material import local_material, material_names, release_attestations
from nexo_pkg.trust.policy import (
    GITHUB_ACTIONS_ISSUER,
    AuthorPolicy,
    Mode,
    TrustPolicy,
    lint_policy_source,
    load_policy,
)
from nexo_pkg.trust.suggest import author_entry_toml

__all__ = [
    "GITHUB_ACTIONS_ISSUER",
    "AuthorPolicy",
    "Mode",
    "SignatureInvalidError",
    "SignatureMissingError",
    "SignatureOutcome",
    "SignerUntrustedError",
    "TrustPolicy",
    "author_entry_toml",
    "author_json",
    "chosen_author",
    "default_policy_path",
    "lint_policy_source",
    "load_policy",
    "local_material",
    "material_names",
    "needs_release_signer",
    "record_author",
    "release_attestations",
    "release_signer",
    "remove_entries",
    "resolve_mode",
    "verification_policy",
    "verify_asset_signature",
    "verify_file",
    "with_overrides",
]
