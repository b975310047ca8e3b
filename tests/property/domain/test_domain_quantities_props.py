"""The numeric veto compares numbers by value: one value written two ways (digits and
words, a 24-hour and a 12-hour clock, a unit and a smaller one, a thousands comma, a
percentage sign or the word) is one number, and any other value, half of the day or
unit is another. Pairs are generated, both ways round."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from memhtml.domain.merge import MergeText, merge_veto, numeric_token_divergent
from memhtml.domain.quantities import quantities
from memhtml.eval.veto_pairs import (
    NUMBER_FORMS,
    clock_12,
    clock_24,
    number_pair,
    number_words,
)

EXAMPLES = 150
UNITS = {1: ("seconds", "sec", "secs", "second"), 60: ("minutes", "min", "mins", "minute"),
         3600: ("hours", "h", "hr", "hrs", "hour"), 86400: ("days", "day")}


@st.composite
def count_spellings(draw: st.DrawFn, value: int) -> str:
    """``value`` as a person might write it in a count ("one" alone is no count: see
    ``domain.quantities``)."""
    words = number_words(value)
    if value == 1:
        return "1"
    return draw(st.sampled_from([str(value), f"{value:,}", words, words.replace("-", " "),
                                 words.replace(" and ", " ")]))


@st.composite
def time_spellings(draw: st.DrawFn, hour: int, minute: int) -> str:
    forms = [clock_24(hour, minute), clock_12(hour, minute),
             clock_12(hour, minute, dotted=True), clock_12(hour, minute).lower(),
             clock_12(hour, minute).replace(" ", "").lower()]
    if minute == 0 and 1 <= hour <= 12:
        forms.append(f"{number_words(hour)} o'clock")
    if (hour, minute) == (12, 0):
        forms.append("noon")
    if (hour, minute) == (0, 0):
        forms.append("midnight")
    return draw(st.sampled_from(forms))


@st.composite
def duration_spellings(draw: st.DrawFn, seconds: int) -> str:
    """``seconds`` in any unit it is a whole number of, any alias, digits or words."""
    fitting = [factor for factor in UNITS if seconds % factor == 0]
    factor = draw(st.sampled_from(fitting))
    amount = seconds // factor
    unit = draw(st.sampled_from(UNITS[factor]))
    number = draw(count_spellings(amount)) if amount < 1_000_000 else str(amount)
    if amount == 1 and factor >= 60 and draw(st.booleans()):
        return {60: "a minute", 3600: "an hour", 86400: "a day"}[factor]
    return f"{number} {unit}"


@st.composite
def spelled(draw: st.DrawFn, kind: str, value: int) -> str:
    if kind == "count":
        return f"keeps {draw(count_spellings(value))} snapshots"
    if kind == "time":
        return f"runs at {draw(time_spellings(*divmod(value, 60)))} UTC"
    if kind == "duration":
        return f"waits {draw(duration_spellings(value))} before it retries"
    share = draw(st.sampled_from([f"{value}%", f"{value} percent", f"{value} per cent",
                                  f"{number_words(value)} percent"]))
    return f"alerts at {share} disk use"


KINDS = ("count", "time", "duration", "percent")


def values(kind: str) -> st.SearchStrategy[int]:
    if kind == "count":
        return st.integers(0, 999_999)
    if kind == "time":
        return st.integers(0, 24 * 60 - 1)
    if kind == "duration":
        return st.sampled_from([1, 60, 3600, 86400]).flatmap(
            lambda f: st.integers(1, 500).map(lambda n: n * f))
    return st.integers(0, 100)


@st.composite
def paraphrases(draw: st.DrawFn) -> tuple[str, str]:
    kind = draw(st.sampled_from(KINDS))
    value = draw(values(kind))
    return (f"The export job {draw(spelled(kind, value))}.",
            f"The export job {draw(spelled(kind, value))}.")


@st.composite
def flips(draw: st.DrawFn) -> tuple[str, str]:
    kind = draw(st.sampled_from(KINDS))
    value = draw(values(kind))
    other = draw(values(kind).filter(lambda v: v != value))
    return (f"The export job {draw(spelled(kind, value))}.",
            f"The export job {draw(spelled(kind, other))}.")


@settings(max_examples=EXAMPLES)
@given(paraphrases())
def test_one_value_written_two_ways_is_one_number(pair: tuple[str, str]) -> None:
    first, second = pair
    assert quantities(first) == quantities(second), (first, second)
    assert not numeric_token_divergent(first, second)
    assert merge_veto(MergeText(first), MergeText(second)) == ()


@settings(max_examples=EXAMPLES)
@given(flips())
def test_another_value_in_any_spelling_is_a_flip(pair: tuple[str, str]) -> None:
    first, second = pair
    assert numeric_token_divergent(first, second), (first, second, quantities(first))
    assert numeric_token_divergent(second, first)
    assert "numeric" in merge_veto(MergeText(second), MergeText(first))


@settings(max_examples=EXAMPLES)
@given(st.randoms(use_true_random=False), st.sampled_from(NUMBER_FORMS), st.booleans())
def test_the_bench_pairs_fold_or_are_refused_by_the_numeric_predicate(
        rng: random.Random, form: str, flip: bool) -> None:
    pair = number_pair(rng, form, flip=flip)
    fired = merge_veto(MergeText(*pair.first), MergeText(*pair.second))
    assert (fired == ("numeric",)) if flip else (fired == ()), pair


def test_what_stays_a_literal_and_what_is_no_number() -> None:
    assert numeric_token_divergent("pin v2.1", "pin v2.10")
    assert numeric_token_divergent("pin 1.1", "pin 1.10")  # two versions
    assert numeric_token_divergent("runs at 2 AM", "runs at 2 PM")
    assert numeric_token_divergent("waits 40 minutes", "waits 40 seconds")
    assert numeric_token_divergent("keeps 40 GB", "keeps 40 MB")
    assert numeric_token_divergent("forty replicas", "fifty replicas")
    assert not numeric_token_divergent("02:00 UTC", "2 AM UTC")
    assert not numeric_token_divergent("waits forty minutes", "waits 40 minutes")
    assert not numeric_token_divergent("one of the replicas lags", "a replica lags")
    assert not numeric_token_divergent("As one study puts it, survey 15 ran.", "Survey 15 ran.")
    assert not numeric_token_divergent("waits one hour", "waits 60 minutes")
    assert numeric_token_divergent("keeps one replica", "keeps 1 replica")  # read apart
    assert not numeric_token_divergent("no one pages", "nobody pages")
    assert not numeric_token_divergent("takes 1.5 hours", "takes 90 minutes")
    assert not numeric_token_divergent("the 1990s", "the 1990s")
    assert quantities("the 1990s") == {"lit:1990s"}
    assert quantities("no numbers here") == frozenset()


def test_number_words() -> None:
    assert [number_words(n) for n in (0, 42, 105, 2300, 999_999)] == [
        "zero", "forty-two", "one hundred and five", "two thousand three hundred",
        "nine hundred and ninety-nine thousand nine hundred and ninety-nine"]
