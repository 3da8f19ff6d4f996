"""How close is the progress line's ETA to the time that was actually left? A judged run against a
loopback judge that answers every call in ``--latency`` seconds, once per server size: one slot,
four slots, no slot limit (the judge's adaptive concurrency then ramps up through the run).

    PYTHONPATH=src python bench/progress_eta.py               # 50 rows, 1 s per call, slots 1, 4, none
    PYTHONPATH=src python bench/progress_eta.py --rows 50 --latency 1.0 --slots 4 --out eta.json

The judge is the rule-based fake OpenAI-compatible server of the tests (``tests/judges/fake_server.py``
with ``tests/metrics/generation/rules.py``) on 127.0.0.1, so no network and no model are needed.
The metric is ``faithfulness(mode=direct)``: one call per row. The planned total is the run's own
plan (the run driver counts each chunk's calls before its first call), read as ``ragmeter eval``
reads it (:class:`ragmeter.cli.eval_cmd.JudgeCounters`). A thread samples
:meth:`ragmeter.cli._progress.RunProgress.eta` every 0.1 s; after the run, for the first sample
taken with at least 20% (and 50%) of the calls answered, the ETA is compared with the time the run actually still took.
One JSON object: the date, the command and one result per server size (``--out`` writes it to a file too).
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # tests.judges.fake_server, tests.metrics.generation.rules


def run_once(rows: int, latency: float, slots: int | None, port: int = 0) -> dict[str, object]:
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
    out: dict[str, object] = {"slots": slots, "rows": len(samples), "planned_calls": planned,
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
    return out


def main() -> None:
    """Run the bench once per server size and print one JSON object with the ETA errors."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=50)
    ap.add_argument("--latency", type=float, default=1.0)
    ap.add_argument("--port", type=int, default=0, help="the fake judge's port on 127.0.0.1 (0: any free one)")
    ap.add_argument("--slots", default="1,4,none",
                    help="comma-separated requests the judge serves at once, one run each (like llama.cpp's "
                         "slots; 'none': no limit); default 1,4,none")
    ap.add_argument("--out", type=Path, default=None, help="also write the JSON object to this file")
    args = ap.parse_args()
    sizes = [None if s.strip().lower() == "none" else int(s) for s in args.slots.split(",")]
    result = {"date": time.strftime("%Y-%m-%d"), "command": " ".join(["python", *sys.argv]),
              "runs": [run_once(args.rows, args.latency, s, args.port) for s in sizes]}
    text = json.dumps(result, indent=2)
    print(text)
    if args.out is not None:
        args.out.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
