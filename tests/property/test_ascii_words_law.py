"""The C-speed cut of an ASCII text into words gives the pattern's words."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from memhtml.head.lexical import STOP_WORDS, tokenize, words_of
from memhtml.head.record import frame_key_of

_TEXTS = st.text(alphabet=st.one_of(st.characters(max_codepoint=127),
                                    st.sampled_from(["é", "K", "İ", "ß", "_", "日", "\u00a0"])))


@given(_TEXTS)
def test_words_are_the_patterns_words(text: str) -> None:
    assert words_of(text) == re.findall(r"\w+", text.lower())
    assert tokenize(text) == [t for t in re.findall(r"\w+", text.lower())
                              if t not in STOP_WORDS]


@given(_TEXTS)
def test_frame_key_is_the_patterns_key(text: str) -> None:
    import hashlib

    words = re.findall(r"[^\W_]+", text.casefold())
    expected = "fk:" + hashlib.sha1(" ".join(words).encode("utf-8"),
                                    usedforsecurity=False).hexdigest()
    assert frame_key_of(text) == expected
