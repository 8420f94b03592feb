#!/usr/bin/env python3
"""A scripted stand-in for the Anthropic Messages API, for driving the real Claude Code CLI offline.

Python 3 standard library only. It listens on 127.0.0.1 and nowhere else, one thread a connection.

Command line:
    fake_api.py --script SCRIPT.json --log REQUESTS.jsonl [--port N] [--port-file FILE]
(port 0, the default, takes a free port; FILE receives it once the socket listens.)
From Python:
    api = FakeApi(script, "requests.jsonl")   # listening at once, served by a background thread
    api.port; api.load(other_script); api.close()

Routes
    POST /v1/messages               a scripted message: SSE when the body has "stream": true, else JSON
    POST /v1/messages/count_tokens  {"input_tokens": N}, N from the size estimate below
    GET  /v1/models, /v1/models/ID  a short model list, one model
    HEAD /                          200, empty (the client probes its base URL at start)
    POST /_control/script           replace the script with the body and rewind it
    POST /_control/reset            rewind the script
    GET  /_control/state            {"cursor", "turns", "requests"}
    anything else                   200 {}
Every request but the control ones is appended to the log.

What a /v1/messages request gets depends on its kind:
    "compact"  the last user message asks for a summary of the conversation (the client's compaction
               prompt): answered with "compact_text"; consumes no turn.
    "side"     no tools, or max_tokens <= 1 (title generation, probes): answered with "side_text",
               or, when output_config.format asks for a JSON schema, with the smallest JSON value
               that schema accepts; consumes no turn.
    "main"     everything else (the agent loop of the main thread and of subagents, in the order
               the client sends them): plays the next turn; once the turns run out, "exhausted_text".

Script: a JSON list of turns, or an object
    {"turns": [TURN, ...],
     "model": "...",              model named in replies (default: the request's)
     "default_usage": {...},      usage every reply starts from (built-in: input 100, output 20, caches 0)
     "context_window": 200000,    the window "fill_pct" is a share of
     "usage_mode": "estimate",    see "Usage" below
     "side_text": "OK", "compact_text": "<analysis>..</analysis><summary>..</summary>",
     "exhausted_text": "Done."}
TURN:
    {"text": "..."}                                  one text block, stop_reason end_turn
    {"tool": "Bash", "input": {...}, "id": "toolu_x"} a tool_use block (after the text if both), stop_reason tool_use
    {"tools": [{"tool": ..., "input": ..., "id": ...}, ...]}  several tool_use blocks in one reply
    {"content": [blocks], "stop_reason": "..."}      the content blocks as given (text, tool_use, thinking)
    {"error": {"status": 400, "type": "...", "message": "..."}}  that HTTP error instead of a message
                        (body {"type": "error", "error": {"type", "message"}}); "headers": {name: value}
                        are sent with it, "body": a JSON value or a string sent instead of that body
  and on any turn:
    "times": N          played for N requests before the next turn's turn (default 1; -1: for every
                        request from then on), e.g. a limit that clears after N refusals
    "usage": {...}      merged over the usage computed so far
    "fill_pct": 75      input + cache_creation + cache_read = 75 % of context_window
                        (input_tokens 5, cache_creation 0, the rest in cache_read)
    "pad_chars": N      N characters of filler appended to the text (grows the history itself)
    "delay": 0.5        seconds to wait before answering
    "expect": "text"    the log line records whether the request's JSON contains the text ("expect_ok")
    "thread": "subagent"  played only for a subagent's request ("main": only for the main thread's);
                        a request takes the first turn not yet played that its thread may take, so a
                        subagent running beside the main thread (2.1.332 runs them in the
                        background) gets its own turns whatever order the requests come in

Usage of a reply, in this order: default_usage; then, when "usage_mode" is "estimate" and the turn
gives neither "usage" nor "fill_pct", the estimate; then "fill_pct"; then the turn's "usage".
The estimate (also the answer of count_tokens) is
    total = max(10, len(json.dumps({"system": S, "messages": M, "tools": T})) // 4)
where S, M, T are the request's fields (null when absent) and json.dumps runs with Python's
defaults (non-ASCII escaped, so the length is that text's size in bytes): about 4 bytes of
request text a token, counting the system prompt, the tool schemas and the whole conversation.
It is reported the way a fully cached prefix would be: input_tokens 5, cache_creation_input_tokens
0, cache_read_input_tokens total - 5, so input + cache_creation + cache_read = total. In estimate
mode compaction and side requests are estimated the same way (with no turn, nothing overrides it).

Log: one JSON object a line:
    {"seq", "ts", "method", "path", "headers" (without credentials), "kind" (main, side, compact,
     count_tokens, models, other), "thread" (subagent when the system prompt's billing header says
     cc_is_subagent=true, else main), "turn_index" (-1 once the script has run out), "body", "reply",
     and when they apply "http_status", "reply_headers", "expect", "expect_ok"}
"""

import argparse
import copy
import gzip
import json
import os
import sys
import threading
import time
import uuid
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

BUILTIN_USAGE = {"input_tokens": 100, "cache_creation_input_tokens": 0,
                 "cache_read_input_tokens": 0, "output_tokens": 20}
# Phrases of the client's compaction prompt (any one marks a compaction request).
SUMMARY_PHRASES = ("Your task is to create a detailed summary", "summary of the conversation so far",
                   "create a detailed summary of the conversation", "CRITICAL: Respond with TEXT ONLY")
MODELS = ("claude-opus-4-8", "claude-sonnet-4-5", "claude-haiku-4-5")
FILLER = "the quick brown fox jumps over the lazy dog "


def estimate_tokens(body):
    """Token estimate of a request body (see the module docstring)."""
    body = body if isinstance(body, dict) else {}
    text = json.dumps({"system": body.get("system"), "messages": body.get("messages"), "tools": body.get("tools")})
    return max(10, len(text) // 4)


def flatten(content):
    """The text of a message's content: a string, or the text and tool_result blocks of a list."""
    if isinstance(content, str):
        return content
    parts = []
    for block in content if isinstance(content, list) else []:
        if isinstance(block, dict):
            if block.get("type") == "text":
                parts.append(str(block.get("text", "")))
            elif block.get("type") == "tool_result":
                parts.append(flatten(block.get("content")))
    return "\n".join(parts)


def kind_of(body):
    """'compact', 'side' or 'main' for a /v1/messages body (see the module docstring)."""
    users = [m for m in body.get("messages") or [] if isinstance(m, dict) and m.get("role") == "user"]
    if users:
        last = flatten(users[-1].get("content"))
        if any(p in last for p in SUMMARY_PHRASES):
            return "compact"
    if not body.get("tools"):
        return "side"
    max_tokens = body.get("max_tokens")
    if isinstance(max_tokens, int) and max_tokens <= 1:
        return "side"
    return "main"


def thread_of(body):
    """'subagent' when the billing header at the start of the system prompt marks a subagent."""
    system = body.get("system")
    head = system if isinstance(system, str) else json.dumps(system)[:1000] if system else ""
    return "subagent" if "cc_is_subagent=true" in head else "main"


def value_for_schema(schema):
    """The smallest JSON value a simple JSON schema accepts (for structured-output side requests)."""
    if not isinstance(schema, dict):
        return "ok"
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object":
        props = schema.get("properties") or {}
        return {name: value_for_schema(props.get(name)) for name in schema.get("required", list(props))}
    if kind == "array":
        return [value_for_schema(schema.get("items"))] * int(schema.get("minItems", 0))
    if kind in ("integer", "number"):
        return schema.get("minimum", 0)
    if kind == "boolean":
        return False
    if kind == "null":
        return None
    return "Scripted session"


def tool_block(spec):
    return {"type": "tool_use", "id": spec.get("id") or "toolu_" + uuid.uuid4().hex[:24],
            "name": spec["tool"], "input": spec.get("input", {})}


def turn_content(turn):
    """(content blocks, stop_reason) of a turn."""
    if "content" in turn:
        blocks = copy.deepcopy(turn["content"])
        for b in blocks:
            if b.get("type") == "tool_use" and not b.get("id"):
                b["id"] = "toolu_" + uuid.uuid4().hex[:24]
        has_tool = any(b.get("type") == "tool_use" for b in blocks)
        return blocks, turn.get("stop_reason", "tool_use" if has_tool else "end_turn")
    blocks = []
    text = turn.get("text", "")
    pad = int(turn.get("pad_chars", 0))
    if pad > 0:
        text += "\n" + (FILLER * (pad // len(FILLER) + 1))[:pad]
    if text:
        blocks.append({"type": "text", "text": text})
    tools = ([turn] if "tool" in turn else []) + list(turn.get("tools", []))
    blocks.extend(tool_block(t) for t in tools)
    if not blocks:
        blocks.append({"type": "text", "text": ""})
    return blocks, turn.get("stop_reason", "tool_use" if tools else "end_turn")


def sse_event(name, data):
    return b"event: " + name.encode() + b"\ndata: " + json.dumps(data).encode() + b"\n\n"


def pieces(text, size):
    return [text[i:i + size] for i in range(0, len(text), size)] or [""]


def sse_stream(message):
    """The server-sent events of a whole message, the way the streaming API sends one."""
    usage = message["usage"]
    first = dict(message, content=[], stop_reason=None, stop_sequence=None, usage=dict(usage, output_tokens=1))
    out = [sse_event("message_start", {"type": "message_start", "message": first}),
           sse_event("ping", {"type": "ping"})]
    for index, block in enumerate(message["content"]):
        kind = block.get("type")
        deltas = []
        if kind == "text":
            start = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": p} for p in pieces(block.get("text", ""), 48)]
        elif kind == "tool_use":
            start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            deltas = [{"type": "input_json_delta", "partial_json": p}
                      for p in pieces(json.dumps(block.get("input", {})), 32)]
        elif kind == "thinking":
            start = {"type": "thinking", "thinking": "", "signature": ""}
            deltas = [{"type": "thinking_delta", "thinking": block.get("thinking", "")},
                      {"type": "signature_delta", "signature": block.get("signature", "c2lnbmF0dXJl")}]
        else:
            start = block
        out.append(sse_event("content_block_start", {"type": "content_block_start", "index": index,
                                                     "content_block": start}))
        out.extend(sse_event("content_block_delta", {"type": "content_block_delta", "index": index, "delta": d})
                   for d in deltas)
        out.append(sse_event("content_block_stop", {"type": "content_block_stop", "index": index}))
    out.append(sse_event("message_delta", {"type": "message_delta",
                                           "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                                           "usage": dict(usage)}))
    out.append(sse_event("message_stop", {"type": "message_stop"}))
    return b"".join(out)


class Script:
    """The turns and settings of a script, and how far it has been played."""

    def __init__(self, script):
        self.settings = {"turns": script} if isinstance(script, list) else dict(script or {})
        self.turns = list(self.settings.get("turns", []))
        self.played = set()
        self.plays = {}  # index: how many requests a turn of "times" N has answered so far

    @property
    def cursor(self):
        """How many turns have been played."""
        return len(self.played)

    def rewind(self):
        self.played = set()
        self.plays = {}

    def next_turn(self, thread="main"):
        """(index, turn) of the first turn not yet played that `thread` may take, or (-1, None) once
        there is none."""
        for index, turn in enumerate(self.turns):
            if index not in self.played and (not isinstance(turn, dict) or turn.get("thread") in (None, thread)):
                times = int(turn.get("times", 1)) if isinstance(turn, dict) else 1
                self.plays[index] = self.plays.get(index, 0) + 1
                if times >= 0 and self.plays[index] >= times:
                    self.played.add(index)
                return index, turn
        return -1, None

    def usage(self, turn, body):
        usage = dict(BUILTIN_USAGE)
        usage.update(self.settings.get("default_usage", {}))
        turn = turn or {}
        if self.settings.get("usage_mode") == "estimate" and "usage" not in turn and "fill_pct" not in turn:
            total = estimate_tokens(body)
            usage.update(input_tokens=5, cache_creation_input_tokens=0, cache_read_input_tokens=total - 5)
        if "fill_pct" in turn:
            total = int(int(self.settings.get("context_window", 200000)) * float(turn["fill_pct"]) / 100)
            usage.update(input_tokens=5, cache_creation_input_tokens=0, cache_read_input_tokens=max(0, total - 5))
        usage.update(turn.get("usage", {}))
        return usage


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 64  # the client opens several connections at once (subagents, probes)

    def handle_error(self, request, client_address):
        # A client that gave up on a late answer (its timeout) closed the connection: not an error.
        if isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            return
        super().handle_error(request, client_address)


class FakeApi:
    """The fake API, listening on 127.0.0.1:port from construction until close()."""

    def __init__(self, script, log_path, port=0):
        self.log_path = log_path
        self.lock = threading.Lock()
        self.script = Script(script)
        self.seq = 0
        api = self

        class Bound(Handler):
            owner = api
        self.httpd = Server(("127.0.0.1", port), Bound)
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.1,), name="fake-api", daemon=True)
        self.thread.start()

    def load(self, script):
        with self.lock:
            self.script = Script(script)

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()

    def record(self, entry):
        with self.lock:
            self.seq += 1
            entry = dict(seq=self.seq, ts=time.time(), **entry)
            with open(self.log_path, "a", encoding="utf-8") as f:
                f.write(json.dumps(entry) + "\n")

    def answer_messages(self, body):
        """(http status, reply object, log fields) for a /v1/messages body."""
        kind = kind_of(body)
        with self.lock:
            script = self.script
            index, turn = script.next_turn(thread_of(body)) if kind == "main" else (None, None)
        fields = {"kind": kind, "thread": thread_of(body), "turn_index": index}
        settings = script.settings
        if turn and "error" in turn:
            err = turn["error"]
            fields["http_status"] = int(err.get("status", 400))
            if err.get("headers"):
                fields["reply_headers"] = {str(k): str(v) for k, v in err["headers"].items()}
            if "body" in err:
                return fields["http_status"], err["body"], fields
            return fields["http_status"], {"type": "error", "error": {
                "type": err.get("type", "invalid_request_error"), "message": err.get("message", "scripted error")}}, fields
        if kind == "main" and turn is not None:
            blocks, stop = turn_content(turn)
            if "expect" in turn:
                fields.update(expect=turn["expect"], expect_ok=turn["expect"] in json.dumps(body))
            if turn.get("delay"):
                time.sleep(float(turn["delay"]))
        else:
            if kind == "main":
                text = settings.get("exhausted_text", "Done.")
            elif kind == "compact":
                text = settings.get("compact_text", "<analysis>Scripted.</analysis>\n<summary>SCRIPTED-SUMMARY: "
                                    "the user ran a scripted session.</summary>")
            else:
                fmt = (body.get("output_config") or {}).get("format") or {}
                text = (json.dumps(value_for_schema(fmt.get("schema"))) if fmt.get("type") == "json_schema"
                        else settings.get("side_text", "OK"))
            blocks, stop = [{"type": "text", "text": text}], "end_turn"
        message = {"id": "msg_" + uuid.uuid4().hex[:24], "type": "message", "role": "assistant",
                   "model": settings.get("model") or body.get("model") or MODELS[0], "content": blocks,
                   "stop_reason": stop, "stop_sequence": None, "usage": script.usage(turn, body)}
        return 200, message, fields


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "ctxkit-fake-api/1"
    owner = None  # the FakeApi, set on a subclass per server

    def log_message(self, format, *args):  # noqa: A002 (the base class's name)
        if os.environ.get("FAKE_API_VERBOSE"):
            sys.stderr.write("fake_api: " + format % args + "\n")

    def body_bytes(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            data = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    break
                data += self.rfile.read(size)
                self.rfile.readline()
        else:
            length = int(self.headers.get("Content-Length") or 0)
            data = self.rfile.read(length) if length else b""
        encoding = self.headers.get("Content-Encoding", "").lower()
        try:
            if encoding == "gzip":
                data = gzip.decompress(data)
            elif encoding == "deflate":
                data = zlib.decompress(data)
        except (OSError, zlib.error):
            pass
        return data

    def record(self, kind, body=None, reply=None, **fields):
        headers = {k: v for k, v in self.headers.items() if k.lower() not in ("x-api-key", "authorization")}
        self.owner.record(dict(method=self.command, path=self.path, headers=headers, kind=kind,
                               thread=fields.pop("thread", None), turn_index=fields.pop("turn_index", None),
                               body=body, reply=reply, **fields))

    def send(self, status, payload, content_type="application/json", headers=None):
        data = payload if isinstance(payload, bytes) else payload.encode() if isinstance(payload, str) \
            else json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("request-id", "req_" + uuid.uuid4().hex[:24])
        if content_type.startswith("text/event-stream"):
            self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)
            self.wfile.flush()

    def do_HEAD(self):
        self.record("other")
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self):
        path = self.path.split("?", 1)[0].rstrip("/")
        if path == "/_control/state":
            s = self.owner.script
            self.send(200, {"cursor": s.cursor, "turns": len(s.turns), "requests": self.owner.seq})
            return
        if path == "/v1/models" or path.startswith("/v1/models/"):
            self.record("models")
            model = lambda mid: {"type": "model", "id": mid, "display_name": mid, "created_at": "2025-09-29T00:00:00Z"}
            if path == "/v1/models":
                self.send(200, {"data": [model(m) for m in MODELS], "has_more": False,
                                "first_id": MODELS[0], "last_id": MODELS[-1]})
            else:
                self.send(200, model(path.rsplit("/", 1)[1]))
            return
        self.record("other")
        self.send(200, {})

    def do_POST(self):
        path = self.path.split("?", 1)[0].rstrip("/")
        raw = self.body_bytes()
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = {"unparsed": raw[:100000].decode("utf-8", "replace")}
        if path == "/_control/script":
            self.owner.load(body)
            self.send(200, {"ok": True, "turns": len(self.owner.script.turns)})
            return
        if path == "/_control/reset":
            with self.owner.lock:
                self.owner.script.rewind()
            self.send(200, {"ok": True})
            return
        if path == "/v1/messages/count_tokens":
            reply = {"input_tokens": estimate_tokens(body)}
            self.record("count_tokens", body, reply)
            self.send(200, reply)
            return
        if path != "/v1/messages" or not isinstance(body, dict):
            self.record("other", body)
            self.send(200, {})
            return
        status, reply, fields = self.owner.answer_messages(body)
        kind = fields.pop("kind")
        self.record(kind, body, reply, **fields)
        if status == 200 and body.get("stream"):
            self.send(200, sse_stream(reply), "text/event-stream; charset=utf-8")
        else:
            self.send(status, reply, headers=fields.get("reply_headers"))


def main():
    ap = argparse.ArgumentParser(description="Scripted fake of the Anthropic Messages API on 127.0.0.1.")
    ap.add_argument("--script", required=True, help="script JSON (see the module docstring)")
    ap.add_argument("--log", required=True, help="request log, one JSON object a line (appended)")
    ap.add_argument("--port", type=int, default=0, help="port to listen on (0: any free one)")
    ap.add_argument("--port-file", help="file that receives the port once the server listens")
    a = ap.parse_args()
    try:
        with open(a.script, encoding="utf-8") as f:
            script = json.load(f)
    except (OSError, ValueError) as e:
        sys.exit(f"fake_api: error: reading {a.script}: {e}")
    api = FakeApi(script, a.log, a.port)
    if a.port_file:
        with open(a.port_file + ".tmp", "w") as f:
            f.write(str(api.port))
        os.replace(a.port_file + ".tmp", a.port_file)
    sys.stderr.write(f"fake_api: listening on 127.0.0.1:{api.port}\n")
    try:
        while api.thread.is_alive():
            api.thread.join(1)
    except KeyboardInterrupt:
        pass
    api.close()


if __name__ == "__main__":
    main()
