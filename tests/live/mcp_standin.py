#!/usr/bin/env python3
"""A stand-in MCP server (stdio, newline-delimited JSON-RPC) with one tool, for the live checks:

    mcp_standin.py            server "standin", tool "big_text" {"lines": N, "tag": "T"}

big_text answers N lines "T line K of N ..." as one text content block. Python 3 standard library.
"""
import json
import sys


def answer(msg):
    method = msg.get("method")
    if method == "initialize":
        version = (msg.get("params") or {}).get("protocolVersion", "2025-06-18")
        return {"protocolVersion": version, "capabilities": {"tools": {}},
                "serverInfo": {"name": "standin", "version": "1.0"}}
    if method == "tools/list":
        return {"tools": [{"name": "big_text", "description": "Returns N numbered lines of text.",
                           "inputSchema": {"type": "object", "properties": {
                               "lines": {"type": "integer"}, "tag": {"type": "string"}}, "required": ["lines"]}}]}
    if method == "tools/call":
        args = (msg.get("params") or {}).get("arguments") or {}
        n, tag = int(args.get("lines", 10)), str(args.get("tag", "MCP"))
        text = "".join(f"{tag} line {k} of {n} lorem ipsum dolor sit amet\n" for k in range(1, n + 1))
        return {"content": [{"type": "text", "text": text}]}
    if method == "ping":
        return {}
    return None


def main():
    for line in sys.stdin:
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if "id" not in msg:
            continue
        result = answer(msg)
        reply = {"jsonrpc": "2.0", "id": msg["id"]}
        if result is None:
            reply["error"] = {"code": -32601, "message": "method not found"}
        else:
            reply["result"] = result
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
