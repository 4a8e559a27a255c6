"""`train(..., mode="program")`: train the constrained model on a program's task, decode it, write it as
RASP, and analyse the emitted program. Everything returned is JSON-able."""
from __future__ import annotations

import time
from typing import Callable

import torch

from ..interpret import interpret
from ..analysis import analyze_nodes
from ..header import default_output
from .config import TrainConfig
from .errors import TrainError
from .program_decode import decode
from .program_emit import emit_source
from .program_train import BOS, EOS, build, discrete_accuracy, fit, prune


def emitted_analysis(source: str) -> dict:
    """The engine's layer/head analysis of an emitted program's output s-op."""
    interp = interpret(source)
    errors = [d for d in interp.diagnostics if d["severity"] == "error"]
    if errors:   # the writer's output must run; if it does not, that is our bug, said plainly
        raise TrainError(f"the emitted program does not run: {errors[0]['message']}")
    name = default_output(interp)
    node = next(d.value for d in reversed(interp.definitions) if d.name == name)
    a = analyze_nodes(interp, [node])
    return {"output": name, "layers": a["layers"], "heads_per_layer": a["heads_per_layer"],
            "heads": [[{"name": h["name"], "label": h["label"], "layer": h["layer"]} for h in layer]
                      for layer in a["heads"]]}


def train_program(source: str, cfg: TrainConfig, progress: Callable[[dict], None] | None = None,
                  should_stop: Callable[[], bool] | None = None, load_dirs=None) -> dict:
    threads = torch.get_num_threads()
    torch.set_num_threads(cfg.threads)
    phase = (lambda name, message: progress({"point": "phase", "phase": name, "message": message})) \
        if progress else (lambda name, message: None)
    try:
        t0 = time.monotonic()
        phase("data", f"sampling {cfg.n_train:,} training and {cfg.n_test:,} held-out inputs "
                      f"(lengths {cfg.min_len}-{cfg.max_len}) and labelling them with the program")
        task, data, model = build(source, cfg, load_dirs)
        s = model.shape
        phase("model", f"training a program model: {s.layers} layer(s) of {s.cat_heads} categorical and "
                       f"{s.num_heads} counting head(s) and {s.mlps} table MLP(s)")
        t1 = time.monotonic()
        run = fit(model, data, cfg, progress, should_stop)
        t2 = time.monotonic()
        phase("emit", "reading the trained model back as a RASP program")
        pruned = prune(model, data.train)
        decoded = decode(model, data.vocab, data.classes, BOS, EOS if cfg.eos else None)
        text = emit_source(decoded, task.output, cfg)
        analysis = emitted_analysis(text)
        final = {"test": discrete_accuracy(model, data.test), "train": discrete_accuracy(model, data.train)}
    finally:
        torch.set_num_threads(threads)
    return {
        "mode": "program",
        "output": task.output,
        "config": cfg.to_dict(),
        "model": s.to_dict(),
        "params": sum(p.numel() for p in model.parameters()),
        "program": {"layers": task.layers, "heads_per_layer": task.heads_per_layer, "heads": task.heads},
        "data": {"train": len(data.train), "test": len(data.test), "dropped": data.dropped,
                 "drop_reason": data.drop_reason, "kind": "categorical", "classes": data.classes},
        **run,
        "final": final,
        "pruned_features": len(pruned),
        "learned_program": {"source": text, "layers": analysis["layers"],
                            "heads": analysis["heads_per_layer"], "analysis": analysis,
                            "bos": BOS, "eos": EOS if cfg.eos else None},
        "timings": {"data": round(t1 - t0, 3), "train": round(t2 - t1, 3), "total": round(time.monotonic() - t0, 3)},
    }
