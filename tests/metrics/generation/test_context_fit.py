"""Faithfulness on contexts longer than the judge's context window: the server's rejection is read
(:func:`ragmeter.judges.backends._errors.context_overflow`); the verdict list's claims are then
judged one by one against their evidence windows, and the one call of ``mode=direct`` and
``mode=inline`` is sent again with the context sentences that fit
(:mod:`ragmeter.metrics.generation._fit`); by hand, and end to end against an OpenAI-compatible
server on loopback that rejects long prompts as llama.cpp's does."""

from __future__ import annotations

import json
import re
from functools import partial

import pytest
from click.testing import CliRunner

from ragmeter import Sample, evaluate, get_evaluator
from ragmeter.cli import main
from ragmeter.cli.eval_cmd import judge_status
from ragmeter.errors import JudgeContextOverflow
from ragmeter.judges import from_spec
from ragmeter.judges.backends._errors import context_overflow
from ragmeter.metrics.generation._evidence import context_sentences
from ragmeter.metrics.generation._fit import budget, fitted_window
from tests.judges.fake_server import ChatCall, FakeLLMServer, Reply
from tests.judges.test_backend_contract import NativeServer
from tests.metrics.generation.rules import block, judge_rule

# what servers say, copied from them: llama.cpp's server (llama-cpp-python 0.3.36's build, -c 4096),
# llama-cpp-python's own server and its in-process ValueError (llama_cpp/server/errors.py, llama.py),
# vLLM's and OpenAI's "maximum context length" message
LLAMA_CPP = ('{"error":{"code":400,"message":"request (10351 tokens) exceeds the available context size (4096 '
             'tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":10351,"n_ctx":4096}}')
SERVER_WORDS = [
    (LLAMA_CPP, (4096, 10351)),
    ("This model's maximum context length is 2048 tokens. However, you requested 3000 tokens (1976 in the "
     "messages, 1024 in the completion). Please reduce the length of the messages or completion.", (2048, 1976)),
    ("This model's maximum context length is 8192 tokens. However, your messages resulted in 9001 tokens. "
     "Please reduce the length of the messages.", (8192, 9001)),
    ("Requested tokens (5000) exceed context window of 4096", (4096, 5000)),
    ("the request exceeds the available context size, try increasing it", (None, None)),
    # Ollama's own words (llm/llama_server.go), and llama.cpp's body as Ollama relays it in its "error"
    ("the prompt is longer than the context length currently available to the model; shorten the prompt, "
     "adjust the context length in settings, or use a model with a longer context length", (None, None)),
]


@pytest.mark.parametrize(("text", "numbers"), SERVER_WORDS)
def test_a_rejection_for_length_is_read_with_its_numbers(text, numbers):
    assert context_overflow(text) == numbers


@pytest.mark.parametrize("text", ["model 'qwen' not found", "Invalid value for response_format: json_schema",
                                  "context must be a string", "max_tokens must be at least 1"])
def test_other_rejections_are_not_read_as_too_long(text):
    assert context_overflow(text) is None


def test_the_budget_by_hand():
    e = JudgeContextOverflow("", n_ctx=4096, prompt_tokens=8549)
    # r = 21,000 / 8,549 = 2.456428 characters a token; the rest of the prompt, 388 characters, is
    # 157.95 tokens; 0.9 * 2.456428 * (4096 - 1024 - 157.95) = 6,442.4
    assert budget(e, 21_000, 20_612, 1024) == 6442
    # the window without the prompt's tokens: 3 characters a token; (21,000 - 20,612) / 3 = 129.33
    # tokens; 0.9 * 3 * (4096 - 1024 - 129.33) = 7,945.2
    assert budget(JudgeContextOverflow("", n_ctx=4096), 21_000, 20_612, 1024) == 7945
    assert budget(JudgeContextOverflow(""), 21_000, 20_612, 1024) == 10_306  # neither: half the context
    assert budget(e, 21_000, 20_612, 4096) == 0  # no room left for any context


S = ["The old mill burned in 1820.", "Alder had 17 mills in 1805.", "The bakers' guild was founded in 1790.",
     "Alder had 45 bakers in 1805.", "Rain fell all spring."]


def test_the_excerpt_takes_each_claims_best_sentences_in_rounds():
    spans = context_sentences([" ".join(S)])
    assert [s.text for s in spans] == S
    claims = ["Alder had 17 mills in 1805.", "Alder had 45 bakers in 1805."]
    # content words (stemmed; "had", "in", "the", "was", "all" are function words): S0 old mill burned
    # 1820, S1 alder 17 mill 1805, S2 baker guild founded 1790, S3 alder 45 baker 1805, S4 rain fell
    # spring. With 5 sentences a word in 2 of them weighs log(1 + 5/2) = 1.253, in 1 log(6) = 1.792.
    # Claim 1 (alder 17 mill 1805): S1 5.55, S3 2.51 (alder, 1805), S0 1.25 (mill), then S2, S4 (0,
    # by position). Claim 2 (alder 45 baker 1805): S3 5.55, S1 2.51, S2 1.25 (baker), then S0, S4.
    # Round 1 takes S1 (claim 1) and S3 (claim 2); round 2 has both taken; round 3 offers S0, then S2.
    both = len(S[1]) + 2 + len(S[3])
    assert [s.text for s in fitted_window(claims, spans, both).spans] == [S[1], S[3]]
    # one character less: S3 is passed over, and so are S0 and S2 (28 and 38 characters: 27 + 2 + 28 >
    # 56); the last round's S4 (21) fits
    assert [s.text for s in fitted_window(claims, spans, both - 1).spans] == [S[1], S[4]]
    three = both + 2 + len(S[0])
    w = fitted_window(claims, spans, three)  # S2 (claim 2's third) no longer fits
    assert [s.text for s in w.spans] == [S[0], S[1], S[3]]
    assert w.text == f"{S[0]} {S[1]}\n{S[3]}" and len(w.text) <= three  # a line break where S2 is left out
    assert [s.text for s in fitted_window(claims, spans, three + 2 + len(S[2])).spans] == S[:4]
    assert fitted_window(claims, spans, 10).spans == ()  # no sentence fits


# a long article: the two sentences the answer states sit among 60 others (about 8,000 characters)
FILLER = [f"The {name} bridge over the {river} was repainted in {year} after a survey found rust on "
          f"{n} of its {n + 20} rivets along the {side} parapet."
          for name, river, year, n, side in [
              (f"Kessel{i}", ["Aire", "Calder", "Wharfe", "Nidd"][i % 4], 1950 + i, 30 + i, ["north", "south"][i % 2])
              for i in range(60)]]
FACTS = ["The Harrowgate footbridge opened on 14 May 2019.", "Its steel span is 142 metres long."]
ARTICLE = [" ".join(FILLER[:20] + FACTS[:1] + FILLER[20:35]), " ".join(FILLER[35:45] + FACTS[1:] + FILLER[45:])]
ANSWER = " ".join(FACTS)
N_CTX = 1600


def tokens(call: ChatCall) -> int:
    return len(call.all_text) // 4


def small_window(call: ChatCall, n_ctx: int = N_CTX) -> Reply | dict:
    """The rule judge of tests/metrics/generation/rules.py behind a window of ``n_ctx`` tokens (4
    characters a token), rejecting a longer prompt with llama.cpp's error body; a question to
    answer from the context (the cross-check's source answer) is answered with the context's
    sentence that holds the question's longest word, else "not stated"."""
    if tokens(call) >= n_ctx:
        body = {"error": {"code": 400, "message": f"request ({tokens(call)} tokens) exceeds the available context "
                          f"size ({n_ctx} tokens), try increasing it", "type": "exceed_context_size_error",
                          "n_prompt_tokens": tokens(call), "n_ctx": n_ctx}}
        return Reply(status=400, raw_body=json.dumps(body).encode(), kind="too_long")
    question = block(call.user_text, "question")
    if question and not call.schema_name and call.body.get("max_tokens") != 1:
        longest = max(question.rstrip("?").split(), key=len)
        said = [s for s in re.split(r"(?<=\.)\s+", block(call.user_text, "context")) if longest in s.split()]
        return Reply(content=said[0] if said else "not stated")
    return judge_rule(call)


def test_long_contexts_have_each_claim_judged_alone_against_its_evidence_window():
    wrong = ANSWER.replace("2019", "2018")  # the first fact changed
    samples = [Sample(id="right", query="When did the Harrowgate footbridge open?", contexts=ARTICLE, answer=ANSWER),
               Sample(id="wrong", query="When did the Harrowgate footbridge open?", contexts=ARTICLE, answer=wrong)]
    assert sum(map(len, ARTICLE)) > 4 * N_CTX  # longer than the window on its own
    with FakeLLMServer(small_window) as server:
        judge = from_spec(f"openai:fake@{server.url}", cache=False)
        run = evaluate(samples, ["faithfulness", "hallucination_rate"], judge=judge, embedder=None)
        got = [r["metrics"]["faithfulness"] for r in run.records]
        rates = [r["metrics"]["hallucination_rate"] for r in run.records]
        assert [m["error"] for m in got] == [None, None] and got[0]["score"] == 1.0
        assert [c["supported"] for c in got[1]["details"]["claims"]] == [False, True]  # the judge's word
        assert got[1]["score"] < 0.5 and [r["score"] for r in rates] == [1 - m["score"] for m in got]
        sent = [c for c in server.log if "<context>" in c.user_text]
        # no verdict list: one word per claim (no schema), for both metrics; the second claim, the
        # same in both answers, against the same window, is asked once
        assert [(c.kind, c.schema) for c in sent] == [("ok", None)] * 3
        for fact in FACTS:  # each claim's own sentence is in what the judge read for it
            assert any(fact in block(c.user_text, "context") for c in sent)
        assert all(len(c.user_text) // 4 < N_CTX // 4 for c in sent)  # four sentences, not the article
        stats = judge.stats()
        assert stats["errors"] == {} and stats["recovered"] == {}  # nothing was rejected
        m = got[0]
        fit = m["details"]["context_fit"]
        assert (fit["cause"], fit["max_chars"], fit["n_ctx"]) == ("length", 1500, None)
        assert (fit["context_chars"], fit["context_sentences"], fit["claims_alone"]) == (7944, 62, True)
        assert "windows" not in fit  # each claim's window is on the claim
        windows = [[s["text"] for s in c["window"]] for c in m["details"]["claims"]]
        assert [len(w) for w in windows] == [4, 4] and [FACTS[i] in w for i, w in enumerate(windows)] == [True] * 2
        assert {s["text"] for s in fit["read"]} == {t for w in windows for t in w} and fit["sentences_read"] <= 8
        assert any(n.startswith("the contexts are longer than 1,500 characters (7,944): each claim was judged "
                                "alone against its evidence window") for n in m["details"]["notes"])
        said = ("the contexts are longer than 1,500 characters: each claim judged alone against its evidence "
                "window (context_fit)")
        assert m["reason"].endswith(said) and rates[0]["reason"].endswith(said)

        # a sample's windows come from its own claims: the same sample scores alike after another
        server.clear_log()
        again = evaluate([other_order(), samples[0]], ["faithfulness"], judge=judge, embedder=None).records
        assert [c["window"] for c in again[1]["metrics"]["faithfulness"]["details"]["claims"]] == [
            c["window"] for c in m["details"]["claims"]]


# a short article (1,123 characters: 4 fillers of 128 + 130 + 130 + 128, a fact of 48, 4 fillers of
# 128 + 130 + 130 + 128, a fact of 34 and 9 spaces): the verdict list reads it whole
SHORT = " ".join(FILLER[:4] + FACTS[:1] + FILLER[4:8] + FACTS[1:])


def list_and_word_tokens() -> tuple[int, int]:
    """The verdict list's prompt tokens and the largest word call's (4 characters a token) for the
    answer against SHORT, from a run on a judge without a window."""
    sample = Sample(id="s", query="When did the Harrowgate footbridge open?", contexts=[SHORT], answer=ANSWER)
    calls: list[ChatCall] = []

    def rule(call: ChatCall) -> Reply | dict:
        calls.append(call)
        return judge_rule(call)

    with FakeLLMServer(rule) as server:
        evaluate([sample], ["faithfulness(verdicts=word)", "faithfulness"],
                 judge=from_spec(f"openai:fake@{server.url}", cache=False), embedder=None)
    lists = [tokens(c) for c in calls if (c.schema_name or "").startswith("Verdicts")]
    words = [tokens(c) for c in calls if "<statement>" in c.user_text]
    assert len(lists) == 1 and len(words) == 2
    return lists[0], max(words)


def test_claims_past_a_small_window_are_judged_alone_against_their_evidence_windows():
    listed, word = list_and_word_tokens()
    assert word < listed  # a window between them rejects the list and holds each word call
    n_ctx = (word + listed) // 2
    wrong = ANSWER.replace("2019", "2018")
    samples = [Sample(id="right", query="When did the Harrowgate footbridge open?", contexts=[SHORT], answer=ANSWER),
               Sample(id="wrong", query="When did the Harrowgate footbridge open?", contexts=[SHORT], answer=wrong)]
    with FakeLLMServer(partial(small_window, n_ctx=n_ctx)) as server:
        judge = from_spec(f"openai:fake@{server.url}", cache=False)
        got = [r["metrics"]["faithfulness"] for r in evaluate(samples, ["faithfulness"], judge=judge,
                                                                 embedder=None).records]
        sent = [(c.kind, c.schema) for c in server.log if "<context>" in c.user_text]
        stats = judge.stats()
    # before the fit every sample was an error: JudgeContextOverflow on the verdict list
    assert [m["error"] for m in got] == [None, None] and got[0]["score"] == 1.0
    assert [c["supported"] for c in got[1]["details"]["claims"]] == [False, True]
    # per sample the rejected verdict list, then one word per claim; the second claim asked once
    assert sorted(sent) == [("ok", None)] * 3 + [("too_long", "Verdicts2")] * 2
    assert stats["errors"] == {"JudgeContextOverflow": 2}  # the rejected requests, counted
    assert stats["recovered"] == {"JudgeContextOverflow": 2}  # ... and recovered from
    assert stats["by_tag"]["faithfulness"]["recovered"] == {"JudgeContextOverflow": 2}
    assert "cached, 0 errors (2 over the context window, re-sent to fit), " in judge_status(stats)
    fit = got[0]["details"]["context_fit"]
    assert (fit["cause"], fit["n_ctx"], fit["claims_alone"]) == ("window", n_ctx, True)
    assert fit["prompt_tokens"] >= n_ctx  # the server's count of the rejected prompt
    # up to 1,500 characters a claim's window is the whole context: its 10 sentences
    assert [len(c["window"]) for c in got[0]["details"]["claims"]] == [10, 10]
    said = "the contexts exceed the judge's context window: each claim judged alone against its evidence window"
    assert said in got[0]["reason"]


def other_order() -> Sample:
    return Sample(id="long2", query="When did the Harrowgate footbridge open?", contexts=list(reversed(ARTICLE)),
                  answer=ANSWER)


def test_contexts_that_fit_are_read_whole():
    sample = Sample(id="short", query="When did the Harrowgate footbridge open?", contexts=[" ".join(FACTS)],
                    answer=ANSWER)
    with FakeLLMServer(small_window) as server:
        judge = from_spec(f"openai:fake@{server.url}", cache=False)
        m = evaluate([sample], ["faithfulness"], judge=judge, embedder=None).records[0]["metrics"]["faithfulness"]
        assert m["score"] == 1.0 and "context_fit" not in m["details"]
        assert [c.kind for c in server.log] == ["ok", "ok"]


def test_a_claim_whose_window_does_not_fit_stays_an_error():
    one = "Rivets and " * 630 + "the footbridge opened on 14 May 2019."  # one sentence of 6,967 characters
    sample = Sample(id="one", query="When did it open?", contexts=[one], answer="It opened on 14 May 2019.")
    with FakeLLMServer(small_window) as server:
        judge = from_spec(f"openai:fake@{server.url}", cache=False)
        m = evaluate([sample], ["faithfulness"], judge=judge, embedder=None).records[0]["metrics"]["faithfulness"]
        assert m["score"] is None and m["error"]["type"] == "JudgeContextOverflow"
        assert judge.stats()["recovered"] == {}  # not recovered: errors on the judge's line
        # longer than 1,500 characters: no verdict list; the claim's one word against its window
        # (that one sentence) is rejected
        assert [c.kind for c in server.log if "<context>" in c.user_text] == ["too_long"]
        assert ", 1 errors, " in judge_status(judge.stats())
        assert "context window" in m["error"]["message"] and "llama.cpp -c" in m["error"]["message"]


def test_the_command_line_counts_a_rejected_list_apart_from_the_errors(tmp_path):
    rows = tmp_path / "rows.jsonl"
    rows.write_text(json.dumps({"id": "short", "query": "When did the Harrowgate footbridge open?",
                                "contexts": [SHORT], "answer": ANSWER}) + "\n")
    listed, word = list_and_word_tokens()
    with FakeLLMServer(partial(small_window, n_ctx=(word + listed) // 2)) as server:
        res = CliRunner().invoke(main, ["eval", str(rows), "-m", "faithfulness", "--judge",
                                        f"openai:fake@{server.url}", "--no-cache", "-o", str(tmp_path / "o"),
                                        "--no-report"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    said = " ".join(res.output.split())  # the line as printed, wrapped or not
    assert "0 errors (1 over the context window, re-sent to fit)" in said
    assert "(errors:" not in said  # no error type listed: no sample lost its score


def ollama_window(body: dict, n_ctx: int = N_CTX) -> tuple[int, dict, dict, float]:
    """Ollama's ``/api/chat`` with ``num_ctx`` ``n_ctx``, answering by the rule judge: a longer prompt is
    rejected with llama.cpp's body in Ollama's ``error`` when the request says ``truncate: false``,
    and otherwise cut from the front to fit and answered 200, as Ollama does by default (the
    context's first sentences are lost, the tags kept)."""
    call = ChatCall(0, {"messages": body["messages"], "max_tokens": body["options"].get("num_predict"),
                        "response_format": {"type": "json_object", "schema": body.get("format") or {}}}, {})
    if tokens(call) >= n_ctx:
        if body.get("truncate") is False:
            error = {"error": {"code": 400, "message": f"request ({tokens(call)} tokens) exceeds the available "
                               f"context size ({n_ctx} tokens), try increasing it", "type": "exceed_context_size_error",
                               "n_prompt_tokens": tokens(call), "n_ctx": n_ctx}}
            return 400, {}, {"error": json.dumps(error)}, 0.0
        user = next(m for m in body["messages"] if m["role"] == "user")
        context = block(user["content"], "context")
        cut = context[4 * (tokens(call) - n_ctx + 200):]  # the first sentences dropped to fit
        messages = [{**m, "content": m["content"].replace(context, cut)} if m is user else m for m in body["messages"]]
        call = ChatCall(0, {**call.body, "messages": messages}, {})
    reply = judge_rule(call)
    content = reply.content if isinstance(reply, Reply) else json.dumps(reply)
    return 200, {}, {"message": {"role": "assistant", "content": content}, "done": True, "done_reason": "stop",
                     "prompt_eval_count": min(tokens(call), n_ctx), "eval_count": 20}, 0.0


@pytest.mark.parametrize("backend", ["ollama", "ollama-native"])
def test_ollama_rejects_a_prompt_past_its_window_instead_of_cutting_it(backend):
    sample = Sample(id="short", query="When did the Harrowgate footbridge open?", contexts=[SHORT], answer=ANSWER)
    listed, word = list_and_word_tokens()
    n_ctx = (word + listed) // 2
    server = NativeServer()
    server.rule = partial(ollama_window, n_ctx=n_ctx)
    try:
        judge = from_spec(f"{backend}:m@{server.url}", cache=False)
        m = evaluate([sample], ["faithfulness"], judge=judge, embedder=None).records[0]["metrics"]["faithfulness"]
    finally:
        server.stop()
    # Ollama's default cut the verdict list's context from the front: the first fact's sentence was
    # lost and the claim judged unsupported (0.5), with nothing to say so
    assert m["error"] is None and m["score"] == 1.0
    # claims, the rejected list, one word per claim
    assert [c["body"].get("truncate") for c in server.log] == [False] * 4
    assert m["details"]["context_fit"]["n_ctx"] == n_ctx


@pytest.mark.parametrize(("mode", "scores", "verdicts"), [("direct", (1.0, 0.0), "verdict"),
                                                          ("inline", (1.0, 0.5), "verdicts")])
def test_the_one_call_modes_read_the_sentences_that_fit(mode, scores, verdicts):
    wrong = ANSWER.replace("2019", "2018")  # the first fact changed
    samples = [Sample(id="right", query="When did the Harrowgate footbridge open?", contexts=ARTICLE, answer=ANSWER),
               Sample(id="wrong", query="When did the Harrowgate footbridge open?", contexts=ARTICLE, answer=wrong)]
    with FakeLLMServer(small_window) as server:
        judge = from_spec(f"openai:fake@{server.url}", cache=False)
        run = evaluate(samples, [f"faithfulness(mode={mode})", f"hallucination_rate(mode={mode})"], judge=judge,
                       embedder=None)
        got = [r["metrics"][f"faithfulness(mode={mode})"] for r in run.records]
        rates = [r["metrics"][f"hallucination_rate(mode={mode})"] for r in run.records]
        # before the fit both samples were errors: one call carries the whole article
        assert [m["score"] for m in got] == list(scores) and [m["error"] for m in got] == [None, None]
        assert [r["score"] for r in rates] == [1 - s for s in scores]
        # one rejected and one fitted call per sample, shared by the two metrics, counted as recovered
        sent = [c for c in server.log if "<context>" in c.user_text]
        assert sorted(c.kind for c in sent) == ["ok", "ok", "too_long", "too_long"]
        # the excerpt leaves room for the reply the call asks for: 1 token for the one-word verdict,
        # max_tokens (1024) for the claims and verdicts written out
        # (the excerpt fills 90% of the room it works out, in whole sentences)
        room = N_CTX - (1 if mode == "direct" else 1024)
        assert all(0.75 * room < len(c.user_text) // 4 < room for c in sent if c.kind == "ok")
        assert judge.stats()["recovered"] == {"JudgeContextOverflow": 2}
        fit = got[0]["details"]["context_fit"]
        assert {s["text"] for s in fit["read"]} >= set(FACTS) and fit["sentences_read"] < 62
        said = f"the {verdicts} read {fit['sentences_read']} of their 62 sentences (context_fit)"
        assert got[0]["reason"].endswith(said) and rates[0]["reason"].endswith(said)
        assert any("those most related to each answer sentence first" in n for n in got[0]["details"]["notes"])


def test_a_verdict_list_of_sentences_past_the_window_judges_each_alone():
    # mode=sentences, verdicts=list: one list against the union of the sentences' windows (about
    # 380 tokens here), rejected by a 350-token window; each sentence then alone against its own
    # window (about 320 tokens each)
    samples = [Sample(id="right", query="When did the Harrowgate footbridge open?", contexts=ARTICLE, answer=ANSWER),
               Sample(id="wrong", query="When did the Harrowgate footbridge open?", contexts=ARTICLE,
                      answer=ANSWER.replace("2019", "2018"))]
    names = ["faithfulness(mode=sentences,verdicts=list)", "hallucination_rate(mode=sentences,verdicts=list)"]
    with FakeLLMServer(partial(small_window, n_ctx=350)) as server:
        judge = from_spec(f"openai:fake@{server.url}", cache=False)
        recs = [r["metrics"] for r in evaluate(samples, names, judge=judge, embedder=None).records]
        sent = [(c.kind, c.schema) for c in server.log]
        stats = judge.stats()
    # before: JudgeContextOverflow on both samples
    assert [r[names[0]]["error"] for r in recs] == [None, None]
    assert [r[names[0]]["score"] for r in recs] == [1.0, 0.5]  # the 2018 sentence judged "no", and vetoed
    assert [r[names[1]]["score"] for r in recs] == [0.0, 0.5]
    # per sample one rejected list for both metrics; the second sentence, alike in both answers, asked once
    assert sorted(sent) == [("ok", None)] * 3 + [("too_long", "Verdicts2")] * 2
    assert stats["recovered"] == {"JudgeContextOverflow": 2}
    m = recs[0][names[0]]
    windows = [[s["text"] for s in c["window"]] for c in m["details"]["claims"]]
    assert [len(w) for w in windows] == [4, 4] and [FACTS[i] in w for i, w in enumerate(windows)] == [True, True]
    assert m["details"]["context_fit"]["claims_alone"] is True
    assert m["reason"].endswith("each claim judged alone against its evidence window (context_fit)")


def test_the_cross_check_answers_from_the_sentences_that_fit():
    # the source answer reads the joined contexts (about 2,000 tokens): rejected by the 1,600-token
    # window, then asked again with the sentences most related to the question, which hold the answer
    wrong = Sample(id="wrong", query="When did the Harrowgate footbridge open?", contexts=ARTICLE,
                   answer="It opened on 14 May 2018.")
    name = "faithfulness(cross_check=numbers,mode=sentences)"
    with FakeLLMServer(small_window) as server:
        judge = from_spec(f"openai:fake@{server.url}", cache=False)
        m = evaluate([wrong], [name], judge=judge, embedder=None).records[0]["metrics"][name]
        asked = [c for c in server.log if "<question>" in c.user_text and "<statement>" not in c.user_text]
    assert m["error"] is None and m["score"] == 0.0  # before: JudgeContextOverflow
    cross = m["details"]["cross_check"]
    assert cross["source_answer"] == FACTS[0] and cross["not_stated"] is False
    assert m["details"]["claims"][0]["conflicts"] == [{"claim": "2018", "source": "2019"}]
    assert cross["context_fit"]["n_ctx"] == N_CTX and FACTS[0] in {s["text"] for s in cross["context_fit"]["read"]}
    assert [c.kind for c in asked] == ["too_long", "ok"]
    assert len(asked[1].user_text) // 4 < N_CTX - 60  # room left for the reply (max_tokens 60)
    assert any("those most related to each question first" in n for n in m["details"]["notes"])


def test_contexts_longer_than_1500_characters_are_judged_per_claim_whatever_the_window():
    # 1,383 characters (4 fillers of 128 + 130 + 130 + 128, a fact of 48, 6 fillers of 128 + 130 + 130
    # + 128 + 128 + 130, a fact of 34, 11 spaces): the verdict list; one more filler of 131 after a
    # space (1,515): each claim alone against its evidence window, on a judge with no window
    under = " ".join(FILLER[:4] + FACTS[:1] + FILLER[4:10] + FACTS[1:])
    over = " ".join(FILLER[:4] + FACTS[:1] + FILLER[4:11] + FACTS[1:])
    assert (len(under), len(over)) == (1383, 1515)
    q = "When did the Harrowgate footbridge open?"
    samples = [Sample(id="under", query=q, contexts=[under], answer=ANSWER),
               Sample(id="over", query=q, contexts=[over], answer=ANSWER.replace("2019", "2018"))]
    with FakeLLMServer(judge_rule) as server:
        judge = from_spec(f"openai:fake@{server.url}", cache=False)
        recs = [r["metrics"] for r in evaluate(samples, ["faithfulness", "hallucination_rate"], judge=judge,
                                                embedder=None).records]
        lists = [c for c in server.log if c.schema and c.schema.startswith("Verdicts")]
        words = [c for c in server.log if "<statement>" in c.user_text]
        stats = judge.stats()
    short, long = recs[0]["faithfulness"], recs[1]["faithfulness"]
    assert short["score"] == 1.0 and "context_fit" not in short["details"]
    assert len(lists) == 1 and under in lists[0].user_text  # the short sample's list, whole contexts
    assert len(words) == 2  # the long sample's two claims, once for both metrics; no list for it
    assert [c["supported"] for c in long["details"]["claims"]] == [False, True]
    fit = long["details"]["context_fit"]
    assert (fit["cause"], fit["n_ctx"], fit["context_chars"], fit["claims_alone"]) == ("length", None, 1515, True)
    assert [len(c["window"]) for c in long["details"]["claims"]] == [4, 4]  # past 1,500: four sentences
    assert stats["errors"] == {} and stats["recovered"] == {}  # nothing was rejected
    said = "the contexts are longer than 1,500 characters: each claim judged alone against its evidence window"
    assert said in long["reason"] and said in recs[1]["hallucination_rate"]["reason"]
    assert any(n.startswith("the contexts are longer than 1,500 characters (1,515)") for n in long["details"]["notes"])
    # the plan of calls: the claims, then one list (under) or one word per check-worthy sentence (over)
    plans = [{p.key[0]: p.calls for p in get_evaluator("faithfulness", judge=judge).planned_calls(x)[1:]}
             for x in samples]
    assert plans == [{"verify_claims": 1, "uncovered_claims": 0.5}, {"claim_words": 2, "uncovered_claims": 0.5}]


def test_a_verdict_list_of_sentences_keeps_the_8000_character_bound():
    # mode=sentences,verdicts=list reads the union of its sentences' windows, not the whole contexts:
    # its list is still sent for the 1,515 characters above (and for ARTICLE's 7,944)
    over = " ".join(FILLER[:4] + FACTS[:1] + FILLER[4:11] + FACTS[1:])
    sample = Sample(id="over", query="When did the Harrowgate footbridge open?", contexts=[over], answer=ANSWER)
    name = "faithfulness(mode=sentences,verdicts=list)"
    with FakeLLMServer(judge_rule) as server:
        judge = from_spec(f"openai:fake@{server.url}", cache=False)
        m = evaluate([sample], [name], judge=judge, embedder=None).records[0]["metrics"][name]
        schemas = [c.schema for c in server.log]
    assert m["score"] == 1.0 and "context_fit" not in m["details"] and schemas == ["Verdicts2"]
