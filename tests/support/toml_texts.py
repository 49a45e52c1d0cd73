"""TOML texts shared by the tests of the tolerant scan and of the cursor resolver."""

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
