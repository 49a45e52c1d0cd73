"""Pack support for nexo plugins."""
