"""Reading ``nexo-plugin.toml``: TOML with positions, the JSON Schema, and the rules."""
