"""fact_consistency: hand-computed checks and scores, edge cases, registry entry."""

from __future__ import annotations

import pytest

from ragmeter import Sample, evaluate
from ragmeter.metrics.lexical.fact_consistency import (
    check_facts,
    clauses,
    clock_times,
    fact_consistency,
    names,
    numbers,
    score_sample,
    times_of_day,
    without_abstentions,
)
from ragmeter.metrics.lexical.lexical_faithfulness import lexical_faithfulness
from ragmeter.registry import default_metric_names, get_spec

SUN = ("Sunlight takes about 8 minutes and 20 seconds to travel the roughly 150 million kilometres "
       "from the Sun to Earth.")


def test_number_swap_that_lexical_faithfulness_misses():
    answer = "Sunlight takes about 6 minutes and 20 seconds to cover the roughly 150 million km to Earth."
    assert lexical_faithfulness(answer, [SUN]) == 1.0  # the blind spot this metric exists for
    got = check_facts(answer, [SUN])
    # numbers: 6 minute (fails: the context has 8 minute), 20 second, 150 -> 2 of 3
    assert [(c["text"], c["passed"]) for c in got["checks"] if c["kind"] == "number"] == [
        ("6 minutes", False), ("20 seconds", True), ("150", True)]
    # names: Earth (the sentence's first word "Sunlight" is not a name) -> passes
    assert [(c["text"], c["passed"]) for c in got["checks"] if c["kind"] == "name"] == [("Earth", True)]
    # negation: the sentence matches the context sentence, neither negated -> passes
    assert [c["passed"] for c in got["checks"] if c["kind"] == "negation"] == [True]
    # content tokens ("about", "and", "to", "the" are stop words): sunlight takes 6 minutes 20
    # seconds cover roughly 150 million km earth (12); missing: 6, cover, km -> P = 9/12; F = 4/5
    assert got["F"] == pytest.approx(4 / 5)
    assert got["P"] == pytest.approx(9 / 12)
    assert fact_consistency(answer, [SUN]) == pytest.approx(4 / 5 * 9 / 12)


def test_faithful_copy_scores_one():
    assert fact_consistency(SUN, [SUN]) == 1.0


def test_numbers_rule():
    assert numbers("It costs $1,500 and 9.50 kg, 100 °C, 4 hours, two years") == [
        ("1500", "usd", "$1,500"), ("9.5", "kg", "9.50 kg"), ("100", "°c", "100 °C"), ("4", "hour", "4 hours"),
        ("2", "year", "two years")]
    # same value, unit on one side only: passes; same value, other unit: fails
    assert check_facts("about 100 km", ["it is 100 long"])["checks"][0]["passed"] is True
    assert check_facts("about 100 km", ["it is 100 kg"])["checks"][0]["passed"] is False
    assert check_facts("It took 6,400 years.", ["6400 years"])["checks"][0]["passed"] is True


def test_a_minus_sign_is_part_of_the_number():
    # -196 °C and 196 °C are different temperatures; a hyphen between digits or after a word is no sign
    assert numbers("It boils at -196 °C, or −320 °F, from 2019-2020 and COVID-19") == [
        ("-196", "°c", "-196 °C"), ("-320", "°f", "-320 °F"), ("2019", None, "2019"), ("2020", None, "2020"),
        ("19", None, "19")]
    checks = check_facts("Liquid nitrogen boils at 196 °C.", ["Liquid nitrogen boils at -196 °C."])["checks"]
    assert [(c["text"], c["passed"]) for c in checks if c["kind"] == "number"] == [("196 °C", False)]
    checks = check_facts("It boils at −196 °C.", ["Liquid nitrogen boils at -196 °C."])["checks"]
    assert [(c["text"], c["passed"]) for c in checks if c["kind"] == "number"] == [("-196 °C", True)]


def test_spelled_out_units_are_units():
    # "centimetres" is a unit: 15 metres against 15 centimetres is another amount, not the same
    # number with the unit on one side only
    assert numbers("a 15 centimetre rise, 3 millimetres, 250 millilitres, 6 inches, 8 feet, 2 tonnes") == [
        ("15", "cm", "15 centimetre"), ("3", "mm", "3 millimetres"), ("250", "ml", "250 millilitres"),
        ("6", "inch", "6 inches"), ("8", "foot", "8 feet"), ("2", "tonne", "2 tonnes")]
    assert check_facts("It rises 15 metres.", ["The top rises 15 centimetres."])["checks"][0]["passed"] is False
    assert check_facts("It rises 15 cm.", ["The top rises 15 centimeters."])["checks"][0]["passed"] is True
    assert check_facts("It is 6 ft tall.", ["It is 6 feet tall."])["checks"][0]["passed"] is True


def number_checks(answer: str, context: str) -> list[tuple[str, bool]]:
    """``(as written, passed)`` of each number check of ``answer`` against one context."""
    return [(c["text"], c["passed"]) for c in check_facts(answer, [context])["checks"] if c["kind"] == "number"]


def number_and_name_checks(answer: str, context: str) -> list[tuple[str, str, bool]]:
    """``(kind, as written, passed)`` of each number and name check of ``answer`` against one context."""
    return [(c["kind"], c["text"], c["passed"]) for c in check_facts(answer, [context])["checks"]
            if c["kind"] != "negation"]


def test_times_of_day_and_amounts_in_other_units():
    # a time of day is one check, passing when the contexts hold the same time in any form
    assert number_checks("It runs from 8 a.m. to 1 p.m.", "It is held 08:00 to 13:00.") == [
        ("8 a.m.", True), ("1 p.m.", True)]
    assert number_checks("It runs until 2 pm.", "It is held 08:00 to 13:00.") == [("2 pm", False)]
    # the same amount in another unit of the dimension: 6 hours = 360 minutes, 1.5 kg = 1,500 g
    assert number_checks("It keeps drinks hot for about six hours.", "Drinks stay hot for 360 minutes.") == [
        ("six hours", True)]
    assert number_checks("It weighs 1.5 kg.", "It weighs 1,500 g.") == [("1.5 kg", True)]
    assert number_checks("It keeps drinks hot for seven hours.", "Drinks stay hot for 360 minutes.") == [
        ("seven hours", False)]
    # rounding alone does not make an amount in another unit the same: 90 minutes is 1.5 hours, not
    # "about 2 hours" (25% off), and 1,400 m is not 1 km; 1.6 km is 1 mile (0.6% off)
    assert number_checks("The tour takes about 2 hours.", "The tour lasts 90 minutes.") == [("2 hours", False)]
    assert number_checks("The path is 1 km long.", "The path is 1,400 m long.") == [("1 km", False)]
    assert number_checks("The path is 1.6 km long.", "The path is 1 mile long.") == [("1.6 km", True)]


def test_numbers_as_people_write_them():
    # a hedged number passes on a context value, in its unit, that rounds to it at its written decimals
    # (-195.8 rounds to -196); unhedged it must be the context's value
    assert number_checks("It boils at about -196 °C.", "It boils at -195.8 °C.") == [("-196 °C", True)]
    assert number_checks("It boils at -196 °C.", "It boils at -195.8 °C.") == [("-196 °C", False)]
    assert number_checks("It runs roughly 9.6 km.", "The route is 9.58 km.") == [("9.6 km", True)]
    assert number_checks("It runs roughly 9.7 km.", "The route is 9.58 km.") == [("9.7 km", False)]
    # number words above twelve, alone and hyphenated or spaced
    assert number_checks("The lowest in sixty years, for eighteen months.",
                         "The lowest in 60 years, for 18 months.") == [("sixty years", True), ("eighteen months", True)]
    assert number_checks("It seats twenty-five people and twenty five cars.", "25 people, 25 cars.") == [
        ("twenty-five", True), ("twenty five", True)]
    assert number_checks("It has forty-two rooms.", "It has 24 rooms.") == [("forty-two", False)]
    # "X and a half" is X.5, with the unit after it
    assert number_checks("Two and a half hours with the fast charger.", "2.5 hours with the fast charger.") == [
        ("Two and a half hours", True)]
    assert number_checks("It takes 3 and a half hours.", "It takes 2.5 hours.") == [("3 and a half hours", False)]
    # a share written as a fraction is one check: the same share, or a percentage within 5 points
    assert number_checks("Roughly seven-tenths of it is water.", "About 71 percent of it is water.") == [
        ("seven-tenths", True)]
    assert number_checks("About two-thirds voted yes.", "Some 40% voted yes.") == [("two-thirds", False)]
    assert number_checks("Half of them sell food.", "Half of the stalls sell food.") == [("Half", True)]


def test_names_rule():
    assert names("Apollo 11 launched from Kennedy Space Center on a Saturn V rocket") == [
        "Kennedy Space Center", "Saturn V"]
    assert names("The app runs on iOS and Android with the Orbit X2") == ["iOS", "Android", "Orbit X2"]
    got = check_facts("Jefferson wrote it with John Adams.", ["Thomas Jefferson wrote the first draft."])
    name_checks = [(c["text"], c["passed"]) for c in got["checks"] if c["kind"] == "name"]
    assert name_checks == [("John Adams", False)]  # "Jefferson" opens the sentence: not checked


def test_a_unit_with_a_superscript_is_not_a_name():
    # "km²" and "m³" are units: their superscripts are not the digits of a model name such as "X2"
    assert names("The lake covers 5 km² and holds 9 m³ of mud near Lund") == ["Lund"]
    assert names("It emits CO2 and runs on iOS") == ["CO2", "iOS"]
    # the context spells the unit out: the number passes, no name check fails -> F = 1
    got = check_facts("The lake covers 5 km².", ["The lake covers 5 square kilometres."])
    assert [c for c in got["checks"] if c["kind"] == "name"] == []
    assert got["F"] == 1.0


def test_the_pronoun_i_with_a_contraction_is_not_a_name():
    # "I" is a stop word; "I'm", "I've", "I'd", "I'll" fold to it, so none is a name to look up
    assert names("Yes, I'm familiar with Tram 28 and I've ridden it.") == ["Tram"]
    assert names("Sure, I'd say so, and I'll check the Alfama route.") == ["Alfama"]
    got = check_facts("Yes, I'm familiar with Tram 28.", ["Tram 28 is a historic tram line in Lisbon."])
    assert [(c["text"], c["passed"]) for c in got["checks"] if c["kind"] == "name"] == [("Tram", True)]
    assert got["F"] == 1.0
    # a name with an apostrophe that is not a contraction stays a name
    assert names("It was built by O'Brien in 1931.") == ["O'Brien"]


def test_a_possessive_name_is_found_in_the_contexts():
    # "Moon's" is the name "Moon" with the possessive 's, folded as the contexts' words are
    got = check_facts("Its pull on the Moon's orbit is weak.", ["The Moon orbits Earth every 27 days."])
    assert [(c["text"], c["passed"]) for c in got["checks"] if c["kind"] == "name"] == [("Moon's", True)]
    got = check_facts("Its pull on the Moon's orbit is weak.", ["Mars has two moons."])
    assert [(c["text"], c["passed"]) for c in got["checks"] if c["kind"] == "name"] == [("Moon's", False)]


def test_negation_rule():
    ctx = ["The list.sort() method sorts the list in place and is guaranteed to be stable: equal items keep order."]
    got = check_facts("list.sort() sorts the list in place and is not stable.", ctx)
    neg = [c for c in got["checks"] if c["kind"] == "negation"]
    assert len(neg) == 1 and neg[0]["passed"] is False
    # both negated (n't and not): same parity -> passes
    got = check_facts("You don't need a referral to see an in-network specialist.",
                      ["Referrals are not required to see an in-network specialist."])
    assert [c["passed"] for c in got["checks"] if c["kind"] == "negation"] == [True]
    # a clause ends at ';' -- the negation of one clause is not compared with the other
    assert clauses("Contracts need not be written; an oral one binds.") == [
        "Contracts need not be written", "an oral one binds."]


def test_contractions_fold():
    got = check_facts("They can't refuse and won't, it's the world's rule.",
                      ["they can refuse: will it rule the world"])
    assert got["unsupported_tokens"] == []  # can, refuse, will, rule, world: all in the context


def test_no_check_means_score_is_p():
    got = check_facts("it depends on circumstances", ["the policy covers thirty visits"])
    assert got["checks"] == [] and got["F"] == 1.0 and got["P"] == 0.0 and got["score"] == 0.0


def test_edge_cases():
    ctx = [{"id": "c1", "text": SUN}]
    assert score_sample(Sample(id="a", query="q", answer=None, contexts=ctx)).score is None
    assert score_sample(Sample(id="a", query="q", answer="It is.", contexts=ctx)).score is None
    assert score_sample(Sample(id="a", query="q", answer="Earth is far.", contexts=[])).score == 0.0
    ids_only = score_sample(Sample(id="a", query="q", answer="Earth is far.", contexts=[{"id": "c1"}]))
    assert ids_only.score is None and "ids only" in ids_only.reason


def test_an_abstention_is_not_checked():
    answer = "The passages don't give the 2019 figure for Norway. Sunlight takes about 8 minutes to reach Earth."
    got = check_facts(answer, [SUN])
    assert got["abstentions"] == ["The passages don't give the 2019 figure for Norway."]
    # left: number 8 minutes (the context's 8 minutes), name Earth, the sentence's negation parity
    # against the context sentence (sunlight takes 8 minutes earth shared: 5 of its 6) -> F = 1;
    # 2019 and Norway are not checked
    assert [(c["kind"], c["text"], c["passed"]) for c in got["checks"]][:2] == [
        ("number", "8 minutes", True), ("name", "Earth", True)]
    assert len(got["checks"]) == 3 and got["F"] == 1.0
    # content tokens of the second sentence only: sunlight takes 8 minutes reach earth; reach missing
    assert got["P"] == pytest.approx(5 / 6)
    out = score_sample(Sample(id="a", query="q", answer=answer, contexts=[{"id": "c", "text": SUN}]))
    assert out.score == pytest.approx(5 / 6) and "1 abstention(s) not checked" in out.reason


def test_an_answer_that_only_abstains_scores_one():
    for ctx in ([{"id": "c", "text": SUN}], []):
        out = score_sample(Sample(id="a", query="q", contexts=ctx,
                                  answer="I couldn't find the 2019 figure in the sources. The passages don't say."))
        assert out.score == 1.0 and "only says what the contexts do not hold" in out.reason
        assert out.details["checks"] == [] and len(out.details["abstentions"]) == 2


def test_what_is_not_an_abstention_is_checked():
    # a second clause asserts something; a bare "No." before it is the reply's verdict
    for answer in ("The passages don't mention a fee for Norway, so it's probably free.",
                   "No. The passages don't mention Norway."):
        blanked, found = without_abstentions(answer)
        assert (blanked, found) == (answer, [])
        assert ("name", "Norway", False) in [(c["kind"], c["text"], c["passed"])
                                             for c in check_facts(answer, [SUN])["checks"]]
    # the blanked answer keeps every offset: the abstention's characters become spaces
    blanked, found = without_abstentions("Yes, 8 minutes. I don't know whether it varies.")
    assert blanked == "Yes, 8 minutes. " + " " * len("I don't know whether it varies.")
    assert found == ["I don't know whether it varies."]
    # the thing not said as subject, with the material named: Oslo is not checked
    got = check_facts("The opening hours in Oslo are not mentioned in the passages.", [SUN])
    assert got["checks"] == [] and got["score"] == 1.0


def test_reason_names_the_failed_check():
    s = Sample(id="a", query="q", answer="The Berlin Wall fell in 1991.",
               contexts=[{"id": "c", "text": "The Berlin Wall fell on 9 November 1989."}])
    out = score_sample(s)
    assert "number '1991'" in out.reason
    # checks: name "Berlin Wall" passes, number 1991 fails, negation parity passes -> F = 2/3;
    # content tokens berlin, wall, fell, 1991 -> P = 3/4
    assert out.score == pytest.approx(2 / 3 * 3 / 4)


def test_registry_and_default_selection():
    spec = get_spec("fact_consistency")
    assert spec.category == "lexical" and not spec.needs_judge and not spec.needs_embedder
    assert "fact_consistency" in default_metric_names({"answer", "contexts", "context_texts"})
    run = evaluate([{"id": "x", "query": "q", "response": "It takes 6 minutes.",
                     "retrieved_contexts": ["It takes 8 minutes."]}], ["fact_consistency"])
    # checks: 6 minutes (fails), negation (passes) -> F = 1/2; tokens takes, 6, minutes -> P = 2/3
    assert run.scores["fact_consistency"][0] == pytest.approx(1 / 2 * 2 / 3)


def test_list_markers_are_not_numbers():
    # "1." and "2)" opening a line number the answer's own list: no check; a number inside a line, a
    # decimal at a line's start and a year followed by a full stop are numbers
    answer = "Capitals:\n1. Paris is the capital of France.\n2) Rome is the capital of Italy.\n (3) Bern."
    ctx = "Paris is the capital of France. Rome is the capital of Italy. Bern is the capital of Switzerland."
    assert number_checks(answer, ctx) == []
    assert numbers("3.5 million people live there.") == [("3.5", None, "3.5")]
    assert numbers("1999. It was a good year.") == [("1999", None, "1999")]
    assert number_checks("It has 2 stations.\n4. It opened in 1990.", "It has 2 stations and opened in 1990.") == [
        ("2", True), ("1990", True)]


@pytest.mark.parametrize("cited", ["[1]", "[1, 3]", "[2-4]", "[^1]", "[doc1]", "[Source 2]", "【1】", "(source 1)",
                                   "(Document 2)"])
def test_citations_are_not_facts(cited):
    # a citation of a retrieved text is neither a number nor a name: the checks are the answer's own
    assert number_and_name_checks(f"Paris is the capital of France {cited}. It has 2.1 million people {cited}.",
                                  "Paris is the capital of France. It has 2.1 million people.") == [
        ("number", "2.1", True), ("name", "France", True)]


def test_acronyms_of_words_the_contexts_spell_out():
    def name_checks(answer: str, context: str) -> list[tuple[str, bool]]:
        return [(c["text"], c["passed"]) for c in check_facts(answer, [context])["checks"] if c["kind"] == "name"]

    # the initials of consecutive words, a filler spelling a letter or skipped
    assert name_checks("It joined the EU in 1995.", "It joined the European Union in 1995.") == [("EU", True)]
    assert name_checks("It was built by NASA.", "the National Aeronautics and Space Administration built it") == [
        ("NASA", True)]
    assert name_checks("The DOE funds it.", "The Department of Energy funds it.") == [("DOE", True)]
    assert name_checks("Their CEO resigned.", "Their chief executive officer resigned.") == [("CEO", True)]
    # two letters need capitalised words; letters the contexts do not spell fail
    assert name_checks("Each EU member votes.", "Each unit of each member votes.") == [("EU", False)]
    assert name_checks("It was built by ESA.", "the National Aeronautics and Space Administration built it") == [
        ("ESA", False)]


def test_an_ordinal_in_digits_is_a_number_the_word_passes():
    assert number_and_name_checks("It is on the 2nd floor, in the 21st century.",
                                  "It is on the second floor, built in the twenty-first century.") == [
        ("number", "2", True), ("number", "21", True)]
    assert number_and_name_checks("It is on the 3rd floor.", "It is on the second floor.") == [("number", "3", False)]


@pytest.mark.parametrize(("answer", "context", "passed"), [
    # a month or weekday abbreviated on one side
    ("It opened on Jan 5, 2024.", "It opened on 5 January 2024.", [("5", True), ("2024", True), ("Jan", True)]),
    ("It opened on 5 January 2024.", "It opened on Jan. 5, 2024.", [("5", True), ("2024", True), ("January", True)]),
    ("It opened on 5 February 2024.", "It opened on Jan. 5, 2024.",
     [("5", True), ("2024", True), ("February", False)]),
    ("The market is held on Sat and Sun mornings.", "The market is held on Saturday mornings.",
     [("Sat", True), ("Sun", False)]),  # Sunday is not in the context
    # an acronym dotted on one side
    ("The U.S. economy grew.", "The US economy grew.", [("U S", True)]),
    ("The UK economy grew.", "The U.K. economy grew.", [("UK", True)]),
    ("The UK economy grew.", "The U.S. economy grew.", [("UK", False)]),
    # an amount with a scale word on one side
    ("It cost 1.5 million dollars.", "It cost 1,500,000 dollars.", [("1.5", True)]),
    ("It cost 1,500,000 dollars.", "It cost 1.5 million dollars.", [("1,500,000", True)]),
    ("It cost $2 billion.", "It cost 2,000 million dollars.", [("$2", True)]),
    ("It cost 2.5 million dollars.", "It cost 1,500,000 dollars.", [("2.5", False)]),
])
def test_the_same_date_acronym_or_amount_written_another_way(answer, context, passed):
    checks = check_facts(answer, [context])["checks"]
    assert [(c["text"], c["passed"]) for c in checks if c["kind"] != "negation"] == passed


@pytest.mark.parametrize(("answer", "passed"), [
    ("Delhi.", [("Delhi", True)]),                       # a name alone is checked from its first word
    ("Mumbai.", [("Mumbai", False)]),
    ("Arthur's Magazine", [("Arthur's Magazine", False)]),  # "Arthur's" is not in the context
    ("New Delhi", [("New Delhi", True)]),
    ("Yes.", []),                                        # a reply word, an exclamation: no name
    ("Hi there!", []),
    ("The capital is Delhi.", [("Delhi", True)]),        # a sentence with other words: the usual rule
])
def test_an_answer_that_is_a_name_alone(answer, passed):
    checks = check_facts(answer, ["The capital of India is New Delhi; its magazine is Delhi Monthly."])["checks"]
    assert [(c["text"], c["passed"]) for c in checks if c["kind"] == "name"] == passed


def test_a_bold_heading_is_not_a_name_alone():
    assert number_and_name_checks("**Eligibility:**\n- Staff with 12 months of service qualify.",
                                  "Staff with twelve months of service qualify.") == [("number", "12 months", True)]


@pytest.mark.parametrize(("answer", "context", "passed"), [
    ("The allowance is about 40% of salary.", "The allowance is 41.2% of salary.", True),   # 41.2 -> 40 at tens
    ("It has roughly 2,000 members.", "It has 1,986 members.", True),                       # -> 2,000 at thousands
    ("It has about 100 members.", "It has 140 members.", False),                            # rounds to 100, 40% off
    ("It has about 40 members.", "It has 46 members.", False),                              # rounds to 50
    ("It has 40 members.", "It has 41 members.", False),                                    # not hedged
    ("It has about 45 members.", "It has 41 members.", False),                              # no trailing zero
])
def test_a_hedged_round_number_passes_on_a_value_that_rounds_to_it(answer, context, passed):
    checks = check_facts(answer, [context])["checks"]
    assert [c["passed"] for c in checks if c["kind"] == "number"] == [passed]


@pytest.mark.parametrize(("answer", "context", "passed"), [
    # the word after a label opening a sentence is a sentence's first word
    ("**How to apply:** Submit the request on PeopleHub.", "Requests go through the PeopleHub portal.",
     [("name", "PeopleHub", True)]),
    ("Note: Because it rained, the match moved.", "The match moved.", []),
    # an ISO date on either side is its day, month and year
    ("It came out on 2 April 2025.", "Released 2025-04-02.",
     [("number", "2", True), ("number", "2025", True), ("name", "April", True)]),
    ("It came out on 2 June 2025.", "Released 2025-04-02.",
     [("number", "2", True), ("number", "2025", True), ("name", "June", False)]),
    ("It came out on 2025-03-18.", "It was released on 18 March 2025.",
     [("number", "18", True), ("number", "2025", True), ("name", "March", True)]),
    # leading zeros
    ("It is in Gallery 4.", "It is shown in Gallery 04.", [("number", "4", True), ("name", "Gallery", True)]),
    # an acronym inside a name run, spelled out by the contexts
    ("It pairs over Bluetooth LE.", "Sensors pair over Bluetooth Low Energy.", [("name", "Bluetooth LE", True)]),
    ("It pairs over Bluetooth LE.", "Sensors pair over Bluetooth Classic.", [("name", "Bluetooth LE", False)]),
])
def test_labels_iso_dates_leading_zeros_and_acronyms_in_a_run(answer, context, passed):
    assert number_and_name_checks(answer, context) == passed


@pytest.mark.parametrize(("answer", "context", "passed"), [
    ("It came out on 2 May 2025.", "Released 2025-04-02.",                 # an ISO date's month is April
     [("number", "2", True), ("number", "2025", True), ("name", "May", False)]),
    ("It came out on 2 May 2025.", "Released 2025-05-02.", [("number", "2", True), ("number", "2025", True),
                                                           ("name", "May", True)]),
    ("It opens in May 2026.", "It opens in May; tickets may sell out.",
     [("number", "2026", False), ("name", "May", True)]),
    ("It opens in May 2026.", "Tickets may sell out by June 2026.",       # only the modal verb: no month
     [("number", "2026", True), ("name", "May", False)]),
    ("You may book on 2 June.", "Book from 2 June.", [("number", "2", True), ("name", "June", True)]),  # the verb
])
def test_the_month_may_next_to_a_number_is_checked(answer, context, passed):
    assert number_and_name_checks(answer, context) == passed


def test_a_heading_is_not_a_name_alone():
    checks = check_facts("Capitals:\nParis is the capital of France.", ["Paris is the capital of France."])["checks"]
    assert [(c["text"], c["passed"]) for c in checks if c["kind"] == "name"] == [("France", True)]


@pytest.mark.parametrize(("answer", "context", "passed"), [
    ("The rate is just under 8%.", "The rate was 7.8% in 2023.", True),        # below 8, rounds to 8
    ("The rate is just under 8%.", "The rate was 8.2% in 2023.", False),       # rounds to 8, but above
    ("It has slightly more than 40 rooms.", "It has 41 rooms.", True),
    ("It has slightly more than 40 rooms.", "It has 39 rooms.", False),        # below the bound
    ("It has just over 2,000 members.", "It has 2,040 members.", True),        # -> 2,000 at thousands, 2% off
    ("It has just over 2,000 members.", "It has 2,400 members.", False),       # 20% off
])
def test_a_number_after_a_near_bound_passes_on_a_value_on_its_side(answer, context, passed):
    assert [ok for _, ok in number_checks(answer, context)] == [passed]


def test_a_time_range_shares_the_am_pm_of_its_end():
    # 6 to 7:30 pm is 18:00 to 19:30 (6 * 60 + 720 = 1080 and 7 * 60 + 30 + 720 = 1170 minutes)
    assert times_of_day("open 6 to 7:30 pm") == [(5, 6, 1080), (10, 17, 1170)]
    assert times_of_day("from 6:00 to 7:30 pm") == [(5, 9, 1080), (13, 20, 1170)]
    assert times_of_day("between 9 and 11 am") == [(8, 9, 540), (14, 19, 660)]
    # a start later on the clock than its end is not in the same half of the day: 9 stays a number
    assert times_of_day("9 to 5 pm") == [(5, 9, 1020)]
    assert number_checks("Tours run 6 to 7:30 pm.", "Tours run from 18:00 to 19:30.") == [
        ("6", True), ("7:30 pm", True)]
    assert number_checks("Tours run 6 to 7:30 pm.", "Tours run from 06:00 to 19:30.") == [
        ("6", False), ("7:30 pm", True)]


@pytest.mark.parametrize(("answer", "names"), [
    ("It opens in May.", [("May", False)]),               # capitalised inside the sentence: the month
    ("It opens (May) each year.", [("May", False)]),
    ("It opened on 2 May 2025.", [("May", False)]),       # next to a number, as before
    ("May I book a tour?", []),                            # opens the sentence, no number: the verb
    ("Visitors may book a tour.", []),
])
def test_the_month_may_without_a_number(answer, names):
    checks = check_facts(answer, ["The gardens open in June."])["checks"]
    assert [(c["text"], c["passed"]) for c in checks if c["kind"] == "name"] == names
    assert [c["passed"] for c in check_facts(answer, ["The gardens open each May."])["checks"]
            if c["kind"] == "name"] == [True] * len(names)


def test_times_said_in_words_and_day_parts_by_hand():
    # a day part gives the half of the day: 10:40 at night is 22 * 60 + 40 = 1360 minutes; seven in
    # the evening 19 * 60 = 1140; quarter past ten in the morning 10 * 60 + 15 = 615; half past twelve
    # at night 0 * 60 + 30 = 30
    assert times_of_day("the last bus at 10:40 at night") == [(16, 30, 1360)]
    assert times_of_day("it starts at seven in the evening") == [(13, 33, 1140)]
    assert times_of_day("quarter past ten in the morning") == [(0, 31, 615)]
    assert times_of_day("half past twelve at night") == [(0, 25, 30)]
    # said in words with no day part: which half of the day is unknown, so no time the veto compares
    assert times_of_day("open until half past four") == []
    # (start, end, minutes, fixed, spoken): half past four 4 * 60 + 30 = 270; quarter to ten 9:45 = 585;
    # "half nine" (British, 9:30 = 570) and "half five" (5:30 = 330) beside the range word "to"
    assert clock_times("until half past four") == [(6, 20, 270, False, True)]
    assert clock_times("quarter to ten") == [(0, 14, 585, False, True)]
    assert clock_times("half nine to half five, daily") == [(0, 9, 570, False, True), (13, 22, 330, False, True)]
    assert clock_times("cut in half five times") == []            # no range word: no time
    assert clock_times("at 08:15") == [(3, 8, 495, True, False)]  # a leading zero: the 24-hour clock


@pytest.mark.parametrize(("answer", "context", "passed"), [
    ("It's open until half past four.", "Open 10:00-16:30.", [True]),  # 4:30 stands for 16:30 too
    ("It's open until half past five.", "Open 10:00-16:30.", [False]),
    ("The last bus leaves at 10:40 at night.", "Last departure 22:40.", [True]),
    ("The last bus leaves at 10:40 in the morning.", "Last departure 22:40.", [False]),
    ("It starts at seven in the evening.", "Sessions start at 20:00.", [False]),
    ("It starts at eight in the evening.", "Sessions start at 20:00.", [True]),
    ("It departs at 8:15.", "It departs at 20:15.", [True]),       # no am/pm: twelve hours on as well
    ("It departs at 8:15 pm.", "It departs at 08:15.", [False]),   # both fixed, twelve hours apart
    ("The first train is at quarter past ten.", "First train 10:15.", [True]),
])
def test_a_time_said_in_words_passes_on_the_same_clock_time(answer, context, passed):
    assert [ok for _, ok in number_checks(answer, context)] == passed


@pytest.mark.parametrize(("answer", "context", "passed"), [
    ("Adults pay six pounds.", "Adult tickets cost £6.", True),
    ("An adult return costs 14 pounds.", "An adult return costs £14.", True),
    ("An adult return costs fourteen pounds.", "An adult return costs £14.", True),
    ("An adult return costs 16 pounds.", "An adult return costs £14.", False),
    ("It weighs 14 pounds.", "It weighs 14 lb.", True),            # pounds is still a weight
    ("A stamp costs 50 pence.", "A stamp costs £0.50.", True),     # 50 x 0.01 = 0.50 pounds
    ("A stamp costs 60 pence.", "A stamp costs £0.50.", False),
])
def test_money_said_in_words_passes_on_the_amount_with_its_symbol(answer, context, passed):
    assert [ok for _, ok in number_checks(answer, context)] == [passed]


@pytest.mark.parametrize(("answer", "context", "passed"), [
    # an hour and a quarter = 1.25 hours = 75 minutes; an hour and a half = 90 minutes
    ("The crossing takes about an hour and a quarter.", "The crossing takes 75 minutes.", True),
    ("The crossing takes about an hour and a half.", "The crossing takes 75 minutes.", False),
    ("The crossing takes 90 minutes.", "The crossing takes an hour and a half.", True),
    ("The shuttle runs every half hour.", "The shuttle runs every 30 minutes.", True),
    ("The shuttle runs every half-hour.", "The shuttle runs every 20 minutes.", False),
    ("Arrive three-quarters of an hour ahead.", "Cars must arrive 45 minutes ahead.", True),  # 0.75 h
    ("Arrive half an hour ahead.", "Cars must arrive 45 minutes ahead.", False),
    ("Boil it for a quarter of an hour.", "Boil for 15 minutes.", True),
])
def test_a_duration_said_in_words_is_one_amount(answer, context, passed):
    assert [ok for _, ok in number_checks(answer, context)] == [passed]


@pytest.mark.parametrize(("answer", "context", "passed"), [
    ("It is covered for two years.", "The warranty lasts 24 months.", True),     # 2 x 12 = 24 months
    ("It is covered for 24 months.", "It is covered for two years.", True),
    ("It is covered for two years.", "The warranty lasts 18 months.", False),    # 1.5 years
    ("The course lasts 18 months.", "The course lasts 1.5 years.", True),        # 1.5 x 12 = 18
    ("The course lasts 20 months.", "The course lasts 1.5 years.", False),
])
def test_months_and_years_are_one_span(answer, context, passed):
    assert [ok for _, ok in number_checks(answer, context)] == [passed]
