r"""Semantic similarity: cosine between the answer's and the reference answer's embeddings.

With :math:`a_i`, :math:`r_i` the L2-normalised embeddings of row *i*'s answer and reference:

.. math::

   \cos_i = a_i \cdot r_i, \qquad
   \text{normalize=none:}\ \ s_i = \max(\cos_i, 0)

**Why normalise.** Sentence-embedding cosines saturate: with many models two unrelated sentences
on the same topic score 0.5-0.8, so a raw 0.8 says little. ``normalize=baseline`` rescales each
cosine against the mean cosine :math:`b` of *negative pairs drawn from the same batch*, every
answer against every other row's reference:

.. math::

   b = \frac{1}{|N|} \sum_{(i, j) \in N} a_i \cdot r_j, \quad
   N = \{(i, j) : i \ne j,\ \mathrm{ref}_i \ne \mathrm{ref}_j\}, \qquad
   s_i = \mathrm{clip}\Big(\frac{\cos_i - b}{1 - b},\ 0,\ 1\Big)

so 0 means "no closer to its reference than to a random reference of this dataset" and 1 means
identical meaning (identical text always scores 1). This is the linear baseline rescaling of
BERTScore (Zhang et al., 2020, ``rescale_with_baseline``), with the baseline taken from the data
itself, so that it matches the domain (answers about one product share vocabulary and sit closer
than random web sentences). Pairs whose references are the same text (after trimming and
case-folding) are not negatives and are excluded. The mean runs over **all** such pairs, exactly
and without sampling (so nothing random, no seed): :math:`\sum_{i \ne j} a_i \cdot r_j =
(\sum_i a_i)\cdot(\sum_j r_j) - \sum_g (\sum_{i \in g} a_i)\cdot(\sum_{j \in g} r_j)` over groups
*g* of rows with the same reference, O(n·d).

A rank-based variant (the share of other references the answer is less similar to than its own)
was rejected: it does not give identical text 1, it is coarse on small batches, and it measures
retrieval-style discrimination rather than closeness. The linear rescaling keeps the cosine's
order and spacing, and both numbers are in the details (``cosine``, ``normalized``,
``baseline_mean``, ``baseline_pairs``, ``score_is``), whichever is the score.

**The batch.** The baseline uses the rows of the batch the runner passes (``chunk_size``, 2048 by
default; the whole dataset when it is smaller). It needs at least :data:`MIN_BASELINE_ROWS` rows
with an answer and a reference, and at least one negative pair; otherwise the normalised score is
undefined (and ``normalize=none`` still scores).

Edge cases: no answer (None) -> undefined; no reference (None or blank) -> undefined, reason
"no reference answer"; an empty answer string -> 0 (not embedded); a negative cosine -> 0 with
``normalize=none``; a baseline of 1 (every pair identical) -> normalised undefined. The embedder's
own limits apply (all-MiniLM-L6-v2 reads the first 256 word pieces of each text).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import numpy as np

from ...names import MetricName
from ...registry import LabelCheck, MetricSpec, Param, register
from ...types import MetricResult, Sample

NORMALIZE = ("none", "baseline")
MIN_BASELINE_ROWS = 5
NO_ANSWER = "undefined: no answer"
NO_REFERENCE = "undefined: no reference answer"


def _unit(rows: np.ndarray) -> np.ndarray:
    rows = np.asarray(rows, dtype=np.float64)
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return np.divide(rows, norms, out=np.zeros_like(rows), where=norms > 0)


def same_text_key(text: str | None) -> str:
    """Rows whose texts give the same key are not negative pairs (trimmed, case-folded)."""
    return (text or "").strip().casefold()


def pair_cosines(answers: np.ndarray, references: np.ndarray) -> np.ndarray:
    """Row-wise cosine of two ``(n, d)`` arrays of embeddings."""
    return np.clip(np.einsum("ij,ij->i", _unit(answers), _unit(references)), -1.0, 1.0)


def baseline_mean(answers: np.ndarray, references: np.ndarray,
                  groups: Sequence[int] | np.ndarray) -> tuple[float, int]:
    """Mean cosine over negative pairs and their number (see the module docstring).

    ``groups[i]`` identifies row *i*'s reference text; pairs within a group are not negatives.
    Returns ``(nan, 0)`` when there is no negative pair.
    """
    a, r = _unit(answers), _unit(references)
    g = np.asarray(groups, dtype=np.int64)
    n = a.shape[0]
    if n == 0:
        return float("nan"), 0
    ng = int(g.max()) + 1
    ga = np.zeros((ng, a.shape[1]))
    gr = np.zeros((ng, r.shape[1]))
    np.add.at(ga, g, a)
    np.add.at(gr, g, r)
    sizes = np.bincount(g, minlength=ng)
    pairs = n * n - int((sizes.astype(np.int64) ** 2).sum())
    if pairs <= 0:
        return float("nan"), 0
    total = float(a.sum(axis=0) @ r.sum(axis=0)) - float(np.einsum("ij,ij->", ga, gr))
    return total / pairs, pairs


def normalise(cos: np.ndarray | float, baseline: float) -> np.ndarray:
    """``clip((cos - b) / (1 - b), 0, 1)``; NaN when the baseline is undefined or >= 1."""
    cos = np.asarray(cos, dtype=np.float64)
    if not np.isfinite(baseline) or baseline >= 1.0:
        return np.full_like(cos, np.nan)
    return np.clip((cos - baseline) / (1.0 - baseline), 0.0, 1.0)


_SPEC_EMBEDDERS: dict[str, Any] = {}


def _embedder_for(spec: str) -> Any:
    """The embedder for a spec string, built once per process (both metric names share its model)."""
    if spec not in _SPEC_EMBEDDERS:
        from ...embedders import from_spec

        _SPEC_EMBEDDERS[spec] = from_spec(spec)
    return _SPEC_EMBEDDERS[spec]


def _usable(sample: Sample) -> bool:
    return sample.answer is not None and bool(sample.reference and sample.reference.strip())


class SemanticSimilarityEvaluator:
    """Evaluator for ``semantic_similarity`` and ``semantic_similarity(normalize=baseline)``."""

    def __init__(self, spec: MetricSpec, name: MetricName, embedder: Any) -> None:
        if isinstance(embedder, str):
            embedder = _embedder_for(embedder)
        self.spec = spec
        self.name = str(name)
        self.version = spec.version
        self.normalize = str(name.kwargs.get("normalize", "none"))
        self.embedder = embedder
        self.model_id = str(getattr(embedder, "model_id", f"{type(embedder).__name__}@{id(embedder)}"))

    # -- embeddings, shared between the metrics of one batch -----------------------------------

    def _memo(self, ctx: Any) -> dict[str, np.ndarray]:
        if ctx is None:
            return {}
        return ctx.get(("embeddings", self.model_id), dict)

    def _embed(self, texts: list[str], ctx: Any) -> dict[str, np.ndarray]:
        memo = self._memo(ctx)
        missing = [t for t in dict.fromkeys(texts) if t not in memo]
        if missing:
            memo.update(zip(missing, np.asarray(self.embedder.embed(missing)), strict=True))
        return memo

    async def _aembed(self, texts: list[str]) -> dict[str, np.ndarray]:
        unique = list(dict.fromkeys(texts))
        if not unique:
            return {}
        aembed = getattr(self.embedder, "aembed", None)
        vecs = await aembed(unique) if aembed is not None else await asyncio.to_thread(self.embedder.embed, unique)
        return dict(zip(unique, np.asarray(vecs), strict=True))

    # -- scoring ---------------------------------------------------------------------------------

    def evaluate_batch(self, samples: Sequence[Sample], ctx: Any = None) -> list[MetricResult]:
        """Score every sample; the baseline (if any) is computed over this batch."""
        texts = self._texts(samples)
        try:
            vectors = self._embed(texts, ctx)
        except Exception as exc:  # one failed embedding call fails this batch's rows, recorded per row
            return [MetricResult.from_error(self.name, self.version, exc) if _usable(s) else self._undefined(s)
                    for s in samples]
        return self._score(samples, vectors)

    def evaluate(self, sample: Sample) -> MetricResult:
        """Score one sample (with ``normalize=baseline`` a single row is undefined: no baseline)."""
        return self.evaluate_batch([sample])[0]

    async def aevaluate(self, sample: Sample) -> MetricResult:
        """Async twin of :meth:`evaluate`, using the embedder's ``aembed`` when it has one."""
        vectors = await self._aembed(self._texts([sample]))
        return self._score([sample], vectors)[0]

    @staticmethod
    def _texts(samples: Sequence[Sample]) -> list[str]:
        out: list[str] = []
        for s in samples:
            if _usable(s) and s.answer and s.answer.strip():
                out += [s.answer, s.reference or ""]
        return out

    def _undefined(self, s: Sample) -> MetricResult:
        reason = NO_ANSWER if s.answer is None else NO_REFERENCE
        return MetricResult(name=self.name, score=None, reason=reason, version=self.version)

    def _score(self, samples: Sequence[Sample], vectors: dict[str, np.ndarray]) -> list[MetricResult]:
        rows = [i for i, s in enumerate(samples) if _usable(s) and (s.answer or "").strip()]
        cos = np.zeros(0)
        baseline, pairs = float("nan"), 0
        if rows:
            a = np.stack([vectors[samples[i].answer or ""] for i in rows])
            r = np.stack([vectors[samples[i].reference or ""] for i in rows])
            cos = pair_cosines(a, r)
            if len(rows) >= MIN_BASELINE_ROWS:
                keys: dict[str, int] = {}
                groups = [keys.setdefault(same_text_key(samples[i].reference), len(keys)) for i in rows]
                baseline, pairs = baseline_mean(a, r, groups)
        norm = normalise(cos, baseline)
        position = {i: k for k, i in enumerate(rows)}
        out: list[MetricResult] = []
        for i, s in enumerate(samples):
            if not _usable(s):
                out.append(self._undefined(s))
            elif i not in position:
                out.append(MetricResult(name=self.name, score=0.0, reason="empty answer: scored 0",
                                        details={"score_is": self._score_is()}, version=self.version))
            else:
                k = position[i]
                out.append(self._result(float(cos[k]), float(norm[k]), baseline, pairs, len(rows)))
        return out

    def _score_is(self) -> str:
        return "baseline-normalised cosine" if self.normalize == "baseline" else "cosine (clipped at 0)"

    def _result(self, cos: float, norm: float, baseline: float, pairs: int, n_rows: int) -> MetricResult:
        has_norm = not np.isnan(norm)
        details: dict[str, Any] = {
            "cosine": cos,
            "normalized": norm if has_norm else None,
            "baseline_mean": baseline if pairs else None,
            "baseline_pairs": pairs,
            "baseline_rows": n_rows,
            "score_is": self._score_is(),
            "embedder": self.model_id,
        }
        if self.normalize == "none":
            extra = f"; baseline-normalised {norm:.3f} (baseline {baseline:.3f})" if has_norm else ""
            return MetricResult(name=self.name, score=max(cos, 0.0), reason=f"cosine {cos:.3f}{extra}",
                                details=details, version=self.version)
        if not has_norm:
            why = (f"needs at least {MIN_BASELINE_ROWS} rows with answer and reference in the batch, got {n_rows}"
                   if n_rows < MIN_BASELINE_ROWS else
                   "no usable negative pair (every reference is the same text, or the baseline is 1)")
            return MetricResult(name=self.name, score=None,
                                reason=f"undefined: the baseline {why}; raw cosine {cos:.3f} is in the details",
                                details=details, version=self.version)
        return MetricResult(name=self.name, score=norm,
                            reason=f"cosine {cos:.3f} rescaled against baseline {baseline:.3f} "
                                   f"({pairs} negative pairs) -> {norm:.3f}",
                            details=details, version=self.version)


_spec_box: list[MetricSpec] = []


def _factory(name: MetricName, judge: Any, embedder: Any) -> SemanticSimilarityEvaluator:
    return SemanticSimilarityEvaluator(_spec_box[0], name, embedder)


_spec_box.append(register(MetricSpec(
    name="semantic_similarity",
    summary="Cosine between answer and reference embeddings, raw or rescaled against a same-dataset baseline.",
    formula="cos = a·r (unit vectors); normalize=none: max(cos, 0); normalize=baseline: "
            "clip((cos - b)/(1 - b), 0, 1), b = mean a_i·r_j over all pairs i != j of the batch "
            "with different references",
    edge_cases=("no answer or no reference -> undefined", "empty answer string -> 0",
                f"normalize=baseline with fewer than {MIN_BASELINE_ROWS} usable rows in the batch -> undefined",
                "identical text -> 1", "raw and normalised values both in details"),
    factory=_factory,
    category="embedding",
    role="answer",
    params=(Param("normalize", str, "none",
                  "none: cosine clipped at 0; baseline: rescaled against negative pairs of the same batch",
                  choices=NORMALIZE),),
    needs_embedder=True,
    requires=("answer", "reference"),
    default_names=("semantic_similarity", "semantic_similarity(normalize=baseline)"),
    undefined="undefined (None) when the sample has no answer or no reference answer; with "
              f"normalize=baseline also when the batch has fewer than {MIN_BASELINE_ROWS} usable rows",
    check=LabelCheck(label="correct", at_least=4.0),
    answer_preference=4,
)))
