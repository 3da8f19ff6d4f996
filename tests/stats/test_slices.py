"""Slices of a run, recomputed by hand on a small case (Wilson interval, Welch's t, Holm)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from scipy import stats as sps

import ragmeter
from ragmeter.errors import InvalidParameterError
from ragmeter.stats.slices import add_to_summary, slice_run, slices_markdown

Z95 = 1.959963984540054


def _write_run(out: Path, rows: list[tuple[str, float | None, dict | None]]) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    lines = []
    for sid, score, meta in rows:
        rec = {"id": sid, "metrics": {"hit": {"score": score, "reason": "", "error": None, "details": {},
                                              "version": "1"}}}
        if meta:
            rec["metadata"] = meta
        lines.append(json.dumps(rec))
    (out / "results.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (out / "summary.json").write_text(json.dumps({"format": 1, "metrics": {}, "run": {}}), encoding="utf-8")
    return out


def _wilson(k: int, n: int) -> list[float]:
    p = k / n
    den = 1 + Z95**2 / n
    centre = (p + Z95**2 / (2 * n)) / den
    half = Z95 * math.sqrt(p * (1 - p) / n + Z95**2 / (4 * n * n)) / den
    return [centre - half, centre + half]


def _welch_p(a: list[float], b: list[float]) -> float:
    ma, mb = sum(a) / len(a), sum(b) / len(b)
    va = sum((x - ma) ** 2 for x in a) / (len(a) - 1)
    vb = sum((x - mb) ** 2 for x in b) / (len(b) - 1)
    se2 = va / len(a) + vb / len(b)
    t = (ma - mb) / math.sqrt(se2)
    df = se2**2 / ((va / len(a)) ** 2 / (len(a) - 1) + (vb / len(b)) ** 2 / (len(b) - 1))
    return 2 * float(sps.t.sf(abs(t), df))


def test_row_metadata_slices_by_hand(tmp_path):
    a = [1, 1, 1, 1, 1, 0]
    b = [0, 0, 1, 0, 0, 1]
    rows = [(f"a{i}", float(x), {"category": "geo"}) for i, x in enumerate(a)]
    rows += [(f"b{i}", float(x), {"category": "math"}) for i, x in enumerate(b)]
    rows += [("n0", 1.0, None), ("u0", None, {"category": "geo"})]  # no category; an unscored geo sample
    out = _write_run(tmp_path / "run", rows)
    block = slice_run(out, ["category"])["category"]
    assert block["kind"] == "row metadata"
    by = {s["value"]: s for s in block["slices"]}
    assert [s["value"] for s in block["slices"]] == ["geo", "math", "(none)"]
    geo, math_, none = by["geo"]["metrics"]["hit"], by["math"]["metrics"]["hit"], by["(none)"]["metrics"]["hit"]
    assert by["geo"]["samples"] == 7 and geo["n"] == 6  # the unscored sample counts as a sample, not a score
    assert geo["mean"] == pytest.approx(5 / 6) and geo["rest_mean"] == pytest.approx(3 / 7)
    assert geo["ci_method"] == "wilson" and geo["ci"] == pytest.approx(_wilson(5, 6))
    assert math_["mean"] == pytest.approx(2 / 6) and math_["rest_mean"] == pytest.approx(6 / 7)
    p_geo = _welch_p(a, [*b, 1])
    p_math = _welch_p(b, [*a, 1])
    assert geo["p"] == pytest.approx(p_geo) and math_["p"] == pytest.approx(p_math)
    lo, hi = sorted([p_geo, p_math])  # Holm over the two tests: 2 * smallest, then max(that, largest)
    adj = {lo: min(1, 2 * lo), hi: max(min(1, 2 * lo), hi)}
    assert geo["p_adj"] == pytest.approx(adj[p_geo]) and math_["p_adj"] == pytest.approx(adj[p_math])
    assert none["n"] == 1 and none["ci"] is None and none["p"] is None
    assert "too few scored samples" in none["note"]
    md = slices_markdown({"category": block})
    assert "| category=geo | hit | 6 | 0.833 [" in md
    add_to_summary(out, {"category": block})
    assert json.loads((out / "summary.json").read_text())["slices"]["category"]["slices"][0]["value"] == "geo"


def test_context_metadata_and_derived_slices(tmp_path):
    rows = []
    for i in range(12):
        ctx = [{"id": "x", "source": "wiki" if i < 6 else "blog"}, {"id": f"y{i}", "source": "wiki"}]
        rows.append({"id": str(i), "contexts": ctx[: 1 + i % 2], "relevant": ["x"],
                     "answer": "word " * (3 if i < 6 else 40)})
    ragmeter.evaluate(rows, ["mrr"], out_dir=str(tmp_path / "o"))
    got = slice_run(tmp_path / "o", ["source", "n_contexts", "answer_length"], data=rows)
    src = {s["value"]: s["samples"] for s in got["source"]["slices"]}
    assert got["source"]["kind"] == "context metadata"
    assert src == {"wiki": 9, "blog": 6}  # 6 with a wiki first context + 3 blog ones with a wiki second
    assert {s["value"]: s["samples"] for s in got["n_contexts"]["slices"]} == {"1": 6, "2": 6}
    assert {s["value"]: s["samples"] for s in got["answer_length"]["slices"]} == {"0-9 words": 6, "30-99 words": 6}
    with pytest.raises(InvalidParameterError, match="no sample has it"):
        slice_run(tmp_path / "o", ["nope"])
    with pytest.raises(InvalidParameterError, match="needs data"):
        slice_run(tmp_path / "o", ["n_contexts"])
