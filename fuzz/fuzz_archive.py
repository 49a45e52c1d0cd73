"""atheris harness: the archive pre-scan must refuse bad bytes with a typed error, never crash,
and never accept an archive holding something other than regular files and directories.

Run (see docs/fuzzing.md)::

    .venv/bin/python tests/adversarial/archives.py fuzz/corpus/archive
    .venv/bin/python fuzz/fuzz_archive.py fuzz/corpus/archive -max_total_time=600
"""

from __future__ import annotations

import io
import shutil
import sys
import tarfile
import tempfile
from pathlib import Path

import atheris

with atheris.instrument_imports():
    from nexo_pkg.core.errors import NexoError
    from nexo_pkg.sources import extract as archive_extract

# One scratch directory for the whole run; each input gets a fresh staging dir inside it.
SCRATCH = Path(tempfile.mkdtemp(prefix="nexo-fuzz-archive-"))
EXPECTED_KINDS = {"archive_unsafe", "archive_invalid"}


def _allowed_members_only(data: bytes) -> None:
    """Cross-check an accepted archive with the standard library: files and dirs only."""
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as archive:
        for member in archive:
            if not (member.isfile() or member.isdir()) or member.issparse():
                raise AssertionError(f"pre-scan accepted {member.name!r} of type {member.type!r}")
            if member.mode & 0o7000:
                raise AssertionError(f"pre-scan accepted special bits on {member.name!r}")


def test_one_input(data: bytes) -> None:
    tarball = SCRATCH / "input.tar.gz"
    staging = SCRATCH / "staging"
    tarball.write_bytes(data)
    staging.mkdir()
    try:
        archive_extract.safe_extract(tarball, staging)
    except NexoError as error:
        if error.kind not in EXPECTED_KINDS:
            raise AssertionError(f"unexpected kind {error.kind}: {error.message}") from error
        return
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        # Nothing may have appeared beside the staging dir.
        extra = {path.name for path in SCRATCH.iterdir()} - {"input.tar.gz"}
        if extra:
            raise AssertionError(f"extraction wrote outside the staging dir: {sorted(extra)}")
    _allowed_members_only(data)


def main() -> None:
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
