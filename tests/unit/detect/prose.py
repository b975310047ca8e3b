"""Generated English for the detectors' prose laws: sentences of everyday words, one
paragraph per line or hard-wrapped, as a person writes a note in a fence."""

from __future__ import annotations

from hypothesis import strategies as st

# Everyday English: function words, common verbs, nouns and adjectives. Many of
# them (from, order, table, check, call, only, when, month, year, work, ...) are
# keywords to the PostgreSQL lexer, which is what the lexer race's prose law is about.
_WORDS = """
the a an and or but so because after before when while if then than that this these those
we you they he she it i our your their my his her its
is are was were be been being have has had do does did will would can could should may might must
ask bring build call change check choose clean close come cook count cover decide deliver drive drop
eat explain fill find finish fix follow forget give grow help hold keep know leave let like listen
look lose meet miss move need offer open order pack pay pick plan play print pull push read remember
reply report return ride run save say see select sell send share show sign sit sleep speak spend
start stay stop take talk teach tell think travel try turn understand use visit wait walk want watch
wear work worry write
morning evening week month year today tomorrow yesterday weekend holiday meeting lunch dinner
house kitchen garden office room table chair window door street city station airport hotel
friend family team manager client customer teacher doctor neighbour child parent colleague
book letter email phone laptop car train bus ticket bill receipt invoice package box bag key
money price budget idea question answer problem reason result decision project
big small long short new old good bad early late quick slow busy quiet happy tired careful
first last next other every each all some many few more most less least same different
about above across along around at between by for from in into near of off on onto out over
through to toward under until up with within without again also always never often only soon
still just very really almost already maybe perhaps please thanks yes no not
""".split()


@st.composite
def sentence(draw: st.DrawFn) -> str:
    words = draw(st.lists(st.sampled_from(_WORDS), min_size=4, max_size=20))
    words[0] = words[0].capitalize()
    return " ".join(words) + draw(st.sampled_from([".", ".", "?", "!"]))


@st.composite
def prose(draw: st.DrawFn) -> str:
    sentences = draw(st.lists(sentence(), min_size=1, max_size=4))
    # A paragraph is one line in Markdown; a hard-wrapped note is one per line.
    return draw(st.sampled_from([" ", "\n"])).join(sentences) + "\n"
