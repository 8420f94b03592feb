#!/usr/bin/env python3
"""Records what the real Claude Code client does when the API refuses a call for now (a rate limit,
a subscription's usage limit, an overload), as fixtures that the unit tests of
claude/limit_answer check the classifier against:

    record_limits.py --client VERSION [--out DIR] [--only CASE,...] [--jobs N]

writes tests/fixtures/claude-code-<version>/limits/<case>.json, one file a case:
    {"client_version", "case", "about", "expect": {"limit": "rate limit" | "usage limit" |
     "overloaded" | null, "reset_epoch": N | null (the reset the answer named, when the client
     passes it on)}, "answer": {"status", "headers", "body", "times"} (what the fake API sent to the
     main thread's requests: "times" requests, -1 every one; a late answer: {"status": 200,
     "delay", "text", "times"}), "then" (the turn after, if any),
     "env" (set for the client beside the harness's), "started_epoch" (when the call started),
     "exit_code", "stdout" (the stream-json lines, as printed), "stderr", "requests" (the main
     thread's requests to the API: [{"status", "at"} (seconds from the start to the answer)]),
     "seconds" (the call's)}
Paths of this machine in the output are replaced by neutral ones. The cases run side by side (the
client spends them waiting); the longest, the default retries, takes about 3 minutes.

What the client does (2.1.197 and 2.1.332 alike unless said; measured with these cases)
---------------------------------------------------------------------------------------
Exit code 1 and an empty stderr for every refusal that ends the call. The call's stream-json ends
with a `<synthetic>` assistant line whose text is the message below and which carries "error":
"rate_limit" (429) or "server_error" (529), then the `result` line:
    "type":"result","subtype":"success","is_error":true,"api_error_status":<HTTP status>,
    "num_turns":1,"total_cost_usd":0,"modelUsage":{},"result":"<the message>"
2.1.197 adds "terminal_reason":"completed"; 2.1.332 "terminal_reason":"api_error",
"api_error_type":"rate_limit_error" | "overloaded_error" and, for a usage limit,
"api_error":"usage_limit_reached" (its assistant line also carries "is_api_error_message":true,
"api_error_status", "api_error_type", and for a usage limit "api_error" and "api_error_params":
{"rate_limit_info":{...}}). 2.1.332's result line no longer begins with "type".

Retries inside the call: a 429 (with an API key; 2.1.332 with a subscription too) and a 529 are
retried CLAUDE_CODE_MAX_RETRIES times (default 10; 0: one request), each retry announced first by
    {"type":"system","subtype":"api_retry","attempt":N,"max_retries":M,"retry_delay_ms":D,
     "error_status":429,"error":"rate_limit",...}       (529: "error_status":529,"error":"overloaded")
with D = 500 ms * 2^(N-1), at most 32 s, plus up to 25 % jitter (measured 0.5, 1.2, 2.2, 4.3,
9.1, 18.8, 35, 32-38, 32-38, 32-38 s): the 10 retries of a refusal that does not clear take
about 3 minutes (11 requests; 183-203 s here). A `retry-after: 3` header makes every delay 3000 ms;
anthropic-ratelimit-{requests,tokens}-reset headers change nothing. A refusal that clears within
the retries is invisible but for the api_retry lines: exit 0 and a successful result.

Messages (the result's text, as printed):
    429 rate_limit_error, an API key (any headers, the unified ones included):
        API Error: Request rejected (429) · <the answer's error message>
    429 without unified "rejected" headers, a subscription (an OAuth token): a line
        {"type":"rate_limit_event","rate_limit_info":{"status":"rejected","isUsingOverage":false},...}
    (no resetsAt, no rateLimitType), then
        API Error: Server is temporarily limiting requests (not your usage limit) · <message>
    (2.1.197 does not retry it: one request; 2.1.332 retries it like the others)
    429 with anthropic-ratelimit-unified-status: rejected and -reset: <epoch>, a subscription: never
    retried (one request); a line
        {"type":"rate_limit_event","rate_limit_info":{"status":"rejected","resetsAt":<the reset
         header's epoch>,"rateLimitType":"five_hour"|"seven_day","isUsingOverage":false},...}
    then, in the client's time zone (TZ; unset: UTC), the minute of the reset truncated, ":00" left
    out:
        2.1.197: You've hit your session limit · resets 4:30am (UTC)
        2.1.332: You've hit your 5-hour limit · resets 4:30am (UTC)
        both:    You've hit your weekly limit · resets Nov 30, 10:30pm (America/New_York)
        2.1.197: You've hit your session limit · resets 7am (Europe/Paris)
        2.1.332: You've hit your 5-hour limit · resets 7am (Europe/Paris)
    529 overloaded_error:
        API Error: 529 Overloaded. This is a server-side issue, usually temporary — try again in a
        moment. If it persists, check your inference gateway (127.0.0.1:<port>).

CLAUDE_CODE_RETRY_WATCHDOG=1 (an undocumented switch of both versions) makes the client wait out
a limit inside the call:
    a usage limit: no result; the client sleeps until the reset, announcing the wait in chunks of
    at most 30 s with api_retry lines whose "retry_delay_ms" is the time left (2.1.332:
    "attempt":1,"max_retries":300, 31133 then 1133 ms for a reset 40 s away; 2.1.197:
    "max_retries":10, 28759 ms), then repeats the request: exit 0 and a successful result when it
    is answered (usage_limit_watchdog.json). 2.1.197 prints no rate_limit_event before the wait.
    a 429 that does not clear: retried past CLAUDE_CODE_MAX_RETRIES; 2.1.332 gives up once it has
    waited CLAUDE_CODE_RETRY_WATCHDOG_MAX_WAIT_MS (30 s: 7 requests, the usual 429 result, exit
    1); 2.1.197 does not read that variable and was still retrying when killed
    (rate_limit_watchdog.json).

Not limits, recorded to tell them apart: a 500 api_error is retried like a 429 ("error_status":500,
"error":"server_error") and ends "API Error: 500 Internal server error. This is a server-side
issue, ..." (api_error_status 500); a 400 "prompt is too long" is not retried and ends "Prompt is
too long · the request is ~250000 tokens (limit 200000) but ..." (api_error_status 400,
terminal_reason "prompt_too_long"). An answer later than API_TIMEOUT_MS is given up and retried
like the others ("error_status":null,"error":"unknown") and ends, with no api_error_status,
    2.1.197: Request timed out
    2.1.332: Request timed out. If the API is slow to answer, or a proxy or gateway holds
             responses, set API_TIMEOUT_MS above 2000.
so one call can hang (CLAUDE_CODE_MAX_RETRIES + 1) x API_TIMEOUT_MS (the client's default: 10
minutes) plus the backoff (about 3 minutes for 10 retries) before the client gives up.
"""
import argparse
import json
import os
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from harness import Harness  # noqa: E402
from record_fixtures import SOURCE, Rewriter, choose_client, client_version, write  # noqa: E402

OAUTH = {"ANTHROPIC_API_KEY": "", "CLAUDE_CODE_OAUTH_TOKEN": "sk-ant-oat01-ctxkit-live-fake-token-0000"}
RATE_MESSAGE = "Number of request tokens has exceeded your per-minute rate limit"
USAGE_MESSAGE = "This request would exceed your account's rate limit. Please try again later."


def rate_limit(headers=None, message=RATE_MESSAGE, times=-1):
    return {"times": times, "error": {"status": 429, "type": "rate_limit_error", "message": message,
                                      "headers": headers or {}}}


def overloaded(times=-1):
    return {"times": times, "error": {"status": 529, "type": "overloaded_error", "message": "Overloaded",
                                      "headers": {}}}


def rfc3339(epoch):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch))


def unified(claim, reset):
    return {"anthropic-ratelimit-unified-status": "rejected", "anthropic-ratelimit-unified-reset": str(reset),
            "anthropic-ratelimit-unified-representative-claim": claim,
            "anthropic-ratelimit-unified-5h-status": "rejected" if claim == "five_hour" else "allowed",
            "anthropic-ratelimit-unified-7d-status": "rejected" if claim == "seven_day" else "allowed"}


# name: (about, expected kind, function of the start epoch giving (answer turn, reset named or None),
#        env, turn after the answer or None)
CASES = {
    "rate_limit": ("429 rate_limit_error without headers, every request; 2 retries",
                   "rate limit", lambda now: (rate_limit(), None), {"CLAUDE_CODE_MAX_RETRIES": "2"}, None),
    "rate_limit_default_retries": ("429 rate_limit_error without headers, every request; the client's own "
                                   "retries", "rate limit", lambda now: (rate_limit(), None), {}, None),
    "rate_limit_no_retries": ("429 rate_limit_error, CLAUDE_CODE_MAX_RETRIES=0", "rate limit",
                              lambda now: (rate_limit(), None), {"CLAUDE_CODE_MAX_RETRIES": "0"}, None),
    "rate_limit_retry_after": ("429 with retry-after: 3, every request; 2 retries", "rate limit",
                               lambda now: (rate_limit({"retry-after": "3"}), None),
                               {"CLAUDE_CODE_MAX_RETRIES": "2"}, None),
    "rate_limit_reset_headers": ("429 with anthropic-ratelimit-requests-reset and -tokens-reset 40 s on; "
                                 "2 retries", "rate limit",
                                 lambda now: (rate_limit({"anthropic-ratelimit-requests-reset": rfc3339(now + 40),
                                                          "anthropic-ratelimit-tokens-reset": rfc3339(now + 40),
                                                          "anthropic-ratelimit-requests-remaining": "0",
                                                          "anthropic-ratelimit-tokens-remaining": "0"}), None),
                                 {"CLAUDE_CODE_MAX_RETRIES": "2"}, None),
    "rate_limit_clears": ("429 for 3 requests, then an answer: the client's retries get through", None,
                          lambda now: (rate_limit(times=3), None), {}, {"text": "Recovered."}),
    "rate_limit_api_key_unified": ("429 with the unified rejected headers, but an API key: 2 retries",
                                   "rate limit",
                                   lambda now: (rate_limit(unified("five_hour", now + 3600), USAGE_MESSAGE), None),
                                   {"CLAUDE_CODE_MAX_RETRIES": "2"}, None),
    "rate_limit_subscription": ("429 without unified headers, with a subscription's token; 2 retries",
                                "rate limit", lambda now: (rate_limit(), None),
                                dict(OAUTH, CLAUDE_CODE_MAX_RETRIES="2"), None),
    "usage_limit": ("429 with the unified rejected headers (five_hour, reset in an hour), a subscription's "
                    "token, TZ unset", "usage limit",
                    lambda now: (rate_limit(unified("five_hour", now + 3600), USAGE_MESSAGE), now + 3600),
                    dict(OAUTH), None),
    "usage_limit_paris": ("the same, TZ=Europe/Paris, reset in 2.5 hours", "usage limit",
                          lambda now: (rate_limit(unified("five_hour", now + 9000), USAGE_MESSAGE), now + 9000),
                          dict(OAUTH, TZ="Europe/Paris"), None),
    "usage_limit_weekly": ("the same, seven_day, reset in 5 days, TZ=America/New_York", "usage limit",
                           lambda now: (rate_limit(unified("seven_day", now + 5 * 86400), USAGE_MESSAGE),
                                        now + 5 * 86400),
                           dict(OAUTH, TZ="America/New_York"), None),
    "overloaded": ("529 overloaded_error, every request; 2 retries", "overloaded",
                   lambda now: (overloaded(), None), {"CLAUDE_CODE_MAX_RETRIES": "2"}, None),
    "overloaded_default_retries": ("529 overloaded_error, every request; the client's own retries",
                                   "overloaded", lambda now: (overloaded(), None), {}, None),
    "overloaded_clears": ("529 for 2 requests, then an answer", None, lambda now: (overloaded(times=2), None), {},
                          {"text": "Recovered."}),
    "usage_limit_watchdog": ("the usage limit once (reset in 40 s), then an answer, with CLAUDE_CODE_RETRY_WATCHDOG=1: "
                             "the client waits for the reset itself", None,
                             lambda now: (rate_limit(unified("five_hour", now + 40), USAGE_MESSAGE, times=1), None),
                             dict(OAUTH, CLAUDE_CODE_RETRY_WATCHDOG="1"), {"text": "Recovered."}),
    "rate_limit_watchdog": ("429 every request, CLAUDE_CODE_RETRY_WATCHDOG=1 and its MAX_WAIT_MS=30000, "
                            "CLAUDE_CODE_MAX_RETRIES=2", "rate limit", lambda now: (rate_limit(), None),
                            {"CLAUDE_CODE_RETRY_WATCHDOG": "1", "CLAUDE_CODE_RETRY_WATCHDOG_MAX_WAIT_MS": "30000",
                             "CLAUDE_CODE_MAX_RETRIES": "2"}, None),
    "prompt_too_long": ("400 invalid_request_error \"prompt is too long\": an ordinary failure", None,
                        lambda now: ({"times": -1, "error": {"status": 400, "type": "invalid_request_error",
                                                             "message": "prompt is too long: 250000 tokens > 200000 "
                                                                        "maximum", "headers": {}}}, None),
                        {"CLAUDE_CODE_MAX_RETRIES": "2"}, None),
    "server_error": ("500 api_error, every request; 2 retries: a server failure, no limit", None,
                     lambda now: ({"times": -1, "error": {"status": 500, "type": "api_error",
                                                          "message": "Internal server error", "headers": {}}}, None),
                     {"CLAUDE_CODE_MAX_RETRIES": "2"}, None),
    "api_timeout": ("every answer 6 s late, API_TIMEOUT_MS=2000, 2 retries: a timeout is no limit", None,
                    lambda now: ({"times": -1, "delay": 6, "text": "Too late."}, None),
                    {"API_TIMEOUT_MS": "2000", "CLAUDE_CODE_MAX_RETRIES": "2"}, None),
}


def run_case(work, version, name, rewrite_lock, rewriter, timeout):
    about, kind, make, env, then = CASES[name]
    h = Harness(os.path.join(work, name))
    h.write_settings(events=[], record=False)
    started = int(time.time())
    answer, reset = make(started)
    h.start_server({"turns": [answer] + ([then] if then else [])})
    t0 = time.time()
    try:
        r = h.claude("Say hello.", args=["--model", "claude-sonnet-4-5"], env=env, timeout=timeout)
        seconds = time.time() - t0
        time.sleep(float(answer.get("delay", 0)))  # a late answer is logged once it is sent
    finally:
        h.stop_server()
    with rewrite_lock:
        rewriter.add_harness(h)
    err = answer.get("error")
    sent = {"status": err["status"], "headers": err["headers"],
            "body": {"type": "error", "error": {"type": err["type"], "message": err["message"]}}} if err \
        else {"status": 200, "delay": answer.get("delay", 0), "text": answer.get("text", "")}
    if r.rc == 124:  # killed at the timeout: the call never ended, so it tells nothing
        about, kind, reset = about + f"; the client was still retrying after {timeout} s and was killed", None, None
    return {"client_version": version, "case": name, "about": about,
            "expect": {"limit": kind, "reset_epoch": reset},
            "answer": dict(sent, times=answer["times"]),
            "then": then, "env": env, "started_epoch": started, "exit_code": r.rc,
            "stdout": r.stdout.splitlines(), "stderr": r.stderr,
            "requests": [{"status": q.get("http_status", 200), "at": round(q["ts"] - t0, 2)}
                         for q in h.requests(kind="main")],
            "seconds": round(seconds, 2)}


def main():
    ap = argparse.ArgumentParser(description="Records the client's answers to rate limits, usage limits and "
                                             "overloads.")
    ap.add_argument("--client", help="the client version to drive (installed by install_client.sh); "
                                     "default $CLAUDE_BIN or the pinned one")
    ap.add_argument("--out", help="fixtures folder (default tests/fixtures/claude-code-<version>/limits)")
    ap.add_argument("--only", help="comma-separated cases (default all: " + ", ".join(CASES) + ")")
    ap.add_argument("--jobs", type=int, default=len(CASES), help="cases run at once")
    ap.add_argument("--timeout", type=int, default=600, help="seconds a call may take")
    a = ap.parse_args()
    names = a.only.split(",") if a.only else list(CASES)
    unknown = [n for n in names if n not in CASES]
    if unknown:
        sys.exit("record_limits: error: unknown case " + ", ".join(unknown))
    claude = choose_client(a.client)
    version = client_version(claude)
    out = a.out or os.path.join(SOURCE, "tests", "fixtures", f"claude-code-{version}", "limits")
    import tempfile
    work = tempfile.mkdtemp(prefix="record-limits-")
    rewriter, lock, results, errors = Rewriter(work), threading.Lock(), {}, []
    gate = threading.Semaphore(max(1, a.jobs))

    def one(name):
        with gate:
            try:
                results[name] = run_case(work, version, name, lock, rewriter, a.timeout)
                sys.stderr.write(f"record_limits: {name}: exit {results[name]['exit_code']}, "
                                 f"{len(results[name]['requests'])} requests, {results[name]['seconds']} s\n")
            except Exception as e:  # noqa: BLE001 (reported, the others go on)
                errors.append(f"{name}: {e}")

    threads = [threading.Thread(target=one, args=(n,)) for n in names]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for name in names:
        if name in results:
            text = rewriter(json.dumps(results[name], indent=1, ensure_ascii=False)) + "\n"
            write(os.path.join(out, name + ".json"), text)
    for e in errors:
        sys.stderr.write("record_limits: error: " + e + "\n")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
