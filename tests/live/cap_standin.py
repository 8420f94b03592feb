#!/usr/bin/env python3
"""A stand-in PostToolUse hook that replaces a tool's output, to find which replacement shapes the
client accepts (record_cap.py):

    cap_standin.py --mode MODE --log HOOKS.jsonl

Appends {"mode", "stdin" (the payload), "reply"} to the log and answers
{"hookSpecificOutput": {"hookEventName": "PostToolUse", "updatedToolOutput": X}} with X by MODE:
    none       nothing (the client's own output)
    string     the plain string "CAPPED <tool_use_id>"
    same       the tool's own output with its text replaced by "CAPPED <tool_use_id>": a string
               becomes that string; in an object every field named stdout, content (a string) or
               text (of a text block) gets it and every list of file names becomes [it]
    same_drop  as same, and an object's persistedOutputPath / persistedOutputSize left out
    blocks     [{"type": "text", "text": "CAPPED <tool_use_id>"}] (an MCP tool's content blocks)
    object     {"content": [{"type": "text", "text": "CAPPED <tool_use_id>"}]} (an MCP result)
"""
import copy
import fcntl
import json
import sys

TEXT_FIELDS = ("stdout", "content", "text")
LIST_FIELDS = ("filenames",)


def replace(value, mark):
    if isinstance(value, str):
        return mark
    if isinstance(value, list):
        return [replace(v, mark) if isinstance(v, (dict, list)) else v for v in value]
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if k in TEXT_FIELDS and isinstance(v, str):
                out[k] = mark
            elif k in LIST_FIELDS and isinstance(v, list):
                out[k] = [mark]
            elif isinstance(v, (dict, list)):
                out[k] = replace(v, mark)
            else:
                out[k] = v
        return out
    return value


def main():
    args = dict(zip(sys.argv[1::2], sys.argv[2::2]))
    mode = args.get("--mode", "none")
    text = sys.stdin.read()
    try:
        payload = json.loads(text)
    except ValueError:
        payload = {"unparsed": text}
    mark = "CAPPED " + str(payload.get("tool_use_id", "?"))
    response = payload.get("tool_response")
    out = None
    if mode == "string":
        out = mark
    elif mode in ("same", "same_drop"):
        out = replace(copy.deepcopy(response), mark)
        if mode == "same_drop" and isinstance(out, dict):
            out.pop("persistedOutputPath", None)
            out.pop("persistedOutputSize", None)
    elif mode == "blocks":
        out = [{"type": "text", "text": mark}]
    elif mode == "object":
        out = {"content": [{"type": "text", "text": mark}]}
    reply = None
    if out is not None:
        reply = {"hookSpecificOutput": {"hookEventName": "PostToolUse", "updatedToolOutput": out}}
    with open(args.get("--log", "cap-hooks.jsonl"), "a", encoding="utf-8") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        f.write(json.dumps({"mode": mode, "stdin": payload, "reply": reply}) + "\n")
    if reply is not None:
        sys.stdout.write(json.dumps(reply))


if __name__ == "__main__":
    main()
