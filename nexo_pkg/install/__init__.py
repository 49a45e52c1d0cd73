"""Install support for nexo plugins."""
