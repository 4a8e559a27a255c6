"""Learned programs in: TransformerPrograms' 14 shipped RASP-task programs, translated to rasplay RASP
(rasplay.interop.import_transformer_program), run beside their own run() and checked on every input.

Their programs are not part of rasplay. Get them with

    git clone https://github.com/princeton-nlp/TransformerPrograms

and run (pandas and numpy are needed to run their code)

    python bench/learned_import.py --repo TransformerPrograms [--samples 1000] [--max-length 6]

For each program (programs/rasp/TASK and programs/rasp_categorical_only/TASK): the translation time; their
own run() (in a subprocess whose working directory is their checkout, since run() reads its weights CSV by
a relative path) and the translated program on `--samples` seeded inputs of the task's vocabulary and
lengths, compared on the input's own positions (not the beginning/end tokens, whose output run() sets
itself); then every input up to `--max-length` tokens through the translated program and through the
rasplay example that computes the task (examples/*.rasp; for most_freq, which no example computes, an
independent Python statement of the task), with the agreement, the shortest failing input and the seconds
the check took. `--cache DIR` keeps their run()'s outputs between runs (they take seconds per input).
Prints a table (no thresholds): docs/learned_programs.md quotes it.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from rasplay.engine.graph_runner import run_graph
from rasplay.engine.header import default_output
from rasplay.engine.interpret import interpret
from rasplay.engine.learned.check_programs import as_text
from rasplay.engine.limits import Limits
from rasplay.interop.transformer_programs import import_transformer_program

sys.path.insert(0, str(Path(__file__).resolve().parent))
from learned_tasks import TASKS, VARIANTS, samples, wrap  # noqa: E402

HERE = Path(__file__).resolve().parent
EXAMPLES = HERE.parent / "examples"
LIMITS = Limits(max_inputs=10 ** 7, max_cells=1 << 31, max_result_cells=1 << 31, eval_seconds=3600)


class Runner:
    """A program's output s-op on batches of equal-length inputs (the evaluator's graph runner, batched)."""

    def __init__(self, source: str):
        self.interp = interpret(source, LIMITS)
        name = default_output(self.interp)
        self.output = next(d.value for d in reversed(self.interp.definitions) if d.name == name)
        self.nodes = self.interp.graph.ancestors([self.output])

    def run(self, rows: list[list[str]]) -> list:
        """Each row's values as strings (None where the row fails), rows grouped by length."""
        out: list = [None] * len(rows)
        by_len: dict = {}
        for i, r in enumerate(rows):
            by_len.setdefault(len(r), []).append(i)
        for idx in by_len.values():
            text, ok = self.run_array(np.array([rows[i] for i in idx], dtype=str))
            for j, i in enumerate(idx):
                if ok[j]:
                    out[i] = text[j].tolist()
        return out

    def run_array(self, tokens: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """A (B, n) batch of one length -> its output as text (B, n) and which rows ran without an error."""
        v = run_graph(self.nodes, tokens, {self.output.id}, time.monotonic() + 3600, LIMITS)[self.output.id]
        ok = np.array([e is None for e in v.errors], dtype=bool)
        if v.data is None:
            return np.full(tokens.shape, "", dtype=str), np.zeros(len(tokens), dtype=bool)
        return as_text(np.asarray(v.data)), ok


def their_outputs(repo: Path, variant: str, task, inputs: list, cache: Path | None, seed: int) -> tuple:
    path = cache / f"{variant}_{task.name}_{seed}_{len(inputs)}.json" if cache else None
    if path is not None and path.exists():
        doc = json.loads(path.read_text())
        if doc["inputs"] == inputs:
            return doc["outputs"], doc["seconds"]
    start = time.perf_counter()
    r = subprocess.run([sys.executable, str(HERE / "learned_their_run.py"),
                        f"programs/{variant}/{task.name}/{task.name}.py"],
                       input=json.dumps(inputs), capture_output=True, text=True, cwd=repo, check=True)
    secs = time.perf_counter() - start
    outputs = json.loads(r.stdout)
    if path is not None:
        path.write_text(json.dumps({"inputs": inputs, "outputs": outputs, "seconds": secs}))
    return outputs, secs


def inner(task, row):
    """The input's own positions of a wrapped row (without the beginning and end tokens)."""
    return row[1:len(row) - (1 if task.eos else 0)] if row is not None else None


def sampled(repo, variant, task, runner, count, seed, cache) -> dict:
    raw = samples(task, count, seed)
    inputs = [wrap(task, s) for s in raw]
    theirs, secs = their_outputs(repo, variant, task, inputs, cache, seed)
    ours = runner.run(inputs)
    same = sum(inner(task, o) == [str(x) for x in inner(task, t)] for o, t in zip(ours, theirs))
    return {"agree": same, "inputs": len(inputs), "their_seconds": secs}


def every_input(vocab: np.ndarray, n: int) -> np.ndarray:
    """Every input of n tokens, (V^n, n), in itertools.product's order."""
    powers = len(vocab) ** np.arange(n - 1, -1, -1, dtype=np.int64)
    return vocab[(np.arange(len(vocab) ** n, dtype=np.int64)[:, None] // powers) % len(vocab)]


def wrap_array(task, raw: np.ndarray) -> np.ndarray:
    parts = [np.full((len(raw), 1), "<s>"), raw] + ([np.full((len(raw), 1), "</s>")] if task.eos else [])
    return np.concatenate(parts, axis=1)


def exhaustive(task, runner, max_length: int) -> dict:
    """Every input up to max_length through the translated program and the reference, compared as text;
    timed (wall and CPU) from loading the reference to the last comparison. Then, outside the time, the
    reference is confirmed against the task's Python statement on every input."""
    start, cpu = time.perf_counter(), time.process_time()
    reference = Runner((EXAMPLES / task.example).read_text()) if task.example else None
    vocab = np.array(task.vocab)
    by_len, shortest, total, agree, kept = {}, None, 0, 0, []
    for n in range(1, max_length + 1):
        raw = every_input(vocab, n)
        ours, ours_ok = runner.run_array(wrap_array(task, raw))
        ours = ours[:, 1:n + 1]
        want, want_ok = reference.run_array(raw) if reference else (task.batch(raw), np.ones(len(raw), bool))
        ok = ours_ok & want_ok & (ours == want).all(axis=1)
        by_len[n] = (int(ok.sum()), len(raw))
        total, agree = total + len(raw), agree + int(ok.sum())
        if shortest is None and not ok.all():
            i = int(np.argmin(ok))
            shortest = ("".join(raw[i]), ours[i].tolist() if ours_ok[i] else None, want[i].tolist())
        kept.append((raw, want, want_ok))
    seconds, cpu_seconds = time.perf_counter() - start, time.process_time() - cpu
    example_ok = sum(bool(w_ok) and w.tolist() == [str(x) for x in task.reference(r.tolist())]
                     for raw, want, want_ok in kept for r, w, w_ok in zip(raw, want, want_ok))
    return {"agree": agree, "inputs": total, "by_length": by_len, "shortest": shortest,
            "seconds": seconds, "cpu_seconds": cpu_seconds, "reference_is_task": example_ok == total}


def one(repo: Path, variant: str, task, args) -> dict:
    folder = repo / "programs" / variant / task.name
    start = time.perf_counter()
    source = import_transformer_program((folder / f"{task.name}.py").read_text(),
                                        (folder / f"{task.name}_weights.csv").read_text(), title=task.name)
    translated = time.perf_counter()
    runner = Runner(source)
    row = {"program": f"{variant}/{task.name}", "translate_seconds": translated - start,
           "load_seconds": time.perf_counter() - translated, "lines": source.count("\n")}
    if args.samples:
        row["sampled"] = sampled(repo, variant, task, runner, args.samples, args.seed, args.cache)
    if not args.max_length:
        return row
    row["exhaustive"] = e = exhaustive(task, runner, args.max_length)
    if e["shortest"] is not None:   # their own run() on it: the failure is theirs, not the translation's
        failing = wrap(task, list(e["shortest"][0]))
        theirs, _ = their_outputs(repo, variant, task, [failing], None, args.seed)
        e["their_output_on_shortest"] = inner(task, [str(x) for x in theirs[0]])
    return row


def show(row: dict) -> None:
    s, e = row.get("sampled"), row.get("exhaustive")
    their = (f"{s['agree']}/{s['inputs']} ({s['their_seconds'] / s['inputs']:.2f} s/input theirs)"
             if s else "not run")
    short = "none" if e is None or e["shortest"] is None else (
        f"{e['shortest'][0]!r}: translated {e['shortest'][1]}, their run() {e.get('their_output_on_shortest')}, "
        f"task {e['shortest'][2]}")
    print(f"{row['program']:<34} translated in {row['translate_seconds']:.2f} s ({row['lines']} lines), loaded in "
          f"{row['load_seconds']:.2f} s; run() agreement {their}")
    if e is None:
        return
    print(f"{'':<34} every input to length {max(e['by_length'])}: {e['agree']}/{e['inputs']} right "
          f"({e['agree'] / e['inputs']:.1%}) in {e['seconds']:.1f} s ({e['cpu_seconds']:.1f} s CPU); by length "
          + ", ".join(f"{n}: {a}/{t}" for n, (a, t) in e["by_length"].items()))
    print(f"{'':<34} shortest failing input: {short}; reference = task definition: {e['reference_is_task']}")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                epilog="Get their programs with: git clone https://github.com/princeton-nlp/"
                                       "TransformerPrograms")
    p.add_argument("--repo", type=Path, required=True, help="a checkout of princeton-nlp/TransformerPrograms")
    p.add_argument("--samples", type=int, default=1000, help="seeded inputs run through their run() (0: none)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--max-length", type=int, default=6, help="check every input up to this many tokens (0: no check)")
    p.add_argument("--tasks", nargs="*", default=list(TASKS), choices=list(TASKS))
    p.add_argument("--variants", nargs="*", default=list(VARIANTS), choices=list(VARIANTS))
    p.add_argument("--cache", type=Path, help="a folder keeping their run()'s outputs between runs")
    p.add_argument("--json", type=Path, help="also write the figures as JSON here")
    args = p.parse_args(argv)
    if args.cache:
        args.cache.mkdir(parents=True, exist_ok=True)
    rows = []
    for variant in args.variants:
        for name in args.tasks:
            rows.append(one(args.repo, variant, TASKS[name], args))
            show(rows[-1])
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
