"""Tests of the install pipeline (``nexo_pkg.install``) against a loopback GitHub server."""
