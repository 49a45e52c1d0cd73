"""Check support for nexo plugins."""
