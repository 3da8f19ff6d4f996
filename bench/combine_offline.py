"""The judge's faithfulness score and the offline ``fact_consistency`` combined per answer, on recorded
judge scores: no judge call.

For each row of a results file (``bench/judge_quality.py`` or ``bench/faithfulness_by_kind.py``;
several of the latter are pooled per kind), ``fact_consistency`` is computed on the labelled row
(answer against its contexts, as the metric scores it) and combined with the judge's faithfulness
score: ``J*F`` (their product), ``min(J,F)`` (the lower), ``J*Fnum`` (the judge's score times the share
of the answer's number checks that pass, 1 when it has none), ``J*Fnn`` (the same with the number and
name checks), ``J*Fname`` (the name checks alone), ``J*Fname+q`` (the name checks against the contexts
and the question), ``J*P`` (the share of the answer's content words the contexts hold,
``fact_consistency``'s ``P``) and ``J*Pkq`` (that share over the answer's check-worthy sentences, a
word of the question counting as found; 1 when they have no content word); ``V-name+q`` is the
default's score from the recorded replies with each check-worthy claim struck whose name run the
contexts and the question do not hold (needs ``--rescore``). An undefined ``fact_consistency`` leaves
the judge's score; a row without a judge score (error or undefined) is left out of every line. The
judge's score is the recorded one, or with ``--rescore`` the default's from the recorded replies
(``bench/quote_veto.py``'s line ``evidence+K``). Prints the AUROC of the judge alone (it must equal the
saved one, or that line), of ``fact_consistency`` alone and of each combination, per set and kind
(method log ``bench/results/faithfulness_by_kind.md``, sections 45, 73, 76, 77 and 107).

Usage::

    python bench/combine_offline.py bench/results/faithfulness_by_kind_design_llamacpp_nocache_N1.json
    python bench/combine_offline.py bench/results/judge_quality_qwen1.5b_llamacpp_faithfulness_hard32_nocache_v7.json \\
        --data src/ragmeter/data/validation/judge_validation_hard.jsonl
    python bench/combine_offline.py --rescore --split design \\
        bench/results/faithfulness_by_kind_design_llamacpp_nocache_N1.json \\
        bench/results/faithfulness_short_more_llamacpp_nocache_v7.json
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from quote_veto import claim_supports, contexts_of, labelled_rows, rescored

from ragmeter import Sample
from ragmeter.metrics.generation._checkworthy import split_claims
from ragmeter.metrics.generation._sentence_steps import EVIDENCE_VETOES
from ragmeter.metrics.lexical.fact_consistency import check_facts, score_sample
from ragmeter.stats.roc import auroc


def _product(j: float, f: float | None) -> float:
    """The judge's score times an offline value (the judge's alone where that is undefined)."""
    return j if f is None else j * f


#: each line's combination of the judge's score ``j`` and the offline value ``f`` it reads
COMBINATIONS: dict[str, Callable[[float, float | None], float]] = {
    "judge": lambda j, f: j,
    "J*F": _product,
    "min(J,F)": lambda j, f: j if f is None else min(j, f),
    "J*Fnum": _product,
    "J*Fnn": _product,
    "J*Fname": _product,
    "J*Fname+q": _product,
    "J*P": _product,
    "J*Pkq": _product,
    "J*Pkq^0.25": lambda j, f: j if f is None else j * f ** 0.25,
    "J*Pkq^0.5": lambda j, f: j if f is None else j * f ** 0.5,
    "V-name+q": lambda j, f: j if f is None else f,
}
#: the offline value each combination reads (:func:`offline_values`)
READS = {"judge": "F", "J*F": "F", "min(J,F)": "F", "J*Fnum": "Fnum", "J*Fnn": "Fnn", "J*Fname": "Fname",
         "J*Fname+q": "Fname+q", "J*P": "P", "J*Pkq": "Pkq", "J*Pkq^0.25": "Pkq",
         "J*Pkq^0.5": "Pkq", "V-name+q": "Vname+q"}


def offline(row: dict[str, Any]) -> float | None:
    """``fact_consistency`` of a labelled row (None: undefined)."""
    sample = Sample.model_validate({k: row[k] for k in ("id", "query", "answer", "contexts") if k in row})
    return score_sample(sample).score


def passed_share(checks: list[dict[str, Any]], kinds: tuple[str, ...]) -> float:
    """The share of ``checks`` (``fact_consistency``'s, on one answer) of these kinds that pass (1.0
    when there is none)."""
    mine = [c for c in checks if c["kind"] in kinds]
    return sum(bool(c["passed"]) for c in mine) / len(mine) if mine else 1.0


def checkworthy_share(answer: str, known: list[str]) -> float:
    """The share of the content words of ``answer``'s check-worthy sentences that occur in ``known``
    (``fact_consistency``'s ``P`` over those sentences); 1.0 when they have no content word."""
    text = " ".join(s.text for s in split_claims(answer) if s.checkworthy)
    facts = check_facts(text, known)
    return float(facts["P"]) if facts["content_tokens"] else 1.0


def offline_values(row: dict[str, Any]) -> dict[str, float | None]:
    """``F`` (``fact_consistency``), ``Fnum`` (its number checks' pass share), ``Fnn`` (number and
    name checks'), ``Fname`` (name checks'), ``Fname+q`` (name checks' against the contexts and the
    question), ``Fnnq`` (number and name checks' against the contexts and the question), ``P`` (its
    content-word share; None when the answer has no content word) and ``Pkq``
    (:func:`checkworthy_share` against the contexts and the question) of a labelled row."""
    answer, texts = row.get("answer") or "", contexts_of(row)
    facts = check_facts(answer, texts)
    checks = facts["checks"]
    known = [*texts, row.get("query") or ""]
    with_question = check_facts(answer, known)["checks"]
    return {"F": offline(row), "Fnum": passed_share(checks, ("number",)),
            "Fnn": passed_share(checks, ("number", "name")), "Fname": passed_share(checks, ("name",)),
            "Fname+q": passed_share(with_question, ("name",)),
            "Fnnq": passed_share(with_question, ("number", "name")),
            "P": float(facts["P"]) if facts["content_tokens"] else None,
            "Pkq": checkworthy_share(answer, known)}


def names_struck(result: dict[str, Any], row: dict[str, Any]) -> float | None:
    """The default's score from the recorded replies (evidence veto, check-worthy claims, mean) with
    each claim struck (support 0) that holds a name run the contexts and the question do not hold;
    None when the result records no claim."""
    details = result.get("details") or {}
    if not details.get("claims"):
        return None
    texts = contexts_of(row)
    claims, values, _ = claim_supports(details, "evidence", texts, checkworthy=True)
    if not claims:
        return 1.0
    known = [*texts, row.get("query") or ""]
    values = [0.0 if any(c["kind"] == "name" and not c["passed"] for c in check_facts(claim["claim"], known)["checks"])
              else v for claim, v in zip(claims, values, strict=True)]
    return sum(values) / len(values)


def judged_results(saved: dict[str, Any], rows: dict[str, dict[str, Any]],
                   split: str | None = None) -> list[tuple[str, bool, dict[str, Any], dict[str, Any]]]:
    """``(kind, faithful, faithfulness result, labelled row)`` per row without a judge error, of a
    ``bench/faithfulness_by_kind.py`` file (only rows of ``split`` when given) or a
    ``bench/judge_quality.py`` one."""
    if isinstance(saved.get("records"), dict):  # bench/faithfulness_by_kind.py
        return [(r["kind"], bool(r["faithful"]), r, rows[r["id"]]) for r in saved["records"]["faithfulness"]
                if r.get("error") is None and (split is None or rows[r["id"]].get("split") == split)]
    return [("all", bool(rows[rec["id"]]["labels"]["faithful"]), rec["metrics"]["faithfulness"], rows[rec["id"]])
            for rec in saved["records"] if rec["metrics"]["faithfulness"].get("error") is None]


def judge_score(result: dict[str, Any], row: dict[str, Any], rescore: bool, aggregate: str = "mean",
                veto: str = "evidence") -> float | None:
    """The recorded faithfulness score, or with ``rescore`` the default's from the recorded replies
    (``bench/quote_veto.py``'s ``evidence+K``, the claims' supports combined by ``aggregate``: its
    ``mean`` or ``geo``; ``veto``: another sentence veto in place of ``evidence``); None where undefined."""
    score = rescored(result, "faithfulness", veto, contexts_of(row), True, aggregate)[0]["score"] if rescore \
        else result.get("score")
    return None if score is None else float(score)


def scored_rows(saved: dict[str, Any], rows: dict[str, dict[str, Any]], rescore: bool = False,
                split: str | None = None) -> list[tuple[str, bool, float, dict[str, float | None]]]:
    """``(kind, faithful, judge score, offline values)`` per row with a judge score (only rows of
    ``split`` when given); with ``rescore`` the judge score is the default's from the recorded replies."""
    out = []
    for kind, y, result, row in judged_results(saved, rows, split):
        score = judge_score(result, row, rescore) if result.get("score") is not None else None
        if score is not None:
            struck = names_struck(result, row) if rescore else None
            out.append((kind, y, score, {**offline_values(row), "Vname+q": struck}))
    return out


def nothing_to_check(answer: str) -> bool:
    """Whether ``answer`` has no check-worthy sentence (``_checkworthy.split_claims``)."""
    return not any(s.checkworthy for s in split_claims(answer))


def nc0_rows(saved: dict[str, Any], rows: dict[str, dict[str, Any]], split: str | None = None,
             rescore: bool = False, aggregate: str = "mean",
             veto: str = "evidence") -> list[tuple[str, bool, float | None, float | None]]:
    """``(kind, faithful, score, recorded score)`` per row without a judge error (only rows of
    ``split`` when given): the score is 1.0 where the answer has no check-worthy sentence (method
    log section 111's ``NC0``), else the recorded one (None where undefined), or with ``rescore``
    the default's from the recorded replies (``bench/quote_veto.py``'s ``evidence+K``, by ``aggregate``,
    with ``veto`` in place of ``evidence``)."""
    return [(kind, y, 1.0 if nothing_to_check(row.get("answer") or "")
             else judge_score(r, row, rescore, aggregate, veto),
             r.get("score")) for kind, y, r, row in judged_results(saved, rows, split)]


#: the weights of line ``NC0*Fnnq^w``: version 17's score times ``Fnnq`` to the power w (method log 113)
FNNQ_WEIGHTS = (0.25, 0.5, 1.0)


def nc0_factor_rows(saved: dict[str, Any], rows: dict[str, dict[str, Any]], split: str | None = None,
                    rescore: bool = False, nc0: list[tuple[str, bool, float | None, float | None]] | None = None,
                    ) -> list[tuple[str, bool, float | None, float | None]]:
    """``(kind, faithful, NC0 score, Fnnq)`` per row of :func:`nc0_rows` (``nc0``: those rows when
    already computed; ``Fnnq``: :func:`offline_values`')."""
    nc0 = nc0_rows(saved, rows, split, rescore) if nc0 is None else nc0
    return [(kind, y, score, offline_values(row)["Fnnq"])
            for (kind, y, score, _), (_, _, _, row) in zip(nc0, judged_results(saved, rows, split), strict=True)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results", nargs="+", help="a results file of bench/judge_quality.py, or one or more of "
                                               "bench/faithfulness_by_kind.py (pooled per kind)")
    ap.add_argument("--data", help="the labelled rows (default: each file's own)")
    ap.add_argument("--split", help="faithfulness_by_kind files: only the rows of this split (design, heldout)")
    ap.add_argument("--rescore", action="store_true",
                    help="the judge's score is the default's from the recorded replies (quote_veto's evidence+K)")
    ap.add_argument("--aggregate", choices=("mean", "geo"), default="mean",
                    help="with --rescore, lines NC0 and NC0*Fnnq^w: the claims' supports combined by their mean "
                         "(the default's) or geometric mean (method log 124)")
    ap.add_argument("--metric", default="faithfulness",
                    help="faithfulness_by_kind files: the metric whose records are read, e.g. "
                         "'faithfulness(verdicts=word)', which sends the default's requests on contexts over 1,500 "
                         "characters (method log 152)")
    ap.add_argument("--veto", default="evidence",
                    choices=EVIDENCE_VETOES,
                    help="with --rescore, lines NC0 and NC0*Fnnq^w: the sentence veto the claims are scored with "
                         "(the default's evidence, or one that ranks the evidence sentence without the claim's "
                         "numbers, or evidence_distractor; method log 160, 162)")
    args = ap.parse_args()
    scored, nc0, factor = [], [], []
    for name in args.results:
        saved = json.loads(Path(name).read_text(encoding="utf-8"))
        if args.metric != "faithfulness" and isinstance(saved.get("records"), dict):
            saved["records"]["faithfulness"] = saved["records"][args.metric]
        rows = labelled_rows(args.data, saved.get("data"))
        scored += scored_rows(saved, rows, args.rescore, args.split)
        here = nc0_rows(saved, rows, args.split, args.rescore, args.aggregate, args.veto)
        nc0 += here
        factor += nc0_factor_rows(saved, rows, args.split, args.rescore, here)
    for kind in sorted({s[0] for s in scored}):
        mine = [s for s in scored if s[0] == kind]
        for label, combine in COMBINATIONS.items():
            pos = [combine(j, f[READS[label]]) for _, y, j, f in mine if y]
            neg = [combine(j, f[READS[label]]) for _, y, j, f in mine if not y]
            print(f"{label:<12}{kind:<10}{len(mine):>4}{auroc(pos, neg):>8.3f}")
        f_pos = [f["F"] for _, y, _, f in mine if y and f["F"] is not None]
        f_neg = [f["F"] for _, y, _, f in mine if not y and f["F"] is not None]
        print(f"{'offline':<12}{kind:<10}{len(f_pos) + len(f_neg):>4}{auroc(f_pos, f_neg):>8.3f}")
        mine_nc0 = [r for r in nc0 if r[0] == kind]
        pos = [x for _, y, x, _ in mine_nc0 if y and x is not None]
        neg = [x for _, y, x, _ in mine_nc0 if not y and x is not None]
        undefined = sum(x is None for _, _, x, _ in mine_nc0)
        before = sum(x is None for _, _, _, x in mine_nc0)
        moved = sum(x != b for _, _, x, b in mine_nc0)
        print(f"{'NC0':<12}{kind:<10}{len(pos) + len(neg):>4}{auroc(pos, neg):>8.3f}  undefined {before} -> "
              f"{undefined}, {moved} rows moved")
        mine_factor = [r for r in factor if r[0] == kind and r[2] is not None]
        for w in FNNQ_WEIGHTS:
            pos = [x * f ** w for _, y, x, f in mine_factor if y and x is not None and f is not None]
            neg = [x * f ** w for _, y, x, f in mine_factor if not y and x is not None and f is not None]
            print(f"{f'NC0*Fnnq^{w:g}':<14}{kind:<10}{len(pos) + len(neg):>4}{auroc(pos, neg):>8.3f}")


if __name__ == "__main__":
    main()
