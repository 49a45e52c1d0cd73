"""Versions in the order of the Rust ``semver`` crate (1.0.28, the daemon's), shared by the
model's own tests and the differential test against the crate."""

# Each list is in the crate's ascending order.
ASCENDING = [
    # src/impls.rs `impl Ord for Prerelease`: numeric below alphanumeric, longer list wins.
    "1.0.0-1",
    "1.0.0-2",
    "1.0.0-11",
    "1.0.0-alpha",
    "1.0.0-alpha.1",
    "1.0.0-rc.1",
    "1.0.0-rc.1+b1",
    # a release above its pre-releases; no build metadata below any.
    "1.0.0",
    # src/impls.rs `impl Ord for BuildMetadata`: 0 < 00 < 1 < 01 < 001 < 2 < 10, numeric
    # below alphanumeric, ASCII order, a longer list wins.
    "1.0.0+0",
    "1.0.0+00",
    "1.0.0+1",
    "1.0.0+01",
    "1.0.0+001",
    "1.0.0+2",
    "1.0.0+10",
    "1.0.0+-",
    "1.0.0+A",
    "1.0.0+a",
    "1.0.0+a.0",
    "1.0.0+a.b",
    "1.0.0+b1",
    "1.0.0+b10",
    "1.0.0+b2",
    "1.0.0+b3",
    "1.0.0+build",
    "1.0.1",
    "1.1.0-0",
    "2.0.0",
]
