"""TOML texts shared by tests: a small valid manifest, and a half-typed one for the tests of
the tolerant scan and of the cursor resolver."""

HALF_TYPED = """\
manifest_version = 2
[plugin]
id = "demo"  # comment
name = "D🙂mo"
sandbox.ne
[plugin.sandbox]
enabled = true
network = "
fs_read_paths = ["/a",
  "/b"
[[plugin.channels.register]]
kind = "x"
entry = { command = "x", env = { A = "1" } }
[[plugin.channels.register]]
adapter = "y"
"""

WEATHER_MANIFEST = """[plugin]
id = "weather"
version = "0.1.0"
name = "Weather"
description = "Forecasts"
min_nexo_version = ">=0.1.0"
"""
"""A manifest with only the fields the daemon requires: lint finds nothing in it."""
