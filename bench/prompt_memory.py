"""Does the judge server reuse a prompt it computed before the previous request? Three requests, read
from the server's own counts.

Sends, at temperature 0 with 5 tokens each (every prompt opens with a random run id, so no earlier
run left it in the server's memory): (A) a long prompt; (B) an unrelated prompt of similar
length; (C) A's conversation continued by an assistant turn and a new user turn. A server that keeps
only its slot's last prompt computes C's prompt from scratch (B replaced it); llama.cpp's server,
which also keeps earlier prompts in memory (``--cache-ram``), restores A's and computes only the new
turns. Prints each request's prompt tokens and the share the server reports as taken from its cache
(``usage.prompt_tokens_details.cached_tokens``; llama.cpp also reports ``timings.cache_n`` and
``timings.prompt_n``, printed when present).

    python bench/prompt_memory.py --url http://127.0.0.1:8081/v1 [--model qwen]
"""

from __future__ import annotations

import argparse
import json
import secrets
import urllib.request
from typing import Any

A = "Context: " + " ".join(f"Sentence {i} says the river at mile {i} is {i * 3} metres wide." for i in range(60))
B = "Other: " + " ".join(f"Line {i} counts {i * 7} apples in crate {i}." for i in range(60))


def ask(url: str, model: str, messages: list[dict[str, str]]) -> dict[str, Any]:
    """One chat completion; the reply's ``usage`` and ``timings``."""
    body = {"model": model, "messages": messages, "max_tokens": 5, "temperature": 0}
    req = urllib.request.Request(url.rstrip("/") + "/chat/completions", json.dumps(body).encode(),
                                 {"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=600) as r:
        reply = json.loads(r.read())
    return {"usage": reply.get("usage", {}), "timings": reply.get("timings", {})}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--url", required=True, help="the server's OpenAI-compatible base URL (…/v1)")
    ap.add_argument("--model", default="qwen")
    args = ap.parse_args()
    run = f"Run {secrets.token_hex(4)}. "  # prompts no earlier run left in the server's memory
    first = [{"role": "user", "content": run + A + "\nSummarise."}]
    requests = {"A": first, "B (unrelated)": [{"role": "user", "content": run[::-1] + B + "\nSummarise."}],
                "C (A continued)": [*first, {"role": "assistant", "content": "X"},
                                    {"role": "user", "content": "Now list the numbers."}]}
    for label, messages in requests.items():
        got = ask(args.url, args.model, messages)
        prompt = got["usage"].get("prompt_tokens", 0)
        cached = (got["usage"].get("prompt_tokens_details") or {}).get("cached_tokens", 0)
        t = got["timings"]
        extra = f"  (server: prompt_n {t['prompt_n']}, cache_n {t['cache_n']})" if "prompt_n" in t else ""
        print(f"{label:<16} prompt tokens {prompt:>6}  from cache {cached:>6}{extra}")


if __name__ == "__main__":
    main()
