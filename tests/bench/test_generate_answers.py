"""bench/generate_answers.py: the prompts, one question per pair, and a run against a loopback server."""

from __future__ import annotations

import json
import sys

from tests.bench.loader import load_bench
from tests.judges.fake_server import ChatCall, FakeLLMServer, Reply

ga = load_bench("generate_answers")

ROWS = [
    {"id": "q1a", "kind": "short", "split": "design", "query": "How long is it?",
     "contexts": ["The bridge is 142 metres long.", {"id": "c2", "text": "It opened in 2019."}]},
    # the pair's other answer: the same question and contexts, kept once
    {"id": "q1b", "kind": "short", "split": "design", "query": "How long is it?",
     "contexts": ["The bridge is 142 metres long.", {"id": "c2", "text": "It opened in 2019."}]},
    {"id": "q2a", "kind": "dialogue", "split": "design", "query": "User: hi!", "contexts": ["Tram 28 runs in Lisbon."]},
    {"id": "q3a", "kind": "short", "split": "heldout", "query": "When?", "contexts": ["In 1931."]},
]


def test_messages_follow_the_kinds_layout():
    got = ga.messages("short", ROWS[0])
    assert got[0] == {"role": "system", "content": "You are a helpful assistant. Answer the user's question using "
                                                   "the context. Answer in two or three sentences."}
    assert got[1] == {"role": "user", "content": "Context:\nThe bridge is 142 metres long.\n\nIt opened in 2019."
                                                 "\n\nQuestion: How long is it?"}
    dialogue = ga.messages("dialogue", ROWS[2])[1]["content"]
    assert dialogue == "Knowledge:\nTram 28 runs in Lisbon.\n\nConversation:\nUser: hi!"


def test_a_pair_gives_one_question():
    assert [r["id"] for r in ga.questions(ROWS)] == ["q1a", "q2a", "q3a"]


def test_a_run_against_a_loopback_server(tmp_path, monkeypatch):
    data, out = tmp_path / "rows.jsonl", tmp_path / "out.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")

    bodies: list[dict] = []

    def rule(call: ChatCall) -> Reply:
        bodies.append(call.body)
        return Reply(content=f"  answer with seed {call.body['seed']}\n")

    with FakeLLMServer(rule) as server:
        monkeypatch.setattr(sys, "argv", [
            "generate_answers.py", "--url", server.url, "--kind", "short", "--data", str(data), "--only", "design",
            "--source-kind", "short", "--seed-base", "3000", "--seeds", "2", "--split", "design",
            "--id-prefix", "gx", "--out", str(out), "--temperature", "0.5", "--max-tokens", "40"])
        ga.main()
    got = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    # one short design question (q1a; q1b repeats it, q2a is dialogue, q3a held-out), two seeds 1000 apart
    assert [(g["id"], g["seed"], g["answer"], g["context_from"]) for g in got] == [
        ("gx01a", 3001, "answer with seed 3001", "q1a"), ("gx01b", 4001, "answer with seed 4001", "q1a")]
    assert got[0]["contexts"] == ["The bridge is 142 metres long.", "It opened in 2019."]
    assert got[0]["labels"] == {} and got[0]["split"] == "design" and got[0]["kind"] == "short"
    assert [(b["temperature"], b["max_tokens"], b["seed"]) for b in bodies] == [(0.5, 40, 3001), (0.5, 40, 4001)]
    assert bodies[0]["messages"] == ga.messages("short", ROWS[0])
