"""Signature trust: the ``trusted_keys.toml`` policy and verification of release signatures.

* :mod:`nexo_pkg.trust.policy` — the policy file format and its linter;
* :mod:`nexo_pkg.trust.material` — the signature material a release offers for an asset;
* :mod:`nexo_pkg.trust.verifiers` — one module per signing scheme, each built on
  :mod:`nexo_pkg.trust.base` and the shared verifier ground only (``claims``, ``rootkeys``,
  and ``common`` for sigstore-python's verifier);
* :mod:`nexo_pkg.trust.entry` — the one entry the install pipeline calls.
"""
