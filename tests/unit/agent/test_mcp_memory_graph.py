"""The MCP memory server's graph file read for import: any graph it could write is
read back whole (entities merged by name, observations once each, relations once
each), every entity label is one the format takes, every path is safe and distinct;
a file with any line out of shape is refused with that line named."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from memhtml.agent.mcp_memory import FOLDER, Graph, entity_label, paths_of, read_graph
from memhtml.head import is_entity

words = st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=30
                ).filter(lambda s: s.strip() != "")
entity = st.fixed_dictionaries({"type": st.just("entity"), "name": words,
                                "entityType": words,
                                "observations": st.lists(words, max_size=4)})


@settings(max_examples=150, deadline=None)
@given(st.lists(entity, min_size=1, max_size=8), st.data())
def test_any_graph_the_server_writes_is_read_back_whole(entities: list[dict[str, object]],
                                                        data: st.DataObject) -> None:
    names = [str(e["name"]).strip() for e in entities]
    relations = data.draw(st.lists(st.fixed_dictionaries({
        "type": st.just("relation"), "from": st.sampled_from(names),
        "to": st.sampled_from(names), "relationType": words}), max_size=6))
    text = "\n".join(json.dumps(x) for x in [*entities, *relations]) + "\n"
    graph = read_graph(text.encode())
    assert isinstance(graph, Graph), graph
    assert set(graph.entities) == set(names)
    for e in entities:
        held = graph.entities[str(e["name"]).strip()].observations
        assert {str(o).strip() for o in e["observations"]} <= set(held)  # type: ignore[attr-defined]
        assert len(held) == len(set(held))
    assert len(graph.relations) == len(set(graph.relations))
    for one in graph.entities.values():
        assert is_entity(entity_label(one)), entity_label(one)
    paths = paths_of(list(graph.entities.values()), {f"{FOLDER}x.html"})
    assert len(set(paths.values())) == len(paths) and f"{FOLDER}x.html" not in paths.values()
    for path in paths.values():
        stem = path.removeprefix(FOLDER).removesuffix(".html")
        assert path.startswith(FOLDER) and path.endswith(".html")
        assert stem and all(c.isascii() and (c.isalnum() or c == "-") for c in stem)


def test_every_line_out_of_shape_is_named() -> None:
    lines = ['{"type":"entity","name":"A","entityType":"person","observations":["x"]}',
             "not json", "[1, 2]", '{"type":"thing"}', '{"type":"entity","name":"",'
             '"entityType":"t","observations":[]}', '{"type":"relation","from":"A",'
             '"to":7,"relationType":"knows"}', '{"type":"entity","name":"B","entityType":'
             '"t","observations":"one"}', '{"type":"entity","name":"N\\u0000","entityType":'
             '"t","observations":[]}']
    problems = read_graph("\n".join(lines).encode())
    assert isinstance(problems, list)
    named = " ".join(problems)
    for number in range(2, 9):
        assert f"line {number}:" in named, (number, problems)
    assert read_graph(b"\xff\xfe{}") == [problems[0]] or isinstance(read_graph(b"\xff"), list)
