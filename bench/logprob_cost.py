"""What asking for log-probabilities costs on an OpenAI-compatible judge server.

    python bench/logprob_cost.py --judge-url http://127.0.0.1:8080/v1 --model qwen [--repeat 3]

The same chat request (a claim list as JSON under a JSON-schema response format, temperature 0,
a fixed seed, so every run writes the same reply) is sent ``--repeat`` times each without
``logprobs``, with ``top_logprobs=1`` and with ``top_logprobs=5`` (what ragmeter's probability
scoring asks), one request at a time, alternating. Printed per setting: median seconds per
request, completion tokens, milliseconds per completion token and the ratio to no log-probabilities.

Why it matters: ragmeter's ``scoring=auto`` asks for ``top_logprobs`` on every verdict or rating
call. A hosted API or vLLM returns them at little cost; llama-cpp-python's server (0.3.x) computes
a full-vocabulary log-softmax for every generated token in Python, which the server's own
``llama_perf_context_print`` timings do not include.
"""

from __future__ import annotations

import argparse
import statistics
import time

PROMPT = ("List the factual claims in this answer: 'Water boils at 100 C at sea level, freezes at 0 C, "
          "and its density peaks near 4 C.' Reply as JSON with the keys claims (a list of strings) "
          "and reason (a string).")
SCHEMA = {"type": "object", "properties": {"claims": {"type": "array", "items": {"type": "string"}},
                                           "reason": {"type": "string"}},
          "required": ["claims", "reason"]}
SETTINGS = {"no logprobs": {}, "top_logprobs=1": {"logprobs": True, "top_logprobs": 1},
            "top_logprobs=5": {"logprobs": True, "top_logprobs": 5}}


def main() -> None:
    """Time the three settings and print the table."""
    import openai

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--judge-url", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--api-key", default="none")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    client = openai.OpenAI(base_url=args.judge_url, api_key=args.api_key, timeout=600)
    times: dict[str, list[float]] = {k: [] for k in SETTINGS}
    tokens: dict[str, int] = {}
    for _ in range(args.repeat):
        for name, extra in SETTINGS.items():
            t0 = time.perf_counter()
            r = client.chat.completions.create(
                model=args.model, messages=[{"role": "user", "content": PROMPT}], temperature=0, seed=1,
                max_tokens=160, response_format={"type": "json_object", "schema": SCHEMA},  # type: ignore[typeddict-unknown-key]
                **extra)
            times[name].append(time.perf_counter() - t0)
            tokens[name] = r.usage.completion_tokens if r.usage else 0
    base = statistics.median(times["no logprobs"])
    print("| request | median s | completion tokens | ms per token | vs no logprobs |\n|---|---:|---:|---:|---:|")
    for name in SETTINGS:
        med = statistics.median(times[name])
        print(f"| {name} | {med:.2f} | {tokens[name]} | {1000 * med / max(tokens[name], 1):.0f} | {med / base:.2f}x |")


if __name__ == "__main__":
    main()
