"""One verifier per signing scheme; each depends only on the shared base (``common``)."""
