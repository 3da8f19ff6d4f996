"""bench/prompt_reuse.py: the share of prompt tokens the server reused, from its log lines."""

from __future__ import annotations

from tests.bench.loader import load_bench

prompt_reuse = load_bench("prompt_reuse")

LOG = b"""INFO:     127.0.0.1:51406 - "POST /v1/chat/completions HTTP/1.1" 200 OK
Llama.generate: 151 prefix-match hit, remaining 132 prompt tokens to eval
llama_perf_context_print:        load time =    1157.26 ms
llama_perf_context_print: prompt eval time =    3068.26 ms /   132 tokens (...)
llama_perf_context_print:        eval time =    6884.73 ms /    65 runs   (...)
Llama.generate: 3 prefix-match hit, remaining 840 prompt tokens to eval
llama_perf_context_print: prompt eval time =   17114.65 ms /   840 tokens (...)
llama_perf_context_print:        eval time =       0.00 ms /     1 runs   (...)
"""


def test_share_is_hits_over_hits_plus_evaluated():
    got = prompt_reuse.reuse_of(LOG)
    # (151 + 3) / (151 + 132 + 3 + 840) = 154 / 1126
    assert got == {"requests": 2, "reused_tokens": 154, "evaluated_tokens": 972, "reused_share": round(154 / 1126, 4),
                   # 3068.26 + 17114.65; 65 + 1 runs; 6884.73 + 0.00
                   "prompt_ms": 20182.91, "generated_tokens": 66, "generate_ms": 6884.73}
    assert prompt_reuse.reuse_of(b"no such line")["reused_share"] is None


def test_mark_reads_only_what_was_appended(tmp_path):
    log = tmp_path / "server.log"
    log.write_bytes(LOG)
    mark = prompt_reuse.LogMark(log)
    with log.open("ab") as fh:
        fh.write(b"Llama.generate: 10 prefix-match hit, remaining 30 prompt tokens to eval\n")
    assert mark.since() == {"requests": 1, "reused_tokens": 10, "evaluated_tokens": 30, "reused_share": 0.25,
                            "prompt_ms": 0.0, "generated_tokens": 0, "generate_ms": 0.0}
    assert mark.since()["requests"] == 0
