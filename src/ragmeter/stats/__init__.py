"""Statistics for RAG evaluation: intervals, paired comparisons, judge calibration, diagnosis, fusion.

Everything the ``compare``, ``calibrate``, ``diagnose`` and ``fuse`` commands do is one call here:

* :func:`metric_ci`, :func:`bootstrap_ci`, :func:`wilson_interval`, :func:`bootstrap_means`:
  confidence intervals for a metric's mean (used by ``RunResult.summary()``);
* :func:`compare`: run B vs run A, paired by sample id (:func:`compare_many`: N runs against
  the first, a ranx-style table with Markdown and LaTeX export) (:func:`paired_permutation_test`,
  :func:`paired_ttest`, :func:`mcnemar_test`, :func:`holm`, :func:`cohens_dz`);
* :func:`calibrate`: judge vs human labels (:func:`agreement`, :func:`cohen_kappa`,
  :func:`expected_calibration_error`), prediction-powered inference (:func:`ppi_mean`) and
  conformal abstention thresholds (:func:`abstention_threshold`);
* :func:`diagnose`: failing pipeline stage from metric signatures, with
  :func:`position_analysis`;
* :func:`fuse`: RRF / CombSUM / CombMNZ of TREC runs (:func:`read_trec_run`, :func:`write_trec_run`).

Every random procedure takes a ``seed`` (default 0): the same inputs give the same numbers.
The tests and intervals need no scipy (:mod:`ragmeter._dist` computes what they take from
scipy.stats); :func:`bootstrap_ci` with a ``statistic`` of your own is the one call that needs it.
"""

from __future__ import annotations

from ..intervals import Interval, bootstrap_ci, bootstrap_means, metric_ci, wilson_interval
from ._io import load_run
from ._render import what_changed
from .abstain import AbstentionResult, abstention_threshold
from .agreement import agreement, cohen_kappa, confusion_matrix, expected_calibration_error
from .calibrate import Calibration, calibrate, read_labels
from .compare import Comparison, MultiComparison, compare, compare_many
from .diagnose import DEFAULT_THRESHOLDS, Diagnosis, diagnose
from .fusion import fuse, read_trec_run, write_trec_run
from .paired import TestResult, cohens_dz, holm, mcnemar_test, paired_permutation_test, paired_ttest
from .position import position_analysis
from .ppi import PPIResult, labels_only_interval, ppi_mean

__all__ = [
    "DEFAULT_THRESHOLDS",
    "AbstentionResult",
    "Calibration",
    "Comparison",
    "Diagnosis",
    "Interval",
    "MultiComparison",
    "PPIResult",
    "TestResult",
    "abstention_threshold",
    "agreement",
    "bootstrap_ci",
    "bootstrap_means",
    "calibrate",
    "cohen_kappa",
    "cohens_dz",
    "compare",
    "compare_many",
    "confusion_matrix",
    "diagnose",
    "expected_calibration_error",
    "fuse",
    "holm",
    "labels_only_interval",
    "load_run",
    "mcnemar_test",
    "metric_ci",
    "paired_permutation_test",
    "paired_ttest",
    "position_analysis",
    "ppi_mean",
    "read_labels",
    "read_trec_run",
    "what_changed",
    "wilson_interval",
    "write_trec_run",
]
