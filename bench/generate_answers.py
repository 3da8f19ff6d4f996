"""Answers a model writes as a RAG generator, for hand labelling (``bench/data/``).

For each source row (a labelled row of the bundled sets: its question or conversation and its
contexts), the model answers at ``--temperature`` with seed ``--seed-base`` + the row's number (from
1, in the order given; ``--seeds`` more than 1 answers each row again with the next seeds, each
``--seed-step`` apart), at most ``--max-tokens`` tokens, through an OpenAI-compatible
``/chat/completions`` endpoint. The prompt is fixed per kind (:data:`PROMPTS`). Rows whose
``(query, contexts)`` repeat an earlier row's are skipped, so a pair of right and wrong answers gives
one question. The output rows are those of the source with the model's answer, ``labels: {}``,
``notes: ""``, ``split`` and ``context_from`` (the source row's id): labels are written by hand
before any check reads the rows.

Usage::

    V=src/ragmeter/data/validation
    python bench/generate_answers.py --url http://127.0.0.1:8081/v1 --kind short --first 40 \\
        --data $V/judge_validation_hard.jsonl $V/judge_validation.jsonl --seed-base 3000 \\
        --split design --id-prefix gds --out bench/data/faithfulness_generated_design_short.jsonl
    python bench/generate_answers.py --url http://127.0.0.1:8081/v1 --kind dialogue --only design \\
        --source-kind dialogue --data $V/faithfulness_by_kind.jsonl $V/faithfulness_dialogue_more.jsonl \\
        --seed-base 4000 --seeds 2 --split design --id-prefix gdd \\
        --out bench/data/faithfulness_generated_design_dialogue.jsonl
    python bench/generate_answers.py --url http://127.0.0.1:8081/v1 --kind summary --only design \\
        --source-kind summary --data $V/faithfulness_by_kind.jsonl --seed-base 6000 --seeds 2 \\
        --max-tokens 220 --split design --id-prefix gdm \\
        --out bench/data/faithfulness_generated_design_summary.jsonl
"""

from __future__ import annotations

import argparse
import json
import urllib.request
from pathlib import Path
from typing import Any

#: the system message and the user turn's layout of each kind; ``{contexts}`` is the contexts
#: joined by blank lines, ``{query}`` the row's question, conversation or instruction
PROMPTS: dict[str, tuple[str, str]] = {
    "short": ("You are a helpful assistant. Answer the user's question using the context. "
              "Answer in two or three sentences.", "Context:\n{contexts}\n\nQuestion: {query}"),
    "dialogue": ("You are a friendly conversational assistant. Reply to the user naturally, using the "
                 "knowledge given. Reply in two or three sentences.",
                 "Knowledge:\n{contexts}\n\nConversation:\n{query}"),
    "summary": ("You are a helpful assistant. Summarise the article for a reader in three or four "
                "sentences.", "Article:\n{contexts}\n\n{query}"),
}


def texts(row: dict[str, Any]) -> list[str]:
    """The row's context texts (a context is a string or an object with ``text``)."""
    return [c if isinstance(c, str) else c["text"] for c in row["contexts"]]


def messages(kind: str, row: dict[str, Any]) -> list[dict[str, str]]:
    """The chat messages that ask for ``row``'s answer."""
    system, user = PROMPTS[kind]
    return [{"role": "system", "content": system},
            {"role": "user", "content": user.format(contexts="\n\n".join(texts(row)), query=row["query"])}]


def questions(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``rows`` with each ``(query, contexts)`` kept once, in order."""
    seen: set[str] = set()
    out = []
    for r in rows:
        key = json.dumps([r["query"], texts(r)])
        if key not in seen:
            seen.add(key)
            out.append(r)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--url", required=True, help="the endpoint's base URL, e.g. http://127.0.0.1:8081/v1")
    ap.add_argument("--model", default="qwen")
    ap.add_argument("--kind", required=True, choices=sorted(PROMPTS))
    ap.add_argument("--data", required=True, nargs="+", help="the source rows (JSONL files, read in order)")
    ap.add_argument("--only", help="keep only source rows with this split (design, heldout)")
    ap.add_argument("--source-kind", help="keep only source rows with this kind (short, dialogue, summary)")
    ap.add_argument("--first", type=int, help="keep only the first N questions")
    ap.add_argument("--seed-base", type=int, required=True)
    ap.add_argument("--seeds", type=int, default=1, help="answers per question")
    ap.add_argument("--seed-step", type=int, default=1000)
    ap.add_argument("--temperature", type=float, default=0.8)
    ap.add_argument("--max-tokens", type=int, default=160)
    ap.add_argument("--split", required=True, help="the split written on every output row")
    ap.add_argument("--id-prefix", required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    rows = [json.loads(x) for name in args.data for x in Path(name).read_text(encoding="utf-8").splitlines()
            if x.strip()]
    rows = questions([r for r in rows if (args.only is None or r.get("split") == args.only)
                      and (args.source_kind is None or r.get("kind") == args.source_kind)])[: args.first]
    out: list[dict[str, Any]] = []
    with Path(args.out).open("w", encoding="utf-8") as f:
        for k in range(args.seeds):
            for i, row in enumerate(rows, start=1):
                seed = args.seed_base + k * args.seed_step + i
                body = {"model": args.model, "messages": messages(args.kind, row), "temperature": args.temperature,
                        "seed": seed, "max_tokens": args.max_tokens}
                req = urllib.request.Request(args.url.rstrip("/") + "/chat/completions", json.dumps(body).encode(),
                                             {"Content-Type": "application/json"})
                with urllib.request.urlopen(req, timeout=600) as reply:  # an HTTP error status raises
                    answer = json.load(reply)["choices"][0]["message"]["content"].strip()
                out.append({"id": f"{args.id_prefix}{i:02d}{'abcdefgh'[k]}", "kind": args.kind, "split": args.split,
                            "query": row["query"], "contexts": texts(row), "answer": answer, "labels": {},
                            "notes": "", "context_from": row["id"], "seed": seed})
                f.write(json.dumps(out[-1], ensure_ascii=False) + "\n")
                f.flush()
                print(out[-1]["id"], seed, answer[:100].replace("\n", " "), flush=True)


if __name__ == "__main__":
    main()
