"""Progress on every engine. The local engine reports each sample as it is finished (judged
runs move from their first sample); the columnar engine reports each record batch as it is
written (its rows finish together); Ray each chunk as the driver writes it. On every engine the
counts add up to the rows, bad rows included.

The CLI's bar has a total known before the run (:func:`ragmeter.cli._progress.count_rows`)
that the counts of every engine reach exactly, and an ETA once rows are done; off a terminal it
prints a plain line every 30 s at most."""

from __future__ import annotations

import gzip
import io
import json
from pathlib import Path
from typing import Any

import pytest

from ragmeter import evaluate
from ragmeter.cli._progress import RunProgress, count_lines, count_rows
from ragmeter.engines.columnar import run_columnar
from ragmeter.io import ReadOptions, read_samples
from tests.engines.test_engines_identical import _generated, _write

pytest.importorskip("pyarrow")
METRICS = ["mrr", "ndcg@10"]


def _data(tmp: Path, n: int = 500) -> tuple[Path, Path]:
    jsonl, parquet = _write(_generated(n), tmp, "p")
    with jsonl.open("a", encoding="utf-8") as fh:
        fh.write("\n{not json\n\n")  # a bad row counts too; empty lines are not rows
    return jsonl, parquet


def test_local_engine_reports_every_sample(tmp_path: Path) -> None:
    jsonl, _ = _data(tmp_path)
    calls: list[int] = []
    evaluate(read_samples(jsonl, on_error="skip"), METRICS, out_dir=str(tmp_path / "o"), progress=calls.append,
             keep_records=False, engine="local")
    assert calls == [1] * 501
    assert count_rows(jsonl) == 501  # the bar's total: what the engine reports, exactly


def test_columnar_engines_report_every_batch(tmp_path: Path) -> None:
    jsonl, parquet = _data(tmp_path)
    calls: list[int] = []
    run_columnar(parquet, METRICS, read=ReadOptions(), out_dir=tmp_path / "pq", progress=calls.append, batch_rows=128)
    assert calls == [128, 128, 128, 116]
    assert count_rows(parquet) == 500  # from the file's metadata
    calls = []
    run = evaluate(jsonl, METRICS, out_dir=tmp_path / "jl", on_error="skip", progress=calls.append, engine="local")
    assert run.run["engine"]["path"] == "columnar" and sum(calls) == 501 and len(calls) >= 1
    assert count_rows(jsonl) == sum(calls)


def test_ray_engine_reports_every_row(ray_cluster, tmp_path: Path) -> None:
    pytest.importorskip("ragmeter.engines.ray_engine")
    jsonl, parquet = _data(tmp_path)
    calls: list[int] = []
    evaluate(jsonl, METRICS, engine="ray", out_dir=tmp_path / "r1", on_error="skip", chunk_size=100,
                            progress=calls.append)
    assert calls == [1] * 501  # each row as it is written, bad rows too
    assert count_rows(jsonl) == sum(calls)
    calls = []
    run = evaluate(parquet, METRICS, engine="ray", out_dir=tmp_path / "r2", progress=calls.append)
    assert sum(calls) == 500 and run.run["engine"]["path"] == "columnar"
    assert json.loads((tmp_path / "r2" / "summary.json").read_text())["metrics"]["mrr"]["n"] > 0


def test_count_lines_on_block_edges_and_empty_lines(tmp_path: Path, monkeypatch) -> None:
    from ragmeter.cli import _progress

    text = b"\n\n{}\n{}\n\n\n\n{}\n\n{}"  # 4 rows: empty lines at the start, in runs, no final newline
    path = tmp_path / "x.jsonl"
    path.write_bytes(text)
    for block in (1, 2, 3, 5, 1 << 20):  # every way the blocks can cut the runs of newlines
        monkeypatch.setattr(_progress, "BLOCK", block)
        assert count_lines(path) == 4, block
    path.write_bytes(b"")
    assert count_lines(path) == 0


def test_count_rows_per_format(tmp_path: Path) -> None:
    csv = tmp_path / "x.csv"
    csv.write_text("id,query\na,q1\nb,q2\nc,q3\n", encoding="utf-8")
    assert count_rows(csv) == 3  # the header is not a row
    gz = tmp_path / "x.jsonl.gz"
    gz.write_bytes(gzip.compress(b'{"id": "a"}\n'))
    assert count_rows(gz) is None  # no cheap count: the bar shows rows without a total
    assert count_rows(tmp_path / "x.json") is None and count_rows(tmp_path / "missing.jsonl") is None


class _Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def _render(progress: RunProgress) -> str:
    from rich.console import Console

    buf = io.StringIO()
    Console(file=buf, width=200, force_terminal=False, color_system=None).print(progress.progress.get_renderable())
    return buf.getvalue()


def test_bar_shows_total_rows_and_eta() -> None:
    from rich.console import Console

    clock = _Clock()
    term = Console(file=io.StringIO(), force_terminal=True, width=200)
    bar = RunProgress(term, total=100, get_time=clock)
    assert bar.live and bar.log is None
    assert "0/100 rows" in _render(bar) and "ETA -:--:--" in _render(bar)
    clock.t = 4.0
    bar.advance(10)
    # one update (an engine reporting a large batch): the rate since the start, 10 rows / 4 s;
    # 90 rows left at 2.5 rows/s: 36 s
    assert "ETA 0:00:36" in _render(bar) and "2 rows/s" in _render(bar)
    clock.t = 5.0
    bar.advance(10)
    # then rich's speed: rows after the first update over the time since it, 10 rows / 1 s; 80 rows
    # left at 10 rows/s: 8 s
    line = _render(bar)
    assert "20/100 rows (20%)" in line and "10 rows/s" in line
    assert "ETA 0:00:08" in line
    assert len(line.strip().splitlines()) == 1  # one line


def test_plain_lines_off_a_terminal_at_most_every_interval() -> None:
    from rich.console import Console

    clock, log = _Clock(), io.StringIO()
    plain = Console(file=io.StringIO(), force_terminal=False)
    bar = RunProgress(plain, total=1000, get_time=clock, interval=30.0, log=log)
    assert not bar.live
    for second in range(1, 91):  # 10 rows a second for 90 s
        clock.t = float(second)
        bar.advance(10)
    lines = log.getvalue().splitlines()
    assert len(lines) == 3  # at 30, 60 and 90 s, not one per update
    assert lines[0].startswith("evaluating: 300/1,000 rows (30%), 10 rows/s, elapsed 0:00:30, ETA 0:01:10")
    assert lines[2].startswith("evaluating: 900/1,000 rows (90%)")
    judged = RunProgress(plain, total=None, get_time=clock, interval=30.0, log=log,
                         status=lambda: "judge: 12 calls, 0 cached, 0 errors, 900 tokens, cost unknown")
    clock.t += 31
    judged.advance(5)  # no total (a .gz file): rows and rate, no ETA; a judged run's counters
    assert log.getvalue().splitlines()[-1] == ("evaluating: 5 rows, 0 rows/s, elapsed 0:00:31, "
                                               "judge: 12 calls, 0 cached, 0 errors, 900 tokens, cost unknown")
    quiet = RunProgress(plain, total=10, get_time=clock, quiet=True)
    assert quiet.log is None and not quiet.live


def test_finish_lowers_an_overcounted_total() -> None:
    from rich.console import Console

    bar = RunProgress(Console(file=io.StringIO()), total=10)
    bar.advance(7)  # a CSV with line breaks inside quoted fields: fewer rows than lines
    bar.finish()
    assert bar.progress.tasks[0].total == 7 and bar.progress.tasks[0].finished


def _judged_run(width: int) -> tuple[Any, _Clock, list[int], list[str]]:
    """A judged run on a fake clock: 50 rows of 6 judge calls each (300 planned), a judge answering
    each call in 1 s with 4 calls in flight from t = 0 (4 calls/s from t = 1 s: the run ends at
    t = 76 s); a row finishes when its 6th call is answered."""
    from rich.console import Console

    clock, answered = _Clock(), [0]
    log = io.StringIO()
    bar = RunProgress(Console(file=io.StringIO(), force_terminal=False, width=width), total=50, get_time=clock,
                      interval=1.0, log=log, calls=lambda: (answered[0], 300, min(300, answered[0] + 4)),
                      status=lambda: "judge: 300 calls, 0 cached, 0 errors, 91,000 tokens, $0.0123")
    return bar, clock, answered, []


def _step_to(bar: Any, clock: _Clock, answered: list[int], t: float) -> None:
    """Advance the fake run to time ``t`` (rows reported as they finish)."""
    clock.t = t
    now = min(300, int(4 * max(0.0, t - 1.0)))
    rows_before, rows_now = answered[0] // 6, now // 6
    answered[0] = now
    if rows_now > rows_before:
        bar.advance(rows_now - rows_before)


def test_eta_from_the_call_rate_is_within_30_percent_after_a_fifth_of_the_calls() -> None:
    bar, clock, answered, _ = _judged_run(200)
    t = 0.0
    while answered[0] < 60:  # 20% of the 300 planned calls
        t += 0.5
        _step_to(bar, clock, answered, t)
    remaining = 76.0 - t  # 240 calls left at 4 calls/s after the first second
    eta = bar.eta()
    assert eta is not None and abs(eta - remaining) <= 0.3 * remaining
    line = bar.line()
    assert "judge 60/300 calls" in line and "10/50 rows (20%)" in line and "calls/s" in line
    # a row-based ETA would have said nothing before the first row finished; this one is there from
    # the first answered call (t = 1.5 s: 2 calls)
    bar2, clock2, answered2, _ = _judged_run(200)
    _step_to(bar2, clock2, answered2, 1.5)
    assert answered2[0] == 2 and bar2.progress.tasks[0].completed == 0 and bar2.eta() is not None


@pytest.mark.parametrize("width", [60, 80, 120, 200])
def test_one_line_at_any_width_of_60_or_more_with_rows_calls_and_eta(width: int) -> None:
    bar, clock, answered, _ = _judged_run(width)
    _step_to(bar, clock, answered, 40.0)
    line = bar.line(width=width)
    assert len(line) <= width and "\n" not in line
    assert "/50 rows" in line and "judge 156/300 calls" in line and "ETA 0:00:3" in line  # 144 calls / 4 per s
    if width >= 200:
        assert "judge: 300 calls" in line and "elapsed 0:00:40" in line  # everything fits
    # the terminal's display is that one line too (spinner + line)
    from rich.console import Console

    buf = io.StringIO()
    Console(file=buf, width=width, force_terminal=False, color_system=None).print(bar.progress.get_renderable())
    assert len(buf.getvalue().rstrip("\n").splitlines()) == 1


def test_time_before_the_first_judge_call_does_not_count() -> None:
    from ragmeter.cli._progress import CallRate

    # 20 s of loading (no call asked), then 2 calls/s: the rate is 2, not 40 calls / 40 s = 1
    rate = CallRate(window=60)
    for t in range(0, 41):
        asked = 0 if t < 20 else 100
        rate.observe(float(t), max(0, 2 * (t - 20)), asked)
    assert rate.rate() == 2.0


def _ramp_answered(t: float) -> int:
    """Calls answered by time ``t`` of a judge answering every call in 1 s, in waves (all the calls
    in flight end together): one call in flight until t = 20 s, then four (as when the judge's
    adaptive concurrency ramps up): 20 calls by t = 20, then 4 more every second."""
    waves = int(t)  # wave k ends at t = k
    return min(waves, 20) + 4 * max(0, waves - 20)


def test_eta_follows_the_rate_when_concurrency_ramps_up_mid_run() -> None:
    from rich.console import Console

    planned = 200  # the run ends at t = 20 + 180 / 4 = 65 s
    clock, answered = _Clock(), [0]
    bar = RunProgress(Console(file=io.StringIO()), total=planned, quiet=True, get_time=clock,
                      calls=lambda: (answered[0], planned, min(planned, answered[0] + 4)))
    errors: list[tuple[float, float]] = []
    for step in range(1, 650):  # the display refreshes every 0.1 s
        clock.t = step / 10
        answered[0] = _ramp_answered(clock.t)
        eta = bar.eta()
        if 20 + 4 <= clock.t <= 55:  # from 4 round trips after the change to 10 s (10 waves) before the end
            assert eta is not None
            remaining = 65.0 - clock.t
            errors.append((clock.t, (eta - remaining) / remaining))
    worst = max(errors, key=lambda e: abs(e[1]))
    assert abs(worst[1]) <= 0.3, worst
    # the average since the first call (what the rate was before) would be ~2x off there
    clock.t = 24.0
    assert (planned - _ramp_answered(24.0)) / (_ramp_answered(24.0) / 24.0) > 1.3 * (65.0 - 24.0)


def test_a_finished_run_shows_the_calls_made_and_no_time_left() -> None:
    # the plan expected 10 calls (some depend on the replies); the 4 rows ended after 9
    from rich.console import Console

    clock, answered = _Clock(), [0]
    bar = RunProgress(Console(file=io.StringIO()), total=4, quiet=True, get_time=clock,
                      calls=lambda: (answered[0], 10, answered[0], False))
    clock.t, answered[0] = 60.0, 6
    bar.advance(3)
    assert "judge 6/~10 calls" in bar.line() and (bar.eta() or 0) > 0
    clock.t, answered[0] = 90.0, 9
    bar.advance(1)
    line = bar.line()
    assert "judge 9 calls" in line and "/~10" not in line
    assert bar.eta() == 0.0 and "ETA 0:00:00" in line
