"""The face of ``trust``: every name another package may use, and only these.

Callers outside ``nexo_pkg.trust`` import from here (the ``faces`` import contract in
pyproject.toml keeps it so; the lint path alone reads ``trust.policy`` itself, so that
``nexo plugin lint`` loads no signature code). The face is lazy (:mod:`nexo_pkg.core.faces`):
a name loads its module when first asked for, so a command that only reads the policy loads
the policy alone; the signature verifiers load on first use, inside
:func:`verify_asset_signature`.
"""

from __future__ import annotations

from types import ModuleType
from typing import TYPE_CHECKING

from nexo_pkg.core.faces import homes, lazy_getattr

if TYPE_CHECKING:
    from nexo_pkg.trust.base import (
        SignatureInvalidError,
        SignatureMissingError,
        SignatureOutcome,
        SignerUntrustedError,
    )
    from nexo_pkg.trust.commands import (
        author_json,
        check_override_flags,
        chosen_author,
        needs_release_signer,
        record_author,
        release_signer,
        remove_entries,
        signer_workflow_flag,
        signer_workflow_pin,
        verification_policy,
        verify_file,
        with_overrides,
    )
    from nexo_pkg.trust.entry import (
        verify_asset_signature,
    )
    from nexo_pkg.trust.material import (
        MAX_CHECKSUMS_BYTES,
        is_checksums_file,
        listed_sha256,
        local_material,
        material_names,
        release_attestations,
    )
    from nexo_pkg.trust.policy import (
        GITHUB_ACTIONS_ISSUER,
        AuthorPolicy,
        Mode,
        TrustPolicy,
        default_policy_path,
        lint_policy_source,
        load_policy,
        missing_named_policy,
        resolve_mode,
    )
    from nexo_pkg.trust.suggest import (
        author_entry_toml,
    )

# Where each name lives: the module of ``nexo_pkg.trust`` that ``__getattr__`` loads for it.
_HOMES = homes(
    {
        "base": (
            "SignatureInvalidError SignatureMissingError SignatureOutcome SignerUntrustedError"
        ),
        "commands": (
            "author_json check_override_flags chosen_author needs_release_signer record_author "
            "release_signer remove_entries signer_workflow_flag signer_workflow_pin "
            "verification_policy verify_file with_overrides"
        ),
        "entry": "verify_asset_signature",
        "material": (
            "MAX_CHECKSUMS_BYTES is_checksums_file listed_sha256 local_material material_names "
            "release_attestations"
        ),
        "policy": (
            "GITHUB_ACTIONS_ISSUER AuthorPolicy Mode TrustPolicy default_policy_path "
            "lint_policy_source load_policy missing_named_policy resolve_mode"
        ),
        "suggest": "author_entry_toml",
    }
)

__all__ = [
    "GITHUB_ACTIONS_ISSUER",
    "MAX_CHECKSUMS_BYTES",
    "AuthorPolicy",
    "Mode",
    "SignatureInvalidError",
    "SignatureMissingError",
    "SignatureOutcome",
    "SignerUntrustedError",
    "TrustPolicy",
    "author_entry_toml",
    "author_json",
    "check_override_flags",
    "chosen_author",
    "default_policy_path",
    "is_checksums_file",
    "lint_policy_source",
    "listed_sha256",
    "load_policy",
    "local_material",
    "material_names",
    "missing_named_policy",
    "needs_release_signer",
    "record_author",
    "release_attestations",
    "release_signer",
    "remove_entries",
    "resolve_mode",
    "signer_workflow_flag",
    "signer_workflow_pin",
    "verification_policy",
    "verify_asset_signature",
    "verify_file",
    "with_overrides",
]


def _load(module: str) -> ModuleType:
    # Plain imports, one per module, so the import contracts see them.
    home: ModuleType
    if module == "base":
        from nexo_pkg.trust import base as home  # noqa: PLC0415
    elif module == "commands":
        from nexo_pkg.trust import commands as home  # noqa: PLC0415
    elif module == "entry":
        from nexo_pkg.trust import entry as home  # noqa: PLC0415
    elif module == "material":
        from nexo_pkg.trust import material as home  # noqa: PLC0415
    elif module == "policy":
        from nexo_pkg.trust import policy as home  # noqa: PLC0415
    elif module == "suggest":
        from nexo_pkg.trust import suggest as home  # noqa: PLC0415
    else:
        raise AttributeError(module)
    return home


__getattr__ = lazy_getattr(_HOMES, _load, globals())
