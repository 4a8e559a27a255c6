"""How long a program of the size of the largest published RASP programs (~125,000 characters) takes to
parse, interpret and evaluate (issue 27). A synthetic program by default (our own text: chains of
if/else, selects and aggregates, with comments, as such programs have); --file times a real one.

    python bench/large_program.py [--chars 125000] [--file PATH] [--inputs 8] [--repeat 3]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rasplay import engine  # noqa: E402
from rasplay.engine.evaluate import clear_caches  # noqa: E402
from rasplay.engine.interpret import interpret  # noqa: E402
from rasplay.engine.lang.parser import parse  # noqa: E402


def synthetic(chars: int) -> str:
    lines, i = [], 0
    while sum(map(len, lines)) < chars:
        prev = f"w{i - 1}" if i else "indices"
        lines.append(f"# step {i}: where the token matches, count and move a value along the sequence\n")
        lines.append(f"w{i} = ({prev} + 1 if tokens == \"{'abc'[i % 3]}\" else {prev} - 1) if indices % 2 == 0 "
                     f"else aggregate(select(indices, {prev} % length, ==), {prev}, 0);\n")
        lines.append(f"s{i} = selector_width(select(tokens, tokens, ==) and select(indices, indices, <)) + w{i};\n")
        i += 1
    return "".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--chars", type=int, default=125_000)
    ap.add_argument("--file", type=Path)
    ap.add_argument("--inputs", type=int, default=8)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    source = args.file.read_text() if args.file else synthetic(args.chars)
    inputs = [["a", "boy", "painted", "the", "girl", "|"] if args.file else "abcab"] * args.inputs
    parse("x = 1;")  # build the parser once
    best = {"parse": 1e9, "interpret": 1e9, "evaluate (cold)": 1e9, "evaluate (cached)": 1e9}
    for _ in range(args.repeat):
        clear_caches()
        t = time.perf_counter()
        parse(source)
        best["parse"] = min(best["parse"], time.perf_counter() - t)
        t = time.perf_counter()
        interp = interpret(source)
        best["interpret"] = min(best["interpret"], time.perf_counter() - t)
        from rasplay.engine.interpret import parse_program
        parse_program.cache_clear()
        t = time.perf_counter()
        doc = engine.evaluate(source, inputs)
        best["evaluate (cold)"] = min(best["evaluate (cold)"], time.perf_counter() - t)
        t = time.perf_counter()
        engine.evaluate(source, inputs)
        best["evaluate (cached)"] = min(best["evaluate (cached)"], time.perf_counter() - t)
    errors = [d for d in doc["diagnostics"] if d["severity"] == "error"]
    print(f"{len(source):,} characters, {source.count(chr(10)):,} lines, {len(interp.graph.nodes):,} operations, "
          f"{len(doc['results'])} names, {len(errors)} errors, {args.inputs} inputs")
    for k, v in best.items():
        print(f"  {k:18s} {v:6.2f} s  (best of {args.repeat})")


if __name__ == "__main__":
    main()
