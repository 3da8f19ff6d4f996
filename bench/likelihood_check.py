"""Names and numbers the context argues against, read from the judge's own token probabilities
(method log ``bench/results/faithfulness_by_kind.md``, section 102; llama.cpp's server only).

The judge is made to write the answer, token for token (a grammar of the answer's own token ids),
twice: after the context and the question, and after the question alone. For each token the server
returns its log-probability before sampling; the difference between the two, the pointwise mutual
information of the token and the context, says how much the context raised or lowered it. A swapped
number or name is one the context makes unlikely (the judge, which copies well, expects the
context's own value there); a faithful copy is one it makes likely. The check reads only the
**fact words** of the answer's check-worthy sentences: each number's digits and each token of a
name run (``fact_consistency``'s rules: a sentence's first word is never read as a name). A fact
word's PMI is the sum over the tokens that overlap it; it is **struck** when that sum is at most
``-TAU`` (fixed before any labelled row was scored: 4 nats, the context making the word about 55
times less likely).

A row's record keeps the tokens and both log-probabilities, so other readings can be scored
offline; ``struck`` lists the struck words and ``min_pmi`` the lowest fact-word PMI (``null`` for
an answer with no fact word).

``--combine`` pairs the strikes of results files with the recorded scores of another metric run
(``--with``: results files of ``bench/faithfulness_by_kind.py`` or ``bench/judge_quality.py``, rows
matched by id) and prints the AUROC of that score, of ``LS`` (minus the number of struck words) and
of ``J*LS`` (the score halved for each struck word) on the rows both hold. No judge call.

Usage::

    python bench/likelihood_check.py --url http://127.0.0.1:8081 --split design --kinds short \\
        [--data FILE] --out bench/results/likelihood_check_design_short_LS.json
    python bench/likelihood_check.py --combine bench/results/likelihood_check_design_short_LS.json \\
        --with bench/results/faithfulness_by_kind_design_llamacpp_nocache_CN_short.json
"""

from __future__ import annotations

import argparse
import json
import time
import urllib.request
from pathlib import Path
from typing import Any

from cloze_check import records_of
from faithfulness_by_kind import selected

from ragmeter.judges.check import bundled_path, load_labelled
from ragmeter.metrics.generation._checkworthy import split_claims
from ragmeter.metrics.lexical.fact_consistency import _NUMBER, name_tokens
from ragmeter.stats.roc import auroc

#: a fact word whose PMI with the context is at most -TAU is struck
TAU = 4.0
SYSTEM = "You are a helpful assistant."


def _post(url: str, path: str, body: dict[str, Any]) -> Any:
    req = urllib.request.Request(url + path, json.dumps(body).encode(), {"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=600) as resp:
        return json.load(resp)


def forced(url: str, user: str, answer: str, ids: list[int]) -> tuple[list[list[int]], list[float]]:
    """The answer (``ids``: its tokens, from the server's ``/tokenize``) written by the judge after
    ``user``: each token's bytes and log-probability."""
    body = {"model": "judge", "temperature": 0, "max_tokens": len(ids) + 2, "logprobs": True, "top_logprobs": 1,
            "grammar": "root ::= " + " ".join(f"<[{i}]>" for i in ids), "cache_prompt": False,
            "messages": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]}
    choice = _post(url, "/v1/chat/completions", body)["choices"][0]
    if choice["message"]["content"] != answer:
        raise ValueError("the forced reply differs from the answer")
    toks = [t for t in choice["logprobs"]["content"] if t["bytes"]]
    return [t["bytes"] for t in toks], [float(t["logprob"]) for t in toks]


def fact_words(answer: str) -> list[tuple[int, int, str]]:
    """``(start, end, text)`` character spans of the fact words of ``answer``'s check-worthy
    sentences: the digits of each number and each name token (the module docstring)."""
    out = []
    for s in split_claims(answer):
        if not s.checkworthy:
            continue
        for m in _NUMBER.finditer(s.text):
            a, b = m.span("num")
            out.append((s.start + a, s.start + b, m.group("num")))
        for _, m in name_tokens(s.text):
            out.append((s.start + m.start(), s.start + m.end(), m.group(0)))
    return sorted(set(out))


def word_pmis(answer: str, token_bytes: list[list[int]], lp_ctx: list[float],
              lp_no: list[float]) -> list[tuple[str, float]]:
    """Each fact word with the summed PMI of the tokens that overlap it (byte offsets)."""
    ends, pos = [], 0
    for tb in token_bytes:
        ends.append((pos, pos + len(tb)))
        pos += len(tb)
    out = []
    for a, b, text in fact_words(answer):
        ba, bb = len(answer[:a].encode()), len(answer[:b].encode())
        pmi = sum(c - n for (x, y), c, n in zip(ends, lp_ctx, lp_no, strict=True) if x < bb and y > ba)
        out.append((text, pmi))
    return out


def score_record(rec: dict[str, Any], answer: str, tau: float = TAU) -> None:
    """Adds ``struck`` and ``min_pmi`` to a record holding the tokens and both log-probabilities."""
    pmis = word_pmis(answer, rec["token_bytes"], rec["lp_ctx"], rec["lp_no"])
    rec["struck"] = [w for w, p in pmis if p <= -tau]
    rec["min_pmi"] = min((p for _, p in pmis), default=None)


def combine(checks: list[dict[str, Any]], scores: dict[str, float | None]) -> dict[str, Any]:
    """AUROC of the recorded score (``J``), of ``LS`` and of ``J*LS`` on the rows of ``checks``
    (results of this script) that have no error and a recorded score."""
    rows = [r for saved in checks for r in saved["records"] if "error" not in r and scores.get(r["id"]) is not None]
    struck = {"faithful": sum(bool(r["struck"]) for r in rows if r["faithful"]),
              "unfaithful": sum(bool(r["struck"]) for r in rows if not r["faithful"])}
    out: dict[str, Any] = {"rows": len(rows), "struck": struck}
    reads = {"J": lambda r: scores[r["id"]], "LS": lambda r: -len(r["struck"]),
             "J*LS": lambda r: scores[r["id"]] * 0.5 ** len(r["struck"])}
    for name, read in reads.items():
        out[name] = auroc([read(r) for r in rows if r["faithful"]], [read(r) for r in rows if not r["faithful"]])
    return out


def run(args: argparse.Namespace) -> dict[str, Any]:
    samples, labels = load_labelled(args.data)
    keep = selected(samples, args.kinds, args.split)
    records: list[dict[str, Any]] = []
    t0 = time.perf_counter()
    for i in keep:
        s = samples[i]
        answer = s.answer or ""
        context = "\n\n".join(s.context_texts)
        rec: dict[str, Any] = {"id": s.id, "kind": s.metadata.get("kind"), "faithful": bool(labels[i]["faithful"])}
        try:
            ids = _post(args.url, "/tokenize", {"content": answer})["tokens"]
            tb, lp_ctx = forced(args.url, f"<context>\n{context}\n</context>\n\n{s.query}", answer, ids)
            tb2, lp_no = forced(args.url, s.query, answer, ids)
            if tb != tb2:
                raise ValueError("the two forced replies have different tokens")
            rec.update(token_bytes=tb, lp_ctx=lp_ctx, lp_no=lp_no)
            score_record(rec, answer, args.tau)
        except (OSError, ValueError, KeyError) as exc:  # an error on this row, reported
            rec["error"] = f"{type(exc).__name__}: {exc}"
        records.append(rec)
        print(f"{rec['id']:<10}{'F' if rec['faithful'] else 'H'}  {rec.get('struck')}  {rec.get('min_pmi')}",
              flush=True)
    seconds = time.perf_counter() - t0
    print(f"seconds: {seconds:.0f}  rows: {len(records)}  errors: {sum('error' in r for r in records)}")
    return {"url": args.url, "data": str(args.data), "split": args.split, "tau": args.tau, "system": SYSTEM,
            "seconds": seconds, "records": records}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--url", help="llama.cpp server base URL")
    ap.add_argument("--combine", nargs="+", default=None, help="results files of this script")
    ap.add_argument("--with", dest="with_", nargs="+", default=None, help="results files of the paired metric")
    ap.add_argument("--data", default=str(bundled_path("faithfulness_by_kind.jsonl")))
    ap.add_argument("--split", default="design", choices=("design", "heldout", "all"))
    ap.add_argument("--kinds", default="short,summary,dialogue")
    ap.add_argument("--tau", type=float, default=TAU)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    if args.combine:
        scores: dict[str, float | None] = {}
        for f in args.with_ or ap.error("--combine needs --with"):
            scores.update({r["id"]: r["score"] for r in records_of(json.loads(Path(f).read_text(encoding="utf-8")),
                                                                   None)})
        res = combine([json.loads(Path(f).read_text(encoding="utf-8")) for f in args.combine], scores)
        print(f"rows {res['rows']}  struck: faithful {res['struck']['faithful']}, unfaithful "
              f"{res['struck']['unfaithful']}  AUROC: J {res['J']:.4f}  LS {res['LS']:.4f}  J*LS {res['J*LS']:.4f}")
        return
    if not args.url:
        ap.error("--url is required to run the check")
    out = run(args)
    if args.out:
        Path(args.out).write_text(json.dumps(out, ensure_ascii=False, separators=(",", ":")), encoding="utf-8")


if __name__ == "__main__":
    main()
