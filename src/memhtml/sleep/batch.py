"""The batching kernel every model phase but trace-consolidation asks through.

A phase hands over its rows in its own order, with a frame that does not change
during the night (a system prompt, a schema, a tool name, an output cap, a batch
size, how to render one row, how to read an answer). The kernel slices the rows into
batches, gives each batch's members the keys ``m1``..``mN`` (numbering again from
``m1`` in every batch), writes one prompt per batch listing the members under their
keys, asks the model once per batch, and resolves the keys the answer names back to
the rows they stand for.

**Keys are opaque.** A member is offered under a key minted for this batch, never
under its path or anything else the model could spell for itself, and only the keys
this batch offered resolve. An answer can therefore point at nothing but what this
call put in front of the model: a path it guessed, a key from another batch (``m99``)
or an instruction planted in a memory's text resolves to nothing (and is counted), and
no answer can reach a file outside its batch. An answer that names any such value is
rejected whole (the batch is skipped), not applied in part.

**The kernel never sorts.** Batch boundaries and prompt bytes follow the order the
phase hands over, and each member is framed by its rendered text alone (one JSON
object a line, so a member's text cannot close its own frame or open another's).
That is what lets each phase promise that what it sends is a function of the corpus
alone: it sorts its rows by a stated corpus key, and two runs over one corpus send
the same bytes. A kernel with an order of its own would make that a property of two
modules instead of one.

**Each call is isolated.** A batch whose answer is malformed, whose model is
unavailable, or whose answer the phase's reader rejects is skipped and counted
(``failed_batches``); the batches around it still count, so a night that lost one
batch in ten did nine batches of work. ``BudgetExhausted`` is the one answer that
stops the loop: the allowance (the run's, or the phase's cap) is spent, so the
remaining batches are not asked (``budget_skipped`` counts every batch not asked, the
refused one included). None of this fails the run: the kernel has no failure of its
own to report.

A phase whose question is about groups (dedup-merge's components) hands over whole
groups instead (``run_packed``): they are packed in order, and a group that fits a
batch is never split, since the model can only relate members it sees together.

**Each batch's schema offers its own keys.** A phase declares a key field with
``key_field()``; the request for a batch replaces it with an ``enum`` of the keys that
batch offered (``batch_schema``), and a bounded array of keys is bounded by their
count too. A
decoder that compiles the schema to a grammar can then name nothing else: not
``m99``, not ``"M1"``, not a key with a score stuck to it. The answer check refuses
any other value too, so an answer naming a stranger is malformed before any reader
sees it; the resolver still counts what a reader meets that resolves to nothing.
Every prompt ends with a short example answer of that batch's schema (its values show
the form only), so a model that no grammar holds still sees the shape it must write.

The system prompt and tool name are the same for every batch, and the schema is the
same for every batch of one size (keys are ``m1``..``mN`` in each), so they form a
prefix the provider can cache and only the member list is new per call.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Final, Generic, Literal, TypeAlias, TypeVar, assert_never

from returns.io import IO
from returns.pipeline import is_successful
from returns.result import Result

from memhtml.contracts.errors import (
    BudgetExhausted,
    ModelError,
    ModelMalformed,
    ModelUnavailable,
)
from memhtml.contracts.services import LanguageModel, ModelRequest
from memhtml.llm.caps import output_token_cap
from memhtml.llm.wire import example_answer

T = TypeVar("T")
A = TypeVar("A")

KEY_PREFIX: Final = "m"
"""Keys are ``m1``..``mN``: short, meaningless, and unlike any path."""

KEY_CHARS: Final = 16
"""The longest key a phase's own schema admits; a batch's schema names each key."""
KEY_DESCRIPTION: Final = "The key of one member this batch offers."
"""The description that begins a key field's (``key_field``): ``batch_schema`` replaces
every schema node carrying it with the batch's keys."""
EXAMPLE_HEADING: Final = ("An answer of the required shape (its values only show the "
                          "form, and say nothing of these members):")
"""What precedes the example answer at the end of each batch's prompt."""


def key_field(max_chars: int = KEY_CHARS, note: str = "") -> dict[str, object]:
    """The schema of one member's key, as a phase declares it: a string of at most
    ``max_chars`` here (what the phase's reader checks), the offered keys themselves
    in each batch's request (``batch_schema``). ``note`` says which member it names."""
    return {"type": "string", "minLength": 1, "maxLength": max_chars,
            "description": f"{KEY_DESCRIPTION} {note}".strip()}


def _is_key_field(node: Mapping[str, object]) -> bool:
    described = node.get("description")
    return isinstance(described, str) and described.startswith(KEY_DESCRIPTION)


def after_claim(text: str, claim: str) -> str:
    """A member's article text as a prompt shows it below its ``claim:`` line: without
    the claim it opens with (an article's first sentence is its claim), so no member's
    text is sent twice. Both are compared with whitespace collapsed; text that does not
    open with the claim is returned whole, collapsed."""
    shown = " ".join(text.split())
    said = " ".join(claim.split())
    if said and shown.startswith(said):
        return shown[len(said):].lstrip()
    return shown


def batch_schema(schema: Mapping[str, object], keys: Sequence[str]) -> Mapping[str, object]:
    """``schema`` for a batch that offered ``keys``: every key field (``key_field``)
    an ``enum`` of them, and every array of key fields with a ``maxItems`` at most as
    long as there are keys (never below its ``minItems``). The rest is ``schema`` unchanged, in its
    declared order. With no keys, ``schema`` itself."""
    if not keys:
        return schema
    return _keyed(schema, tuple(keys))


def _keyed(node: Mapping[str, object], keys: tuple[str, ...]) -> dict[str, object]:
    if _is_key_field(node):
        longest = max(len(key) for key in keys)
        return {**node, "enum": list(keys), "minLength": min(len(key) for key in keys),
                "maxLength": longest}
    out = dict(node)
    properties = node.get("properties")
    if isinstance(properties, Mapping):
        out["properties"] = {name: _keyed(sub, keys) if isinstance(sub, Mapping) else sub
                             for name, sub in properties.items()}
    items = node.get("items")
    if isinstance(items, Mapping):
        out["items"] = _keyed(items, keys)
        most, least = node.get("maxItems"), node.get("minItems")
        if _is_key_field(items) and isinstance(most, int):
            # Tightened, never added: an open array of keys inside an open array is
            # what the output cap counts at a few entries (``caps.NESTED_ITEMS``).
            bound = min(most, len(keys))
            out["maxItems"] = max(bound, least) if isinstance(least, int) else bound
    return out

BatchStatus: TypeAlias = Literal[
    "answered", "malformed", "unavailable", "rejected", "budget-skipped"]
"""What became of one batch: its answer was read, or it was skipped because the model
answered off the request (``malformed``), could not be asked (``unavailable``), the
phase's reader refused the answer (``rejected``), or the budget was spent before it
was asked (``budget-skipped``)."""

FAILED: Final[frozenset[BatchStatus]] = frozenset({"malformed", "unavailable", "rejected"})


def key_for(offset: int) -> str:
    """The key of a batch's member at ``offset`` (0-based): ``m1`` for the first."""
    return f"{KEY_PREFIX}{offset + 1}"


@dataclass(frozen=True)
class KeyMap(Generic[T]):
    """The keys one batch offered, each standing for one member, in batch order."""

    entries: tuple[tuple[str, T], ...]

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(key for key, _ in self.entries)

    @property
    def members(self) -> tuple[T, ...]:
        return tuple(member for _, member in self.entries)

    def offset(self, value: object) -> int | None:
        """The 0-based place of the member ``value`` names, or ``None`` when it is not
        a key this batch offered (another batch's key, a path, a key with stray spaces,
        a number)."""
        if not isinstance(value, str) or not value.startswith(KEY_PREFIX):
            return None
        digits = value[len(KEY_PREFIX):]
        # Only the minted spelling resolves: not "m01", not "m+1", not a wide digit.
        if not digits.isascii() or not digits.isdigit():
            return None
        # A run longer than the largest key's can name no member; checking first also
        # keeps int() clear of the interpreter's digit limit.
        if len(digits) > len(str(len(self.entries))) or digits != str(int(digits)):
            return None
        offset = int(digits) - 1
        return offset if 0 <= offset < len(self.entries) else None

    def lookup(self, value: object) -> T | None:
        """The member ``value`` names, or ``None`` (see ``offset``)."""
        offset = self.offset(value)
        return None if offset is None else self.entries[offset][1]


def mint(members: Sequence[T]) -> KeyMap[T]:
    """Key the members of one batch ``m1``..``mN`` in the order given."""
    return KeyMap(tuple((key_for(i), member) for i, member in enumerate(members)))


class Resolver(Generic[T]):
    """What a phase's reader resolves an answer's keys with: ``KeyMap.lookup`` that
    also counts every value it could not resolve. Made fresh for each batch, so the
    count is that batch's."""

    def __init__(self, keys: KeyMap[T]) -> None:
        self.keys = keys
        self.unknown = 0
        """Values named where a key was expected that resolved to nothing."""

    def resolve(self, value: object) -> T | None:
        """The member ``value`` names, or ``None`` (counted)."""
        member = self.keys.lookup(value)
        if member is None:
            self.unknown += 1
        return member

    def resolve_all(self, values: object) -> tuple[T, ...]:
        """The members a list of keys names, in the answer's order, each once; every
        value that is not an offered key is dropped and counted. Anything but a list
        names nobody and counts once."""
        if not isinstance(values, list | tuple):
            self.unknown += 1
            return ()
        seen: set[int] = set()
        found: list[T] = []
        for value in values:
            offset = self.keys.offset(value)
            if offset is None:
                self.unknown += 1
            elif offset not in seen:
                seen.add(offset)
                found.append(self.keys.entries[offset][1])
        return tuple(found)


Reader: TypeAlias = Callable[[Mapping[str, object], Resolver[T]], Result[A, str]]
"""A phase's reading of one answer: the answer mapping, with its keys resolved through
the resolver, becomes the phase's value, or a reason to skip the batch (an answer
that passed the schema but not the phase: a canonical outside its cluster, say)."""


@dataclass(frozen=True)
class BatchSpec(Generic[T, A]):
    """What a phase asks with, fixed for the night: the same for every batch."""

    system: str
    schema: Mapping[str, object]
    tool_name: str
    max_output_tokens: int
    size: int
    """Members a batch, sized for the answer's attention rather than the context."""
    render: Callable[[T], str]
    """One member's text, as the model sees it."""
    read: Reader[T, A]
    heading: str = ""
    """Fixed text before the member list (no row may change it)."""

    def __post_init__(self) -> None:
        if self.size < 1:
            raise ValueError(f"a batch holds at least one member, not {self.size}")


def slice_batches(rows: Sequence[T], size: int) -> tuple[tuple[T, ...], ...]:
    """``rows`` cut into consecutive batches of ``size`` (the last may be shorter), in
    the order given."""
    if size < 1:
        raise ValueError(f"a batch holds at least one member, not {size}")
    return tuple(tuple(rows[start:start + size]) for start in range(0, len(rows), size))


def pack_groups(groups: Sequence[Sequence[T]], size: int) -> tuple[tuple[T, ...], ...]:
    """Whole groups packed, in the order given, into batches of at most ``size``
    members, for a phase whose question is about groups (dedup-merge's components):
    a group that fits a batch is never split across two, since a model can only relate
    members it sees together. A group larger than ``size`` is cut into consecutive
    batches of its own rather than widening one call past the size the phase chose."""
    if size < 1:
        raise ValueError(f"a batch holds at least one member, not {size}")
    batches: list[tuple[T, ...]] = []
    current: list[T] = []
    for group in groups:
        if len(group) > size:
            if current:
                batches.append(tuple(current))
                current = []
            batches.extend(slice_batches(group, size))
            continue
        if len(current) + len(group) > size:
            batches.append(tuple(current))
            current = []
        current.extend(group)
    if current:
        batches.append(tuple(current))
    return tuple(batches)


def frame(heading: str, keys: KeyMap[T], render: Callable[[T], str]) -> str:
    """One batch's prompt: the heading, then one JSON object a member, ``{"key": ...,
    "text": ...}``, in batch order. JSON escaping keeps a member's text inside its own
    line whatever it holds; key order and separators are fixed, so the bytes depend on
    the rendered texts alone."""
    lines = [json.dumps({"key": key, "text": render(member)}, ensure_ascii=False,
                        separators=(", ", ": "))
             for key, member in keys.entries]
    body = "\n".join(lines)
    return f"{heading}\n\n{body}" if heading else body


def request_for(spec: BatchSpec[T, A], keys: KeyMap[T]) -> ModelRequest:
    """The request for one batch: the phase's fixed system and tool, its schema with
    this batch's keys (``batch_schema``), and the batch's framed member list closed by
    an example answer. The output cap is what an answer of the schema can
    need for this many members (an open array counted at one entry a member), never
    above the phase's ``max_output_tokens``: a weak model looping to a loose cap spends
    the night's time on an answer no reader will take."""
    schema = batch_schema(spec.schema, keys.keys)
    return ModelRequest(system=spec.system,
                        prompt=f"{frame(spec.heading, keys, spec.render)}\n\n"
                               f"{example_line(schema)}",
                        schema=schema, tool_name=spec.tool_name,
                        max_output_tokens=output_token_cap(
                            schema, spec.max_output_tokens, len(keys.entries)))


def example_line(schema: Mapping[str, object]) -> str:
    """The example answer that closes a batch's prompt: ``EXAMPLE_HEADING``, then one
    answer of ``schema`` (``wire.example_answer``: keys from the batch's own, values of
    the least form) on one line, members in the schema's order."""
    shown = json.dumps(example_answer(schema), ensure_ascii=False, separators=(", ", ": "))
    return f"{EXAMPLE_HEADING}\n{shown}"


def plan_requests(spec: BatchSpec[T, A],
                  batches: Sequence[Sequence[T]]) -> tuple[ModelRequest, ...]:
    """Every request asking about ``batches`` would send, none sent (what a dry run
    counts, and what a test compares bytes with)."""
    return tuple(request_for(spec, mint(batch)) for batch in batches)


@dataclass(frozen=True)
class BatchOutcome(Generic[T, A]):
    """One batch: its members (in order; ``keys`` says which key each had), what
    became of it, the phase's value when answered, and why not otherwise."""

    index: int
    keys: KeyMap[T]
    status: BatchStatus
    answer: A | None = None
    unknown_keys: int = 0
    reason: str | None = None

    @property
    def members(self) -> tuple[T, ...]:
        return self.keys.members


@dataclass(frozen=True)
class BatchRun(Generic[T, A]):
    """Every batch of one phase's run, in order."""

    outcomes: tuple[BatchOutcome[T, A], ...]

    @property
    def answered(self) -> tuple[BatchOutcome[T, A], ...]:
        return tuple(o for o in self.outcomes if o.status == "answered")

    @property
    def answers(self) -> tuple[A, ...]:
        """The read answers of the answered batches, in batch order."""
        return tuple(o.answer for o in self.outcomes
                     if o.status == "answered" and o.answer is not None)

    @property
    def complete(self) -> bool:
        """Whether every batch was answered: only then has the phase judged its whole
        candidate set (and may conclude anything from what was *not* found)."""
        return all(o.status == "answered" for o in self.outcomes)

    @property
    def batches(self) -> int:
        return len(self.outcomes)

    @property
    def calls(self) -> int:
        """Calls made: every batch asked, whatever came back."""
        return sum(1 for o in self.outcomes if o.status != "budget-skipped")

    @property
    def failed_batches(self) -> int:
        return sum(1 for o in self.outcomes if o.status in FAILED)

    @property
    def budget_skipped(self) -> int:
        return sum(1 for o in self.outcomes if o.status == "budget-skipped")

    @property
    def unknown_keys(self) -> int:
        return sum(o.unknown_keys for o in self.outcomes)

    def counts(self) -> dict[str, int]:
        """The run's figures for the phase's counts."""
        return {"batches": self.batches, "calls": self.calls,
                "failed_batches": self.failed_batches, "budget_skipped": self.budget_skipped,
                "unknown_keys": self.unknown_keys}

    def placed(self, ident: Callable[[T], str]) -> dict[str, tuple[int, str]]:
        """Where each member of an answered batch was offered: ``ident(member)`` ->
        (the batch's number, 1-based in call order; the key it had there), so a
        decision an answer led to can name the answer it came from."""
        out: dict[str, tuple[int, str]] = {}
        for outcome in self.answered:
            for key, member in outcome.keys.entries:
                out.setdefault(ident(member), (outcome.index + 1, key))
        return out

    def failures(self) -> tuple[str, ...]:
        """One line per failed batch, and one for the batches a spent budget skipped
        (with the budget's reason: calls or seconds), for the phase's warnings."""
        failed = tuple(f"batch {o.index + 1} {o.status}: {o.reason}"
                       for o in self.outcomes if o.status in FAILED)
        skipped = [o for o in self.outcomes if o.status == "budget-skipped"]
        if not skipped:
            return failed
        first, last = skipped[0].index + 1, skipped[-1].index + 1
        which = f"batch {first}" if first == last else f"batches {first}-{last}"
        return (*failed, f"{which} not asked ({len(skipped)} budget-skipped): "
                         f"{skipped[0].reason}")


def run_batches(model: LanguageModel, spec: BatchSpec[T, A],
                rows: Sequence[T]) -> IO[BatchRun[T, A]]:
    """Ask ``model`` about ``rows`` in batches of ``spec.size``, one call a batch, in
    order (see the module docstring). Never fails: every way a batch can go wrong is an
    outcome."""
    return ask_batches(model, spec, slice_batches(rows, spec.size))


def run_packed(model: LanguageModel, spec: BatchSpec[T, A],
               groups: Sequence[Sequence[T]]) -> IO[BatchRun[T, A]]:
    """``run_batches`` over whole groups packed by ``pack_groups`` (``spec.size``
    members a batch at most)."""
    return ask_batches(model, spec, pack_groups(groups, spec.size))


def ask_batches(model: LanguageModel, spec: BatchSpec[T, A],
                batches: Sequence[Sequence[T]]) -> IO[BatchRun[T, A]]:
    """Ask ``model`` once per batch, in order, the batches as given."""
    done: IO[tuple[BatchOutcome[T, A], ...]] = IO(())
    for index, batch in enumerate(batches):
        done = done.bind(partial(_next, model, spec, index, mint(batch)))
    return done.map(BatchRun)


def _next(model: LanguageModel, spec: BatchSpec[T, A], index: int, keys: KeyMap[T],
          before: tuple[BatchOutcome[T, A], ...]) -> IO[tuple[BatchOutcome[T, A], ...]]:
    if before and before[-1].status == "budget-skipped":
        skipped = BatchOutcome[T, A](index, keys, "budget-skipped",
                                     reason=before[-1].reason)
        return IO((*before, skipped))
    answer = IO.from_ioresult(model.complete_json(request_for(spec, keys)))
    return answer.map(lambda got: (*before, _outcome(spec, index, keys, got)))


def _outcome(spec: BatchSpec[T, A], index: int, keys: KeyMap[T],
             got: Result[Mapping[str, object], ModelError]) -> BatchOutcome[T, A]:
    if is_successful(got):
        return _read(spec, index, keys, got.unwrap())
    match got.failure():
        case ModelMalformed(reason=reason):
            return BatchOutcome(index, keys, "malformed", reason=reason)
        case ModelUnavailable(reason=reason):
            return BatchOutcome(index, keys, "unavailable", reason=reason)
        case BudgetExhausted(reason=reason):
            return BatchOutcome(index, keys, "budget-skipped", reason=reason)
        case _ as never:
            assert_never(never)


def _read(spec: BatchSpec[T, A], index: int, keys: KeyMap[T],
          answer: Mapping[str, object]) -> BatchOutcome[T, A]:
    resolver = Resolver(keys)
    read = spec.read(answer, resolver)
    if is_successful(read) and resolver.unknown:
        # An answer naming what the batch never offered (``m99``, a path, a key from
        # another batch) is not trusted in part: whatever it says of the members it
        # did name may be about the thing it could not name.
        return BatchOutcome(index, keys, "rejected", unknown_keys=resolver.unknown,
                            reason=f"the answer names {resolver.unknown} key(s) this batch "
                                   "did not offer")
    if is_successful(read):
        return BatchOutcome(index, keys, "answered", answer=read.unwrap())
    return BatchOutcome(index, keys, "rejected", unknown_keys=resolver.unknown,
                        reason=read.failure())
