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
import re
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from json.encoder import encode_basestring  # type: ignore[attr-defined]
from pathlib import Path
from typing import IO, Any

import numpy as np
from numpy.typing import NDArray

from ._arrowbuf import factorize
from ._optional import require
from .intervals import metric_ci
from .types import MetricResult, json_safe

SCORED, UNDEFINED, ERROR = 0, 1, 2
FORMAT_VERSION = 1
#: Coverage of the ``ci`` reported by :meth:`RunResult.summary`.
SUMMARY_CONFIDENCE = 0.95


#: Lines ``RunWriter`` holds before it writes them (it also writes whenever the run waits).
FLUSH_LINES = 256
#: Patterns a :class:`LineFormatter` keeps formatted between chunks (then it starts afresh).
PATTERN_MEMO = 200_000
#: Rows :meth:`LineFormatter.format` joins into one piece of bytes (a few MB: the join stays in cache).
JOIN_ROWS = 4096


@dataclass
class PatternColumn:
    """One metric's results over the pattern rows of a chunk (:meth:`LineFormatter.format`).

    Rows that share a *pattern* (for a retrieval metric: ranking length, relevant ranks, labelled
    count) share every byte of their result but the score. ``keys`` are the chunk's distinct
    patterns (hashable, stable across chunks), ``inv[j]`` the pattern of the chunk's j-th pattern
    row, ``values[j]`` its kernel value (NaN: undefined), and ``result(key, value)`` the
    :class:`~ragmeter.types.MetricResult` that pattern has at that value: the very function the
    Sample path words its results with, so the two paths cannot drift.
    """

    name: str
    values: NDArray[np.float64]
    keys: Sequence[Hashable]
    inv: NDArray[np.int64]
    result: Callable[[Any, float], MetricResult]  # called with one of ``keys``


@dataclass
class Lines:
    """A chunk's ``results.jsonl`` lines, formatted (picklable: a Ray worker formats, the driver writes).

    ``data`` holds ``count`` whole lines in order, UTF-8, each with its newline, in pieces of whole
    lines (``bytes``, or any bytes-like object such as a ``uint8`` array); ``scores[k]`` /
    ``status[k]`` are the k-th metric's score (NaN: none) and status per line: what
    :meth:`RunWriter.add_lines` needs besides the bytes (the summary's aggregates).
    """

    data: list[Any]
    count: int
    scores: list[NDArray[np.float64]]
    status: list[NDArray[np.int8]]

    def split(self) -> list[bytes]:
        """One ``bytes`` per line, newline included (a line holds no raw newline: JSON escapes it)."""
        return [line + b"\n" for line in b"".join(self.data).split(b"\n")[:-1]]

    def take(self, keep: NDArray[np.bool_]) -> Lines:
        """The lines where ``keep`` is True, in order."""
        kept = [line for line, k in zip(self.split(), keep.tolist(), strict=True) if k]
        return Lines([b"".join(kept)], len(kept), [s[keep] for s in self.scores], [s[keep] for s in self.status])


@dataclass
class GroupedLines:
    """A chunk's lines before the join (:meth:`LineFormatter.group`): line ``k`` is the layout's
    head, row ``k``'s id JSON and ``texts[inv[k]]`` (with the id's closing quote when ``plain``:
    no id needs escaping); ``scores`` / ``status`` as :class:`Lines` has them."""

    texts: list[str]
    inv: NDArray[np.int64]
    plain: bool
    count: int
    scores: list[NDArray[np.float64]]
    status: list[NDArray[np.int8]]


#: Two scores a pattern is formatted at to find where its score goes (see :meth:`LineFormatter._piece`).
_MARKS = (0.12345678901234566, 0.6543210987654321)
_DYNAMIC = ("", "", -1)  # a pattern whose text depends on more than the score: formatted row by row
_NEEDS_ESCAPE = re.compile(r'[\x00-\x1f"\\]')  # what json.dumps escapes in a string (ensure_ascii=False)


class LineFormatter:
    """The columnar side of the one serialiser: kernel arrays of a chunk -> its ``results.jsonl`` lines.

    A pure function of its input with a memo of formatted patterns (one formatter per run: per
    :class:`RunWriter`, or per Ray worker process). Every byte comes from :func:`record_json` over
    ``PatternColumn.result``; :meth:`format` only finds which rows share a line but for the id
    (same pattern, same score bits per metric), formats each such group once and joins the rows'
    lines in bulk, so the lines equal those :meth:`RunWriter.add` writes for the same results.
    """

    def __init__(self, metrics: list[str]) -> None:
        self.metrics = metrics
        self._layout: tuple[str, str, list[str]] | None = None
        self._memo: dict[tuple[str, Hashable, bool], tuple[str, str, int]] = {}

    def format(self, ids: Sequence[str], columns: Sequence[PatternColumn]) -> Lines:
        """The lines of rows ``ids`` (in order) from ``columns`` (one per metric, in :attr:`metrics`
        order, over those rows in order): :meth:`join` of :meth:`group`."""
        return self.join(ids, self.group(ids, columns))

    def group(self, ids: Sequence[str], columns: Sequence[PatternColumn]) -> GroupedLines:
        """:meth:`format` up to the join: each distinct text after the id, formatted once, and which
        row has which (a Ray worker sends this, a few hundred texts per chunk, not the lines)."""
        n = len(ids)
        if n == 0:
            return GroupedLines([], np.zeros(0, dtype=np.int64), True, 0, [np.zeros(0)] * len(self.metrics),
                                [np.zeros(0, dtype=np.int8)] * len(self.metrics))
        _, tail, before = self.layout()
        group = np.zeros(n, dtype=np.int64)
        parts = []
        for col in columns:
            part = _ColumnCodes(self, col, before[self.metrics.index(col.name)])
            group = _combine(group, part.code)
            parts.append(part)
        ginv, first = factorize(group)
        plain = _NEEDS_ESCAPE.search("".join(ids)) is None
        quote = '"' if plain else ""  # a plain id's quotes go into the shared text
        texts = [quote + "".join(p.text(r) for p in parts) + tail for r in first.tolist()]
        return GroupedLines(texts, ginv.reshape(-1), plain, n, [p.scores() for p in parts], [p.status for p in parts])

    def join(self, ids: Sequence[str], grouped: GroupedLines, rows: int = JOIN_ROWS) -> Lines:
        """The lines of rows ``ids`` from their :meth:`group` (made here or elsewhere), in pieces of
        ``rows`` lines."""
        n = len(ids)
        if n == 0:
            return Lines([], 0, grouped.scores, grouped.status)
        head = self.layout()[0]
        id_list = list(ids) if grouped.plain else [encode_basestring(s) for s in ids]
        head += '"' if grouped.plain else ""
        rest = np.array(grouped.texts, dtype=object)[grouped.inv].tolist()
        data = []
        for s in range(0, n, rows):
            e = min(n, s + rows)
            flat = [head] * (3 * (e - s))
            flat[1::3] = id_list[s:e]
            flat[2::3] = rest[s:e]
            data.append(_utf8("".join(flat)))
        return Lines(data, n, grouped.scores, grouped.status)

    def layout(self) -> tuple[str, str, list[str]]:
        """``(head, tail, before)``: a line is ``head + id JSON + before[k] + metric k's JSON ... + tail``,
        read off :func:`record_json` once (so a change to the line format reaches both paths)."""
        if self._layout is None:
            marks = [f"\x00{k}\x00" for k in range(len(self.metrics) + 1)]
            text = record_json({"id": marks[0], "metrics": dict(zip(self.metrics, marks[1:], strict=True))})
            cuts = [json.dumps(mk) for mk in marks]
            pieces: list[str] = []
            rest = text
            for cut in cuts:
                piece, rest = rest.split(cut, 1)
                pieces.append(piece)
            self._layout = (pieces[0], rest + "\n", pieces[1:])
        return self._layout

    def piece(self, col: PatternColumn, before: str, key: Hashable, undefined: bool) -> tuple[str, str, int]:
        """``(prefix, suffix, status)`` of a pattern: its text is ``prefix + repr(score) + suffix``
        (suffix empty: the prefix is the whole text, the score is not in it); status -1 when the
        text changes with the score otherwise (formatted row by row)."""
        memo_key = (col.name, key, undefined)
        got = self._memo.get(memo_key)
        if got is not None:
            return got
        if undefined:
            r = col.result(key, float("nan"))
            got = (before + record_json(r.to_record()), "", result_status(r))
        else:
            r = col.result(key, _MARKS[0])
            text = before + record_json(r.to_record())
            if r.score is None or r.error is not None:
                got = (text, "", result_status(r))
            else:
                parts = text.split(repr(_MARKS[0]))
                again = before + record_json(col.result(key, _MARKS[1]).to_record())
                ok = len(parts) == 2 and again == parts[0] + repr(_MARKS[1]) + parts[1]
                got = (parts[0], parts[1], SCORED) if ok else _DYNAMIC
        if len(self._memo) >= PATTERN_MEMO:
            self._memo.clear()
        self._memo[memo_key] = got
        return got


class _ColumnCodes:
    """One column of :meth:`LineFormatter.format`: a code per row (equal codes: equal text and
    status), each row's status, and the text of a row."""

    def __init__(self, fmt: LineFormatter, col: PatternColumn, before: str) -> None:
        self.col, self.before = col, before
        values = self.values = np.asarray(col.values, dtype=np.float64)
        inv = self.inv = np.asarray(col.inv, dtype=np.int64).reshape(-1)
        undefined = self.undefined = np.isnan(values)
        self.scored = [fmt.piece(col, before, key, False) for key in col.keys]
        self.unscored = [fmt.piece(col, before, key, True) for key in col.keys] if undefined.any() else self.scored
        k = len(self.scored)
        st_scored = np.array([p[2] for p in self.scored], dtype=np.int8)
        st_unscored = np.array([p[2] for p in self.unscored], dtype=np.int8)
        self.status = np.where(undefined, st_unscored[inv], st_scored[inv]).astype(np.int8)
        self.dynamic = (self.status < 0) | (~np.isfinite(values) & ~undefined)
        self.slot = ~undefined & ~self.dynamic & np.array([bool(p[1]) for p in self.scored], dtype=bool)[inv]
        sid = np.zeros(len(values), dtype=np.int64)  # 0: no score in the text, else 1 + the score's bits
        width = 1
        if self.slot.any():  # the bits, not the value: 0.0 and -0.0 are written differently
            sinv, uniq = factorize(values[self.slot].view(np.int64))
            sid[self.slot] = sinv + 1
            width += len(uniq)
        dyn = np.flatnonzero(self.dynamic)
        sid[dyn] = width + np.arange(len(dyn))  # the text depends on the score: a row of its own
        self.code = np.where(undefined, inv + k, inv) * (width + len(dyn)) + sid

    def text(self, j: int) -> str:
        """Row ``j``'s ``"name": {...}`` text (a dynamic row's status is set here)."""
        col, p = self.col, int(self.inv[j])
        if self.dynamic[j]:
            r = col.result(col.keys[p], float(self.values[j]))
            self.status[j] = result_status(r)
            return self.before + record_json(r.to_record())
        if self.undefined[j]:
            return self.unscored[p][0]
        if self.slot[j]:
            return self.scored[p][0] + repr(float(self.values[j])) + self.scored[p][1]
        return self.scored[p][0]

    def scores(self) -> NDArray[np.float64]:
        """The score per row (NaN: undefined or errored); call after every :meth:`text`."""
        return np.where(self.status == SCORED, self.values, np.nan)


def _combine(a: NDArray[np.int64], b: NDArray[np.int64]) -> NDArray[np.int64]:
    """One code per row for the pair ``(a, b)`` of codes (>= 0), kept small enough for int64."""
    wa, wb = int(a.max(initial=0)) + 1, int(b.max(initial=0)) + 1
    if wa * wb >= 2**62:
        a, b = factorize(a)[0], factorize(b)[0]
        wb = int(b.max(initial=0)) + 1
    return a * wb + b


class RunWriter:
    """Collects results sample by sample, streaming them to ``results.jsonl`` when ``out_dir`` is set.

    The one serialiser of ``results.jsonl``: :meth:`add` takes one sample's
    :class:`~ragmeter.types.MetricResult` objects, each line formatted by :func:`record_json`;
    :meth:`add_columns` a whole chunk from kernel arrays (the columnar path), formatted by the
    writer's :class:`LineFormatter`; :meth:`add_lines` a chunk some formatter formatted already
    (on a Ray worker). Lines are written whole, in batches of at most :data:`FLUSH_LINES` and
    whenever the run is about to wait (:meth:`flush`), a chunk's lines at once: a run killed with
    ``kill -9`` leaves a file of complete lines holding every sample finished before it waited.
    """

    def __init__(self, metrics: list[str], *, out_dir: str | os.PathLike[str] | None = None,
                 keep_records: bool = True) -> None:
        self.metrics = metrics
        self.ids: list[str] = []
        self._scores: dict[str, list[float]] = {m: [] for m in metrics}
        self._status: dict[str, list[int]] = {m: [] for m in metrics}
        self._score_parts: dict[str, list[NDArray[np.float64]]] = {m: [] for m in metrics}
        self._status_parts: dict[str, list[NDArray[np.int8]]] = {m: [] for m in metrics}
        self.records: list[dict[str, Any]] | None = [] if keep_records else None
        self.out_dir = Path(out_dir) if out_dir is not None else None
        self.formatter = LineFormatter(metrics)
        self._fh: IO[bytes] | None = None
        self._pending: list[str] = []
        if self.out_dir is not None:
            self.out_dir.mkdir(parents=True, exist_ok=True)
            self._fh = open(self.out_dir / "results.jsonl", "wb", buffering=0)  # noqa: SIM115

    def add(self, sample_id: str, results: dict[str, MetricResult], inputs: dict[str, Any] | None = None) -> None:
        """Record one sample's results (one per metric); ``inputs`` (the sample's
        :meth:`~ragmeter.types.Sample.input_metadata`) is written after them when not empty."""
        self.ids.append(sample_id)
        for m in self.metrics:
            r = results[m]
            self._status[m].append(result_status(r))
            self._scores[m].append(float("nan") if r.score is None else float(r.score))
        record = {"id": sample_id, "metrics": {m: results[m].to_record() for m in self.metrics}}
        if inputs:
            record.update(inputs)
        if self.records is not None:
            self.records.append(record)
        if self._fh is not None:
            self._pending.append(record_json(record) + "\n")
            if len(self._pending) >= FLUSH_LINES:
                self.flush()

    def add_columns(self, ids: Sequence[str], columns: Sequence[PatternColumn],
                    others: dict[int, dict[str, MetricResult]] | None = None,
                    inputs: dict[int, dict[str, Any]] | None = None) -> None:
        """Record a chunk of rows at once, in order: row ``i`` (id ``ids[i]``) has the results
        ``others[i]`` when given (rows scored on the Sample path), else its pattern results from
        ``columns`` (one per metric, in :attr:`metrics` order, over those rows in order), formatted
        by :meth:`LineFormatter.format`: the lines :meth:`add` writes for the same results;
        ``inputs[i]``, an ``others`` row's input metadata, as :meth:`add` takes it."""
        pattern_ids = [sid for i, sid in enumerate(ids) if i not in others] if others else ids
        self.add_lines(ids, self.formatter.format(pattern_ids, columns), others, inputs)

    def add_lines(self, ids: Sequence[str], lines: Lines,
                  others: dict[int, dict[str, MetricResult]] | None = None,
                  inputs: dict[int, dict[str, Any]] | None = None) -> None:
        """Record a chunk of rows at once, in order: row ``i`` (id ``ids[i]``) has the results
        ``others[i]`` when given, else the next of ``lines`` (:meth:`LineFormatter.format` of the
        other rows, in order, perhaps on another process); the lines are written as they are."""
        self._seal()
        if others:
            data = self._merge(ids, others, lines, inputs or {})
        else:
            self.ids.extend(ids)
            for m, sc, st in zip(self.metrics, lines.scores, lines.status, strict=True):
                self._score_parts[m].append(sc)
                self._status_parts[m].append(st)
            data = lines.data
        if self.records is not None:
            self.records.extend(json.loads(line) for line in b"".join(data).split(b"\n")[:-1])
        if self._fh is not None:
            self.flush()
            for piece in data:
                self._write(piece)

    def _merge(self, ids: Sequence[str], others: dict[int, dict[str, MetricResult]], lines: Lines,
               inputs: dict[int, dict[str, Any]]) -> list[bytes]:
        """The chunk's lines, score and status rows in input order, pattern rows and others mixed."""
        n = len(ids)
        is_other = np.zeros(n, dtype=bool)
        is_other[list(others)] = True
        at = np.flatnonzero(~is_other)
        out: list[bytes] = [b""] * n
        for j, line in zip(at.tolist(), lines.split(), strict=True):
            out[j] = line
        for k, m in enumerate(self.metrics):
            sc = np.full(n, np.nan)
            st = np.zeros(n, dtype=np.int8)
            if lines.count:
                sc[at], st[at] = lines.scores[k], lines.status[k]
            for i, res in others.items():
                r = res[m]
                st[i] = result_status(r)
                sc[i] = np.nan if r.score is None else float(r.score)
            self._score_parts[m].append(sc)
            self._status_parts[m].append(st)
        for i, res in others.items():
            record = {"id": ids[i], "metrics": {m: res[m].to_record() for m in self.metrics}, **inputs.get(i, {})}
            out[i] = _utf8(record_json(record) + "\n")
        self.ids.extend(ids)
        return [b"".join(out)]

    def _seal(self) -> None:
        """Move the scores collected row by row into the array parts (order kept)."""
        for m in self.metrics:
            if self._scores[m]:
                self._score_parts[m].append(np.asarray(self._scores[m], dtype=np.float64))
                self._status_parts[m].append(np.asarray(self._status[m], dtype=np.int8))
                self._scores[m], self._status[m] = [], []

    def flush(self) -> None:
        """Write the lines held so far to the file, whole (a killed run keeps them)."""
        if self._fh is not None and self._pending:
            data = _utf8("".join(self._pending))
            self._pending = []
            self._write(data)

    def _write(self, data: bytes) -> None:
        assert self._fh is not None
        view = memoryview(data)
        while view:  # a regular file takes it in one call; a short write goes on where it stopped
            written = self._fh.write(view)
            if not written:
                raise OSError(f"cannot write {self.out_dir}/results.jsonl (0 bytes written)")
            view = view[written:]

    def finish(self, run_info: dict[str, Any]) -> RunResult:
        """Close the stream, write ``summary.json`` and return the :class:`RunResult`."""
        self._seal()
        result = RunResult(
            ids=self.ids,
            scores={m: _concat(self._score_parts[m], np.float64) for m in self.metrics},
            status={m: _concat(self._status_parts[m], np.int8) for m in self.metrics},
            records=self.records,
            run=run_info,
        )
        if self._fh is not None:
            self.flush()
            self._fh.close()
            assert self.out_dir is not None
            result.write_summary(self.out_dir / "summary.json")
        return result


def result_status(r: MetricResult) -> int:
    """:data:`ERROR`, :data:`UNDEFINED` or :data:`SCORED`: how one result counts in the summary."""
    return ERROR if r.error is not None else (UNDEFINED if r.score is None else SCORED)


def _concat(parts: list[Any], dtype: Any) -> Any:
    return np.concatenate(parts).astype(dtype, copy=False) if parts else np.zeros(0, dtype=dtype)


def _utf8(text: str) -> bytes:
    """``text`` as UTF-8; a line holding a lone surrogate is written as :func:`record_json` writes it."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        lines = text.splitlines(keepends=True)
        return "".join(line if _encodes(line) else record_json(json.loads(line)) + "\n"
                       for line in lines).encode("utf-8")


def _encodes(line: str) -> bool:
    try:
        line.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def record_json(record: dict[str, Any]) -> str:
    """One ``results.jsonl`` line (without the newline), strict JSON (:func:`~ragmeter.types.json_safe`:
    a NaN or an infinity is null). Text that is not valid Unicode (a lone surrogate, possible only
    from Python objects) is written with ``\\u`` escapes instead of failing the run."""
    text = strict_dumps(record, ensure_ascii=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = strict_dumps(record, ensure_ascii=True)
    return text


def strict_dumps(obj: Any, **kw: Any) -> str:
    """``json.dumps`` of ``obj`` that never writes NaN or Infinity (not JSON): a value JSON cannot
    hold is made JSON first (:func:`~ragmeter.types.json_safe`)."""
    try:
        return json.dumps(obj, allow_nan=False, default=_json_default, **kw)
    except ValueError:  # a NaN, an infinity or an integer too long to print somewhere
        safe = json_safe(obj)
    try:
        return json.dumps(safe, allow_nan=False, default=_json_default, **kw)
    except ValueError:  # numpy values that are not finite: through Python floats first
        return json.dumps(json_safe(json.loads(json.dumps(safe, default=_json_default))), allow_nan=False, **kw)


def _json_default(obj: Any) -> Any:
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    return str(obj)


def _clean(v: float) -> float | None:
    """``v`` as a float, None when it is not finite (a sum beyond a float's range included)."""
    return None if v is None or not math.isfinite(v) else float(v)


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
        out: dict[str, dict[str, Any]] = {}
        for m in self.metrics:
            st = self.status[m]
            scored = self.scores[m][st == SCORED]
            iv = metric_ci(scored, confidence=SUMMARY_CONFIDENCE, seed=0)
            finite = iv.ci is not None and all(math.isfinite(x) for x in iv.ci)  # scores near a float's limit
            out[m] = {
                "mean": _clean(float(scored.mean())) if scored.size else None,
                "n": int(scored.size),
                "undefined": int((st == UNDEFINED).sum()),
                "errors": int((st == ERROR).sum()),
                "ci": iv.ci if finite else None,
                "ci_method": iv.method if finite else "none",
            }
        return out

    def summary_dict(self) -> dict[str, Any]:
        """The content of ``summary.json`` (with ``slices`` when :meth:`set_slices` gave some)."""
        out = {"format": FORMAT_VERSION, "metrics": self.summary(), "run": self.run}
        if self.slices:
            out["slices"] = self.slices
        return out

    #: Per-slice aggregates (:func:`ragmeter.stats.slices.slice_run`), when asked for.
    slices: dict[str, Any] | None = None

    def set_slices(self, slices: dict[str, Any]) -> None:
        """Keep ``slices`` in the summary (``summary.json``'s ``slices`` block)."""
        self.slices = slices
        self.__dict__.pop("_summary_json", None)

    def summary_json(self) -> str:
        """The text of ``summary.json``. Computed once (the intervals are bootstrapped) and kept, so
        the CLI's table, ``--json`` and gate read the summary in hand, not the file back."""
        text: str | None = getattr(self, "_summary_json", None)
        if text is None:
            text = strict_dumps(self.summary_dict(), indent=2, ensure_ascii=False) + "\n"
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
        Needs pandas (:class:`~ragmeter.errors.MissingBackendError` says how to install it).
        """
        pd = require("pandas", "RunResult.to_pandas()")
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
            strict_dumps(r, ensure_ascii=False) + "\n" for r in self.records
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
