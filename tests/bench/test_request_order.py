"""bench/request_order.py: the orders of recorded requests and the prefix tokens they share, by hand."""

from __future__ import annotations

from .loader import load_bench

ro = load_bench("request_order")


def body(kind: str, n: int) -> dict:
    return {"messages": [{"role": "system", "content": kind}, {"role": "user", "content": str(n)}]}


# a two-call metric as the queue sent it: claims 0, claims 1, verdicts 0, claims 2, verdicts 1, verdicts 2
SENT = [body("C", 0), body("C", 1), body("V", 0), body("C", 2), body("V", 1), body("V", 2)]


def test_blocks_put_a_blocks_first_calls_before_its_second_calls():
    assert ro.blocks(SENT, 2) == [0, 1, 2, 4, 3, 5]          # C0 C1 V0 V1 | C2 V2
    assert ro.blocks(SENT, 8) == [0, 1, 3, 2, 4, 5]          # C0 C1 C2 V0 V1 V2
    assert ro.alternating(SENT) == [0, 2, 1, 4, 3, 5]        # C0 V0 C1 V1 C2 V2


def test_reused_counts_the_prefix_each_prompt_shares_with_the_one_before():
    # token lists: a claim prompt starts 1 2 3, a verdict prompt 7 8; each ends with its sample's token
    tokens = [[1, 2, 3, 10], [1, 2, 3, 11], [7, 8, 10], [1, 2, 3, 12], [7, 8, 11], [7, 8, 12]]
    assert ro.reused(tokens, list(range(6))) == 3 + 0 + 0 + 0 + 2      # as sent: only C0 -> C1
    assert ro.reused(tokens, ro.blocks(SENT, 8)) == 3 + 3 + 0 + 2 + 2  # C C C V V V
    assert ro.reused(tokens, ro.alternating(SENT)) == 0
