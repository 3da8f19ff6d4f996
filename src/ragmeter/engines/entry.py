"""The one public entry point, :func:`evaluate` (``ragmeter.evaluate``): data as the user holds it,
on the engine it names.

========================================  =====================================================
data and engine                           how it runs
========================================  =====================================================
``engine="local"``, a Parquet, JSONL or   the columnar fast path (:func:`.columnar.run_columnar`:
CSV file, every metric a kernel           Parquet record batches, :mod:`._jsonl` and :mod:`._csv`
(retrieval) metric, pyarrow installed     blocks), same output, ~20x the rows per second
``engine="local"``, anything else         :func:`ragmeter.evaluator.run_local`: the ``Sample``
                                          path over :func:`ragmeter.io.as_samples` in this process
                                          (a Parquet file needs pyarrow there too: the ``arrow``
                                          extra)
``engine="ray"``                          :func:`.ray_engine.run_ray` (the judge and embedder are
                                          rebuilt on every worker from their configs)
``engine="processes"``                    :func:`.processes.run_processes`: the ``Sample`` path in
                                          a pool of local worker processes (the judge and
                                          embedder rebuilt in each from their configs)
``engine="auto"`` (default)               ``ray`` when Ray is initialised in this process, else
                                          ``local``
========================================  =====================================================

Every way writes the same ``results.jsonl`` and ``summary.json`` (``tests/engines/test_run_matrix.py``).
"""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Callable, Sequence
from typing import Any

from .._optional import available
from ..backend_config import EmbedderConfig, JudgeConfig
from ..errors import InputError, InvalidParameterError
from ..evaluator import run_local
from ..io.options import ReadOptions, read_options
from ..io.readers import input_format
from ..io.records import DEFAULT_MAX_TEXT_CHARS
from ..results import RunResult
from . import ENGINES
from .columnar import kernel_evaluators, run_columnar

__all__ = ["choose_engine", "evaluate"]

#: Samples per chunk on the local engine's ``Sample`` path (``chunk_size=None``).
LOCAL_CHUNK_SIZE = 2048


def choose_engine(engine: str, judge: Any = None, embedder: Any = None) -> str:
    """The engine a run takes: ``engine`` itself, or for ``"auto"`` ``"ray"`` when Ray is imported
    and initialised in this process and the judge and embedder can be rebuilt on its workers (None,
    a spec or a config; an object such as a live judge keeps the run local), else ``"local"``
    (Ray is never imported here)."""
    if engine not in ("auto", *ENGINES):
        raise InvalidParameterError(f"engine: expected one of auto, {', '.join(ENGINES)}, got {engine!r}")
    if engine != "auto":
        return engine
    ray = sys.modules.get("ray")
    initialised = getattr(ray, "is_initialized", None)
    if not (callable(initialised) and initialised()):
        return "local"
    try:
        _ray_config(judge, "judge", JudgeConfig, None)
        _ray_config(embedder, "embedder", EmbedderConfig, None)
    except InvalidParameterError:
        return "local"
    return "ray"


def _columnar_format(path: str | os.PathLike[str], format: str | None) -> bool:
    """True for a file the columnar path reads (Parquet, JSONL, CSV) when pyarrow, which it reads
    with, is installed; without it the ``Sample`` path reads JSONL and CSV (same results) and says
    that Parquet needs the ``arrow`` extra."""
    try:
        fmt = input_format(path, format)
    except (InputError, InvalidParameterError):
        return False
    return fmt in ("parquet", "jsonl", "csv") and available("pyarrow")


def _ray_config(value: Any, kind: str, config: type[Any], metrics: Sequence[str] | None,
               engine: str = "ray") -> Any:
    """A judge / embedder given to :func:`evaluate` as the config every worker of ``engine`` (Ray's,
    or the worker processes) builds from: a config as it is, a spec string made one, an object's
    ``config``; None stays None."""
    if value is None or isinstance(value, config):
        return value
    if kind == "embedder" and value == "auto":
        from ..embedders import DEFAULT_SPEC, wants_default

        return EmbedderConfig(DEFAULT_SPEC) if wants_default(metrics) else None
    if isinstance(value, str):
        return JudgeConfig.from_options(value) if config is JudgeConfig else EmbedderConfig(value)
    own = getattr(value, "config", None)
    if isinstance(own, config):
        return own
    raise InvalidParameterError(
        f"{kind}: expected a spec string or a {config.__name__} for engine={engine!r}, got a "
        f"{type(value).__name__} object: every worker builds its own {kind} (an object holds connections and is "
        f"not shipped); "
        f"pass {kind}=\"<backend>:<model>\" or {kind}={config.__name__}(\"<backend>:<model>\", ...)")


def evaluate(
    data: Any,
    metrics: Sequence[str] | None = None,
    *,
    engine: str = "auto",
    judge: Any = None,
    embedder: Any = "auto",
    out_dir: str | os.PathLike[str] | None = None,
    keep_records: bool = True,
    chunk_size: int | None = None,
    progress: Callable[[int], None] | None = None,
    run_info: dict[str, Any] | None = None,
    on_error: str = "raise",
    field_map: dict[str, str] | None = None,
    format: str | None = None,
    max_text_chars: int | None = DEFAULT_MAX_TEXT_CHARS,
    read: ReadOptions | None = None,
    on_bad_row: Callable[[InputError], None] | None = None,
    on_judge_stats: Callable[[dict[str, Any]], None] | None = None,
    address: str | None = None,
    num_workers: int | None = None,
    metric_modules: Sequence[str] = (),
    max_retries: int = 3,
) -> RunResult:
    """Evaluate ``data`` on ``metrics`` and return a :class:`~ragmeter.results.RunResult`.

    Parameters
    ----------
    data:
        The data as you hold it (:func:`ragmeter.io.as_samples`): a path (JSONL, JSON, CSV,
        Parquet; on Ray also a Parquet directory or a URI Ray Data reads), a dict, a list of dicts
        or :class:`~ragmeter.types.Sample` objects, a pandas DataFrame, a Hugging Face
        ``Dataset``, RAGAS ``EvaluationDataset`` / ``SingleTurnSample`` or DeepEval
        ``LLMTestCase`` objects. Rows follow the files' rules (a row without ``id`` gets its
        1-based position; a bad row raises an InputError naming the row and the field). An
        :class:`~ragmeter.errors.InputError` item (from a reader with ``on_error="skip"``) is
        recorded as an errored sample.
    metrics:
        Metric names such as ``["ndcg@5", "mrr"]``; None picks every default metric that the
        data's fields and the given backends allow.
    engine:
        ``"local"`` (this process), ``"ray"`` (the workers of a Ray cluster), ``"processes"`` (a
        pool of ``num_workers`` local worker processes, for CPU-bound metrics) or ``"auto"``
        (default): ``"ray"`` when Ray is initialised in this process and the judge and embedder
        are given as specs or configs (a judge object keeps the run local), else ``"local"``. On the
        local engine a Parquet, JSONL or CSV file whose metrics all have a vectorised kernel (the
        retrieval metrics) takes the columnar fast path when pyarrow is installed (the ``arrow``
        extra); the output is the same.
    judge:
        A :class:`~ragmeter.judges.Judge`, a spec (``"openai:gpt-4o-mini"``,
        :func:`ragmeter.judges.from_spec`), a :class:`~ragmeter.backend_config.JudgeConfig`, or
        None (no judged metric). On Ray and on processes a spec or a JudgeConfig: every worker
        builds its own.
    embedder:
        An embedder, a spec (``"bert:all-MiniLM-L6-v2"``), an
        :class:`~ragmeter.backend_config.EmbedderConfig`, None for none, or ``"auto"`` (default):
        the offline MiniLM model when it is installed and ``metrics`` is None or names a metric that
        needs one (:func:`ragmeter.embedders.wants_default`, the rule ``ragmeter eval`` follows too).
    out_dir:
        When given, ``results.jsonl`` is streamed there as rows finish and ``summary.json``
        written at the end, so memory stays bounded whatever the input size.
    keep_records:
        Keep every per-sample :class:`~ragmeter.types.MetricResult` and the input samples in
        memory (``RunResult.to_pandas(inputs=True)``; the columnar path keeps the records but not
        the input samples); the score table is always kept.
    chunk_size:
        Samples scored per chunk (None: 2,048 locally, 512 per Ray task, 256 per worker process).
    progress:
        Called with a count as rows are finished and recorded, in input order.
    run_info:
        Keys added to the run info of ``summary.json``.
    on_error, field_map, format, max_text_chars:
        How rows are read (:class:`~ragmeter.io.ReadOptions`): ``on_error="skip"`` records a bad
        row as an errored sample instead of stopping the run; ``field_map`` renames your columns;
        ``format`` names a file's format when its extension does not; ``max_text_chars`` bounds
        every text a row may hold (default 1,000,000; None or 0: no limit).
    read:
        The same four as one :class:`~ragmeter.io.ReadOptions` (then leave them at their defaults).
    on_bad_row:
        Sees every bad row's :class:`~ragmeter.errors.InputError` (``on_error="skip"``).
    on_judge_stats:
        Ray: called with the workers' judge counters summed, as chunks finish (a local judge
        object has them live).
    address, num_workers, metric_modules, max_retries:
        Ray: the cluster to join when Ray is not initialised (``"auto"``, ``"ray://host:10001"``;
        None starts a local one, shut down at the end); tasks at once (default: the cluster's
        CPUs); modules the workers import first (where plugin metrics register); retries of a task
        whose worker died. ``num_workers`` and ``metric_modules`` serve the processes engine too
        (default: this machine's CPUs).

    Raises
    ------
    InvalidParameterError
        An unknown engine, metric or option; a judge object on Ray or processes (pass a spec or a
        JudgeConfig).
    InputError
        Bad input (``on_error="raise"``), naming the file or source, the row and the field.
    MissingBackendError
        ``engine="ray"`` without Ray installed; a Parquet file without pyarrow (the ``arrow``
        extra); a judge or embedder whose backend's package is not installed.

    Works in plain scripts and inside a running event loop (Jupyter): there a local run goes on
    in a worker thread with its own loop.

    Examples
    --------
    >>> import ragmeter
    >>> rows = [{"id": "q1", "contexts": [{"id": "d2"}, {"id": "d1"}], "relevant": ["d1"]}]
    >>> ragmeter.evaluate(rows, ["mrr"]).summary()["mrr"]["mean"]
    0.5
    """
    opts = read_options(read, on_error=on_error, field_map=field_map, format=format, max_text_chars=max_text_chars)
    chosen = choose_engine(engine, judge, embedder)
    if chosen == "ray":
        from .ray_engine import DEFAULT_BATCH_SIZE, RayOptions, run_ray

        ray_opts = RayOptions(opts, out_dir, num_workers, chunk_size or DEFAULT_BATCH_SIZE, keep_records,
                              tuple(metric_modules), max_retries, progress, on_bad_row, on_judge_stats, run_info)
        result = run_ray(data, metrics, ray_opts, address=address,
                         judge_config=_ray_config(judge, "judge", JudgeConfig, metrics),
                         embedder_config=_ray_config(embedder, "embedder", EmbedderConfig, metrics))
    elif chosen == "processes":
        from .processes import DEFAULT_CHUNK_SIZE, ProcessOptions, run_processes

        proc_opts = ProcessOptions(opts, out_dir, num_workers, chunk_size or DEFAULT_CHUNK_SIZE, keep_records,
                                   tuple(metric_modules), progress, on_bad_row, on_judge_stats, run_info)
        result = run_processes(
            data, metrics, proc_opts,
            judge_config=_ray_config(judge, "judge", JudgeConfig, metrics, "processes"),
            embedder_config=_ray_config(embedder, "embedder", EmbedderConfig, metrics, "processes"))
    else:
        result = _run_locally(data, metrics, opts, judge=judge, embedder=embedder, out_dir=out_dir,
                              keep_records=keep_records, chunk_size=chunk_size or LOCAL_CHUNK_SIZE,
                              progress=progress, run_info=run_info, on_bad_row=on_bad_row)
    for hint in result.run.get("field_hints", ()):  # a field the data seems to give under another name
        warnings.warn(hint, UserWarning, stacklevel=2)
    return result


def _run_locally(data: Any, metrics: Sequence[str] | None, read: ReadOptions, *, judge: Any, embedder: Any,
                 run_info: dict[str, Any] | None, **options: Any) -> RunResult:
    """The local engine: the columnar fast path for a file it reads and kernel metrics, else the
    ``Sample`` path (:func:`ragmeter.evaluator.run_local`)."""
    if isinstance(data, str | os.PathLike) and _columnar_format(data, read.format):
        kernels = kernel_evaluators(metrics)
        if kernels is not None:
            assert metrics is not None
            options.pop("chunk_size")
            return run_columnar(data, list(metrics), read=read, evaluators=kernels,
                                run_info={**(run_info or {}), "engine": {"name": "local", "path": "columnar"}},
                                **options)
    from ..embedders import resolve as resolve_embedder

    if isinstance(embedder, EmbedderConfig):
        embedder = embedder.build()
    return run_local(data, list(metrics) if metrics is not None else None, read=read, judge=judge,
                     embedder=resolve_embedder(embedder, metrics), run_info=run_info, **options)

