"""Tracr's own figures for bench/tracr_figures.json: its lib.py programs compiled at each max_len given,
with layers, residual width, parameters (total and non-zero) and compile seconds (first and second
compile in the process). Needs Tracr (github.com/deepmind/tracr) and its JAX/Haiku dependencies, which
rasplay does not install; run it in a separate virtualenv beside a checkout of Tracr:

    PYTHONPATH=path/to/tracr python bench/tracr_measure.py all 5 10 20 > rows.jsonl
    PYTHONPATH=path/to/tracr python bench/tracr_measure.py reverse,sort 10

Prints one JSON row per program and max_len.
"""
import json
import sys
import time

import jax
import numpy as np
from tracr.compiler import compiling, lib
from tracr.rasp import rasp


def progs(n):
    return {
        "reverse": (lambda: lib.make_reverse(rasp.tokens), "abc"),
        "histogram": (lambda: lib.make_hist(), "abc"),
        "length": (lambda: lib.make_length(), "abc"),
        "sort_unique": (lambda: lib.make_sort_unique(rasp.tokens, rasp.tokens), "abc"),
        "sort": (lambda: lib.make_sort(rasp.tokens, rasp.tokens, max_seq_len=n, min_key=1), [1, 2, 3]),
        "sort_freq": (lambda: lib.make_sort_freq(max_seq_len=n), "abc"),
    }


for n in [int(x) for x in sys.argv[2:]]:
    for name, (make, vocab) in progs(n).items():
        if sys.argv[1] != "all" and name not in sys.argv[1].split(","):
            continue
        times = []
        for rep in range(2):
            t = time.perf_counter()
            model = compiling.compile_rasp_to_model(make(), vocab=set(vocab), max_seq_len=n, compiler_bos="BOS")
            times.append(time.perf_counter() - t)
        leaves = jax.tree_util.tree_leaves(model.params)
        params = int(sum(np.asarray(leaf).size for leaf in leaves))
        nonzero = int(sum(np.count_nonzero(np.asarray(leaf)) for leaf in leaves))
        row = {"name": name, "N": n, "vocab": "".join(map(str, vocab)), "layers": model.model_config.num_layers,
               "d_model": int(model.params["token_embed"]["embeddings"].shape[1]), "params": params,
               "nonzero": nonzero, "seconds_cold": round(times[0], 1), "seconds_warm": round(times[1], 1)}
        print(json.dumps(row), flush=True)
