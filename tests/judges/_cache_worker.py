"""A client process for the kill-and-resume and multi-process cache tests.

``python _cache_worker.py URL CACHE_DIR START STOP OUT [CONCURRENCY]`` asks the judge
``call i`` for i in [START, STOP) through the persistent cache and writes ``{i: [id, score]}``
as JSON to OUT when done.
"""

from __future__ import annotations

import asyncio
import json
import sys

from pydantic import BaseModel

from ragmeter.judges import from_spec


class Verdict(BaseModel):
    id: int
    score: int


async def main(url: str, cache_dir: str, start: int, stop: int, out: str, concurrency: int) -> None:
    judge = from_spec(f"openai:fake-model@{url}", cache=cache_dir, concurrency=concurrency, timeout=30)
    results = await asyncio.gather(*(judge.judge(f"call {i}", Verdict) for i in range(start, stop)))
    await judge.aclose()
    with open(out, "w", encoding="utf-8") as fh:
        json.dump({str(i): [r.value.id, r.value.score] for i, r in zip(range(start, stop), results, strict=True)}, fh)
    print(json.dumps(judge.stats()["cache_hits"]), flush=True)


if __name__ == "__main__":
    url, cache_dir, start, stop, out = sys.argv[1:6]
    conc = int(sys.argv[6]) if len(sys.argv) > 6 else 4
    asyncio.run(main(url, cache_dir, int(start), int(stop), out, conc))
