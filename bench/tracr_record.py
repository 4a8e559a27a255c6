"""Record the real Tracr's values for tests/fixtures/tracr_recorded.json: the programs of
bench/tracr_api/cases.py (CASES and lib.py's LIB) evaluated with `rasp.evaluate` on their inputs and,
where a case gives (vocab, max_len), compiled with compile_rasp_to_model and applied to every input up
to max_len (the decoded outputs); the README's reverse example; Tracr's error messages.

Needs Tracr (github.com/deepmind/tracr) and JAX/Haiku, which rasplay does not install; run it in a
separate virtualenv:

    PYTHONPATH=path/to/tracr python bench/tracr_record.py > tests/fixtures/tracr_recorded.json
"""
import itertools
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "tracr_api"))
from cases import CASES, LIB  # noqa: E402
from tracr.compiler import compiling  # noqa: E402
from tracr.rasp import rasp  # noqa: E402

MAX_COMPILED_INPUTS = 400


def encode(v):
    """JSON for a Tracr value: tuples tagged, floats as floats, None as null."""
    if isinstance(v, tuple):
        return {"tuple": [encode(x) for x in v]}
    if isinstance(v, list):
        return [encode(x) for x in v]
    if hasattr(v, "item"):
        return v.item()
    return v


def evaluate(make, inputs):
    out = []
    for x in inputs:
        try:
            out.append({"input": encode(list(x)), "value": encode(rasp.evaluate(make(), x))})
        except Exception as e:  # noqa: BLE001
            out.append({"input": encode(list(x)), "error": type(e).__name__, "message": str(e)})
    return out


def compiled(make, vocab, max_len):
    try:
        model = compiling.compile_rasp_to_model(make(), vocab=set(vocab), max_seq_len=max_len, compiler_bos="BOS")
    except Exception as e:  # noqa: BLE001
        return {"error": type(e).__name__, "message": str(e)}
    rows = []
    for n in range(1, max_len + 1):
        for x in itertools.product(sorted(vocab, key=repr), repeat=n):
            if len(rows) >= MAX_COMPILED_INPUTS:
                break
            rows.append({"input": encode(list(x)), "decoded": encode(model.apply(["BOS", *x]).decoded[1:])})
    return {"outputs": rows}


def readme():
    def make_length():
        all_true_selector = rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.TRUE)
        return rasp.SelectorWidth(all_true_selector)
    length = make_length()
    opp_index = length - rasp.indices - 1
    flip = rasp.Select(rasp.indices, opp_index, rasp.Comparison.EQ)
    reverse = rasp.Aggregate(flip, rasp.tokens)
    model = compiling.compile_rasp_to_model(reverse, vocab={1, 2, 3}, max_seq_len=5, compiler_bos="BOS")
    out = model.apply(["BOS", 1, 2, 3])
    return {"decoded": encode(out.decoded), "residuals": len(out.residuals), "layer_outputs": len(out.layer_outputs),
            "attn_logits": [list(a.shape) for a in out.attn_logits],
            "input_encoding_map": {str(k): v for k, v in model.input_encoder.encoding_map.items()},
            "output_encoding_map": {str(k): v for k, v in model.output_encoder.encoding_map.items()},
            "COMPILER_BOS": compiling.COMPILER_BOS, "COMPILER_PAD": compiling.COMPILER_PAD}


doc = {"how": "bench/tracr_record.py under the real Tracr (github.com/deepmind/tracr at its current commit, "
              "jax 0.10.2, dm-haiku); values encoded as JSON, tuples as {\"tuple\": [...]}",
       "cases": {}, "lib": {}, "readme": readme()}
for group, table in (("cases", CASES), ("lib", LIB)):
    for name, (make, inputs, spec) in table.items():
        entry = {"values": evaluate(make, inputs)}
        if spec is not None:
            entry["compiled"] = compiled(make, *spec)
        doc[group][name] = entry
        print(name, file=sys.stderr)
print(json.dumps(doc, separators=(",", ":")))
