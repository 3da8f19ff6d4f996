"""How close is the progress line's ETA to the time that was actually left? A judged run against a
loopback judge that answers every call in ``--latency`` seconds, once per server size: 1, 2, 4 and
8 slots, and no slot limit (the judge's adaptive concurrency then ramps up through the run).

    PYTHONPATH=src python bench/progress_eta.py               # 50 rows, 1 s per call, slots 1, 2, 4, 8, none
    PYTHONPATH=src python bench/progress_eta.py --rows 50 --latency 1.0 --slots 4 --out eta.json

The judge is the rule-based fake OpenAI-compatible server of the tests (``tests/judges/fake_server.py``
with ``tests/metrics/generation/rules.py``) on 127.0.0.1, so no network and no model are needed.
The metric is ``faithfulness(mode=direct)``: one call per row. The planned total is the run's own
plan (the run driver counts each chunk's calls before its first call), read as ``ragmeter eval``
reads it (:class:`ragmeter.cli.eval_cmd.JudgeCounters`). A thread samples
:meth:`ragmeter.cli._progress.RunProgress.eta` every 0.1 s; after the run, for the first sample
taken with at least 20% (and 50%) of the calls answered, the ETA is compared with the time the run actually still took.
One JSON object: the date, the command and one result per server size (``--out`` writes it to a file too).

**What no ETA can do.** Two servers can look the same to the client until the 20% point: a judge
ramping up its concurrency against a 4-slot server and against one with no slot limit sees the same
replies at the same moments until it sends more requests than 4, and that may happen after 20% of
the calls. The result's ``indistinguishable`` lists each pair of runs whose calls were answered at
the same moments (each count reached within :data:`SAME_WITHIN` seconds) up to the 20% point, with
the time each still took and :func:`best_single_eta_error`: the smallest worst relative error any
single ETA could have had for both, since the progress line saw the same thing in both runs.
"""

from __future__ import annotations

import argparse
import io
import json
import math
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # tests.judges.fake_server, tests.metrics.generation.rules


#: Two runs' histories are the same when each count of answered calls was reached within this many seconds.
SAME_WITHIN = 0.25


def best_single_eta_error(left_a: float, left_b: float) -> float:
    """The smallest worst relative error of one ETA ``e`` said for two runs that took ``left_a`` and
    ``left_b`` seconds more: ``min_e max(|e - a| / a, |e - b| / b) = |a - b| / (a + b)``, at ``e =
    2ab / (a + b)`` (the two errors are equal there, one above and one below).

    >>> best_single_eta_error(10.0, 4.0)  # at e = 80 / 14 = 5.71 s: -43% for one, +43% for the other
    0.42857142857142855
    """
    return abs(left_a - left_b) / (left_a + left_b)


def first_reached(timeline: list[tuple[float, int]], upto: int) -> list[float] | None:
    """For ``(time, answered)`` samples, the time at least ``k`` calls were first seen answered,
    for ``k`` = 1 .. ``upto`` (None when the run never got to ``upto``)."""
    out: list[float] = []
    for t, answered in timeline:
        while len(out) < min(answered, upto):
            out.append(t)
    return out if len(out) == upto else None


def indistinguishable(runs: list[dict[str, Any]], share: float = 0.2) -> list[dict[str, Any]]:
    """The pairs of runs in which each count of answered calls was first seen at the same moment
    (within :data:`SAME_WITHIN` s, from each run's start) up to ``share`` of the planned calls, with
    the time each still took from there and :func:`best_single_eta_error`."""
    out: list[dict[str, Any]] = []
    for i, a in enumerate(runs):
        for b in runs[i + 1:]:
            if a["planned_calls"] != b["planned_calls"]:
                continue
            upto = math.ceil(share * int(a["planned_calls"]))
            ra, rb = first_reached(a["reached"], upto), first_reached(b["reached"], upto)
            if ra is None or rb is None or any(abs(x - y) > SAME_WITHIN for x, y in zip(ra, rb, strict=True)):
                continue
            left_a, left_b = float(a["wall_s"]) - ra[-1], float(b["wall_s"]) - rb[-1]
            out.append({"slots": [a["slots"], b["slots"]], "answered": upto,
                        "left_s": [round(left_a, 2), round(left_b, 2)],
                        "best_single_eta_error": round(best_single_eta_error(left_a, left_b), 3)})
    return out


def run_once(rows: int, latency: float, slots: int | None, port: int = 0) -> dict[str, Any]:
    """One judged run against a fresh fake judge with ``slots`` slots (None: no limit); its ETA errors."""
    from rich.console import Console
    from tests.judges.fake_server import FakeLLMServer
    from tests.metrics.generation.rules import judge_rule

    import ragmeter
    from ragmeter.cli._progress import RunProgress
    from ragmeter.cli.eval_cmd import JudgeCounters
    from ragmeter.io import read_samples
    from ragmeter.judges import from_spec

    data = ROOT / "src" / "ragmeter" / "data" / "validation" / "judge_validation.jsonl"
    samples = list(read_samples(data))[:rows]
    server = FakeLLMServer(judge_rule, latency=latency, port=port, slots=slots).start()
    seen: list[tuple[float, int, float | None]] = []
    try:
        judge = from_spec(f"openai:fake-model@{server.url}", cache=False)
        counters = JudgeCounters(judge, len(samples))
        progress = RunProgress(Console(file=io.StringIO()), total=len(samples), quiet=True, calls=counters.calls)
        done = threading.Event()

        def sample() -> None:
            while not done.is_set():
                eta = progress.eta()
                seen.append((time.monotonic(), int(judge.stats().get("finished", 0)), eta))
                time.sleep(0.1)

        sampler = threading.Thread(target=sample, daemon=True)
        start = time.monotonic()
        sampler.start()
        ragmeter.evaluate(samples, ["faithfulness(mode=direct)"], judge=judge, progress=progress.advance)
        end = time.monotonic()
        done.set()
        sampler.join()
    finally:
        server.stop()
    planned = int(judge.stats()["planned"])
    out: dict[str, Any] = {"slots": slots, "rows": len(samples), "planned_calls": planned,
                              "calls": judge.stats()["calls"], "latency_s": latency, "wall_s": round(end - start, 2)}
    for share in (0.2, 0.5):
        first = next(((t, a, eta) for t, a, eta in seen if a >= share * planned and eta is not None), None)
        if first is None:
            continue
        t, answered, eta = first
        left = end - t
        out[f"at_{int(share * 100)}pct"] = {"answered": answered, "eta_s": round(eta, 2),
                                            "actual_left_s": round(left, 2),
                                            "relative_error": round((eta - left) / left, 3) if left > 0 else None}
    out["timeline"] = [[round(t - start, 1), a, None if e is None else round(e, 1)] for t, a, e in seen[::5]]
    out["reached"] = [[round(t - start, 2), a] for t, a, _ in seen]
    return out


def main() -> None:
    """Run the bench once per server size and print one JSON object with the ETA errors."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=50)
    ap.add_argument("--latency", type=float, default=1.0)
    ap.add_argument("--port", type=int, default=0, help="the fake judge's port on 127.0.0.1 (0: any free one)")
    ap.add_argument("--slots", default="1,2,4,8,none",
                    help="comma-separated requests the judge serves at once, one run each (like llama.cpp's "
                         "slots; 'none': no limit); default 1,2,4,8,none")
    ap.add_argument("--out", type=Path, default=None, help="also write the JSON object to this file")
    args = ap.parse_args()
    sizes = [None if s.strip().lower() == "none" else int(s) for s in args.slots.split(",")]
    result: dict[str, Any] = {"date": time.strftime("%Y-%m-%d"), "command": " ".join(["python", *sys.argv]),
              "runs": [run_once(args.rows, args.latency, s, args.port) for s in sizes]}
    result["indistinguishable"] = indistinguishable(result["runs"])
    for run in result["runs"]:
        del run["reached"]
    text = json.dumps(result, indent=2)
    print(text)
    if args.out is not None:
        args.out.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
