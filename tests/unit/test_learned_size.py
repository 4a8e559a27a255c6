"""The size measure (engine/dialect/size.py) counts the learned-program constructs like their analogues:
select_closest as a selector operation, aggregate_sum as an attention operation; sizes computed by hand."""
from rasplay.engine.dialect.size import program_size
from rasplay.engine.interpret import interpret
from rasplay.engine.limits import DEFAULT_LIMITS


def size_of(source: str, name: str) -> dict:
    interp = interpret(source, DEFAULT_LIMITS)
    node = next(d.value for d in reversed(interp.definitions) if d.name == name)
    return program_size(interp.graph.ancestors([node]))


LEARNED = """near = select_closest(tokens, tokens, ==);
picked = aggregate(near, indices);
again = aggregate(near, tokens);
before = aggregate_sum(select(indices, indices, <), indices);
result = picked + before;
"""


def test_each_learned_construct_is_counted_once_beside_its_parts():
    size = size_of(LEARNED, "result")
    # select(tokens, tokens, ==) and select(indices, indices, <); one select_closest; one aggregate
    # (`again` is not used by result); one aggregate_sum; one sequencemap (+)
    assert size["by_kind"] == {"select": 2, "and": 0, "or": 0, "not": 0, "aggregate": 1, "selector_width": 0,
                               "map": 0, "sequencemap": 1, "select_closest": 1, "aggregate_sum": 1}
    assert size["operations"] == 6
    assert size["attention"] == 2      # aggregate + aggregate_sum
    assert "select_closest" in size["measure"] and "aggregate_sum" in size["measure"]


def test_a_closest_selector_used_twice_counts_once_and_a_table_is_a_map():
    source = LEARNED + 'both = picked + again;\nlabel = {0: "x", 1: "y"}[picked];\n'
    both = size_of(source, "both")
    # selects 1 (tokens ==), select_closest 1, aggregates 2 (picked, again), sequencemap 1
    assert (both["by_kind"]["select_closest"], both["by_kind"]["aggregate"], both["operations"]) == (1, 2, 5)
    label = size_of(source, "label")
    assert (label["by_kind"]["map"], label["operations"], label["attention"]) == (1, 4, 1)
