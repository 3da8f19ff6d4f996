"""Run results: the per-sample table, the summary, and the on-disk format.

On disk (OUTDIR), a stable format that later versions extend and never break:

``results.jsonl``, one line per sample::

    {"id": "q1", "metrics": {"ndcg@5": {"score": 0.63, "reason": "...", "error": null,
                                         "details": {...}, "version": "1"}}}

``summary.json``::

    {"format": 1,
     "metrics": {"ndcg@5": {"mean": 0.61, "n": 18, "undefined": 1, "errors": 1,
                            "ci": [0.49, 0.72], "ci_method": "bootstrap-bca"}},
     "run": {"ragmeter_version": "...", "metrics": {"ndcg@5": {"version": "1"}}, ...}}

``mean`` is over scored samples only; ``n`` counts them; ``undefined`` and ``errors`` count the
samples that got no score, so ``n + undefined + errors`` is always the number of samples. A
metric with no scored sample has ``mean: null``. ``ci`` is the 95% confidence interval of the
mean (``[lo, hi]``, null when n = 0) and ``ci_method`` names its method (``wilson``,
``bootstrap-bca``, ``degenerate``, ``none``; see :func:`ragmeter.stats.metric_ci`).
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import IO, Any

import numpy as np

from .types import MetricResult

SCORED, UNDEFINED, ERROR = 0, 1, 2
FORMAT_VERSION = 1
#: Coverage of the ``ci`` reported by :meth:`RunResult.summary`.
SUMMARY_CONFIDENCE = 0.95


#: Lines ``RunWriter`` holds before it writes them (it also writes whenever the run waits).
FLUSH_LINES = 256


class RunWriter:
    """Collects results sample by sample, streaming them to ``results.jsonl`` when ``out_dir`` is set.

    Lines are written whole, in batches of at most :data:`FLUSH_LINES` and whenever the run is
    about to wait (:meth:`flush`), each batch with one unbuffered ``write``: a run killed with
    ``kill -9`` leaves a file of complete lines holding every sample finished before it waited.
    """

    def __init__(self, metrics: list[str], *, out_dir: str | os.PathLike[str] | None = None,
                 keep_records: bool = True) -> None:
        self.metrics = metrics
        self.ids: list[str] = []
        self._scores: dict[str, list[float]] = {m: [] for m in metrics}
        self._status: dict[str, list[int]] = {m: [] for m in metrics}
        self.records: list[dict[str, Any]] | None = [] if keep_records else None
        self.out_dir = Path(out_dir) if out_dir is not None else None
        self._fh: IO[bytes] | None = None
        self._pending: list[str] = []
        if self.out_dir is not None:
            self.out_dir.mkdir(parents=True, exist_ok=True)
            self._fh = open(self.out_dir / "results.jsonl", "wb", buffering=0)  # noqa: SIM115

    def add(self, sample_id: str, results: dict[str, MetricResult]) -> None:
        """Record one sample's results (one per metric)."""
        self.ids.append(sample_id)
        for m in self.metrics:
            r = results[m]
            status = ERROR if r.error is not None else (UNDEFINED if r.score is None else SCORED)
            self._status[m].append(status)
            self._scores[m].append(float("nan") if r.score is None else float(r.score))
        record = {"id": sample_id, "metrics": {m: results[m].to_record() for m in self.metrics}}
        if self.records is not None:
            self.records.append(record)
        if self._fh is not None:
            self._pending.append(record_json(record) + "\n")
            if len(self._pending) >= FLUSH_LINES:
                self.flush()

    def flush(self) -> None:
        """Write the lines held so far to the file, whole (a killed run keeps them)."""
        if self._fh is not None and self._pending:
            data = "".join(self._pending).encode("utf-8")
            self._pending.clear()
            view = memoryview(data)
            while view:  # a regular file takes it in one call; a short write goes on where it stopped
                written = self._fh.write(view)
                if not written:
                    raise OSError(f"cannot write {self.out_dir}/results.jsonl (0 bytes written)")
                view = view[written:]

    def finish(self, run_info: dict[str, Any]) -> RunResult:
        """Close the stream, write ``summary.json`` and return the :class:`RunResult`."""
        result = RunResult(
            ids=self.ids,
            scores={m: np.asarray(v, dtype=np.float64) for m, v in self._scores.items()},
            status={m: np.asarray(v, dtype=np.int8) for m, v in self._status.items()},
            records=self.records,
            run=run_info,
        )
        if self._fh is not None:
            self.flush()
            self._fh.close()
            assert self.out_dir is not None
            result.write_summary(self.out_dir / "summary.json")
        return result


def record_json(record: dict[str, Any]) -> str:
    """One ``results.jsonl`` line (without the newline). Text that is not valid Unicode (a lone
    surrogate, possible only from Python objects) is written with ``\\u`` escapes instead of
    failing the run."""
    text = json.dumps(record, ensure_ascii=False, default=_json_default)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = json.dumps(record, ensure_ascii=True, default=_json_default)
    return text


def _json_default(obj: Any) -> Any:
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    return str(obj)


def _clean(v: float) -> float | None:
    return None if v is None or (isinstance(v, float) and math.isnan(v)) else float(v)


class RunResult:
    """The outcome of one evaluation run.

    Attributes
    ----------
    ids:
        Sample ids, in input order.
    scores:
        ``{metric: float array}``, NaN where a sample has no score (undefined or errored).
    status:
        ``{metric: int8 array}`` with 0 scored, 1 undefined, 2 error.
    records:
        Every sample's full results (``results.jsonl`` lines) when kept, else None.
    run:
        Run information (versions, timing, skipped metrics, ...).
    """

    def __init__(self, ids: list[str], scores: dict[str, np.ndarray], status: dict[str, np.ndarray],
                 records: list[dict[str, Any]] | None, run: dict[str, Any]) -> None:
        self.ids = ids
        self.scores = scores
        self.status = status
        self.records = records
        self.run = run
        #: The input samples in order (None for a bad row), when the run kept them (see to_pandas).
        self.inputs: list[Any] | None = None

    @property
    def metrics(self) -> list[str]:
        """The metric names, in the order asked for."""
        return list(self.scores)

    def __len__(self) -> int:
        return len(self.ids)

    def summary(self) -> dict[str, dict[str, Any]]:
        """``{metric: {"mean", "n", "undefined", "errors", "ci", "ci_method"}}``.

        ``mean`` is over scored samples (None if none) and ``n`` counts them. ``ci`` is the 95%
        confidence interval of the mean as ``[lo, hi]`` and ``ci_method`` how it was computed
        (:func:`ragmeter.stats.metric_ci`): ``"wilson"`` when every score is 0 or 1,
        ``"bootstrap-bca"`` otherwise (2000 resamples, seed 0: reproducible), ``"degenerate"``
        for one non-binary score (``[x, x]``), and ``ci`` None with ``"none"`` when n = 0.
        """
        from .stats.intervals import metric_ci

        out: dict[str, dict[str, Any]] = {}
        for m in self.metrics:
            st = self.status[m]
            scored = self.scores[m][st == SCORED]
            iv = metric_ci(scored, confidence=SUMMARY_CONFIDENCE, seed=0)
            out[m] = {
                "mean": _clean(float(scored.mean())) if scored.size else None,
                "n": int(scored.size),
                "undefined": int((st == UNDEFINED).sum()),
                "errors": int((st == ERROR).sum()),
                "ci": iv.ci,
                "ci_method": iv.method,
            }
        return out

    def summary_dict(self) -> dict[str, Any]:
        """The content of ``summary.json``."""
        return {"format": FORMAT_VERSION, "metrics": self.summary(), "run": self.run}

    def summary_json(self) -> str:
        """The text of ``summary.json``. Computed once (the intervals are bootstrapped) and kept, so
        the CLI's table, ``--json`` and gate read the summary in hand, not the file back."""
        text: str | None = getattr(self, "_summary_json", None)
        if text is None:
            text = json.dumps(self.summary_dict(), indent=2, ensure_ascii=False, default=_json_default) + "\n"
            self._summary_json = text
        return text

    def write_summary(self, path: str | os.PathLike[str]) -> None:
        """Write ``summary.json`` to ``path``."""
        Path(path).write_text(self.summary_json(), encoding="utf-8")

    def to_pandas(self, inputs: bool = False) -> Any:
        """A DataFrame indexed by sample id, one float column per metric (NaN = no score).

        With ``inputs=True`` (as RAGAS users expect): first the input columns ``query``,
        ``answer``, ``contexts`` (the texts, ``""`` for an id-only context), ``context_ids`` (only
        when a context has an id), ``reference``, ``relevant``, ``metadata`` (None where a sample did
        not give the field, and for a bad row), then per metric ``<metric>`` (the score) and
        ``<metric>_reason`` (why it is that, undefined or errored). Needs a run of
        :func:`ragmeter.evaluate` with ``keep_records=True`` (the default); a loaded run has no inputs.
        """
        import pandas as pd

        index = pd.Index(self.ids, name="id")
        if not inputs:
            return pd.DataFrame({m: self.scores[m] for m in self.metrics}, index=index)
        if self.inputs is None or self.records is None:
            raise ValueError("to_pandas(inputs=True): this run kept no inputs: use ragmeter.evaluate(...) with "
                             "keep_records=True (the default); a loaded run or one with keep_records=False has none")
        from .io.adapters import input_columns

        cols: dict[str, Any] = input_columns(self.inputs)
        for m in self.metrics:
            cols[m] = self.scores[m]
            cols[f"{m}_reason"] = [r["metrics"][m]["reason"] for r in self.records]
        return pd.DataFrame(cols, index=index)

    def to_jsonl(self, path: str | os.PathLike[str] | None = None) -> str | None:
        """Per-sample records as JSON lines: written to ``path``, or returned as a string when None."""
        if self.records is None:
            raise ValueError("records were not kept (keep_records=False); read OUTDIR/results.jsonl instead")
        text = "".join(
            json.dumps(r, ensure_ascii=False, default=_json_default) + "\n" for r in self.records
        )
        if path is None:
            return text
        Path(path).write_text(text, encoding="utf-8")
        return None

    def save(self, out_dir: str | os.PathLike[str]) -> Path:
        """Write ``results.jsonl`` and ``summary.json`` into ``out_dir`` (created if missing)."""
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        self.to_jsonl(out / "results.jsonl")
        self.write_summary(out / "summary.json")
        return out

    @classmethod
    def load(cls, out_dir: str | os.PathLike[str]) -> RunResult:
        """Read a run saved by :meth:`save` or by ``ragmeter eval -o``."""
        out = Path(out_dir)
        summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
        metrics = list(summary["metrics"])
        writer_scores: dict[str, list[float]] = {m: [] for m in metrics}
        writer_status: dict[str, list[int]] = {m: [] for m in metrics}
        ids: list[str] = []
        records: list[dict[str, Any]] = []
        with open(out / "results.jsonl", encoding="utf-8") as fh:
            for line in fh:
                rec = json.loads(line)
                records.append(rec)
                ids.append(rec["id"])
                for m in metrics:
                    r = rec["metrics"][m]
                    st = ERROR if r.get("error") else (UNDEFINED if r.get("score") is None else SCORED)
                    writer_status[m].append(st)
                    writer_scores[m].append(float("nan") if r.get("score") is None else float(r["score"]))
        return cls(
            ids,
            {m: np.asarray(v, dtype=np.float64) for m, v in writer_scores.items()},
            {m: np.asarray(v, dtype=np.int8) for m, v in writer_status.items()},
            records,
            summary.get("run", {}),
        )
