"""How much of each judge prompt a one-slot server can reuse from the one before, by the order the
requests are sent in: record a run's requests, count the reusable tokens of each order, replay.

A llama.cpp server keeps the computed state of its slot's last prompt and evaluates only what
follows the longest prefix the next prompt shares with it. The order of a run's requests decides
how much that is.

- ``record PORT UPSTREAM OUT``: a proxy on ``127.0.0.1:PORT`` that forwards everything to
  ``UPSTREAM`` and appends each ``/v1/chat/completions`` body to ``OUT`` (JSON lines). Point the
  run's judge at the proxy.
- ``tokens BODIES --url U``: each prompt as the server renders (``POST /apply-template``) and
  tokenizes it (``POST /tokenize``), then, per order, the tokens each prompt shares with the one
  before (:func:`reused`): as recorded, strict alternation, and blocks of 2, 4, 8 and all samples
  (:func:`blocks`).
- ``replay BODIES --url U --order sent|blocks [--block K]``: the requests one at a time; seconds,
  prompt tokens, the share the server reused (its ``usage``), tokens written. Restart the server
  before each replay: its RAM prompt cache serves a repeated prompt whole.

The two kinds of request of ``faithfulness`` (claims, then verdicts) are told apart by their system
message. Method log ``bench/results/faithfulness_by_kind.md``, section 69.

Usage::

    python bench/request_order.py record 8082 http://127.0.0.1:8081 bodies.jsonl &
    python bench/judge_quality.py --judge openai:qwen@http://127.0.0.1:8082/v1 --metrics faithfulness \\
        --data src/ragmeter/data/validation/judge_validation_hard.jsonl
    python bench/request_order.py tokens bodies.jsonl --url http://127.0.0.1:8081
    python bench/request_order.py replay bodies.jsonl --url http://127.0.0.1:8081 --order blocks --block 8
"""

from __future__ import annotations

import argparse
import itertools
import json
import time
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from typing import Any


def post(url: str, path: str, body: dict[str, Any]) -> Any:
    """``POST url + path`` with a JSON body; the JSON reply."""
    req = urllib.request.Request(url.rstrip("/") + path, json.dumps(body).encode(),
                                 {"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=600) as r:
        return json.load(r)


def first_kind(body: dict[str, Any]) -> str:
    """A request's kind: its first message's text (the system message of a prompt)."""
    return str(body["messages"][0]["content"])


def blocks(bodies: Sequence[dict[str, Any]], size: int) -> list[int]:
    """Indices of ``bodies`` reordered: per block of ``size`` samples, the requests of the first kind
    (the kind of ``bodies[0]``), then the others, each in recorded order. A sample's k-th request of
    a kind is taken to belong to the k-th sample (as a two-call metric records them)."""
    kind = first_kind(bodies[0])
    first = [i for i, b in enumerate(bodies) if first_kind(b) == kind]
    rest = [i for i, b in enumerate(bodies) if first_kind(b) != kind]
    out: list[int] = []
    for start in range(0, max(len(first), len(rest)), size):
        out += first[start:start + size] + rest[start:start + size]
    return out


def alternating(bodies: Sequence[dict[str, Any]]) -> list[int]:
    """Indices of ``bodies`` with each sample's requests back to back (blocks of one sample)."""
    return blocks(bodies, 1)


def reused(tokens: Sequence[Sequence[int]], order: Sequence[int]) -> int:
    """Prompt tokens that prompts sent in ``order`` share with the prompt before them (the longest
    common prefix)."""
    total = 0
    for before, now in itertools.pairwise(order):
        n = 0
        for a, b in zip(tokens[before], tokens[now], strict=False):
            if a != b:
                break
            n += 1
        total += n
    return total


def load(path: str) -> list[dict[str, Any]]:
    """The recorded ``/v1/chat/completions`` bodies."""
    records = [json.loads(x) for x in Path(path).read_text(encoding="utf-8").splitlines() if x.strip()]
    return [r["body"] for r in records if r["path"].endswith("/chat/completions")]


def record(port: int, upstream: str, out: str) -> None:
    """The recording proxy (runs until stopped)."""
    from aiohttp import ClientSession, web

    sink = open(out, "a", encoding="utf-8")  # noqa: SIM115 - open for the proxy's lifetime

    async def handle(request: web.Request) -> web.Response:
        body = await request.read()
        if request.method == "POST" and body:
            sink.write(json.dumps({"path": request.path, "body": json.loads(body)}) + "\n")
            sink.flush()
        async with ClientSession() as s, s.request(request.method, upstream.rstrip("/") + request.path_qs, data=body,
                                                   headers={"Content-Type": "application/json"}) as r:
            return web.Response(body=await r.read(), status=r.status, content_type="application/json")

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", handle)
    web.run_app(app, host="127.0.0.1", port=port, print=None)


def tokens_report(bodies: list[dict[str, Any]], url: str) -> None:
    """Reusable prompt tokens per order (no generation)."""
    tokens = [post(url, "/tokenize", {"content": post(url, "/apply-template", {"messages": b["messages"]})["prompt"]})
              ["tokens"] for b in bodies]
    total = sum(len(t) for t in tokens)
    orders = {"as recorded": list(range(len(bodies))), "alternating": alternating(bodies)}
    orders |= {f"blocks of {k}": blocks(bodies, k) for k in (2, 4, 8, len(bodies))}
    for name, order in orders.items():
        r = reused(tokens, order)
        print(f"{name:<16} prompt tokens {total}, shared with the prompt before {r} ({r / total:.1%})")


def replay(bodies: list[dict[str, Any]], url: str, order: list[int]) -> None:
    """The requests one at a time in ``order``: seconds, prompt tokens, reused, written."""
    t0 = time.perf_counter()
    sent = cached = written = 0
    for i in order:
        u = post(url, "/v1/chat/completions", bodies[i])["usage"]
        sent += u["prompt_tokens"]
        cached += (u.get("prompt_tokens_details") or {}).get("cached_tokens", 0)
        written += u["completion_tokens"]
    print(json.dumps({"calls": len(order), "seconds": round(time.perf_counter() - t0, 1), "prompt_tokens": sent,
                      "reused": cached, "written": written}))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    r = sub.add_parser("record")
    r.add_argument("port", type=int)
    r.add_argument("upstream")
    r.add_argument("out")
    t = sub.add_parser("tokens")
    t.add_argument("bodies")
    t.add_argument("--url", default="http://127.0.0.1:8081")
    p = sub.add_parser("replay")
    p.add_argument("bodies")
    p.add_argument("--url", default="http://127.0.0.1:8081")
    p.add_argument("--order", choices=("sent", "blocks"), default="sent")
    p.add_argument("--block", type=int, default=8)
    args = ap.parse_args()
    if args.command == "record":
        record(args.port, args.upstream, args.out)
        return
    bodies = load(args.bodies)
    if args.command == "tokens":
        tokens_report(bodies, args.url)
    else:
        replay(bodies, args.url, list(range(len(bodies))) if args.order == "sent" else blocks(bodies, args.block))


if __name__ == "__main__":
    main()
