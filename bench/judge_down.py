"""A judge that hangs, throttles forever or dies mid-run: how long ``ragmeter eval`` goes on.

    python bench/judge_down.py {hang,429,die} [--rows N] [--port P] [-- EXTRA EVAL FLAGS]

Serves a scripted OpenAI-compatible judge on loopback (``tests/judges/fake_server.py``): ``hang``
never answers (the client times out), ``429`` answers HTTP 429 with ``Retry-After: 1`` to every
request, ``die`` answers 4 requests and then stops (refused connections). Runs ``ragmeter eval``
on N generated rows with ``-m faithfulness(mode=direct) -m mrr --judge openai:m@URL --no-cache``
plus the extra flags, and prints the exit code, wall time, the requests the server received,
the failed requests the judge counted and the summary's ``aborted`` type. Run from the repository
root with ``PYTHONPATH=src``.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from click.testing import CliRunner
from tests.judges.fake_server import FakeLLMServer, Reply

from ragmeter.cli import main


def run(scenario: str, rows: int, port: int, extra: list[str]) -> dict:
    box: dict = {}

    def rule(call):
        if scenario == "hang":
            return Reply.hanging(600)
        if scenario == "429":
            return Reply.rate_limited(retry_after=1)
        if call.index >= 4:  # die: the 5th request finds the server stopping, later ones find it gone
            if call.index == 4:
                threading.Timer(0.05, box["server"].stop).start()
            return Reply.dropped()
        return Reply(content="yes")

    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "rows.jsonl"
        data.write_text("".join(json.dumps({"id": f"r{i}", "query": f"q{i}?", "answer": f"Answer {i}.",
                                            "contexts": [{"id": "d1", "text": f"Answer {i}."}],
                                            "relevant": ["d1"]}) + "\n" for i in range(rows)))
        server = box["server"] = FakeLLMServer(rule, port=port).start()
        t0 = time.perf_counter()
        try:
            res = CliRunner().invoke(main, ["eval", str(data), "-m", "faithfulness(mode=direct)", "-m", "mrr",
                                            "--judge", f"openai:m@{server.url}", "-o", f"{tmp}/o", "--no-report",
                                            "--no-cache", *extra], catch_exceptions=False)
        finally:
            server.stop()
        summary = json.loads(Path(f"{tmp}/o/summary.json").read_text())
    return {"scenario": scenario, "rows": rows, "exit": res.exit_code, "seconds": round(time.perf_counter() - t0, 1),
            "server_requests": len(server.log),
            "failed_requests": sum(summary["run"]["judge"].get("attempt_errors", {}).values()),
            "aborted": (summary["run"].get("aborted") or {}).get("type")}


def main_() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("scenario", choices=["hang", "429", "die"])
    parser.add_argument("--rows", type=int, default=12)
    parser.add_argument("--port", type=int, default=0)
    args, extra = parser.parse_known_args()
    print(json.dumps(run(args.scenario, args.rows, args.port, [a for a in extra if a != "--"])))


if __name__ == "__main__":
    main_()
