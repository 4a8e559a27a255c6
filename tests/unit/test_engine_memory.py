"""The engine's memory side: selector cells of a result are counted before evaluating, and the
interpretation cache is bounded by (estimated) bytes as well as by count."""
import importlib

from rasplay import engine
from rasplay.engine import Limits

evaluate_module = importlib.import_module("rasplay.engine.evaluate")


def test_a_result_with_too_many_selector_cells_is_refused_before_it_is_built():
    source = "".join(f"s{i} = select(indices, indices + {i}, <);\n" for i in range(4)) + "y = indices + 1;\n"
    limits = Limits(max_result_cells=4 * 2 * 30 * 30 - 1)   # one cell short of 4 selectors x 2 inputs x 30 x 30
    doc = engine.evaluate(source, ["a" * 30, "b" * 30], limits=limits)
    (d,) = [d for d in doc["diagnostics"] if d["severity"] == "error"]
    assert d["kind"] == "limit" and "7,200 cells" in d["message"] and "7,199" in d["message"]
    assert doc["results"]["s0"]["values"] == [None, None] and "7,200 cells" in doc["results"]["s0"]["errors"][0]
    assert doc["results"]["y"]["values"][0] == list(range(1, 31))      # the s-ops still come
    ok = engine.evaluate(source, ["a" * 30, "b" * 30], limits=Limits(max_result_cells=4 * 2 * 30 * 30))
    assert not ok["diagnostics"] and len(ok["results"]["s3"]["values"][1]) == 30


def test_the_interpretation_cache_is_bounded_by_bytes():
    engine.clear_caches()
    assert evaluate_module._cached_bytes == 0 and not evaluate_module._CACHE
    big = 'kept = ["x" * 100000 for i in range(300)];\ny = indices;'     # ~30 MB bound to a name
    engine.evaluate(big, ["ab"])
    assert not evaluate_module._CACHE                                # over a quarter of CACHE_BYTES: not kept
    for i in range(5):
        engine.evaluate(f"k{i} = indices + {i};", ["ab"])
    assert len(evaluate_module._CACHE) == 5
    sizes = [size for _, size in evaluate_module._CACHE.values()]
    assert sum(sizes) == evaluate_module._cached_bytes <= evaluate_module.CACHE_BYTES
    medium = 'kept = ["x" * 100000 for i in range(100)];\ny = indices;'  # ~10 MB
    assert evaluate_module.approx_bytes(engine.interpret(medium, Limits()), 1 << 30) > 10_000_000
    engine.clear_caches()
    assert not evaluate_module._CACHE and evaluate_module._cached_bytes == 0
