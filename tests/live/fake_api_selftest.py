#!/usr/bin/env python3
"""Offline self-test of fake_api.py (part of the default test run; no client, no network beyond
127.0.0.1). Exit 0 when every check passes; each failure is one line on stderr."""
import json
import os
import sys
import tempfile
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fake_api import FakeApi, estimate_tokens  # noqa: E402

FAILURES = []


def check(cond, what):
    if not cond:
        FAILURES.append(what)


def call(port, method, path, body=None, headers=None):
    """(status, content type, body text) of a request; the reply's headers go into `headers`."""
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=data, method=method,
                                 headers={"Content-Type": "application/json", "x-api-key": "secret-key"})
    try:
        with urllib.request.urlopen(req, timeout=5) as r:
            if headers is not None:
                headers.update(r.headers.items())
            return r.status, r.headers.get("Content-Type", ""), r.read().decode()
    except urllib.error.HTTPError as e:
        if headers is not None:
            headers.update(e.headers.items())
        return e.code, e.headers.get("Content-Type", ""), e.read().decode()


def sse_events(text):
    """[(event name, data object)] of an SSE body; a malformed frame is a failure."""
    out = []
    for frame in text.split("\n\n"):
        if not frame.strip():
            continue
        lines = dict(line.split(": ", 1) for line in frame.split("\n"))
        check(set(lines) == {"event", "data"}, f"SSE frame with fields {sorted(lines)}")
        data = json.loads(lines["data"])
        check(data.get("type") == lines["event"], f"SSE event {lines['event']} carries type {data.get('type')}")
        out.append((lines["event"], data))
    return out


def request(text, tools=True, stream=False, system="You are a test."):
    body = {"model": "claude-sonnet-4-5", "max_tokens": 1000, "stream": stream, "system": system,
            "messages": [{"role": "user", "content": text}]}
    if tools:
        body["tools"] = [{"name": "Bash", "description": "run", "input_schema": {"type": "object"}}]
    return body


def main():
    work = tempfile.mkdtemp(prefix="fake-api-selftest-")
    log = os.path.join(work, "requests.jsonl")
    script = {"usage_mode": "estimate", "context_window": 200000, "turns": [
        {"text": "Running it. " + "x" * 100, "tool": "Bash", "input": {"command": "echo hi"}, "id": "toolu_fixed"},
        {"text": "Three quarters.", "fill_pct": 75},
        {"error": {"status": 400, "type": "invalid_request_error", "message": "prompt is too long"}}]}
    api = FakeApi(script, log)
    try:
        # 1. streaming: a text block and a tool_use block, reassembled from the deltas
        first = request("do the thing", stream=True)
        status, ctype, text = call(api.port, "POST", "/v1/messages", first)
        check(status == 200 and ctype.startswith("text/event-stream"), f"stream: {status} {ctype}")
        events = sse_events(text)
        names = [e for e, _ in events]
        check(names[:2] == ["message_start", "ping"] and names[-2:] == ["message_delta", "message_stop"],
              f"stream event order {names}")
        blocks = {}
        for name, data in events:
            if name == "content_block_start":
                blocks[data["index"]] = dict(data["content_block"], text="", json="")
            elif name == "content_block_delta":
                delta = data["delta"]
                blocks[data["index"]]["text"] += delta.get("text", "")
                blocks[data["index"]]["json"] += delta.get("partial_json", "")
        check(blocks[0]["type"] == "text" and blocks[0]["text"] == "Running it. " + "x" * 100,
              f"streamed text {blocks.get(0)}")
        check(blocks[1]["type"] == "tool_use" and blocks[1]["id"] == "toolu_fixed" and blocks[1]["name"] == "Bash"
              and json.loads(blocks[1]["json"]) == {"command": "echo hi"}, f"streamed tool_use {blocks.get(1)}")
        check(names.count("content_block_delta") > 2, "the text and the tool input come in several deltas")
        delta = next(d for e, d in events if e == "message_delta")
        check(delta["delta"]["stop_reason"] == "tool_use", f"stop_reason {delta['delta']}")
        # estimate usage: total = len(json of system+messages+tools) // 4, all but 5 as cache reads
        total = estimate_tokens(first)
        want = len(json.dumps({"system": first["system"], "messages": first["messages"], "tools": first["tools"]})) // 4
        check(total == want and total > 10, f"estimate {total}, expected {want}")
        usage = delta["usage"]
        check(usage["input_tokens"] == 5 and usage["cache_creation_input_tokens"] == 0
              and usage["cache_read_input_tokens"] == total - 5 and usage["output_tokens"] == 20,
              f"estimated usage {usage}")
        start_usage = events[0][1]["message"]["usage"]
        check(start_usage["cache_read_input_tokens"] == total - 5, f"message_start usage {start_usage}")

        # 2. non-streaming, fill_pct overrides the estimate: 75 % of 200000
        status, ctype, text = call(api.port, "POST", "/v1/messages", request("go on"))
        reply = json.loads(text)
        check(status == 200 and ctype.startswith("application/json"), f"json reply: {status} {ctype}")
        check(reply["content"] == [{"type": "text", "text": "Three quarters."}] and reply["stop_reason"] == "end_turn",
              f"json reply content {reply['content']}")
        u = reply["usage"]
        check(u["input_tokens"] + u["cache_creation_input_tokens"] + u["cache_read_input_tokens"] == 150000,
              f"fill_pct usage {u}")

        # 3. a side request (no tools) consumes no turn; the error turn is next
        status, _, text = call(api.port, "POST", "/v1/messages", request("title?", tools=False))
        check(status == 200 and json.loads(text)["content"][0]["text"] == "OK", f"side reply {status} {text[:200]}")
        status, _, text = call(api.port, "POST", "/v1/messages", request("again"))
        check(status == 400 and json.loads(text)["error"]["message"] == "prompt is too long", f"error turn {status} {text}")
        status, _, text = call(api.port, "POST", "/v1/messages", request("more"))
        check(json.loads(text)["content"][0]["text"] == "Done.", f"exhausted script reply {text[:200]}")

        # 4. a compaction request, the subagent marker, the other routes
        compact = request("CRITICAL: Respond with TEXT ONLY. Your task is to create a detailed summary of it.",
                          system=[{"type": "text", "text": "x-anthropic-billing-header: cc_is_subagent=true;"}])
        status, _, text = call(api.port, "POST", "/v1/messages", compact)
        check("<summary>" in json.loads(text)["content"][0]["text"], f"compact reply {text[:200]}")
        status, _, text = call(api.port, "POST", "/v1/messages/count_tokens", request("count me"))
        check(json.loads(text) == {"input_tokens": estimate_tokens(request("count me"))}, f"count_tokens {text}")
        status, _, text = call(api.port, "GET", "/v1/models")
        check(status == 200 and "claude-sonnet-4-5" in [m["id"] for m in json.loads(text)["data"]], f"models {text}")
        status, _, text = call(api.port, "HEAD", "/")
        check(status == 200 and text == "", f"HEAD / {status} {text!r}")
        status, _, text = call(api.port, "POST", "/v1/elsewhere", {"a": 1})
        check(status == 200 and json.loads(text) == {}, f"unknown route {status} {text}")
    finally:
        api.close()

    # 5. the log: one line a request, in order, with kind, turn, thread, and no credentials
    with open(log) as f:
        lines = [json.loads(line) for line in f]
    got = [(q["kind"], q["turn_index"]) for q in lines]
    want = [("main", 0), ("main", 1), ("side", None), ("main", 2), ("main", -1), ("compact", None),
            ("count_tokens", None), ("models", None), ("other", None), ("other", None)]
    check(got == want, f"log kinds {got}")
    check([q["seq"] for q in lines] == list(range(1, 11)), "log sequence numbers")
    check(lines[0]["body"]["messages"][0]["content"] == "do the thing", "the log keeps the request body")
    check(lines[3].get("http_status") == 400, "the log records the scripted error status")
    check(lines[5]["thread"] == "subagent" and lines[0]["thread"] == "main", "subagent marker")
    check(all("secret-key" not in json.dumps(q["headers"]) for q in lines), "credentials kept out of the log")

    # 6. turns for a thread: a subagent running beside the main thread gets its own turns, in
    # whatever order the two threads' requests come
    api = FakeApi({"turns": [{"thread": "main", "text": "main one"}, {"thread": "subagent", "text": "sub one"},
                             {"thread": "subagent", "text": "sub two"}, {"text": "anyone"},
                             {"thread": "main", "text": "main two"}]}, os.path.join(work, "threads.jsonl"))
    sub = "x-anthropic-billing-header: cc_is_subagent=true;"
    try:
        order = [("main", None), ("sub", sub), ("main", None), ("sub", sub), ("main", None), ("main", None)]
        got = []
        for _, system in order:
            body = request("go", system=system or "You are a test.")
            got.append(json.loads(call(api.port, "POST", "/v1/messages", body)[2])["content"][0]["text"])
        check(got == ["main one", "sub one", "anyone", "sub two", "main two", "Done."], f"turns by thread: {got}")
    finally:
        api.close()

    # 7. a limit: an error turn with headers, played "times" requests; one played for every request;
    # an error turn with a body of its own
    limit_log = os.path.join(work, "limits.jsonl")
    api = FakeApi({"turns": [
        {"times": 2, "error": {"status": 429, "type": "rate_limit_error", "message": "slow down",
                               "headers": {"retry-after": "1", "anthropic-ratelimit-unified-status": "rejected"}}},
        {"text": "after the limit"},
        {"error": {"status": 529, "body": "not json"}},
        {"times": -1, "error": {"status": 529, "type": "overloaded_error", "message": "Overloaded"}}]}, limit_log)
    try:
        got = []
        for i in range(6):
            headers = {}
            status, _, text = call(api.port, "POST", "/v1/messages", request(f"try {i}"), headers)
            got.append((status, headers.get("retry-after"), text if status == 529 and "{" not in text
                        else json.loads(text).get("error", {}).get("type") or json.loads(text)["content"][0]["text"]))
        want = [(429, "1", "rate_limit_error"), (429, "1", "rate_limit_error"), (200, None, "after the limit"),
                (529, None, "not json"), (529, None, "overloaded_error"), (529, None, "overloaded_error")]
        check(got == want, f"limit turns: {got}")
        check(json.loads(call(api.port, "GET", "/_control/state")[2])["cursor"] == 3,
              "a turn of times -1 never counts as played")
    finally:
        api.close()
    with open(limit_log) as f:
        lines = [json.loads(line) for line in f]
    check([q["turn_index"] for q in lines] == [0, 0, 1, 2, 3, 3], f"limit turn indexes {[q['turn_index'] for q in lines]}")
    check(lines[0].get("reply_headers", {}).get("anthropic-ratelimit-unified-status") == "rejected",
          "the log records the headers sent")

    for f in FAILURES:
        print("FAIL " + f, file=sys.stderr)
    print("fake_api self-test " + ("passed" if not FAILURES else "FAILED"))
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
