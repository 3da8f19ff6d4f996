"""faithfulness(mode=sentences): evidence windows, check-worthiness and the combination rule.

Expected values are worked out by hand in the comments (document sentences counted by eye, IDF sums
written out, P(yes) from the token probabilities given here)."""

from __future__ import annotations

import json
import math

import pytest

from ragmeter import Sample, evaluate
from ragmeter.judges import Completion, FunctionBackend, Judge
from ragmeter.judges.base import TokenLogprob
from ragmeter.metrics.generation._checkworthy import classify, split_claims
from ragmeter.metrics.generation._evidence import context_sentences, evidence_window, lexical_scores
from ragmeter.metrics.generation._sentence_steps import combine, number_conflicts, shares
from ragmeter.metrics.lexical.fact_consistency import times_of_day
from ragmeter.registry import get_evaluator

# A long hand-made document (about 1,600 characters, 21 sentences): the ferry facts sit in the middle.
DOC = (
    "The island of Carrick lies eleven kilometres off the coast. About 2,400 people live there all year. "
    "Farming and fishing were the main trades until the 1970s. Tourism is now the largest employer. "
    "The island has one primary school and a small hospital.\n\n"
    "Ferries leave Port Ellis every 90 minutes from 6:30 am. The crossing takes 40 minutes in calm weather. "
    "Bicycles travel free, but cars must be booked in advance. In winter the first ferry leaves at 8 am. "
    "The ferry company was founded in 1962 by a group of islanders.\n\n"
    "A lighthouse on the northern cape was built in 1851 and automated in 1989. Visitors can climb its 120 "
    "steps on summer afternoons. The island's only pub, the Anchor, dates from 1790 and serves food until 9 pm. "
    "Local historians run a museum in the old schoolhouse, open from April to October, with displays on "
    "shipwrecks, the herring trade and the island's Gaelic place names. Admission to the museum is free, "
    "although donations are welcome, and guided walks leave from its door at 2 pm on Saturdays in summer. "
    "The walks last about two hours and cover the harbour, the old kelp kilns and the chapel ruins.\n\n"
    "The island council meets once a month in the community hall. Its seven members are elected every four "
    "years. In recent meetings it has discussed a new pier, a broadband mast on the central hill and the cost "
    "of school transport. Residents pay the same council tax as on the mainland, but the council receives an "
    "extra grant for island services. A community trust bought the estate that covers most of the island "
    "in 2005 and now manages its farms, houses and woodland on behalf of residents."
)


def test_context_sentences_keep_offsets():
    spans = context_sentences(["A first one. A second, 18.5 km long.\nThird line", "Other."])
    assert [(s.context, s.text) for s in spans] == [(0, "A first one."), (0, "A second, 18.5 km long."),
                                                    (0, "Third line"), (1, "Other.")]
    texts = ["A first one. A second, 18.5 km long.\nThird line", "Other."]
    assert all(texts[s.context][s.start:s.end] == s.text for s in spans)


def test_window_on_a_long_document_holds_the_sentence_that_states_the_claim():
    assert len(DOC) > 1500
    claim = "The crossing from Port Ellis takes about 40 minutes."
    w = evidence_window(claim, [DOC])
    assert not w.whole and len(w.spans) == 4
    # hand-worked: "crossing", "40", "minutes" occur together only in sentence 7 ("The crossing takes 40
    # minutes ..."); "Port Ellis" only in sentence 6; both must be in the window
    assert "The crossing takes 40 minutes in calm weather." in [s.text for s in w.spans]
    assert "Ferries leave Port Ellis every 90 minutes from 6:30 am." in [s.text for s in w.spans]
    assert all(DOC[s.start:s.end] == s.text for s in w.spans)
    assert [s.start for s in w.spans] == sorted(s.start for s in w.spans)  # document order
    assert "The island has one primary school" not in w.text


def test_window_for_a_claim_about_the_lighthouse():
    w = evidence_window("The lighthouse was automated in 1989.", [DOC], k=1)
    assert [s.text for s in w.spans] == ["A lighthouse on the northern cape was built in 1851 and automated in 1989."]


def test_short_context_is_shown_whole():
    ctx = ["Ferries leave every 90 minutes. The crossing takes 40 minutes."]
    w = evidence_window("It takes 40 minutes.", ctx)
    assert w.whole and w.text == ctx[0]


def test_lexical_score_is_the_idf_weighted_overlap():
    spans = context_sentences(["Cats purr. Cats sleep a lot. Dogs bark."])
    # N = 3; df(cats) = 2, df(sleep) = 1; claim words {cats, sleep}
    got = lexical_scores("Cats sleep.", spans)
    assert got == pytest.approx([math.log(1 + 3 / 2), math.log(1 + 3 / 2) + math.log(1 + 3 / 1), 0.0])


@pytest.mark.parametrize(("sentence", "kind"), [
    ("I love that film!", "opinion"),
    ("Oh, welcome back, that sounds like a great trip!", "greeting"),
    ("Thanks for asking!", "greeting"),
    ("Did you manage to get a seat?", "question"),
    ("Such a sad story.", "opinion"),
    ("What a great question from your little one.", "opinion"),
    ("That's lovely that he worked there.", "opinion"),
    # an evaluative word inside a statement of fact: checked
    ("They pair best with underfloor heating or big radiators.", "claim"),
    ("Carbon dioxide produced by the wild yeasts in the starter.", "claim"),
    ("They pair best with small radiators.", "claim"),
    ("I think that's a lovely idea!", "opinion"),
    ("You've got this!", "opinion"),
    ("Haha!", "greeting"),
    ("Bye!", "greeting"),
    ("It opened in 1890.", "claim"),
    ("No.", "claim"),
    ("I think it was built in 1889.", "claim"),  # a hedge does not rescue a claim with a number
    ("Probably around 90 minutes.", "claim"),
    ("They feel the cold, so a winter coat helps.", "claim"),
    ("The dance was decoded by Karl von Frisch.", "claim"),
    ("Sorry, the ferry to Carrick is cancelled today because of 3 m waves.", "claim"),
    # a lead-in or heading above a list, and an offer of more help: nothing to check
    ("Here is what the documents say:", "heading"),
    ("**Eligibility:**", "heading"),
    ("## Opening hours:", "heading"),
    ("Key facts about Brinmoor:", "heading"),
    ("The 3 conditions are:", "claim"),               # a number: checked
    ("Eligibility: staff with a contract qualify.", "claim"),  # the colon inside: a statement
    ("Let me know if you need more detail.", "greeting"),
    ("Feel free to ask about the other branches.", "greeting"),
    ("Hope this helps.", "greeting"),
    ("Let me know if the 2 pm slot suits you.", "claim"),
    # praise of the question, said whole: a remark with nothing to check
    ("That's a good question.", "opinion"),
    ("That is a really good question.", "opinion"),
    ("Good question.", "opinion"),
    ("What a fair question.", "opinion"),
    # ... with anything said after it: checked
    ("That's a good question, but the museum is closed on Mondays.", "claim"),
    ("Good question, the answer is no.", "claim"),
    ("That's a good question to ask the council.", "claim"),
])
def test_check_worthiness_of_hand_labelled_sentences(sentence, kind):
    assert classify(sentence) == kind


@pytest.mark.parametrize(("sentence", "kind"), [
    # what the retrieved material does not hold: no statement about the world to check, even with a
    # name or a number in it
    ("The passages don't say how long it takes to charge.", "abstention"),
    ("The provided context does not mention the 2019 figures.", "abstention"),
    ("Unfortunately, the documents don't actually specify a price for the Kestrel K4.", "abstention"),
    ("The sources also make no mention of parking.", "abstention"),
    ("The article is silent on who built it.", "abstention"),
    ("There is no information about opening hours in the passages.", "abstention"),
    ("I couldn't find the melting point of Kovar in the sources.", "abstention"),
    ("I don't know.", "abstention"),
    ("It's not stated in the documents whether Brinmoor has a ferry.", "abstention"),
    ("**The search results don't give the 1990 date.**", "abstention"),
    ("But these excerpts do not list a fee [2].", "abstention"),
    # a second clause after the abstention says something: checked
    ("The documents don't mention a fee, so it's probably free.", "claim"),
    ("The passages don't say how long it takes, but it is about 3 hours.", "claim"),
    ("The passages don't give the melting point; it is 1,450 °C.", "claim"),
    ("The context does not mention Lyon because the tour ends in Paris.", "claim"),
    ("The documents don't list a fee (entry is free).", "claim"),
    # the material is not the subject, or nothing is negated: a statement about the world
    ("The passages describe what Kovar is used for but do not give its melting point.", "claim"),
    ("The ferry does not run on Sundays.", "claim"),
    ("According to the document, Taipei 101 is the tallest building in the world.", "claim"),
    ("The documents say the tower opened in 1990.", "claim"),
    ("Here is what the documents say:", "heading"),
    # statements about the world that look like abstentions: checked
    ("The results do not show a link between coffee and cancer.", "claim"),
    ("The sources did not confirm the arrest of Mr Hale.", "claim"),
    ("I didn't know the Eiffel Tower was repainted in 1990!", "claim"),
    ("There is no information about the motive of Mr Hale.", "claim"),
    ("I don't know when the Eiffel Tower was last repainted.", "abstention"),
    # opening with where the answer looked, and "cannot determine" / "unable to find"
    ("Based on the provided context, there is no information about the refund policy.", "abstention"),
    ("According to the passages, I cannot determine the price of the Kestrel K4.", "abstention"),
    ("From the documents, I'm unable to find the 2019 figure.", "abstention"),
    ("In the text, the Brinmoor ferry's timetable is not mentioned.", "abstention"),
    ("Based on the provided context, the ferry does not run on Sundays.", "claim"),
    ("Based on the passages, there is no direct flight to Lisbon.", "claim"),
    ("Based on the context, I can't say for sure, but it takes 3 hours.", "claim"),
    # "which" opening the indirect question, "so" as the thing not said; elsewhere they still guard
    ("The passages don't say which platform the Brinmoor train leaves from.", "abstention"),
    ("The passages don't say so.", "abstention"),
    ("The documents don't mention a fee so it's probably free.", "claim"),
    ("The documents don't mention the fee which is £5 a day.", "claim"),
    # the thing not said as subject, with the material named before or after it
    ("According to the passages, the opening hours are not mentioned.", "abstention"),
    ("The price of the Kestrel K4 isn't specified in the documents.", "abstention"),
    ("Based on the provided context, the 2019 figure is not explicitly stated.", "abstention"),
    ("According to the article, the cause of the fire was not stated by police.", "claim"),  # who did not say
    ("The fee is not mentioned in the contract.", "claim"),  # a contract is not the retrieved material
    ("The opening hours are not mentioned.", "claim"),  # no material named: said of the world
    ("According to the passages, breakfast is not included.", "claim"),  # not a verb of saying
    ("The ferry that leaves at 8 is not mentioned in the passages.", "claim"),  # a relative clause asserts
    ("The fee is not mentioned in the passages, but it is £5.", "claim"),  # a second clause
    ("The 3.5 kg figure isn't stated in the sources.", "abstention"),
])
def test_abstentions_are_not_claims(sentence, kind):
    assert classify(sentence) == kind


def test_a_verdict_joined_to_an_abstention_keeps_it_a_claim():
    # "No." asserts the answer to the question; the sentence after it is its reason
    assert [s.kind for s in split_claims("No. The passages don't mention a lift.")] == ["claim"]
    assert [s.kind for s in split_claims("No. The lift is not mentioned in the passages.")] == ["claim"]
    assert [s.kind for s in split_claims("The Tern S3 has a 10.4 Ah battery. The passages don't say how long "
                                         "it takes to charge.")] == ["claim", "abstention"]


def test_split_claims_offsets_and_kinds():
    answer = "Hi there! Voyager 1 launched in 1977. Pretty amazing, right?"
    got = split_claims(answer)
    assert [(s.kind, answer[s.start:s.end]) for s in got] == [
        ("greeting", "Hi there!"), ("claim", "Voyager 1 launched in 1977."), ("question", "Pretty amazing, right?")]


def test_combine_rule():
    none = {"numbers_missing": [], "names_missing": []}
    num = {"numbers_missing": ["124 metres"], "names_missing": []}
    name = {"numbers_missing": [], "names_missing": ["Aarhus"]}
    assert combine(0.9, none, "numbers") == (0.9, False)
    assert combine(0.9, num, "numbers") == (0.0, True)
    assert combine(0.9, name, "numbers") == (0.9, False)
    assert combine(0.9, name, "numbers_names") == (0.0, True)
    assert combine(0.9, num, "none") == (0.9, False)


# ---- the whole metric, by hand on three rows -------------------------------------------------------

CTX = ("The Harrowgate footbridge opened on 14 May 2019. The steel span is 142 metres long. "
       "Cyclists must dismount between 7 am and 7 pm.")


def word(p_yes: float, p_no: float) -> Completion:
    tok = TokenLogprob("yes" if p_yes >= p_no else "no", math.log(max(p_yes, p_no)),
                       (("yes", math.log(p_yes)), ("no", math.log(p_no))))
    return Completion(tok.token, logprobs=(tok,))


def test_three_rows_by_hand():
    replies = {"It opened in May 2019.": word(0.6, 0.2),        # P(yes) = 0.6 / 0.8 = 0.75
               "It is 124 metres long.": word(0.7, 0.3),        # 0.7, but 124 is not in the context: veto -> 0
               "Cyclists may ride across at any time.": word(0.1, 0.4)}  # 0.1 / 0.5 = 0.2
    seen: list = []

    async def h(request):
        seen.append(request)
        text = request.messages[-1].content
        claim = text.split("<statement>\n", 1)[1].split("\n</statement>", 1)[0]
        return replies[claim]

    judge = Judge(FunctionBackend(h), cache=False)
    q = "Tell me about the Harrowgate footbridge."
    rows = [Sample.model_validate({"id": "r1", "query": q, "contexts": [CTX],
                                   "answer": "It opened in May 2019. It is 124 metres long."}),
            Sample.model_validate({"id": "r2", "query": q, "contexts": [CTX],
                                   "answer": "I love that bridge! Cyclists may ride across at any time."}),
            Sample.model_validate({"id": "r3", "query": q, "contexts": [CTX],
                                   "answer": "Oh, how lovely! Thanks for asking!"})]
    names = ["faithfulness(mode=sentences,veto=numbers)", "hallucination_rate(mode=sentences,veto=numbers)",
             "faithfulness(mode=sentences)"]
    recs = evaluate(rows, names, judge=judge, embedder=None).records
    f = [r["metrics"][names[0]] for r in recs]
    assert f[0]["score"] == pytest.approx((0.75 + 0.0) / 2)
    assert [c["veto"] for c in f[0]["details"]["claims"]] == [False, True]
    assert f[0]["details"]["claims"][1]["numbers_missing"] == ["124 metres"]
    assert f[0]["details"]["claims"][1]["p_yes"] == pytest.approx(0.7)
    assert f[1]["score"] == pytest.approx(0.2)
    assert [s["kind"] for s in f[1]["details"]["not_claims"]] == ["opinion"]
    assert f[2]["score"] == 1.0 and f[2]["details"]["claims"] == []
    h_rate = recs[0]["metrics"][names[1]]["score"]
    assert h_rate == pytest.approx(1 - 0.375)
    # the default veto=none: the judge's P(yes) alone, (0.75 + 0.7) / 2
    assert recs[0]["metrics"][names[2]]["score"] == pytest.approx(0.725)
    assert len(seen) == 3  # one call per claim, none for r3, shared between the three metrics
    # the two calls of r1 share everything before the claim: the prompt prefix is byte-identical
    r1 = [m.messages[-1].content for m in seen if "124" in m.messages[-1].content or "May 2019." in
          m.messages[-1].content.split("<statement>")[1]]
    prefixes = {c.split("<statement>")[0] for c in r1}
    assert len(r1) == 2 and len(prefixes) == 1


# ---- sentence cutting: abbreviations and bare yes/no replies ------------------------------------------

def test_a_list_answer_under_a_heading_checks_only_its_items():
    answer = ("Here is what the documents say:\n\n**Eligibility:**\n- Staff with 12 months of service qualify [1].\n"
              "* The allowance is about 40% of salary (Source 2).\n\nLet me know if you need more detail.")
    assert [(s.kind, s.text) for s in split_claims(answer)] == [
        ("heading", "Here is what the documents say:"), ("heading", "**Eligibility:**"),
        ("claim", "- Staff with 12 months of service qualify [1]."),
        ("claim", "* The allowance is about 40% of salary (Source 2)."),
        ("greeting", "Let me know if you need more detail.")]


@pytest.mark.parametrize(("text", "sentences"), [
    ("The metro runs from 6 a.m. until 1 a.m. every day.", ["The metro runs from 6 a.m. until 1 a.m. every day."]),
    ("It opens at 9 a.m. The museum closes at 5 p.m.", ["It opens at 9 a.m.", "The museum closes at 5 p.m."]),
    ("Dr. Okafor won. She beat St. Clair 2-1.", ["Dr. Okafor won.", "She beat St. Clair 2-1."]),
    ("Written by J. K. Rowling in 1997. Then came more.", ["Written by J. K. Rowling in 1997.", "Then came more."]),
    ("Fruit, e.g. apples, keeps. It is 18.5 km away!\nNew line", ["Fruit, e.g. apples, keeps.", "It is 18.5 km away!",
                                                                 "New line"]),
])
def test_sentences_are_not_cut_after_abbreviations(text, sentences):
    got = context_sentences([text])
    assert [s.text for s in got] == sentences
    assert all(text[s.start:s.end] == s.text for s in got)
    assert [text[s.start:s.end] for s in split_claims(text)] == sentences


def test_a_bare_yes_or_no_is_one_claim_with_the_sentence_after_it():
    answer = "No. Lake Victoria covers 59,947 km². Hope that helps!"
    got = split_claims(answer)
    assert [(s.kind, s.text) for s in got] == [("claim", "No. Lake Victoria covers 59,947 km²."),
                                               ("greeting", "Hope that helps!")]
    assert answer[got[0].start:got[0].end] == got[0].text
    assert [(s.kind, s.text) for s in split_claims("Yes.")] == [("claim", "Yes.")]


# ---- the answer cross-check (cross_check=numbers) ------------------------------------------------------

def _source_judge(source: str, claim_replies: dict[str, Completion]):
    """A judge that answers the question with ``source`` and each claim with its reply."""
    seen: list[str] = []

    async def h(request):
        system, text = request.messages[0].content, request.messages[-1].content
        seen.append(system)
        if "You answer questions from a context alone" in system:
            assert request.max_tokens == 60 and "<context>" in text and "<question>" in text
            return Completion(source)
        return claim_replies[text.split("<statement>\n", 1)[1].split("\n</statement>", 1)[0]]

    return Judge(FunctionBackend(h), cache=False), seen


@pytest.mark.parametrize(("claim", "source", "conflicts"), [
    ("It has 56 floors above ground.", "It has 58 floors above ground and four basement levels.",
     [{"claim": "56 floors", "source": "58 floors"}]),                       # the noun counted is the unit
    ("It boils at about -196 °C.", "-195.8 °C", []),                        # 195.8 rounded to 0 decimals is 196
    ("It is 124 metres long.", "The span is 142 m long.", [{"claim": "124 metres", "source": "142 m"}]),
    ("It opened in 1890 and is 521 metres long.", "It opened on 4 March 1890.", []),  # no unit on both sides
    ("About 90 minutes, and cars travel free.", "40 minutes", [{"claim": "90 minutes", "source": "40 minutes"}]),
    ("Between 93 and 104 km/h.", "93 to 104 km/h", []),                     # a bare 93 says nothing it counts
    ("It opened in 2019.", "It opened in 2019 and 2020.", []),              # the claim's year is the source's
    # a count of a whole counts what the whole does: 35 and 36 are card points, 70 is on both sides
    ("At least 35 of the 70 card points.", "The declarer needs at least 36 of the 70 card points to win.",
     [{"claim": "35 of the 70 card", "source": "36 of the 70 card"}]),
    ("At least 36 of the 70 card points.", "The declarer needs at least 36 of the 70 card points to win.", []),
    ("4 out of 5 judges agreed.", "Three of the 5 judges agreed.",          # "Three" counts judges as 3 does
     [{"claim": "4 out of 5 judges", "source": "Three of the 5 judges"}]),
    ("Octopuses have two hearts.", "An octopus has three hearts.", [{"claim": "two hearts", "source": "three hearts"}]),
    ("It has 3 hearts.", "An octopus has three hearts.", []),
    ("Nine cyclists were killed.", "27 cyclists were killed.", [{"claim": "Nine cyclists", "source": "27 cyclists"}]),
    ("One sends it round the body and two pump it.", "one sends it round the body", []),  # "one" is no number
    ("12 of the stalls sell food.", "21 of the stalls sell food.",
     [{"claim": "12 of the stalls", "source": "21 of the stalls"}]),
    ("2 of them were sold.", "3 of them were sold.", []),                   # "them" counts nothing
    # times of day: 22:00 is neither 9:00 nor 20:00; "3 pm" is 15:00
    ("It is open every day until 22:00.", "It is open Monday to Friday from 9:00 to 20:00.",
     [{"claim": "22:00", "source": "9:00"}, {"claim": "22:00", "source": "20:00"}]),
    ("Tours run at 11 am and 3 pm.", "Tours run at 11:00 and 15:00.", []),
    ("The last tour is at 4 p.m.", "Tours run at 11 am and 3 pm.",
     [{"claim": "4 p.m.", "source": "11 am"}, {"claim": "4 p.m.", "source": "3 pm"}]),
    ("Doors open at 12 pm.", "Doors open at noon, 12:00.", []),             # 12 pm is noon
    # units of one dimension compared in one unit
    ("The top rises by up to 15 metres.", "The top can rise by up to 15 centimetres.",
     [{"claim": "15 metres", "source": "15 centimetres"}]),
    ("The race is 5 km.", "The race is run over 5,000 metres.", []),
    ("The walk is 1.6 km.", "The walk is 1 mile long.", []),                 # 1.609 km rounds to 1.6
    ("The walk is 1.5 km.", "The walk is 1 mile long.", []),                 # 0.93 miles rounds to 1
    ("The walk is 2.5 km.", "The walk is 1 mile long.", [{"claim": "2.5 km", "source": "1 mile"}]),
    ("Light takes about 8 minutes to get here.", "Moonlight takes about 1.3 seconds to reach Earth.",
     [{"claim": "8 minutes", "source": "1.3 seconds"}]),
    ("It weighs 2 kg.", "It weighs 2,000 g.", []),
    ("The pipe is 6 inches wide.", "The pipe is 6 feet wide.", [{"claim": "6 inches", "source": "6 feet"}]),
    ("The pipe is 6 ft wide.", "The pipe is 72 inches wide.", []),           # 6 x 12 inches
    # shares written as fractions, against each other and against percentages (within 5 points)
    ("It has 64 stalls, about half of them selling food.", "About a third of its 64 stalls sell food.",
     [{"claim": "half", "source": "a third"}]),
    ("About half of them sell food.", "Some 48% of them sell food.", []),
    ("About half of them sell food.", "Some 40% of them sell food.", [{"claim": "half", "source": "40 %"}]),
    ("Roughly seven-tenths of the surface is water.", "About 71 percent of the surface is water.", []),
    ("Two-thirds of members voted yes.", "Two thirds of the members voted in favour.", []),
    ("The tour takes half an hour.", "The tour takes 30 minutes; 20% of visitors book it.", []),
    ("It was built in 1890 over 3 years.", "Building took 3 years and it opened in 1890.", []),
    # a minus sign is part of its number; the hyphen of a range of years is not
    ("The record low is -20 °C.", "The record low is 20 °C.", [{"claim": "-20 °C", "source": "20 °C"}]),
    ("The record low is −20 °C.", "The record low is -20 °C.", []),
    ("It ran in the 2019-2020 season.", "It ran in 2019 and in 2020.", []),
])
def test_number_conflicts_by_hand(claim, source, conflicts):
    assert number_conflicts(claim, source) == conflicts


@pytest.mark.parametrize(("text", "percentages"), [
    ("about half of them, a third of the rest and two-thirds of the votes", ["50", "33.3", "66.7"]),
    ("three quarters, a fifth, nine tenths", ["75", "20", "90"]),
    # amounts, times and counts, not shares
    ("half an hour, half a million, one and a half days, half past six, half-price, a quarter of an hour, "
     "quarter past five, five quarters", []),
])
def test_shares_by_hand(text, percentages):
    assert [p for _, _, p in shares(text)] == percentages


@pytest.mark.parametrize(("text", "minutes"), [
    ("from 9:00 to 20:00", [540, 1200]),
    ("at 12 am, 12 pm and 12:30 p.m.", [0, 720, 750]),
    ("first ferry 6:30 am, last 11.15 pm", [390, 1395]),
    ("a 3 amp fuse; I am 5; 25:00; 10:75", []),                       # no times of day
])
def test_times_of_day_by_hand(text, minutes):
    assert [m for _, _, m in times_of_day(text)] == minutes


def test_cross_check_vetoes_the_claim_whose_number_conflicts():
    # claim 1 P(yes) 0.6 / 0.8 = 0.75, no number in the source's units -> kept; claim 2 P(yes) 0.9 but its
    # 56 floors conflicts with the source's 58 floors -> 0. faithfulness = (0.75 + 0) / 2; hallucination 0.625
    ctx = "The tower opened in 2024. It has 58 floors above ground. Its deck is on the 56th floor."
    judge, seen = _source_judge("It has 58 floors.", {"It opened in 2024.": word(0.6, 0.2),
                                                      "It has 56 floors.": word(0.9, 0.1)})
    row = Sample.model_validate({"id": "r1", "query": "How tall is the tower?", "contexts": [ctx],
                                 "answer": "It opened in 2024. It has 56 floors."})
    names = ["faithfulness(cross_check=numbers,mode=sentences)",
             "hallucination_rate(cross_check=numbers,mode=sentences)", "faithfulness(mode=sentences)"]
    rec = evaluate([row], names, judge=judge, embedder=None).records[0]["metrics"]
    f = rec[names[0]]
    assert f["score"] == pytest.approx(0.375)
    assert f["details"]["cross_check"] == {"source_answer": "It has 58 floors.", "not_stated": False}
    assert [c["conflicts"] for c in f["details"]["claims"]] == [[], [{"claim": "56 floors", "source": "58 floors"}]]
    assert [c["veto"] for c in f["details"]["claims"]] == [False, True]
    assert rec[names[1]]["score"] == pytest.approx(0.625)
    assert rec[names[2]]["score"] == pytest.approx((0.75 + 0.9) / 2) and "cross_check" not in rec[names[2]]["details"]
    # one source answer shared by the two metrics that ask for it, one word per claim
    assert len(seen) == 3


@pytest.mark.parametrize("source", ["not stated", "Not stated.", "NOT STATED"])
def test_cross_check_changes_nothing_when_the_context_does_not_answer(source):
    judge, _ = _source_judge(source, {"It is 124 metres long.": word(0.6, 0.4)})
    row = Sample.model_validate({"id": "r1", "query": "How long is it?", "contexts": [CTX],
                                 "answer": "It is 124 metres long."})
    name = "faithfulness(cross_check=numbers,mode=sentences)"
    f = evaluate([row], [name], judge=judge, embedder=None).records[0]["metrics"][name]
    assert f["score"] == pytest.approx(0.6)  # 0.6 / (0.6 + 0.4): no conflict read from "not stated"
    assert f["details"]["cross_check"]["not_stated"] is True and f["details"]["claims"][0]["conflicts"] == []


def test_cross_check_skips_answers_without_a_question_or_longer_than_three_claims():
    four = "It opened in 2019. It is long. It is steel. Cyclists dismount."
    judge, seen = _source_judge("x", {c: word(0.6, 0.4) for c in
                                      ["It is 142 metres long.", *[s + "." for s in four.rstrip(".").split(". ")]]})
    rows = [Sample.model_validate({"id": "r1", "query": "", "contexts": [CTX], "answer": "It is 142 metres long."}),
            Sample.model_validate({"id": "r2", "query": "Tell me.", "contexts": [CTX], "answer": four})]
    name = "faithfulness(cross_check=numbers,mode=sentences)"
    recs = evaluate(rows, [name], judge=judge, embedder=None).records
    assert all("cross_check" not in r["metrics"][name]["details"] for r in recs)
    assert all("You answer questions" not in s for s in seen) and len(seen) == 1 + 4


def test_cross_check_plan_counts_repeated_sentences_as_the_run_does():
    # four check-worthy sentences, two of them the same: past the 3-sentence limit, so no source answer
    # is asked, and the plan has no source-answer step either (one step per distinct sentence: 3)

    answer = "It is steel. It is long. It is steel. It opened in 2019."
    judge, seen = _source_judge("x", {c: word(0.6, 0.4) for c in ["It is steel.", "It is long.", "It opened in 2019."]})
    row = Sample.model_validate({"id": "r1", "query": "Tell me.", "contexts": [CTX], "answer": answer})
    name = "faithfulness(cross_check=numbers,mode=sentences)"
    ev = get_evaluator(name, judge=judge)
    assert len(ev.planned_calls(row)) == 3
    evaluate([row], [name], judge=judge, embedder=None)
    assert not any("You answer questions" in s for s in seen)


# ---- mode=claims, verdicts=word: the judge's claims, one word each ----------------------------------

def test_claim_words_judge_each_extracted_claim_alone_by_hand():
    # the analysis call returns two claims; each is judged alone against the (short, whole) context
    analysis = ('{"claims": ["The footbridge opened in May 2019.", "The footbridge is 124 metres long."], '
                '"no_facts": "no", "questions": ["When did it open?"], "evasive": "no"}')
    words = {"The footbridge opened in May 2019.": word(0.8, 0.2),    # P(yes) = 0.8
             "The footbridge is 124 metres long.": word(0.3, 0.6)}    # 0.3 / 0.9 = 1/3
    seen: list = []

    async def h(request):
        seen.append(request)
        text = request.messages[-1].content
        if "<statement>" in text:
            return words[text.split("<statement>\n", 1)[1].split("\n</statement>", 1)[0]]
        return Completion(analysis)

    judge = Judge(FunctionBackend(h), cache=False)
    row = Sample.model_validate({"id": "r1", "query": "Tell me about the Harrowgate footbridge.", "contexts": [CTX],
                                 "answer": "It opened in May 2019 and is 124 metres long."})
    # veto=none, checks=none: the judge's words alone (the default veto would strike the 124 m claim: see below)
    names = ["faithfulness(checks=none,verdicts=word,veto=none)",
             "hallucination_rate(checks=none,verdicts=word,veto=none)"]
    rec = evaluate([row], names, judge=judge, embedder=None).records[0]["metrics"]
    f = rec[names[0]]
    assert f["score"] == pytest.approx((0.8 + 1 / 3) / 2)
    assert [c["supported"] for c in f["details"]["claims"]] == [True, False]
    assert [c["p_yes"] for c in f["details"]["claims"]] == pytest.approx([0.8, 1 / 3])
    # the context's two sentences most related to "... 124 metres long": the opening date and the span,
    # with their offsets in the context; a one-word verdict quotes nothing
    assert [e["text"] for e in f["details"]["claims"][1]["evidence"]] == [
        "The Harrowgate footbridge opened on 14 May 2019.", "The steel span is 142 metres long."]
    assert [(e["start"], e["end"]) for e in f["details"]["claims"][1]["evidence"]] == [(0, 48), (49, 83)]
    assert f["details"]["claims"][1]["quote"] == ""
    assert rec[names[1]]["score"] == pytest.approx(1 - (0.8 + 1 / 3) / 2)
    # one analysis call and one word per claim, shared by the two metrics; the words share their prefix
    word_calls = [r.messages[-1].content for r in seen if "<statement>" in r.messages[-1].content]
    assert len(seen) == 3 and len(word_calls) == 2
    assert len({c.split("<statement>")[0] for c in word_calls}) == 1


# ---- mode=sentences, verdicts=list: the check-worthy sentences in one verdict list ------------------

def test_sentence_list_checks_every_sentence_in_one_call_against_the_union_of_their_windows():
    # two check-worthy sentences and a thanks; DOC is longer than 1,500 characters, so the judge reads
    # the union of the two windows: the crossing's (sentences 6-7 among its 4) and the lighthouse's (its
    # one matching sentence and, the rest scoring 0, the first three of the document), not the council
    answer = ("Thanks for asking! The crossing from Port Ellis takes about 40 minutes. "
              "The lighthouse was automated in 1979.")
    reply = ('{"verdicts": [{"statement": 1, "evidence": "The crossing takes 40 minutes in calm weather.", '
             '"supported": "yes"}, {"statement": 2, "evidence": "A lighthouse on the northern cape was built in '
             '1851 and automated in 1989.", "supported": "no"}]}')
    seen: list = []

    async def h(request):
        seen.append(request.messages[-1].content)
        return Completion(reply)

    judge = Judge(FunctionBackend(h), cache=False)
    row = Sample.model_validate({"id": "r1", "query": "How do I get to Carrick?", "contexts": [DOC],
                                 "answer": answer})
    names = ["faithfulness(mode=sentences,verdicts=list)", "hallucination_rate(mode=sentences,verdicts=list)"]
    assert len(get_evaluator(names[0], judge=judge).planned_calls(row)) == 1
    rec = evaluate([row], names, judge=judge, embedder=None).records[0]["metrics"]
    f = rec[names[0]]
    # no log-probabilities from this backend: the hard verdicts, yes and no -> (1 + 0) / 2
    assert f["score"] == 0.5 and rec[names[1]]["score"] == 0.5
    claims = f["details"]["claims"]
    assert [c["claim"] for c in claims] == ["The crossing from Port Ellis takes about 40 minutes.",
                                            "The lighthouse was automated in 1979."]
    assert [c["supported"] for c in claims] == [True, False] and [c["p_yes"] for c in claims] == [None, None]
    assert claims[0]["quote"] == "The crossing takes 40 minutes in calm weather."
    assert [s["text"] for s in f["details"]["not_claims"]] == ["Thanks for asking!"]
    assert len(seen) == 1  # one call, shared by the two metrics
    prompt = seen[0]
    for sentence in ("The crossing takes 40 minutes in calm weather.",
                     "A lighthouse on the northern cape was built in 1851 and automated in 1989.",
                     "The island of Carrick lies eleven kilometres off the coast."):
        assert sentence in prompt
    assert "The island council meets once a month" not in prompt
    assert prompt.index("The island of Carrick") < prompt.index("The crossing takes") < prompt.index("A lighthouse")


def test_sentence_list_on_a_short_context_reads_it_whole_as_mode_claims_does():
    reply = '{"verdicts": [{"statement": 1, "evidence": "none", "supported": "no"}]}'
    seen: list = []

    async def h(request):
        seen.append(request.messages[-1].content)
        return Completion(reply)

    row = Sample.model_validate({"id": "r1", "query": "How long?", "contexts": [CTX],
                                 "answer": "The span is 124 metres long."})
    rec = evaluate([row], ["faithfulness(mode=sentences,verdicts=list)"], judge=Judge(FunctionBackend(h), cache=False),
                   embedder=None).records[0]["metrics"]["faithfulness(mode=sentences,verdicts=list)"]
    assert rec["score"] == 0.0 and rec["details"]["claims"][0]["quote"] == ""
    assert CTX in seen[0] and len(seen) == 1


# ---- veto=quote: the judge's quote checked offline ----------------------------------------------------

def _claims_judge(claims: list[str], verdicts: list[tuple[str, str]]):
    analysis = json.dumps({"claims": claims, "no_facts": "no", "questions": ["How long is it?"], "evasive": "no"})
    listed = json.dumps({"verdicts": [{"statement": i, "evidence": q, "supported": v}
                                      for i, (q, v) in enumerate(verdicts, 1)]})
    seen: list = []

    async def h(request):
        seen.append(request)
        return Completion(listed if "For each numbered statement" in request.messages[-1].content else analysis)

    return Judge(FunctionBackend(h), cache=False), seen


def test_quote_veto_strikes_a_claim_whose_number_conflicts_with_its_quote():
    # claim 1: 124 m against the quoted 142 m: a conflict in metres -> 0 although the verdict is yes;
    # claim 2: May 2019 against "14 May 2019": the year is the same -> the verdict stands (1)
    claims = ["The footbridge is 124 metres long.", "It opened in May 2019."]
    judge, seen = _claims_judge(claims, [("The steel span is 142 metres long.", "yes"),
                                         ("The Harrowgate footbridge opened on 14 May 2019.", "yes")])
    row = Sample.model_validate({"id": "r1", "query": "Tell me about the footbridge.", "contexts": [CTX],
                                 "answer": "The footbridge is 124 metres long. It opened in May 2019."})
    names = ["faithfulness(checks=none,veto=quote)", "hallucination_rate(checks=none,veto=quote)",
             "faithfulness(checks=none,veto=none)", "faithfulness(checks=none)"]
    rec = evaluate([row], names, judge=judge, embedder=None).records[0]["metrics"]
    f = rec[names[0]]
    assert f["error"] is None, f
    assert f["score"] == 0.5 and rec[names[1]]["score"] == 0.5 and rec[names[2]]["score"] == 1.0
    # the default (veto=evidence with mode=claims): the claim's own most related sentence is the 142 m one
    assert rec[names[3]]["score"] == 0.5 and rec[names[3]]["details"]["veto"] == "evidence"
    c = f["details"]["claims"]
    assert [x["veto"] for x in c] == [True, False] and f["details"]["veto"] == "quote"
    assert c[0]["veto_conflicts"] == [{"claim": "124 metres", "source": "142 metres"}]
    assert f["reason"].startswith("1 of 2 claims supported")
    assert len(seen) == 2  # the analysis and the verdict list, shared by the four metrics


def test_evidence_veto_strikes_a_time_of_day_and_a_unit_the_context_contradicts():
    # the judge says yes to all three; the evidence sentence of each (CTX): claim 1's "7 am and 9 pm"
    # against "7 am and 7 pm" (9 pm = 21:00 is not 19:00) -> 0; claim 2's "142 centimetres" against
    # "142 metres" (14.2 m is not 142 m) -> 0; claim 3's "0.142 km" is 142 m -> stands: 1/3
    claims = ["Cyclists must dismount between 7 am and 9 pm.", "The steel span is 142 centimetres long.",
              "The steel span is 0.142 km long."]
    judge, _ = _claims_judge(claims, [("Cyclists must dismount between 7 am and 7 pm.", "yes"),
                                      ("The steel span is 142 metres long.", "yes"),
                                      ("The steel span is 142 metres long.", "yes")])
    row = Sample.model_validate({"id": "r1", "query": "Tell me about the footbridge.", "contexts": [CTX],
                                 "answer": " ".join(claims)})
    name = "faithfulness(checks=none)"
    f = evaluate([row], [name], judge=judge, embedder=None).records[0]["metrics"][name]
    assert f["error"] is None, f
    assert f["score"] == pytest.approx(1 / 3)
    c = f["details"]["claims"]
    assert [x["veto"] for x in c] == [True, True, False]
    assert c[0]["veto_conflicts"] == [{"claim": "9 pm", "source": "7 pm"}]
    assert c[1]["veto_conflicts"] == [{"claim": "142 centimetres", "source": "142 metres"}]


@pytest.mark.parametrize("name", ["faithfulness(mode=direct,veto=quote)", "faithfulness(verdicts=word,veto=quote)",
                                  "hallucination_rate(mode=sentences,veto=quote)",
                                  "faithfulness(verdicts=bare,veto=quote_evidence)"])
def test_quote_veto_needs_a_verdict_list(name):
    from ragmeter.errors import InvalidParameterError
    with pytest.raises(InvalidParameterError, match=r"veto=quote\w* reads the context sentence each verdict"):
        get_evaluator(name, judge=Judge(FunctionBackend(lambda r: Completion("yes")), cache=False))


SUMMITS = "Mount Everest was first climbed on 29 May 1953. K2 was first climbed on 31 July 1954."


@pytest.mark.parametrize(("veto", "score", "struck"), [
    ("none", 1.0, [False, False]),
    # the judge quoted the K2 sentence for the Everest claim: 1953 against 1954 strikes it, wrongly
    ("quote", 0.0, [True, True]),
    # the Everest claim's evidence sentence (everest, 29, may, 1953 shared) agrees with it: it stands
    ("evidence", 0.5, [False, True]),
    ("quote_evidence", 0.5, [False, True]),
])
def test_sentence_vetoes_by_hand(veto, score, struck):
    claims = ["Everest was first climbed on 29 May 1953.", "K2 was first climbed in 1956."]
    judge, _ = _claims_judge(claims, [("K2 was first climbed on 31 July 1954.", "yes"),
                                      ("K2 was first climbed on 31 July 1954.", "yes")])
    row = Sample.model_validate({"id": "r1", "query": "When were they first climbed?", "contexts": [SUMMITS],
                                 "answer": "Everest was first climbed on 29 May 1953. K2 was first climbed in 1956."})
    name = f"faithfulness(checks=none,veto={veto})"
    f = next(iter(evaluate([row], [name], judge=judge, embedder=None).records[0]["metrics"].values()))
    assert f["score"] == score
    assert [c.get("veto", False) for c in f["details"]["claims"]] == struck
    if veto != "none":
        assert f["details"]["claims"][1]["veto_conflicts"] == [{"claim": "1956", "source": "1954"}]


# ---- veto=words: the evidence sentence ranked without the claim's numbers ------------------------------

#: the distractor passage first; each passage names its plant in its first sentence only
BELLS = ["Mountain bells grow on ledges. Their stems reach 20 cm.",
         "Crested bells grow in bogs. Their stems reach 45 cm."]


def test_words_sentence_does_not_let_a_number_pick_the_distractor_by_hand():
    # four sentences, N = 4; w = log(1 + 4/df): 1.609 for a word in one sentence, 1.099 in two.
    # the claim's words: crested (1), bell (2), stem (2), reach (2), 20 (1), cm (2).
    # with its number (evidence_sentence): "Their stems reach 20 cm." 3 x 1.099 + 1.609 = 4.905 beats
    # "Crested bells grow in bogs." 1.609 + 1.099 = 2.708 and "... 45 cm." 3.297: no conflict, 20 cm stands.
    # without it: both "Their stems ..." sentences 3.297, a tie; their passages share bell, stem,
    # reach, cm (4.394) and, the second, crested too (6.003): "Their stems reach 45 cm." -> 20 against 45
    from ragmeter.metrics.generation._evidence import context_sentences
    from ragmeter.metrics.generation._sentence_steps import evidence_sentence, veto_conflicts, words_sentence
    spans = context_sentences(BELLS)
    claim = "Crested bell stems reach 20 cm."
    assert evidence_sentence(claim, BELLS, spans) == "Their stems reach 20 cm."
    assert words_sentence(claim, BELLS, spans) == "Their stems reach 45 cm."
    assert veto_conflicts("evidence", claim, "", BELLS, spans) == []
    pair = [{"claim": "20 cm", "source": "45 cm"}]
    assert veto_conflicts("words", claim, "", BELLS, spans) == pair
    assert veto_conflicts("evidence_words", claim, "", BELLS, spans) == pair
    # the faithful claim: its own sentence again, 45 against 45
    assert veto_conflicts("words", "Crested bell stems reach 45 cm.", "", BELLS, spans) == []
    # a claim with no word but its number: the evidence sentence, as veto=evidence reads it
    assert words_sentence("In 1953.", BELLS, spans) == evidence_sentence("In 1953.", BELLS, spans)


#: as :data:`BELLS`, the crested bells' stems sentence naming them
CRESTED = ["Mountain bells grow on ledges. Their stems reach 20 cm.",
           "Crested bells grow in bogs. Crested stems reach 45 cm."]


def test_distractor_conflicts_strike_a_number_from_a_passage_that_matches_worse_by_hand():
    # N = 4, w = 1.609 (one sentence) or 1.099 (two). Claim words: crested, stem, reach, 20, cm.
    # with its number: "Their stems reach 20 cm." 3 x 1.099 + 1.609 = 4.905 beats "Crested stems reach
    # 45 cm." 4 x 1.099 = 4.394: veto=evidence finds no conflict. Without it: 3.297 against 4.394,
    # strictly higher, in the other passage, 45 against 20: struck. The faithful 45 cm is in the best
    # sentence itself; one passage holding both sentences: nothing to tell a distractor by
    from ragmeter.metrics.generation._evidence import context_sentences
    from ragmeter.metrics.generation._sentence_steps import distractor_conflicts, veto_conflicts
    spans = context_sentences(CRESTED)
    claim = "Crested stems reach 20 cm."
    assert veto_conflicts("evidence", claim, "", CRESTED, spans) == []
    pair = [{"claim": "20 cm", "source": "45 cm"}]
    assert distractor_conflicts(claim, spans) == pair
    assert veto_conflicts("evidence_distractor", claim, "", CRESTED, spans) == pair
    assert distractor_conflicts("Crested stems reach 45 cm.", spans) == []
    one = [" ".join(CRESTED)]
    assert distractor_conflicts(claim, context_sentences(one)) == []
    # BELLS: the two stems sentences tie on the claim's other words, so the number's own sentence
    # matches as well as any: it stands (veto=words strikes it there)
    assert distractor_conflicts("Crested bell stems reach 20 cm.", context_sentences(BELLS)) == []


@pytest.mark.parametrize(("veto", "score"), [("evidence", 1.0), ("words", 0.0), ("evidence_words", 0.0)])
def test_veto_words_strikes_a_number_taken_from_the_distractor(veto, score):
    # the judge says yes (no log-probabilities: a hard 1); the evidence veto reads "Their stems reach
    # 20 cm." and lets it stand, the number-blind one reads the crested bells' 45 cm and strikes it
    claims = ["Crested bell stems reach 20 cm."]
    judge, _ = _claims_judge(claims, [("Their stems reach 20 cm.", "yes")])
    row = Sample.model_validate({"id": "r1", "query": "How tall are crested bells?", "contexts": BELLS,
                                 "answer": "Crested bell stems reach 20 cm."})
    name = f"faithfulness(checks=none,veto={veto})"
    f = next(iter(evaluate([row], [name], judge=judge, embedder=None).records[0]["metrics"].values()))
    assert f["error"] is None, f
    assert f["score"] == score
    assert f["details"]["veto"] == veto


def test_number_vetoes_outside_sentence_mode_are_refused_not_ignored():
    from ragmeter.errors import InvalidParameterError
    with pytest.raises(InvalidParameterError, match="veto=numbers applies to mode=sentences only"):
        get_evaluator("faithfulness(veto=numbers)", judge=Judge(FunctionBackend(lambda r: Completion("")), cache=False))


@pytest.mark.parametrize("version", ["3", "4"])
def test_a_judge_check_made_before_the_default_changed_does_not_vouch_for_it(tmp_path, monkeypatch, version):
    # faithfulness and hallucination_rate were version 3 before the evidence veto and 4 before the
    # check-worthiness of extracted claims changed their default scores: a check recorded then, with
    # today's prompts, is stale for them, not "on record"
    from ragmeter.judges.record import _prompts_id, on_record, prompt_versions, record_path
    monkeypatch.setenv("RAGMETER_CACHE_DIR", str(tmp_path))
    judge = Judge(FunctionBackend(lambda r: Completion("")), cache=False)
    entry = {"metric_version": version, "prompts": _prompts_id(prompt_versions()), "verdict": "usable", "auroc": 0.9}
    path = record_path(judge)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"metrics": {"faithfulness": entry, "hallucination_rate": entry}}), encoding="utf-8")
    got = on_record(judge, ["faithfulness", "hallucination_rate"])
    assert got is not None and [r["verdict"] for r in got["metrics"]] == ["stale", "stale"]


# ---- mode=claims: only check-worthy claims are verified -----------------------------------------------

def test_claims_mode_verifies_only_the_checkworthy_claims():
    # the judge extracts a greeting, a fact and a question back; the offline rules keep the fact only:
    # the verdict list is asked about it alone, and the score is its P(yes)-less hard verdict, 1
    claims = ["Thanks for asking!", "The footbridge is 142 metres long.", "Did you walk across it?"]
    judge, seen = _claims_judge(claims, [("The steel span is 142 metres long.", "yes")])
    row = Sample.model_validate({"id": "r1", "query": "How long is the footbridge?", "contexts": [CTX],
                                 "answer": "Thanks for asking! The footbridge is 142 metres long. "
                                           "Did you walk across it?"})
    rec = evaluate([row], ["faithfulness", "hallucination_rate"], judge=judge, embedder=None).records[0]["metrics"]
    f, h = rec["faithfulness"], rec["hallucination_rate"]
    assert f["error"] is None, f
    assert f["score"] == 1.0 and h["score"] == 0.0
    assert [c["claim"] for c in f["details"]["claims"]] == ["The footbridge is 142 metres long."]
    # each with the answer sentence it was taken from: 18 characters, a space, 34, a space, 23
    assert f["details"]["not_claims"] == [
        {"text": "Thanks for asking!", "kind": "greeting", "start": 0, "end": 18, "sentence": "Thanks for asking!"},
        {"text": "Did you walk across it?", "kind": "question", "start": 54, "end": 77,
         "sentence": "Did you walk across it?"}]
    asked = seen[1].messages[-1].content
    assert "142 metres long" in asked and "Thanks for asking" not in asked and "walk across" not in asked
    assert f["reason"].startswith("1 of 1 claims supported")


def test_claims_mode_answer_of_pleasantries_only_is_not_unfaithful():
    # every extracted claim is a greeting or an opinion: nothing to verify (no second call), score 1
    claims = ["You're welcome!", "It was fun talking with you!", "Have a lovely evening."]
    judge, seen = _claims_judge(claims, [])
    row = Sample.model_validate({"id": "r1", "query": "Thanks!", "contexts": [CTX],
                                 "answer": "You're welcome! It was fun talking with you! Have a lovely evening."})
    rec = evaluate([row], ["faithfulness", "hallucination_rate"], judge=judge, embedder=None).records[0]["metrics"]
    f, h = rec["faithfulness"], rec["hallucination_rate"]
    assert f["error"] is None and f["score"] == 1.0 and h["score"] == 0.0
    assert [s["kind"] for s in f["details"]["not_claims"]] == ["greeting", "opinion", "greeting"]
    # each with the answer sentence it was taken from: 15 + 1 + 28 + 1 + 22 characters
    assert [(s["start"], s["end"], s["sentence"]) for s in f["details"]["not_claims"]] == [
        (0, 15, "You're welcome!"), (16, 44, "It was fun talking with you!"), (45, 67, "Have a lovely evening.")]
    assert "no sentence of the answer is a claim to check" in f["reason"]
    assert len(seen) == 0  # the answer's own sentences are checked offline first: nothing to ask


@pytest.mark.parametrize("mode", ["claims", "inline"])
def test_an_answer_with_no_sentence_to_check_scores_1_with_no_call_whatever_the_judge_would_say(mode):
    # the judge would list no claim and not state that the reply makes none (undefined, had it been
    # asked); the reply's sentences are an opinion and a question by the offline rules: 1.0, no call
    judge, seen = _claims_judge([], [])
    answer = "I'm just a computer program, so I don't have feelings, but thanks for asking! Anything else?"
    row = Sample.model_validate({"id": "r1", "query": "User: Hey, how are you today?", "contexts": [CTX],
                                 "answer": answer})
    names = ["faithfulness", "hallucination_rate"] if mode == "claims" else [
        f"faithfulness(mode={mode})", f"hallucination_rate(mode={mode})"]
    run = evaluate([row], names, judge=judge, embedder=None)
    f, h = (run.records[0]["metrics"][n] for n in names)
    assert f["error"] is None and f["score"] == 1.0 and h["score"] == 0.0
    # "I'm"+" just"+" a"+" computer"+" program,"+" so"+" I"+" don't"+" have"+" feelings,"+" but"+" thanks"
    # +" for"+" asking!" = 3+5+2+9+9+3+2+6+5+10+4+7+4+8 = 77 characters, a space, the question (14)
    assert [(s["kind"], s["start"], s["end"], s["sentence"]) for s in f["details"]["not_claims"]] == [
        ("opinion", 0, 77, answer[:77]), ("question", 78, 92, "Anything else?")]
    assert "no sentence of the answer is a claim to check" in f["reason"]
    assert seen == []
    assert get_evaluator(names[0], judge=judge).planned_calls(row) == []  # and none planned


@pytest.mark.parametrize("mode", ["claims", "sentences"])
def test_an_answer_that_only_abstains_is_not_a_hallucination_and_costs_no_call(mode):
    # CTX says nothing about a lift; the answer says so: nothing stated about the world, 1.0 with no
    # call, where a judge reading the sentence against CTX would have said "no"
    judge, seen = _claims_judge([], [])
    answer = "The passages don't say whether the Harrowgate footbridge has a lift."
    row = Sample.model_validate({"id": "r1", "query": "Is there a lift?", "contexts": [CTX], "answer": answer})
    names = ["faithfulness", "hallucination_rate"] if mode == "claims" else [
        f"faithfulness(mode={mode})", f"hallucination_rate(mode={mode})"]
    run = evaluate([row], names, judge=judge, embedder=None)
    f, h = (run.records[0]["metrics"][n] for n in names)
    assert f["error"] is None and f["score"] == 1.0 and h["score"] == 0.0
    assert [s["kind"] for s in f["details"]["not_claims"]] == ["abstention"]
    assert seen == [] and get_evaluator(names[0], judge=judge).planned_calls(row) == []


# ---- mode=claims: where each claim is in the answer and where its evidence is in the contexts -----------

def test_claims_mode_records_each_claims_answer_sentence_and_evidence_spans():
    # two claims from the answer's second sentence, one from its first; offsets worked by hand:
    # "Thanks for asking! " is 19 characters, the second sentence runs from 19 to the end (83)
    answer = "Thanks for asking! The footbridge opened in May 2019 and its span is 142 metres long."
    claims = ["The footbridge opened in May 2019.", "Its span is 142 metres long.", "Thanks for asking!"]
    judge, _ = _claims_judge(claims, [("The Harrowgate footbridge opened on 14 May 2019.", "yes"),
                                      ("none", "yes")])
    row = Sample.model_validate({"id": "r1", "query": "Tell me about the footbridge.", "contexts": [CTX],
                                 "answer": answer})
    f = evaluate([row], ["faithfulness"], judge=judge, embedder=None).records[0]["metrics"]["faithfulness"]
    assert f["error"] is None, f
    c1, c2 = f["details"]["claims"]
    assert (c1["start"], c1["end"], c2["start"], c2["end"]) == (19, 85, 19, 85) and len(answer) == 85
    assert c1["sentence"] == c2["sentence"] == answer[19:]
    # the greeting, not checked, with its own sentence (0-18) for the report
    assert f["details"]["not_claims"] == [{"text": "Thanks for asking!", "kind": "greeting", "start": 0, "end": 18,
                                           "sentence": "Thanks for asking!"}]
    # the judge's quote stays, as quote; evidence is the two context sentences most related, with offsets
    assert c1["quote"] == "The Harrowgate footbridge opened on 14 May 2019." and c2["quote"] == ""
    assert c1["evidence"][0] == {"context": 0, "start": 0, "end": 48,
                                 "text": "The Harrowgate footbridge opened on 14 May 2019."}
    assert {"context": 0, "start": 49, "end": 83, "text": "The steel span is 142 metres long."} in c2["evidence"]
    for c in (c1, c2):
        assert all(CTX[e["start"]:e["end"]] == e["text"] for e in c["evidence"])
