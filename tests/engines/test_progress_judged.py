"""The progress line of a judged run, wired as ``ragmeter eval`` wires it (the driver's plan, the
judge's counters through :class:`~ragmeter.cli.eval_cmd.JudgeCounters`, :func:`evaluate_file`),
against the loopback OpenAI-compatible judge on a fake clock.

The judge answers one call at a time in 1 s of the fake clock: the server's rule moves the clock
1 s forward for every request it answers. 50 rows of ``faithfulness(mode=direct)`` (one call per
row, counted by hand: 50 planned before the first call) then take 50 s; after 10 calls (20%) the
40 calls left take 40 s, and the printed ETA must be within 30% of the time the run really took
from there.
"""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

from rich.console import Console

from ragmeter.cli._progress import RunProgress
from ragmeter.cli.eval_cmd import JudgeCounters
from ragmeter.engines.local import evaluate_file
from tests.engines.test_progress import _Clock
from tests.judges.conftest import _fake_llm_session, fake_llm, judge_cache_dir, make_judge  # noqa: F401
from tests.metrics.generation.rules import judge_rule

ROWS = 50
DATA = Path(__file__).resolve().parents[2] / "src/ragmeter/data/validation/judge_validation.jsonl"


def _seconds(clock_text: str) -> int:
    h, m, s = (int(x) for x in clock_text.split(":"))
    return 3600 * h + 60 * m + s


def test_planned_calls_and_eta_of_a_judged_run(fake_llm: Any, make_judge: Any,  # noqa: F811
                                                tmp_path: Path) -> None:
    clock = _Clock()

    def one_second_per_call(call: Any) -> Any:
        clock.t += 1.0
        return judge_rule(call)

    fake_llm.rule = one_second_per_call
    data = tmp_path / "qa.jsonl"
    data.write_text("".join(line + "\n" for line in DATA.read_text(encoding="utf-8").splitlines()[:ROWS]),
                    encoding="utf-8")
    judge = make_judge(concurrency=1)  # one call at a time: the fake clock moves with the answers
    counters = JudgeCounters(judge, ROWS)
    bar = RunProgress(Console(file=io.StringIO()), total=ROWS, quiet=True, get_time=clock, calls=counters.calls)
    lines: list[tuple[float, int, str]] = []  # (clock, calls answered, the line) at every row written

    def advance(n: int) -> None:
        bar.advance(n)
        lines.append((clock.t, counters.calls()[0], bar.line()))

    planned_before: list[Any] = []
    fake_llm.rule = lambda call: planned_before.append(judge.stats().get("planned")) or one_second_per_call(call)
    evaluate_file(data, ["faithfulness(mode=direct)"], judge=judge, progress=advance, out_dir=tmp_path / "out")
    end = clock.t
    assert end == ROWS  # one call per row, 1 s each
    assert planned_before[0] == ROWS  # known when the server got the first call
    t, answered, line = next(x for x in lines if x[1] >= 0.2 * ROWS)
    assert f"judge {answered}/{ROWS} calls" in line
    eta = _seconds(re.search(r"ETA (\d+:\d\d:\d\d)", line).group(1))  # type: ignore[union-attr]
    left = end - t
    assert left > 0 and abs(eta - left) <= 0.3 * left, (eta, left, line)
    print(f"ETA {eta} s at {answered} calls answered, {left:.0f} s left: {line}")
    assert json.loads((tmp_path / "out" / "summary.json").read_text())["run"]["judge"]["calls"] == ROWS
