"""Test support: real servers and services the tests run against (never mocks)."""
