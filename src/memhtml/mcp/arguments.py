"""Strict arguments: an unknown name or a bad value is a tool error in plain words.

The SDK builds each tool's argument model from the function's signature and lets
unknown names through silently: a model that says ``memory_type`` where the tool
says ``type`` would have its value dropped and the memory stored with the default.
``StrictTool`` checks the names against the published schema before anything runs
and answers an unknown one with the tool's valid names (and the likely intended one).
A value the model gets wrong is reported per argument, in words, with the valid
values where they are few, never as the validation library's own dump (its URLs and
class names mean nothing to the caller).

The published schemas are also made compact here (``compact_schema``): a model pays
for every byte of ``tools/list`` in its context on every turn, and generated schemas
repeat titles, null branches and caps that tell it nothing.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mcp.server.mcpserver.tools import Tool
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import ValidationError

from memhtml.compose import error_code

if TYPE_CHECKING:
    from mcp.server.mcpserver.context import Context

SHOWN_VALUE = 40
"""How much of a refused value an error quotes: enough to recognise it."""

OTHER_NAMES: Mapping[str, str] = {
    "memory_type": "type", "types": "type", "kind": "type",
    "entities": "entity", "tags": "tag", "links": "link", "edges": "link",
    "directory": "dir", "folder": "dir", "due_at": "due", "include_done": "all",
    "article_html": "body_html", "html": "body_html", "content": "claim",
    "text": "claim", "fact": "claim", "name": "title", "href": "target",
}
"""Names a caller may reach for, and the tool's name for the same thing. Only a hint
in the error: a synonym is never accepted in place of the name."""

PUBLISHED_DROPS = frozenset({"title", "maxLength", "maxItems"})
"""Keys left out of a published schema: generated titles repeat the property names,
and the length caps guard the server rather than inform a caller."""


@dataclass(frozen=True, slots=True)
class UnknownArgument:
    """A call named arguments the tool does not take."""

    tool: str
    names: tuple[str, ...]
    valid: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class UnknownTool:
    """A call named a tool this server does not have."""

    name: str
    valid: tuple[str, ...]

    @property
    def reason(self) -> str:
        """The line ``compose.explain`` shows for it."""
        return unknown_tool_message(self)


@dataclass(frozen=True, slots=True)
class InvalidArguments:
    """A call's arguments did not validate: one plain line per problem."""

    tool: str
    problems: tuple[str, ...]


def tool_error(code: str, message: str) -> CallToolResult:
    """A tool error as the model reads it (``ERR_CODE: message``), with the code and
    the message as structured fields for a client that branches on them."""
    return CallToolResult(content=[TextContent(type="text", text=f"{code}: {message}")],
                          structured_content={"error": code, "message": message},
                          is_error=True)


_NAME_SHOWN = 64
"""How much of an unknown argument name an error repeats: enough to recognise it,
never the whole of a name a caller made huge."""


def _shown_name(name: str) -> str:
    return repr(name if len(name) <= _NAME_SHOWN else name[:_NAME_SHOWN] + "…")


def _quoted(names: Sequence[str]) -> str:
    return ", ".join(_shown_name(n) for n in names[:10]) + (
        f" and {len(names) - 10} more" if len(names) > 10 else "")


def unknown_message(error: UnknownArgument) -> str:
    hints = []
    for name in error.names:
        meant = OTHER_NAMES.get(name)
        if meant not in error.valid:
            meant = None
        if meant is None and len(name) <= _NAME_SHOWN:
            close = difflib.get_close_matches(name, error.valid, n=1, cutoff=0.7)
            meant = close[0] if close else None
        if meant is not None:
            hints.append(f"{_shown_name(name)} is {meant!r} here")
    plural = "s" if len(error.names) > 1 else ""
    hint = f" ({'; '.join(hints)})" if hints else ""
    return (f"{error.tool} has no argument{plural} {_quoted(error.names)}{hint}. Valid "
            f"arguments: {', '.join(error.valid) or 'none'}. Nothing was done; call again "
            "with these names.")


def unknown_tool_message(error: UnknownTool) -> str:
    close = (difflib.get_close_matches(error.name, error.valid, n=1, cutoff=0.7)
             if len(error.name) <= _NAME_SHOWN else [])
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return (f"there is no tool {_shown_name(error.name)}{hint}. Tools: "
            f"{', '.join(error.valid) or 'none'}. Nothing was done.")


def invalid_message(error: InvalidArguments) -> str:
    return (f"{error.tool}: " + "; ".join(error.problems)
            + ". Nothing was done; fix these and call again.")


# -- pydantic's errors, in words ---------------------------------------------------------

_KINDS = {
    "int": "a whole number", "float": "a number", "bool": "true or false",
    "string": "a string", "list": "a list", "tuple": "a list", "dict": "an object",
    "model": "an object", "model_attributes": "an object",
}


def _where(loc: Sequence[str | int]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out or "the arguments"


def _schema_at(schema: Mapping[str, Any], loc: Sequence[str | int]) -> Mapping[str, Any]:
    """The sub-schema a location names, through properties, items and nullable unions."""
    node: Mapping[str, Any] = schema
    for part in loc:
        node = _concrete(node)
        if isinstance(part, int):
            node = node.get("items", {})
        else:
            node = node.get("properties", {}).get(part, {})
    return _concrete(node)


def _concrete(node: Mapping[str, Any]) -> Mapping[str, Any]:
    for option in node.get("anyOf", ()):
        if option.get("type") != "null":
            return _concrete(option)
    return node


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= SHOWN_VALUE else text[: SHOWN_VALUE - 1] + "…"


def plain_problem(error: Mapping[str, Any], schema: Mapping[str, Any]) -> str:
    """One validation error as a line a model can act on: where, what, the fix."""
    loc = tuple(error.get("loc", ()))
    where = _where(loc)
    kind = str(error.get("type", ""))
    ctx = error.get("ctx") or {}
    if kind == "missing":
        return f"{where} is required"
    if kind == "extra_forbidden":
        parent = _schema_at(schema, loc[:-1])
        known = tuple(parent.get("properties", {}))
        meant = OTHER_NAMES.get(str(loc[-1]))
        hint = f"; {loc[-1]!r} is {meant!r} here" if meant in known else ""
        return (f"{_where(loc[:-1])} has no field {loc[-1]!r} (its fields: "
                f"{', '.join(known)}{hint})")
    if kind in ("literal_error", "enum"):
        allowed = _schema_at(schema, loc).get("enum") or \
            re.findall(r"'([^']*)'", str(ctx.get("expected", "")))
        listed = ", ".join(str(v) for v in allowed)
        return f"{where} is {_shown(error.get('input'))}, not one of: {listed}"
    if kind in ("string_too_long", "too_long"):
        unit = "characters" if kind == "string_too_long" else "items"
        return f"{where} is over the cap of {ctx.get('max_length'):,} {unit}"
    if kind in ("string_too_short", "too_short"):
        return f"{where} is empty" if ctx.get("min_length") == 1 else \
            f"{where} is shorter than {ctx.get('min_length')}"
    if kind in ("greater_than_equal", "greater_than"):
        return f"{where} must be at least {ctx.get('ge', ctx.get('gt'))}"
    if kind in ("less_than_equal", "less_than"):
        return f"{where} must be at most {ctx.get('le', ctx.get('lt'))}"
    if kind == "finite_number":
        return f"{where} must be a finite number"
    base = kind.removesuffix("_type").removesuffix("_parsing")
    if base in _KINDS and kind != base:
        return f"{where} must be {_KINDS[base]}, not {_shown(error.get('input'))}"
    return f"{where}: {error.get('msg', 'invalid')}"


def check_arguments(tool: Tool, arguments: Mapping[str, Any]) -> CallToolResult | None:
    """The tool error for arguments the tool cannot take, or None when they are fine.
    Unknown names are reported first: a value under a wrong name was never checked."""
    valid = tuple(tool.parameters.get("properties", {}))
    unknown = tuple(sorted(set(arguments) - set(valid)))
    if unknown:
        wrong = UnknownArgument(tool.name, unknown, valid)
        return tool_error(error_code(wrong), unknown_message(wrong))
    try:
        tool.fn_metadata.validate_arguments(dict(arguments))
    except ValidationError as exc:
        problems = tuple(plain_problem(e, tool.parameters)
                         for e in exc.errors(include_url=False))
        bad = InvalidArguments(tool.name, problems)
        return tool_error(error_code(bad), invalid_message(bad))
    return None


class StrictTool(Tool):
    """A tool whose arguments are checked by name and value before it runs, and
    refused in plain words."""

    async def run(self, arguments: dict[str, Any], context: Context[Any, Any],
                  convert_result: bool = False) -> Any:
        refused = check_arguments(self, arguments)
        if refused is not None:
            return refused
        return await super().run(arguments, context, convert_result)


def strict_tool(fn: Callable[..., Any], *, name: str, description: str,
                annotations: ToolAnnotations) -> StrictTool:
    """A ``StrictTool`` for ``fn`` with a compact input schema and no output schema.

    The answers still carry ``structuredContent`` (the result model's fields) beside
    their text; the schema of those fields is left out of ``tools/list`` because every
    byte of it sits in a model's context on every turn, and the model reads the text.
    """
    made = StrictTool.from_function(fn, name=name, description=description,
                                    annotations=annotations, structured_output=False)
    assert isinstance(made, StrictTool)
    made.parameters = compact_schema(made.parameters, strict=True)
    return made


# -- compact published schemas ------------------------------------------------------------


def compact_schema(schema: Mapping[str, Any], strict: bool) -> dict[str, Any]:
    """The schema a caller is shown: ``$ref``s inlined, titles and caps dropped, a
    nullable union shown as its one real type (an optional argument is left out, not
    sent as null), a null default dropped. ``strict`` closes every object with
    properties (``additionalProperties: false``), as an input schema must be."""
    defs = schema.get("$defs", {})
    compacted: dict[str, Any] = _compact(schema, defs, strict)
    return compacted


def _compact(node: Any, defs: Mapping[str, Any], strict: bool) -> Any:
    if isinstance(node, list):
        return [_compact(item, defs, strict) for item in node]
    if not isinstance(node, Mapping):
        return node
    if "$ref" in node:
        target = defs[str(node["$ref"]).rsplit("/", 1)[-1]]
        merged = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
        return _compact(merged, defs, strict)
    options = node.get("anyOf")
    if isinstance(options, list):
        real = [o for o in options if not (isinstance(o, Mapping) and o.get("type") == "null")]
        if len(real) == 1:
            rest = {k: v for k, v in node.items() if k != "anyOf"}
            return _compact({**real[0], **rest}, defs, strict)
    out: dict[str, Any] = {}
    for key, value in node.items():
        if (key in PUBLISHED_DROPS and not isinstance(value, Mapping)) or key == "$defs":
            continue
        if key == "default" and value in (None, [], ""):
            continue
        if key == "properties":
            out[key] = {name: _compact(prop, defs, strict) for name, prop in value.items()}
        else:
            out[key] = _compact(value, defs, strict)
    if strict and "properties" in out:
        out["additionalProperties"] = False
    return out
