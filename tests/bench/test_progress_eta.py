"""bench/progress_eta.py: the bound on any single ETA for two runs that looked the same, by hand."""

from __future__ import annotations

import pytest

from tests.bench import loader


def load_bench():
    return loader.load_bench("progress_eta")


def test_best_single_eta_error_equalises_the_two_errors():
    bench = load_bench()
    # runs with 10 s and 4 s left: e = 2*10*4/14 = 5.714 s is 42.9% short of 10 and 42.9% over 4
    assert bench.best_single_eta_error(10.0, 4.0) == pytest.approx(6 / 14)
    assert bench.best_single_eta_error(4.0, 10.0) == pytest.approx(6 / 14)
    assert bench.best_single_eta_error(5.0, 5.0) == 0.0


def test_indistinguishable_pairs_runs_with_the_same_answer_times_up_to_20_percent():
    bench = load_bench()

    def run(slots, reached, wall):
        return {"slots": slots, "planned_calls": 10, "wall_s": wall, "reached": reached}

    # 20% of 10 planned calls = 2 answered. "a" and "b" reach 1 and 2 answered at 1.0/1.1 s and
    # 2.0/2.2 s ("b" jumps from 0 to 2 between samples: both counts first seen at 2.2 s would differ
    # from a's 1.0 s, so b's samples must show 1 at 1.1 s); "c" reaches 2 at 2.6 s (0.6 s after a)
    a = run(4, [(0.0, 0), (1.0, 1), (2.0, 2), (3.0, 5)], 12.0)
    b = run(None, [(0.0, 0), (1.1, 1), (2.2, 3), (2.5, 6)], 6.2)
    c = run(1, [(0.0, 0), (1.0, 1), (2.6, 2)], 10.0)
    d = run(8, [(0.0, 0), (1.0, 1)], 1.5)  # never got to 2 answered
    got = bench.indistinguishable([a, b, c, d])
    assert got == [{"slots": [4, None], "answered": 2, "left_s": [10.0, 4.0],
                    "best_single_eta_error": round(6 / 14, 3)}]
    assert bench.first_reached([(0.0, 0), (0.5, 3)], 2) == [0.5, 0.5]
    assert bench.first_reached([(0.0, 0), (0.5, 1)], 2) is None
