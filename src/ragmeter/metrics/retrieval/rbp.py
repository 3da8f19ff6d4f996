"""Rank-biased precision (Moffat & Zobel, ACM TOIS 27(1), 2008).

.. math:: \\mathrm{RBP@k} = (1 - p) \\sum_{i \\le k} rel_i \\, p^{\\,i - 1}

A user reads the first item and goes on from each item to the next with probability ``p`` (the
persistence); RBP is the expected share of relevant items among those read, so it needs no count
of the relevant items and stays defined when only the retrieved items are judged. Moffat & Zobel
use ``p = 0.5`` (an impatient user), ``0.8`` (the default here: 1 / (1 - p) = 5 items read on
average) and ``0.95`` (a persistent one). ``rel_i`` is binary (grade >= ``rel_level``), as in the
paper; an item never judged counts as non-relevant (the paper's residual, the most the unjudged
items could add, ``p^k``-sized, is not reported). Without a cutoff the sum runs over the whole
ranking. Edge cases: an empty ranking, or no relevant item retrieved -> 0; no labels: a context
that contains the reference answer is relevant; no labels and no reference -> undefined.

Examples
--------
>>> from ragmeter.metrics.retrieval import RankedList
>>> rbp_single(RankedList.from_grades([0, 1, 1], [1, 1]), p=0.5)  # 0.5 * (0.5 + 0.25)
0.375
"""

from __future__ import annotations

from typing import Any, cast

import numpy as np

from ...errors import InvalidParameterError
from ...registry import Param
from ._batch import FloatArray, RankedList, RelevanceBatch
from .base import register_retrieval

#: the default persistence: 5 items read on average
DEFAULT_P = 0.8


def rbp_single(ranked: RankedList, k: int | None = None, p: float = DEFAULT_P) -> float:
    """RBP of one ranking: (1 - p) times the sum of p^(i-1) over the relevant ranks i <= k."""
    total = 0.0
    for i, r in enumerate(ranked.rel, start=1):
        if k is not None and i > k:
            break
        if r:
            total += p ** (i - 1)
    return (1.0 - p) * total


def rbp(batch: RelevanceBatch, k: int | None = None, p: float = DEFAULT_P) -> FloatArray:
    """Vectorised :func:`rbp_single`."""
    mask = batch.rel if k is None else batch.rel & (batch.rank <= k)
    weights = np.power(p, batch.rank[mask] - 1.0)
    return (1.0 - p) * cast(FloatArray, np.bincount(batch.seg[mask], weights=weights, minlength=batch.n))


def _validate(params: dict[str, Any]) -> None:
    p = params.get("p", DEFAULT_P)
    if not 0.0 <= p < 1.0:
        raise InvalidParameterError(f"metric 'rbp': parameter 'p' expected a persistence in [0, 1), got {p!r}")


register_retrieval(
    "rbp",
    rbp,
    reference=rbp_single,
    role="retrieval",
    summary="Rank-biased precision: the expected share of relevant contexts among those a user reads, "
            "going on from each to the next with probability p.",
    formula="RBP@k = (1 - p) Σ_{i<=k} rel_i p^(i-1), p = persistence (default 0.8)",
    edge_cases=("no relevant context in the top k -> 0", "empty context list -> 0",
                "unlabelled contexts count as non-relevant (the residual is not reported)",
                "no labels: a context containing the reference answer is relevant",
                "no labels and no reference -> undefined"),
    needs_labels=False,
    params=(Param("p", float, DEFAULT_P, "persistence: the probability of reading on to the next context, "
                  "in [0, 1)", minimum=0.0),),
    aliases=("rank_biased_precision",),
    validate=_validate,
)
