"""The sentence vetoes (``veto=quote``, ``evidence``, ``quote_evidence``) scored again on recorded
judge replies: no judge call.

A faithfulness result of a verdict list (``mode=claims``, ``mode=inline`` or
``mode=sentences,verdicts=list``) records, per claim, the claim, the context sentence the judge
quoted for it (``evidence``, or ``quote`` in sentence mode), its hard verdict and P(yes). Each veto
strikes (scores 0) the claims that
:func:`ragmeter.metrics.generation._sentence_steps.veto_conflicts`, the function the metric calls,
finds in conflict; this script applies it to every recorded claim, with the row's contexts from the
labelled data, and prints the AUROC before and after, on the same replies (method log
``bench/results/faithfulness_by_kind.md``, sections 15-16). The "recorded" line is recomputed from
the details and must equal the saved AUROC.

Usage::

    python bench/quote_veto.py bench/results/judge_quality_qwen1.5b_faithfulness_claims_72rows.json
    python bench/quote_veto.py bench/results/judge_quality_qwen1.5b_faithfulness_claims_hard32.json \\
        --data src/ragmeter/data/validation/judge_validation_hard.jsonl
    python bench/quote_veto.py bench/results/faithfulness_by_kind_heldout_claims_summary_qwen1.5b.json
    python bench/quote_veto.py --split design --checkworthy \\
        bench/results/faithfulness_by_kind_design_llamacpp_nocache_N1.json \\
        bench/results/faithfulness_short_more_llamacpp_nocache_v7.json
"""

from __future__ import annotations

import argparse
import copy
import json
import math
from pathlib import Path
from typing import Any

from ragmeter import Sample
from ragmeter.judges.check import separation
from ragmeter.metrics.generation._checkworthy import checkworthy_claims
from ragmeter.metrics.generation._evidence import Span, context_sentences, stemmed_words
from ragmeter.metrics.generation._sentence_steps import offline_checks, veto_conflicts
from ragmeter.metrics.generation._sentences import sentence_spans
from ragmeter.stats.roc import auroc

VETOES = ("quote", "evidence", "quote_evidence")
#: the vetoes that rank the evidence sentence without the claim's numbers (method log, section 160;
#: printed with ``--words``)
WORDS = ("words", "evidence_words")
#: candidates that also strike a claim for a number (and a name run) the contexts do not hold at all
#: (method log, section 21; printed with ``--absent``)
ABSENT = ("evidence+numbers", "evidence+numbers_names")
#: candidates that also read whether the judge's quote is in the contexts
#: (:func:`quote_coverage`; method log, section 24; printed with
#: ``--quote-found``): ``evidence+unfound`` strikes a claim whose quote's coverage is below
#: :data:`UNFOUND_BELOW`, ``evidence*found`` multiplies its support by the coverage
QUOTE_FOUND = ("evidence+unfound", "evidence*found")
UNFOUND_BELOW = 0.75
#: the least support a claim counts with in the geometric mean (``--aggregate geo``): a struck claim's 0
#: and a P(yes) below it count as this
GEO_FLOOR = 0.01


def quote_coverage(quote: str, sentences: list[Span]) -> float | None:
    """How much of a quote the context holds: for each sentence of ``quote``, the largest share of its
    content words (as :func:`ragmeter.metrics.generation._evidence.lexical_scores` reads them:
    stemmed, function words left out) that one context sentence of ``sentences`` holds; the lowest of
    these over the quote's sentences. 1.0: every sentence of the quote is found in some context
    sentence; None when the quote has no content word (empty: callers pass "" for a verdict that
    quotes nothing)."""
    shares: list[float] = []
    context_words = [stemmed_words(s.text) for s in sentences]
    for a, b in sentence_spans(quote):
        target = stemmed_words(quote[a:b])
        if target:
            shares.append(max((len(target & ws) / len(target) for ws in context_words), default=0.0))
    return min(shares) if shares else None


def struck_by(veto: str, claim: str, quote: str, texts: list[str], spans: list[Any]) -> bool:
    """Whether ``veto`` (one of :data:`VETOES`, :data:`ABSENT` or :data:`QUOTE_FOUND`) strikes ``claim``
    (``evidence*found`` strikes as ``evidence`` does; its scaling is in :func:`support`)."""
    if veto in QUOTE_FOUND:
        if veto_conflicts("evidence", claim, quote, texts, spans):
            return True
        if veto == "evidence*found":
            return False
        coverage = quote_coverage(quote, spans)
        return coverage is not None and coverage < UNFOUND_BELOW
    if veto in ABSENT:
        if veto_conflicts("evidence", claim, quote, texts, spans):
            return True
        checks = offline_checks(claim, texts)
        return bool(checks["numbers_missing"] or (veto.endswith("names") and checks["names_missing"]))
    return bool(veto_conflicts(veto, claim, quote, texts, spans))

VALIDATION = Path(__file__).resolve().parents[1] / "src/ragmeter/data/validation"
DATA = VALIDATION / "judge_validation.jsonl"


def data_path(given: str | None, saved: str | None) -> Path:
    """The labelled rows: ``--data``, else the path the results file saved, else the bundled file of that name
    (a results file made from a snapshot of the repository names the snapshot's copy), else the 72 rows."""
    if given:
        return Path(given)
    if saved and Path(saved).exists():
        return Path(saved)
    return VALIDATION / Path(saved).name if saved else DATA


def labelled_rows(given: str | None, saved: str | None) -> dict[str, dict[str, Any]]:
    """``id -> row`` of the labelled rows :func:`data_path` finds."""
    lines = data_path(given, saved).read_text(encoding="utf-8").splitlines()
    return {r["id"]: r for r in (json.loads(x) for x in lines if x.strip())}


def is_claim(text: str) -> bool:
    """Whether the metric verifies a claim of this text (:func:`._checkworthy.checkworthy_claims`)."""
    return bool(checkworthy_claims([text])[0])


def claim_supports(details: dict[str, Any], veto: str, contexts: list[str],
                   checkworthy: bool = False) -> tuple[list[dict[str, Any]], list[float], int]:
    """The recorded claims the score counts (the check-worthy ones with ``checkworthy``), each one's
    support under ``veto`` (P(yes), else the hard verdict as 1/0; 0 when the veto strikes it), and how
    many the veto struck."""
    claims = details.get("claims") or []
    if checkworthy:
        claims = [c for c in claims if is_claim(c["claim"])]
    texts = [t for t in contexts if t.strip()]
    spans = context_sentences(texts)
    values: list[float] = []
    struck = 0
    for c in claims:
        value = c["p_yes"] if c.get("p_yes") is not None else float(bool(c["supported"]))
        quote = c.get("quote", c.get("evidence", ""))  # sentence mode's "evidence" is offline spans, not a quote
        quote = quote if isinstance(quote, str) and quote.strip().lower() not in ("none", "<none>") else ""
        if struck_by(veto, c["claim"], quote, texts, spans):
            value, struck = 0.0, struck + 1
        elif veto == "evidence*found" and (coverage := quote_coverage(quote, spans)) is not None:
            value *= coverage
        values.append(value)
    return claims, values, struck


def support(details: dict[str, Any], veto: str, contexts: list[str],
            checkworthy: bool = False, aggregate: str = "mean") -> tuple[float | None, int]:
    """The faithfulness score from a result's per-claim details under ``veto`` ("none": as recorded),
    and how many claims the veto struck; None where the details hold no claim (the recorded score
    stands). ``checkworthy``: the claims that are not check-worthy are left out of the mean (1.0 when
    none is left, as the ``no_checkworthy`` outcome scores). ``aggregate``: the claims' ``mean``
    support, the ``min`` (the least supported claim), ``geo`` (their geometric mean, each support
    floored at :data:`GEO_FLOOR`; method log, section 79), or ``sentence_min``: the mean over the answer
    sentences the claims were taken from (``start``, ``end``; a claim with none is a sentence of
    its own) of each sentence's least supported claim (method log, section 63)."""
    if not details.get("claims"):
        return None, 0
    claims, values, struck = claim_supports(details, veto, contexts, checkworthy)
    if not claims:
        return 1.0, 0
    if aggregate == "sentence_min":
        groups: dict[Any, float] = {}
        for i, (c, v) in enumerate(zip(claims, values, strict=True)):
            at = (c["start"], c["end"]) if "start" in c else i
            groups[at] = min(v, groups.get(at, v))
        values = list(groups.values())
    if aggregate == "geo":
        return math.exp(sum(math.log(max(v, GEO_FLOOR)) for v in values) / len(values)), struck
    return (min(values) if aggregate == "min" else sum(values) / len(values)), struck


def rescored(result: dict[str, Any], name: str, veto: str, contexts: list[str],
             checkworthy: bool = False, aggregate: str = "mean") -> tuple[dict[str, Any], int]:
    """``result`` with its score recomputed (hallucination_rate: 1 - support)."""
    out = copy.deepcopy(result)
    if result.get("error") is not None or result.get("score") is None:
        return out, 0
    s, struck = support(result.get("details") or {}, veto, contexts, checkworthy, aggregate)
    if s is not None:
        out["score"] = 1 - s if name.startswith("hallucination_rate") else s
    return out, struck


def contexts_of(row: dict[str, Any]) -> list[str]:
    """A labelled row's context texts, as the metric reads them."""
    return Sample.model_validate({k: row[k] for k in ("id", "query", "answer", "contexts") if k in row}).context_texts


def variants(checkworthy: bool, absent: bool = False, quote_found: bool = False,
             words: bool = False) -> list[tuple[str, str, bool]]:
    """``(label, veto, checkworthy)`` of each line: as recorded, each veto (and, with ``words``, each of
    :data:`WORDS`; with ``absent``, each of :data:`ABSENT`; with ``quote_found``, each of :data:`QUOTE_FOUND`), then
    (``checkworthy``) each again with the non-check-worthy claims left out."""
    extra = (*(WORDS if words else ()), *(ABSENT if absent else ()), *(QUOTE_FOUND if quote_found else ()))
    out = [("recorded", "none", False), *((v, v, False) for v in (*VETOES, *extra))]
    return out + [(f"{label}+K" if v != "none" else "K", v, True) for label, v, _ in out] if checkworthy else out


def judge_quality_file(saved: dict[str, Any], data: str | None, checkworthy: bool = False,
                       aggregate: str = "mean", absent: bool = False, quote_found: bool = False,
                       words: bool = False) -> None:
    """A ``bench/judge_quality.py --out`` file: the bench's own table, before and after."""
    rows = list(labelled_rows(data, saved.get("data")).values())
    labels = [r["labels"] for r in rows][: len(saved["records"])]
    names = [n for n in saved["records"][0]["metrics"] if n.split("(")[0] in ("faithfulness", "hallucination_rate")]
    for label, veto, cw in variants(checkworthy, absent, quote_found, words):
        records, struck = [], {n: 0 for n in names}
        for rec, row in zip(saved["records"], rows, strict=False):
            assert rec["id"] == row["id"], (rec["id"], row["id"])
            new = copy.deepcopy(rec)
            for n in names:
                new["metrics"][n], k = rescored(rec["metrics"][n], n, veto, contexts_of(row), cw, aggregate)
                struck[n] += k
            records.append(new)
        for r in separation(records, labels):
            if r["metric"] in names:
                print(f"{label:<26}{r['metric']:<44}{r['n']:>4}{r['errors']:>4}"
                      f"{r['auroc']:>8.3f}{r['mean_pos']:>8.3f}{r['mean_neg']:>8.3f}"
                      f"  claims struck: {struck[r['metric']]}")
    for row in saved["rows"]:
        if row["metric"] in names:
            print(f"{'saved':<26}{row['metric']:<44}{row['n']:>4}{row['errors']:>4}{row['auroc']:>8.3f}")


def by_kind_file(saved: dict[str, Any] | list[dict[str, Any]], data: str | None, checkworthy: bool = False,
                 aggregate: str = "mean", absent: bool = False, quote_found: bool = False,
                 split: str | None = None, words: bool = False) -> None:
    """``bench/faithfulness_by_kind.py --out`` files: AUROC per metric and kind, before and after, the
    records of several files pooled (each with its own labelled rows unless ``data`` is given), only
    rows of ``split`` when given."""
    files = saved if isinstance(saved, list) else [saved]
    rows: dict[str, Any] = {}
    pooled: dict[str, list[dict[str, Any]]] = {}
    for f in files:
        rows |= labelled_rows(data, f.get("data"))
        for name, recs in f["records"].items():
            pooled.setdefault(name, []).extend(r for r in recs if split is None or rows[r["id"]].get("split") == split)
    for name, recs in pooled.items():
        for kind in sorted({r["kind"] for r in recs}):
            mine = [r for r in recs if r["kind"] == kind and r.get("error") is None and r.get("score") is not None]
            for label, veto, cw in variants(checkworthy, absent, quote_found, words):
                struck, pos, neg = 0, [], []
                for r in mine:
                    new, k = rescored(r, name, veto, contexts_of(rows[r["id"]]), cw, aggregate)
                    struck += k
                    (pos if r["faithful"] else neg).append(new["score"])
                print(f"{label:<26}{name:<40}{kind:<10}{len(mine):>4}"
                      f"{auroc(pos, neg):>8.3f}  claims struck: {struck}")
    if len(files) == 1 and split is None:
        for row in files[0]["rows"]:
            print(f"{'saved':<26}{row['metric']:<40}{row['kind']:<10}{row['n']:>4}{row['auroc']:>8.3f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results", nargs="+", help="a results file of bench/judge_quality.py, or one or more of "
                    "bench/faithfulness_by_kind.py (their records pooled per kind)")
    ap.add_argument("--split", help="faithfulness_by_kind files: only the rows of this split (design, heldout)")
    ap.add_argument("--data", help="the labelled rows (default: the file's own, else the 72 rows)")
    ap.add_argument("--checkworthy", action="store_true",
                    help="also each line with the claims that are not check-worthy left out (lines marked +K)")
    ap.add_argument("--aggregate", choices=("mean", "min", "geo", "sentence_min"), default="mean",
                    help="a row's score from its claims' supports: their mean (the metric's), the lowest, their "
                         "geometric mean (each at least 0.01), or "
                         "the mean over answer sentences of each one's lowest; "
                         "with min, the 'recorded' line is the recorded supports' minimum, not the saved score")
    ap.add_argument("--absent", action="store_true",
                    help="also the candidates that strike a claim for a number (and name) absent from the contexts")
    ap.add_argument("--words", action="store_true",
                    help="also the vetoes that rank the evidence sentence without the claim's numbers")
    ap.add_argument("--quote-found", action="store_true",
                    help="also the candidates that read whether the judge's quote is in the contexts")
    args = ap.parse_args()
    saved = [json.loads(Path(f).read_text(encoding="utf-8")) for f in args.results]
    if all(isinstance(s.get("records"), dict) for s in saved):
        by_kind_file(saved, args.data, args.checkworthy, args.aggregate, args.absent, args.quote_found, args.split,
                     args.words)
    elif len(saved) == 1 and args.split is None:
        judge_quality_file(saved[0], args.data, args.checkworthy, args.aggregate, args.absent, args.quote_found,
                           args.words)
    else:
        ap.error("pooling and --split apply to bench/faithfulness_by_kind.py files only")


if __name__ == "__main__":
    main()
