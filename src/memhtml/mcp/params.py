"""The tools' parameter types: one name per concept, the command line's, and its cap.

The names are the CLI's (``type``, ``entity``, ``tag``, ``link``, ``dir``, ``due``,
``body_html``, ``all``), so a person or a model that learned one edge can use the
other. A list parameter keeps the CLI's singular name, as its repeatable flag does.

Every text argument has a length cap, so an oversized value is refused before any
door runs and the server keeps serving; a write's text as a whole is capped by the
door (``MAX_WRITE_BYTES``, 1 MiB). The caps are enforced when a call is validated
but left out of the published schema (see ``memhtml.mcp.arguments``): they guard the
server, and a model never comes near them.

No ``from __future__ import annotations`` here: the SDK builds each input schema from
the tool function's annotations at registration, and real objects need no resolving.
"""

from typing import Annotated

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, WithJsonSchema

from memhtml.contracts.vocabulary import EdgeRel, MemoryType
from memhtml.store.write_checks import MAX_WRITE_BYTES

# -- input caps, in characters (the door counts the UTF-8 bytes of a write) -------------

TITLE_MAX = 1_000
CLAIM_MAX = 10_000
PARAGRAPH_MAX = 100_000
PARAGRAPHS_MAX = 1_000
LABEL_MAX = 256
"""An entity, a tag, an author or a session id."""
LABELS_MAX = 200
"""Entities, tags or links on one memory."""
PATH_MAX = 4_096
"""The door refuses a path over 4,096 UTF-8 bytes, or a name in it over 255."""
DATE_MAX = 64
REF_MAX = 256
QUERY_MAX = 4_000
ARTICLE_MAX = MAX_WRITE_BYTES


class LinkTo(BaseModel):
    # An edge from the new memory to an existing one. No docstring: pydantic would
    # publish it as the schema's description, in every tool that takes links. The rel
    # is checked against the closed vocabulary but published as a string pointing at
    # memory_link's list: fourteen values twice more would cost about 500 bytes of
    # every model's context, and a wrong rel is refused with the list anyway.
    #
    # The far end is ``target``, memory_link's word for it: ``path`` names the memory
    # a call is about in every tool. ``path`` is still read here, unpublished, because
    # link items were first published with ``path`` and a client may have learned it;
    # giving both is refused as an unknown field (docs/design.md, "One word per
    # argument").
    model_config = ConfigDict(extra="forbid")

    rel: Annotated[EdgeRel, WithJsonSchema({"type": "string",
                                            "description": "As memory_link's rel."})]
    target: Annotated[str, Field(max_length=PATH_MAX,
                                 validation_alias=AliasChoices("target", "path"),
                                 description="An existing memory's path.")]


PathArg = Annotated[str, Field(max_length=PATH_MAX,
                               description="e.g. areas/inbox/x.html")]
AtArg = Annotated[str | None, Field(max_length=REF_MAX,
                                    description="A commit or ref to read at.")]
TitleArg = Annotated[str, Field(max_length=TITLE_MAX,
                                description="A few words; names the file.")]
ClaimArg = Annotated[str, Field(max_length=CLAIM_MAX,
                                description="The fact, self-contained.")]
Paragraph = Annotated[str, Field(max_length=PARAGRAPH_MAX)]
Label = Annotated[str, Field(max_length=LABEL_MAX)]
BodyArg = Annotated[tuple[Paragraph, ...], Field(
    max_length=PARAGRAPHS_MAX,
    description="Paragraphs; a ```fenced``` one is code.")]
BodyHtmlArg = Annotated[str | None, Field(
    max_length=ARTICLE_MAX,
    description="HTML instead of body; with no claim, its <mark> is the claim.")]
TypeArg = Annotated[MemoryType, Field(description="Memory type.")]
EntityArg = Annotated[tuple[Label, ...], Field(
    max_length=LABELS_MAX, description="Entities as type:name, e.g. person:ada.")]
TagArg = Annotated[tuple[Label, ...], Field(max_length=LABELS_MAX, description="Tags.")]
LinkArg = Annotated[tuple[LinkTo, ...], Field(max_length=LABELS_MAX,
                                              description="Edges to existing memories.")]
DirArg = Annotated[str | None, Field(
    max_length=PATH_MAX, description="Folder; default areas/inbox/.")]
ConfidenceArg = Annotated[float | None, Field(ge=0.0, le=1.0, allow_inf_nan=False,
                                              description="How sure.")]
ImportanceArg = Annotated[int | None, Field(ge=1, le=10, description="How much it matters.")]
DateArg = Annotated[str | None, Field(max_length=DATE_MAX,
                                      description="YYYY-MM-DD[THH:MM:SSZ]")]
AuthorArg = Annotated[str | None, Field(max_length=LABEL_MAX,
                                        description="Who said it.")]
SessionArg = Annotated[str | None, Field(max_length=LABEL_MAX,
                                         description="Your session id.")]
LimitArg = Annotated[int, Field(ge=1, le=50, description="At most this many.")]
