"""Lsp support for nexo plugins."""
