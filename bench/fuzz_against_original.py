"""A seeded differential test against the original RASP interpreter (tech-srl/RASP), issue 26: random
programs in the original's syntax, each run through the original and through rasplay on 3-6 string or
JSON inputs, every name the program assigns compared (ints, floats and bools told apart, floats to
1e-12 relative). Not part of CI: it needs the original, set up as bench/against_original.py says.

    python bench/fuzz_against_original.py --original /tmp/RASP --python /tmp/origrasp/bin/python \\
        [--programs 300] [--seed 1] [--show 5]

The generator covers functions with one or two return values, recursion on atoms, closures, loops over
ranges / lists / zips / dicts, comprehensions, every select comparison, and/or/not, arithmetic, if/else,
`in`, indexing, the whole library, and values of several types per position. Prints how many programs
agree on every value, how many once the departures docs/language.md lists are set aside, and one
minimal example of each remaining class of difference.
"""
from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from against_original import DRIVER, same  # noqa: E402

from rasplay import engine  # noqa: E402

OPS = ["==", "!=", "<", ">", "<=", ">="]
QUOTED_A = '"a"'


class Gen:
    """Programs built from typed pools of names: N (numeric s-ops), S (string s-ops), B (bool s-ops),
    L (selectors), F (functions of one s-op)."""

    def __init__(self, rng: random.Random, json_input: bool):
        self.r = rng
        self.json = json_input
        self.pool = {"N": ["indices", "length"], "S": [] if json_input else ["tokens"], "B": [], "L": ["full_s"]}
        if json_input:
            self.pool["N"].append("tokens")
        self.lines: list[str] = []
        self.names: list[str] = []
        self.count = 0
        self.funcs: list[str] = []

    def fresh(self, prefix="v") -> str:
        self.count += 1
        return f"{prefix}{self.count}"

    def pick(self, kind: str) -> str:
        return self.r.choice(self.pool[kind]) if self.pool[kind] else self.gen(kind, 0)

    def atom(self) -> str:
        return str(self.r.choice([0, 1, 2, 3]))

    def gen(self, kind: str, depth: int) -> str:
        r = self.r
        if depth > 2 or r.random() < 0.25:
            if kind == "S" and not self.pool["S"]:
                return r.choice(['"a"', "tokens_str"]) if self.json else "tokens"
            if kind == "B" and not self.pool["B"]:
                return f"({self.pick('N')} {r.choice(OPS[2:])} {self.atom()})"
            return self.pick(kind)
        d = depth + 1
        if kind == "N":
            return r.choice([
                lambda: f"({self.gen('N', d)} {r.choice(['+', '-', '*'])} {self.gen('N', d)})",
                lambda: f"({self.gen('N', d)} % {r.choice([2, 3])})",
                lambda: f"-{self.gen('N', d)}",
                lambda: f"selector_width({self.gen('L', d)})",
                lambda: f"aggregate({self.gen('L', d)}, {self.gen('N', d)})",
                lambda: f"aggregate({self.gen('L', d)}, {self.gen('N', d)}, {self.atom()})",
                lambda: f"count({self.gen('S', d)}, {r.choice([QUOTED_A, self.gen('S', d)])})",
                lambda: f"count({self.gen('N', d)}, {r.choice([self.atom(), self.gen('N', d)])})",
                lambda: f"round({self.gen('N', d)} / 2)",
                lambda: f"indicator({self.gen('B', d)})",
                lambda: f"({self.gen('N', d)} if {self.gen('B', d)} else {self.gen('N', d)})",
                lambda: f"max({self.gen('N', d)}, {self.gen('N', d)})",
                lambda: f"min({self.gen('N', d)}, {self.atom()})",
                lambda: f"shift({self.gen('N', d)}, {r.choice([self.atom(), self.gen('N', d)])}, {self.atom()})",
                lambda: f"load_from_location({self.gen('N', d)}, {self.atom()})",
                lambda: f"average({self.gen('N', d)})",
                lambda: f"[5, 6, 7][{self.gen('N', d)} % 3]",
                lambda: f"{{0: 1, 1: 2.5}}[{self.gen('N', d)} % 2]",
                lambda: f"sort({self.gen('N', d)}, {self.gen('N', d)})",
                lambda: f"(1 if {self.gen('B', d)} else True)",
                lambda: f"[1, True, 0.5][{self.gen('N', d)} % 3]",
                lambda: f"{self.gen('N', d)}[{r.choice(['0', '1', '-1'])}]",
                lambda: f"{r.choice(self.funcs)}({self.gen('N', d)})" if self.funcs else "indices",
            ])()
        if kind == "S":
            return r.choice([
                lambda: f"aggregate({self.gen('L', d)}, {self.gen('S', d)})",
                lambda: f"aggregate({self.gen('L', d)}, {self.gen('S', d)}, \"_\")",
                lambda: f"shift({self.gen('S', d)}, {self.atom()}, \"_\")",
                lambda: f"sort({self.gen('S', d)}, {self.gen('N', d)})",
                lambda: f"({self.gen('S', d)} + \"x\")",
                lambda: f"\"abc\"[{self.gen('N', d)} % 3]",
                lambda: f"({self.gen('S', d)} if {self.gen('B', d)} else \"z\")",
                lambda: f"(\"q\" if {self.gen('B', d)} else {self.gen('S', d)})",
                lambda: "tokens_str" if self.json else "tokens",
            ])()
        if kind == "B":
            return r.choice([
                lambda: f"({self.gen('S', d)} == \"{r.choice('abc')}\")",
                lambda: f"({self.gen('N', d)} {r.choice(OPS[2:] + ['=='])} {self.gen('N', d)})",
                lambda: f"({self.gen('B', d)} {r.choice(['and', 'or'])} {self.gen('B', d)})",
                lambda: f"({self.gen('N', d)} {r.choice(['and', 'or'])} {self.gen('B', d)})",
                lambda: f"(not {self.gen('B', d)})",
                lambda: f"contains({self.gen('S', d)}, \"{r.choice('abc')}\")",
                lambda: f"contains({self.gen('N', d)}, {self.gen('N', d)})",
                lambda: f"mark_first_instance({self.gen('S', d)}, \"a\")",
                lambda: f"mark_last_instance({self.gen('N', d)}, 1)",
                lambda: f"has_focus({self.gen('L', d)})",
                lambda: f"({self.gen('S', d)} in [\"a\", \"b\"])",
                lambda: f"({self.gen('N', d)} in [0, 2])",
                lambda: f"(\"a\" in {self.gen('S', d)})",
                lambda: f"aggregate({self.gen('L', d)}, {self.gen('B', d)})",
            ])()
        if kind == "L":
            return r.choice([
                lambda: f"select({self.gen('N', d)}, {self.gen('N', d)}, {r.choice(OPS)})",
                lambda: f"select({self.gen('S', d)}, {self.gen('S', d)}, {r.choice(OPS)})",
                lambda: f"select({self.gen('S', d)}, \"{r.choice('abc')}\", ==)",
                lambda: f"select(indices, {self.atom()}, {r.choice(OPS)})",
                lambda: f"({self.gen('L', d)} {r.choice(['and', 'or'])} {self.gen('L', d)})",
                lambda: f"(not {self.gen('L', d)})",
                lambda: f"select_from_first({self.gen('S', d)}, \"a\")",
                lambda: f"select_from_last({self.gen('N', d)}, 1)",
                lambda: f"select_next_identical({self.gen('S', d)})",
            ])()
        raise ValueError(kind)

    def assign(self, kind: str | None = None):
        kind = kind or self.r.choice("NNSBBL")
        name = self.fresh()
        self.lines.append(f"{name} = {self.gen(kind, 0)};")
        self.pool[kind].append(name)
        self.names.append(name)

    def function(self):
        r = self.r
        name = self.fresh("f")
        two = r.random() < 0.4
        body = f"    t = a {r.choice(['+', '*', '-'])} {self.atom()};\n"
        if two:
            self.lines.append(f"def {name}(a) {{\n{body}    return t, t % 2 == 0;\n}}")
            x, y = self.fresh(), self.fresh()
            self.lines.append(f"{x}, {y} = {name}({self.pick('N')});")
            self.pool["N"].append(x)
            self.pool["B"].append(y)
            self.names += [x, y]
        else:
            self.lines.append(f"def {name}(a) {{\n{body}    return t if t > 1 else a;\n}}")
            self.funcs.append(name)

    def construct(self):
        r = self.r
        choice = r.choice(["recursion", "closure", "range", "list", "zip", "dict", "comp", "rebind", "pair",
                           "in_atoms"])
        x = self.fresh()
        if choice == "recursion":
            f = self.fresh("f")
            self.lines.append(f"def {f}(n) {{\n    return 1 if n <= 1 else n * {f}(n - 1);\n}}")
            self.lines.append(f"{x} = {self.pick('N')} + {f}({r.randint(0, 4)});")
        elif choice == "closure":
            f, g = self.fresh("f"), self.fresh("g")
            self.lines.append(f"def {f}(s) {{\n    k = {self.atom()};\n    def {g}(t) {{\n        return t * k;\n"
                              f"    }}\n    return {g}(s) + k;\n}}")
            self.lines.append(f"{x} = {f}({self.pick('N')});")
        elif choice == "range":
            self.lines.append(f"{x} = {self.pick('N')};")
            self.lines.append(f"for i in range({r.randint(0, 3)}) {{\n    {x} = {x} + i;\n}}")
        elif choice == "list":
            self.lines.append(f"{x} = {self.pick('N')};")
            self.lines.append(f"for v in [1, 2.5, True] {{\n    {x} = {x} * v;\n}}")
        elif choice == "zip":
            self.lines.append(f"{x} = {self.pick('N')};")
            self.lines.append(f"for a, b in zip([1, 2], [3, 4]) {{\n    {x} = {x} + a * b;\n}}")
        elif choice == "dict":
            self.lines.append(f"{x} = {self.pick('N')};")
            self.lines.append(f"for k in {{\"a\": 1, \"b\": 2}} {{\n    {x} = {x} + {{\"a\": 1, \"b\": 2}}[k];\n}}")
        elif choice == "comp":
            lst = self.fresh("l")
            self.lines.append(f"{lst} = [{self.pick('N')} + i for i in range(3)];")
            self.lines.append(f"{x} = {lst}[{r.randint(0, 2)}];")
        elif choice == "rebind":
            self.lines.append(f"{x} = {self.pick('N')};")
            self.lines.append(f"{x} = {self.atom()};")
            return  # x is an atom now: not in the pools
        elif choice == "pair":
            y = self.fresh()
            self.lines.append(f"{x}, {y} = {self.pick('N')}, {self.pick('B') if self.pool['B'] else 'indices'};")
            self.names.append(y)
        else:
            d = {"a": 1, "b": 2}
            self.lines.append(f"{x} = {json.dumps(d)}[\"{r.choice('ab')}\"] + {self.pick('N')};")
        self.pool["N"].append(x)
        self.names.append(x)

    def program(self) -> str:
        if self.json:
            self.lines.append("tokens = tokens_asis;")
        for _ in range(self.r.randint(3, 7)):
            roll = self.r.random()
            if roll < 0.6:
                self.assign()
            elif roll < 0.75:
                self.function()
            else:
                self.construct()
        return "\n".join(self.lines)


def make_case(seed: int) -> dict:
    rng = random.Random(seed)
    json_input = rng.random() < 0.3
    g = Gen(rng, json_input)
    program = g.program()
    if json_input:
        inputs = [[rng.choice([0, 1, 2, 3]) for _ in range(rng.randint(1, 5))] for _ in range(rng.randint(3, 6))]
    else:
        inputs = ["".join(rng.choice("abc") for _ in range(rng.randint(1, 5))) for _ in range(rng.randint(3, 6))]
    return {"id": f"seed {seed}", "program": program, "inputs": inputs, "names": g.names}


def ours(case: dict) -> dict:
    doc = engine.evaluate(case["program"], case["inputs"])
    out = {}
    for name in case["names"]:
        r = doc["results"].get(name)
        row = []
        for i in range(len(case["inputs"])):
            if r is None:
                row.append({"error": "not defined"})
            elif r["errors"][i] is not None:
                row.append({"error": r["errors"][i]})
            elif r["kind"] == "selector":
                row.append([[bool(x) for x in q] for q in r["values"][i]])
            else:
                row.append(r["values"][i])
        out[name] = row
    return out


def classify(want: list, got: list) -> str | None:
    """None when they agree; else the class of the difference. A documented departure: the original
    refuses a statement that fails on its running example (the first input), rasplay keeps its other
    inputs (docs/language.md, Improvements)."""
    want = [{"error": w} if w == "EVALUATION FAILURE" else w for w in want]  # how the original reports some
    if all(same(w, g) or (isinstance(w, dict) and isinstance(g, dict)) for w, g in zip(want, got)):
        return None
    if all(isinstance(w, dict) for w in want) and isinstance(got[0], dict):
        return "documented: the original refuses a statement failing on its running example"
    if all(isinstance(w, dict) for w in want) and all(isinstance(g, dict) for g in got[1:]) is False \
            and any("Undefined variable" in w["error"] for w in want):
        return "undefined in the original (an earlier statement failed there)"
    if any(isinstance(g, dict) for g in got) and not any(isinstance(w, dict) for w in want):
        return "rasplay fails where the original gives values"
    if any(isinstance(w, dict) for w in want) and not any(isinstance(g, dict) for g in got):
        return "rasplay gives values where the original fails"
    return "values differ"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--original", type=Path, required=True)
    ap.add_argument("--python", required=True)
    ap.add_argument("--programs", type=int, default=300)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--show", type=int, default=3, help="examples shown per class")
    ap.add_argument("--cache", default=None, help="keep the original's values in this file (reused when the "
                    "programs are the same, e.g. to compare two versions of rasplay)")
    args = ap.parse_args()
    todo = [make_case(args.seed * 100_000 + i) for i in range(args.programs)]
    driver = DRIVER.replace("json.dump(out, sys.stdout)",
                            "json.dump(out, sys.stdout, default=lambda o: {'error': type(o).__name__})")
    cache = args.cache and Path(args.cache)
    if cache and cache.is_file() and json.loads(cache.read_text())["programs"] == [c["program"] for c in todo]:
        theirs = json.loads(cache.read_text())["values"]
    else:
        run = subprocess.run([args.python, "-c", driver], input=json.dumps(todo), capture_output=True, text=True,
                             cwd=args.original)
        if run.returncode != 0:
            sys.exit(f"the original interpreter failed:\n{run.stderr[-2000:]}")
        theirs = json.loads(run.stdout)
        if cache:
            cache.write_text(json.dumps({"programs": [c["program"] for c in todo], "values": theirs}))
    agree = agree_documented = crashes = 0
    classes: Counter = Counter()
    shown: Counter = Counter()
    for case, want in zip(todo, theirs):
        try:
            got = ours(case)
        except Exception as e:  # a crash of rasplay: the worst outcome
            crashes += 1
            print(f"CRASH {case['id']}: {type(e).__name__}: {e}\n{case['program']}")
            continue
        # a name the original holds as an atom on every input (`v = "a";`) is not an s-op in either
        names = [n for n in case["names"] if any(isinstance(v, (list, dict)) for v in want[n])]
        found = {n: classify(want[n], got[n]) for n in names}
        found.update({n: "rasplay shows an s-op where the original holds a value" for n in case["names"]
                      if n not in names and got[n][0] != {"error": "not defined"}})
        found = {n: c for n, c in found.items() if c is not None}
        if not found:
            agree += 1
        if all(c.startswith("documented") or c.startswith("undefined") for c in found.values()):
            agree_documented += 1
        for name, c in found.items():
            classes[c] += 1
            if not (c.startswith("documented") or c.startswith("undefined")) and shown[c] < args.show:
                shown[c] += 1
                print(f"--- {c}: {case['id']}, name {name}, inputs {case['inputs']}\n{case['program']}\n"
                      f"  original {str(want[name])[:300]}\n  rasplay  {str(got[name])[:300]}")
    n = len(todo)
    print(f"\n{n} programs (seed {args.seed}): {agree} agree on every value ({100 * agree / n:.0f}%), "
          f"{agree_documented} once documented departures are set aside ({100 * agree_documented / n:.0f}%), "
          f"{crashes} crashes")
    for c, k in classes.most_common():
        print(f"  {k:5d} names: {c}")


if __name__ == "__main__":
    main()
