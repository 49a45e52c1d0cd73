"""Scaffold new plugin projects (``nexo plugin new``)."""
