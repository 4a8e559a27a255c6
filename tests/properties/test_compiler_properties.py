"""Property tests: random small programs built from the language's operations compile to models that
agree with the evaluator on every input up to max_len 4 (wherever the evaluator gives a value)."""
from hypothesis import HealthCheck, given, settings, strategies as st

from rasplay import engine

MAPS = {
    "str": [('{a} == "a"', "bool"), ('{a} != "b"', "bool"), ('"c" if {a} == "a" else {a}', "str"),
            ('{a} + "x"', "str")],
    "int": [("{a} + 1", "int"), ("{a} - 2", "int"), ("{a} * 2", "int"), ("{a} % 3", "int"), ("-{a}", "int"),
            ("{a} > 1", "bool"), ("{a} == 2", "bool"), ("round({a} / 2)", "int"), ("min({a}, 2)", "int")],
    "bool": [("not {a}", "bool"), ("indicator({a})", "int"), ("{a} == True", "bool")],
    "float": [("{a} > 0.5", "bool"), ("round({a} * 2)", "int"), ("{a} * 2", "float"), ("{a} - 0.25", "float")],
}
PREDICATES = ["==", "!=", "<", ">", "<=", ">="]
NUMERIC = ("int", "float")


def _compatible(pool, t):
    return [(n, u) for n, u in pool if u == t or (t in NUMERIC and u in NUMERIC)]


@st.composite
def programs(draw):
    pool = [("tokens", "str"), ("indices", "int")]
    selectors: list[str] = []
    lines: list[str] = []
    deepest = None
    for k in range(draw(st.integers(2, 6))):
        name = f"v{k}"
        what = draw(st.sampled_from(["map", "map", "pair", "select", "select", "width"]))
        if what == "width" and not selectors:
            what = "select"
        if what == "map":
            a, t = draw(st.sampled_from(pool))
            template, out = draw(st.sampled_from(MAPS[t]))
            lines.append(f"{name} = {template.format(a=a)};")
            pool.append((name, out))
        elif what == "pair":
            a, t = draw(st.sampled_from(pool))
            b, u = draw(st.sampled_from(_compatible(pool, t)))
            if t in NUMERIC:
                op = draw(st.sampled_from(["+", "-", "*", "<"]))
                out = "bool" if op == "<" else ("float" if "float" in (t, u) else "int")
            elif t == "str":
                op = draw(st.sampled_from(["==", "+"]))
                out = "bool" if op == "==" else "str"
            else:
                op, out = draw(st.sampled_from(["and", "or", "=="])), "bool"
            lines.append(f"{name} = {a} {op} {b};")
            pool.append((name, out))
        elif what == "select":
            a, t = draw(st.sampled_from(pool))
            b, _ = draw(st.sampled_from(_compatible(pool, t)))
            sel = f"select({a}, {b}, {draw(st.sampled_from(PREDICATES if t != 'str' else ['==', '!=', '<']))})"
            if selectors and draw(st.booleans()):
                sel = f"{sel} {draw(st.sampled_from(['and', 'or']))} {draw(st.sampled_from(selectors))}"
            if draw(st.integers(0, 5)) == 0:
                sel = f"not ({sel})"
            lines.append(f"s{k} = {sel};")
            selectors.append(f"s{k}")
            deepest = name
            if draw(st.booleans()):
                lines.append(f"{name} = selector_width(s{k});")
                pool.append((name, "int"))
            else:
                v, t = draw(st.sampled_from(pool))
                default = {"str": '"_"', "bool": "False"}.get(t)
                lines.append(f"{name} = aggregate(s{k}, {v}{', ' + default if default else ''});")
                pool.append((name, t if t in ("str", "bool") else "float"))
        else:
            lines.append(f"{name} = selector_width({draw(st.sampled_from(selectors))});")
            pool.append((name, "int"))
            deepest = name
    if deepest is not None and draw(st.booleans()):   # often end on something computed from attention
        b, _ = draw(st.sampled_from(pool))
        lines.append(f"final = {deepest} == {b};")
    return "\n".join(lines)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_compiled_models_agree_with_the_evaluator(source):
    try:
        model = engine.compile(source, vocab="abc", max_len=4)
    except engine.RaspError as e:
        # a program that fails on every input, or exceeds a size limit, is rejected with a clear error
        assert e.kind in ("type", "limit") and e.span is not None, (e.kind, e.message)
        return
    r = model.check()
    assert r["exhaustive"] and r["agree"] == r["inputs"], (source, r["first_mismatch"])
    s = model.summary()
    assert s["layers"] - s["analysis_layers"] in (0, 1)
    assert (s["layers"] > s["analysis_layers"]) == any("extra MLP sublayer" in n for n in s["notes"])


@settings(max_examples=8, deadline=None)
@given(st.integers(1, 24), st.sampled_from(["==", "<", "<=", "!="]))
def test_selector_width_is_exact_at_every_length(max_len, op):
    model = engine.compile(f"w = selector_width(select(tokens, tokens, {op}));", vocab="ab", max_len=max_len)
    r = model.check(per_length=20)
    assert r["agree"] == r["inputs"]
