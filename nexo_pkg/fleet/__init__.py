"""Fleets: lock files, sync, and OCI registries (push, mirror, cache)."""
