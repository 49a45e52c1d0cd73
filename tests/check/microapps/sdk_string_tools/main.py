#!/usr/bin/env python3
"""The SDK's initialize reply: {server_info, tools: [names], hooks}."""

import json
import sys

for line in sys.stdin:
    request = json.loads(line)
    if request.get("method") == "initialize":
        reply = {
            "server_info": {"name": "template_microapp", "version": "0.1.0"},
            "tools": ["greet", "ping"],
            "hooks": [],
        }
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": reply}))
        sys.stdout.write("\n")
        sys.stdout.flush()
