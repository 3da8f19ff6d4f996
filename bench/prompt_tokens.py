"""Prompt tokens a one-slot server evaluates for a metric set, counted without a judge.

A llama.cpp-based server keeps the computed state of the previous prompt and evaluates only what
follows the longest token prefix the next prompt shares with it (``bench/prompt_reuse.py`` reads
the same quantity from a live server's log). This bench counts it offline, so a prompt layout can
be compared before any judge run:

1. the metric set is evaluated on labelled rows at ``concurrency 1`` against the loopback test
   server (``tests/judges/fake_server.py``) with the rule-based judge of
   ``tests/metrics/generation/rules.py``, answering as llama-cpp-python does (``json_schema``
   refused with an HTTP 500, so JSON calls fall back to ``json_object``); every request's
   messages are kept in the order sent;
2. each request is rendered with Qwen2.5's chat template and tokenized with the judge GGUF's own
   vocabulary (llama-cpp-python, ``vocab_only``, in the judge venv of
   ``bench/judges/fetch_qwen.sh``), and compared with the request before it:

.. math:: e_r = \\max(1, |t_r| - \\operatorname{lcp}(t_{r-1}, t_r))

(a prompt wholly inside the previous one still has its last token evaluated again, for its logits,
as llama-cpp-python does).

Printed: requests, prompt tokens :math:`\\sum_r |t_r|`, evaluated :math:`\\sum_r e_r` and the share
reused. The replies are the rule judge's, not the real judge's, so claims and their verdict
prompts differ a little from a live run's; the layout's effect is what this measures.

Usage::

    python bench/prompt_tokens.py [--data ...jsonl] [--limit 24] \\
        [--metrics faithfulness,answer_relevancy,context_relevancy] [--root CHECKOUT] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
JUDGE_HOME = Path(os.environ.get("RAGMETER_JUDGE_HOME", Path.home() / ".cache" / "ragmeter-judge"))
CANONICAL = "faithfulness,answer_relevancy,context_relevancy"

#: Run in the judge venv: reads ``{"model": path, "prompts": [text, ...]}`` on stdin, writes the
#: token ids of each text (special tokens parsed, no BOS added) as JSON on stdout.
TOKENIZE = """
import json, sys
from llama_cpp import Llama
job = json.load(sys.stdin)
llm = Llama(model_path=job["model"], vocab_only=True, verbose=False)
json.dump([llm.tokenize(t.encode(), add_bos=False, special=True) for t in job["prompts"]], sys.stdout)
"""


def render(messages: Sequence[dict[str, Any]]) -> str:
    """The prompt Qwen2.5's chat template makes of ``messages`` (with the assistant turn opened)."""
    return "".join(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in messages) + "<|im_start|>assistant\n"


def evaluated(tokens: Sequence[Sequence[int]]) -> dict[str, Any]:
    """``{"requests", "prompt_tokens", "evaluated_tokens", "reused_share"}`` of prompts sent one
    after another to a server that reuses the longest prefix of the previous prompt."""
    total = done = 0
    prev: Sequence[int] = ()
    for t in tokens:
        lcp = 0
        for a, b in zip(prev, t, strict=False):
            if a != b:
                break
            lcp += 1
        total += len(t)
        done += max(len(t) - lcp, 1 if t else 0)
        prev = t
    return {"requests": len(tokens), "prompt_tokens": total, "evaluated_tokens": done,
            "reused_share": round(1 - done / total, 4) if total else None}


def captured(data: Path, limit: int, metrics: str, root: Path = ROOT) -> list[list[dict[str, Any]]]:
    """The messages of every request the metric set (comma-separated names) sends on the first
    ``limit`` rows, in order, with the ragmeter and the test server of the checkout at ``root``."""
    sys.path[:0] = [str(root), str(root / "src")]
    from tests.judges.fake_server import ChatCall, FakeLLMServer, Reply
    from tests.metrics.generation.rules import judge_rule

    import ragmeter
    from ragmeter.cli.judge_check import split_names
    from ragmeter.judges import from_spec
    from ragmeter.judges.check import load_labelled

    samples, _ = load_labelled(data, limit)
    sent: list[list[dict[str, Any]]] = []

    def rule(call: ChatCall) -> Any:
        if call.response_format == "json_schema":  # llama-cpp-python's answer to json_schema
            return Reply.server_error(500, "Input should be 'text' or 'json_object'")
        sent.append(call.messages)
        return judge_rule(call)

    with FakeLLMServer(rule) as server:
        judge = from_spec(f"openai:fake@{server.url}", cache=False, concurrency=1)
        ragmeter.evaluate(samples, split_names(metrics), judge=judge)
    return sent


def tokenizer(python: Path, model: Path) -> Callable[[list[str]], list[list[int]]]:
    """Token ids of texts, from the GGUF's vocabulary in the judge venv's Python."""
    def tokenize(texts: list[str]) -> list[list[int]]:
        out = subprocess.run([str(python), "-c", TOKENIZE], input=json.dumps({"model": str(model), "prompts": texts}),
                             capture_output=True, text=True, check=True)
        return json.loads(out.stdout)

    return tokenize


def main() -> None:
    """Capture, tokenize and print the counts."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=ROOT / "src/ragmeter/data/validation/judge_validation.jsonl")
    ap.add_argument("--limit", type=int, default=24)
    ap.add_argument("--metrics", default=CANONICAL)
    ap.add_argument("--python", type=Path, default=JUDGE_HOME / "venv/bin/python",
                    help="a Python with llama-cpp-python (default: the judge venv)")
    ap.add_argument("--model", type=Path, default=JUDGE_HOME / "qwen1.5b.gguf")
    ap.add_argument("--root", type=Path, default=ROOT,
                    help="the checkout whose ragmeter and test server run (default: this one), e.g. an older "
                         "commit's `git worktree`, to count its layout")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    sent = captured(args.data, args.limit, args.metrics, args.root)
    got = evaluated(tokenizer(args.python, args.model)([render(m) for m in sent]))
    got |= {"metrics": args.metrics, "rows": args.limit, "data": str(args.data)}
    if args.json:
        print(json.dumps(got))
        return
    print(f"{args.metrics} on {args.limit} rows of {args.data.name}: {got['requests']} requests, "
          f"{got['prompt_tokens']} prompt tokens, {got['evaluated_tokens']} evaluated, "
          f"{got['reused_share']:.1%} reused")


if __name__ == "__main__":
    main()
