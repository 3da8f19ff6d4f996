"""bench/prompt_tokens.py: what a server that reuses the previous prompt's prefix evaluates."""

from __future__ import annotations

from tests.bench.loader import load_bench

prompt_tokens = load_bench("prompt_tokens")


def test_each_prompt_costs_what_follows_its_common_prefix_with_the_one_before():
    # 5 new; [1, 2] shared with the first, 2 new; nothing shared with the second; the whole of
    # the third again: its last token is evaluated again for its logits
    got = prompt_tokens.evaluated([[1, 2, 3, 4, 5], [1, 2, 7, 8], [9, 9, 9], [9, 9, 9]])
    assert got == {"requests": 4, "prompt_tokens": 15, "evaluated_tokens": 5 + 2 + 3 + 1,
                   "reused_share": round(1 - 11 / 15, 4)}
    assert prompt_tokens.evaluated([])["reused_share"] is None


def test_a_prompt_inside_the_previous_one_costs_one_token():
    assert prompt_tokens.evaluated([[1, 2, 3], [1, 2]])["evaluated_tokens"] == 3 + 1


def test_render_is_qwens_chat_template():
    got = prompt_tokens.render([{"role": "system", "content": "S"}, {"role": "user", "content": "U\nV"}])
    assert got == "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nU\nV<|im_end|>\n<|im_start|>assistant\n"
