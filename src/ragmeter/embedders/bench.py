"""Time an embedder on synthetic texts: ``python -m ragmeter.embedders.bench [SPEC] [-n N] [--words W]``.

Prints the model load time, the wall-clock and CPU time to embed N distinct texts of about W words (default 1,000
texts of 30 words, like short RAG answers) with the cache off, and the time to read them back
from a fresh on-disk cache. Texts are generated from a fixed seed, so runs are comparable.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time

WORDS = ("the of and a to in is was for on that with as by it from at are this be which or an has have "
         "retrieval model answer question context document paris france river city population capital "
         "water energy protein cell climate market price bank policy court law history war treaty king "
         "engine speed data network server memory cache query index score rank metric evaluation").split()


def synthetic_texts(n: int, words: int, seed: int = 0) -> list[str]:
    """``n`` distinct pseudo-sentences of ``words`` +/- 50% words."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        k = max(1, int(words * rng.uniform(0.5, 1.5)))
        out.append(f"{i}. " + " ".join(rng.choice(WORDS) for _ in range(k)).capitalize() + ".")
    return out


def main(argv: list[str] | None = None) -> None:
    """Run the benchmark (see the module docstring)."""
    from . import DEFAULT_SPEC, from_spec

    ap = argparse.ArgumentParser(prog="python -m ragmeter.embedders.bench", description=__doc__)
    ap.add_argument("spec", nargs="?", default=DEFAULT_SPEC)
    ap.add_argument("-n", type=int, default=1000, help="number of texts (default 1000)")
    ap.add_argument("--words", type=int, default=30, help="mean words per text (default 30)")
    ap.add_argument("--batch-size", type=int, default=None)
    args = ap.parse_args(argv)
    texts = synthetic_texts(args.n, args.words)
    with tempfile.TemporaryDirectory() as tmp:
        emb = from_spec(args.spec, batch_size=args.batch_size, cache=tmp)
        t0 = time.perf_counter()
        local = emb.backend in ("st", "bert")
        if local:
            _ = emb.model  # type: ignore[attr-defined]  # load now: the timing below is embedding only
        t_load = time.perf_counter() - t0
        t0, c0 = time.perf_counter(), time.process_time()
        emb.embed(texts)
        t_embed, c_embed = time.perf_counter() - t0, time.process_time() - c0
        fresh = from_spec(args.spec, batch_size=args.batch_size, cache=tmp)
        t0 = time.perf_counter()
        fresh.embed(texts)
        t_cached = time.perf_counter() - t0
    print(f"embedder     {emb.model_id}")
    if local:
        print(f"load         {t_load:.2f} s (imports + model)")
    print(f"embed        {args.n} texts x ~{args.words} words: {t_embed:.2f} s "
          f"({args.n / t_embed:.0f} texts/s, batch size {emb.batch_size}); CPU time {c_embed:.2f} s")
    print(f"from cache   {t_cached:.2f} s ({fresh.stats.cache_hits} hits, {fresh.stats.backend_calls} backend calls)")


if __name__ == "__main__":
    main()
