"""rasplay beside the original RASP interpreter (tech-srl/RASP): the same programs, the same inputs,
every value compared (ints and floats told apart, bools as bools).

The original is not part of rasplay: check it out and set it up yourself, e.g.

    git clone https://github.com/tech-srl/RASP /tmp/RASP
    python3 -m venv /tmp/RASP/venv && /tmp/RASP/venv/bin/pip install antlr4-python3-runtime==4.9.1 termcolor
    python bench/against_original.py --original /tmp/RASP [--python /tmp/RASP/venv/bin/python] [--show-diagnostics]

Programs: the original's paper_examples.rasp, rover.rasp (also loaded), long_addition.rasp, cases
from its test transcripts (indexing, sequences, assignments, loads), the library, and every program
in examples/ on its input and that input reversed. Prints each differing value and the totals.
"""
from __future__ import annotations

import argparse
import json
import math
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rasplay import engine  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]

# Runs inside the original's Python: each case in a fresh REPL, its running example set to the
# case's first input (the REPL refuses a statement that fails on its running example).
DRIVER = r'''
import contextlib, io, json, sys
sys.path.insert(0, ".")
from RASP_support.REPL import REPL
from RASP_support.FunctionalSupport import Unfinished

def plain(v):
    v = v.get_vals() if hasattr(v, "get_vals") else v
    if isinstance(v, dict):
        return [[bool(x) for x in v[i]] for i in sorted(v)]
    return list(v) if isinstance(v, tuple) else v

out = []
for case in json.load(sys.stdin):
    with contextlib.redirect_stdout(io.StringIO()):
        repl = REPL()
        prefix = "set example " + json.dumps(case["inputs"][0]) + "\n"
        repl.run(fromfile=io.StringIO(prefix + case["program"] + "\n"))
    values = {}
    for name in case["names"]:
        row = []
        for inp in case["inputs"]:
            try:
                v = repl.env.get_variable(name)
                if isinstance(v, Unfinished):
                    with contextlib.redirect_stdout(io.StringIO()):
                        v = plain(v.call(inp))
                row.append(v)
            except Exception as e:
                row.append({"error": str(e)[:200]})
        values[name] = row
    out.append(values)
json.dump(out, sys.stdout)
'''


def cases(original: Path) -> list[dict]:
    out = []
    paper = (original / "paper_examples.rasp").read_text()
    out.append({"id": "paper_examples", "program": paper, "inputs": [
        "§hiya how are you doing there ey", "hiya howdy doodly doo", "§dfgfhfghDVSHRDFHdfsfsfegDGDFHDFG",
        "§dnv,dmnvs,alaadslksmvxlmvlskd", "()(()())(((())(()(()))))((())((()()))(()))))(())((",
        "{{({(){}()})}({}){}{}}{(({}(){}))}{}(){}({}(){()(){}}){)()}", "()[](){{}(){}[]}[[]]([]){}()(])[[]]{{}}()[]"],
        "names": ["hist_bos", "hist_nobos", "reverse", "sort_bos", "hist2_bos", "sort_by_most_freq", "dyck1_ptf",
                  "dyck2_ptf", "dyck3_ptf"]})
    rover = (original / "rover.rasp").read_text()
    examples = re.findall(r'^example\d+ = "([^"]*)"', rover, re.M)
    out.append({"id": "rover", "program": rover, "inputs": examples, "names": [
        "res", "clause_index", "num_clauses", "relative_clause_pos", "inference_clause", "question_clause",
        "base_clause", "other_base_item", "base_op", "query_token", "query_op", "posres", "negres",
        "left_receiver", "right_receiver"]})
    out.append({"id": "load rover", "program": 'load "rover";\nr = res;', "inputs": examples[:6], "names": ["r"]})
    out.append({"id": "long_addition", "program": (original / "long_addition.rasp").read_text(),
                "inputs": ["1234+5678", "99+1", "0+0", "555+545", "12+989"],
                "names": ["val1", "val2", "definite_carry", "may_carry", "num_prev_def_non_carries", "triggered",
                          "carries", "receives_carry", "overflowing_sums", "longsum"]})
    out.append({"id": "transcript indexing", "inputs": ["12345"], "names": [f"x{i}" for i in (1, 2, 3, 4, 6, 7, 8)],
                "program": 'd = {"1":1, "2":2, "3":3, "4":5, "5":4};\nx1 = d[tokens];\n'
                           'a="qwertyuioplkjhgfdsazxcvbnm";\nx2 = a[indices];\nx3 = a[indices*3];\nx4 = tokens[4];\n'
                           'b = [5,8,2,9,4,7,5];\nx6 = b[indices];\nx7 = tokens[-1];\nx8 = tokens[-2];'})
    out.append({"id": "transcript sequences", "inputs": ["hello", "hello there"], "names": list("abcdefgh"),
                "program": 'a = indices;\nb = length;\nc = tokens;\nd = indices+1;\ne = indices*3;\n'
                           'f = selector_width(select(tokens,tokens,==));\ng = "a" if indices%2==1 else tokens;\n'
                           'h = tokens[0];'})
    out.append({"id": "transcript assignments", "inputs": ["hello"], "names": ["c", "g"],
                "program": 'a,b=3,5;\nc=indices+4;\nfor i in range(4) {\n\tc = c+i;\n}\n'
                           'def foo(a,b) {\n\treturn a+b,5;\n}\ne,f=foo(6,7);\ng = c + e + f;'})
    out.append({"id": "transcript loads", "inputs": ["hi"], "names": ["x", "y"],
                "program": 'f=10;\nload "tests/rasps/loadA";\nx = indices + a + b + c + e;\n'
                           'load "tests/rasps/multi_assigns3";\ny = a + indices * 0 + b + c + d;'})
    out.append({"id": "semantics", "inputs": ["abc", "a", "abcde"], "names": list("xyzwvutrqon"),
                "program": 'x = 1 if indices==0 else 2 if indices==1 else 3;\ny = indices and 5;\n'
                           'z = (tokens=="a") or tokens;\nw = tokens or indices;\nv = not indices;\n'
                           'u = aggregate(select(indices,indices,<=),indices);\n'
                           't = aggregate(select(indices,0,==),tokens_float + 1);\n'
                           'r = (1 if indices==0 else 2) if indices==1 else 3;\n'
                           'q = 1 if indices==0 else (2 if indices==1 else 3);\no = -indices ^ 2;\n'
                           'n = not indices == 0;'})
    out.append({"id": "library", "inputs": ["hello", "abc", "lll"], "names": list("abcdfghijklmopq"),
                "program": 'a = count(tokens, "l");\nb = contains(tokens, "l");\nc = max(indices, 2);\n'
                           'd = average(indices);\nf = shift(tokens, 1, "_");\n'
                           'g = mark_first_instance(tokens, "l");\nh = mark_last_instance(tokens, "l");\n'
                           'i = aggregate(select_from_first(tokens, "l"), indices);\n'
                           'j = aggregate(select_from_last(tokens, "l"), indices);\nk = sort(tokens, tokens);\n'
                           'l = select_next_identical(tokens);\nm = has_focus(select(tokens, "e", ==));\n'
                           'o = length;\np = selector_width(select(tokens,tokens,<));\nq = min(indices, 1);'})
    for path in sorted((ROOT / "examples").glob("*.rasp")):
        src = path.read_text()
        given = re.search(r"^# input: (.*)$", src, re.M).group(1)
        as_json = re.search(r"^# input_format:\s*json", src, re.M)
        inputs = [json.loads(given)] if as_json else [given, given[::-1]]
        names = [n for n in dict.fromkeys(re.findall(r"^([A-Za-z]\w*)\s*=[^=]", src, re.M)) if n != "tokens"]
        out.append({"id": path.name, "program": src, "inputs": inputs, "names": names})
    return out


def same(a, b) -> bool:
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(map(same, a, b))
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return type(a) is type(b) and math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12)
    return a == b


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--original", type=Path, required=True, help="a checkout of tech-srl/RASP")
    ap.add_argument("--python", default=None, help="the Python that runs the original (default: its venv)")
    ap.add_argument("--show-diagnostics", action="store_true")
    args = ap.parse_args()
    python = args.python or str(args.original / "venv" / "bin" / "python")
    todo = cases(args.original)
    run = subprocess.run([python, "-c", DRIVER], input=json.dumps(todo), capture_output=True, text=True,
                         cwd=args.original)
    if run.returncode != 0:
        sys.exit(f"the original interpreter failed:\n{run.stderr[-2000:]}")
    theirs = json.loads(run.stdout)
    total = agree = both_fail = 0
    for case, values in zip(todo, theirs):
        doc = engine.evaluate(case["program"], case["inputs"], load_dirs=[args.original])
        for name in case["names"]:
            ours = doc["results"].get(name)
            for i, inp in enumerate(case["inputs"]):
                total += 1
                want = values[name][i]
                if ours is None or ours["errors"][i] is not None:
                    got = {"error": ours["errors"][i] if ours else "not defined"}
                elif ours["kind"] == "selector":
                    got = [[bool(x) for x in row] for row in ours["values"][i]]
                else:
                    got = ours["values"][i]
                if isinstance(want, dict) and isinstance(got, dict):
                    both_fail += 1
                elif same(want, got):
                    agree += 1
                else:
                    print(f"DIFF {case['id']}: {name} on {str(inp)[:40]!r}\n  original {str(want)[:200]}\n"
                          f"  rasplay  {str(got)[:200]}")
        if args.show_diagnostics:
            for d in doc["diagnostics"]:
                if d["severity"] != "info":
                    print(f"  {case['id']} {d['severity']} {d.get('line')}:{d.get('col')} {d['message'][:150]}")
    print(f"{agree} of {total} values agree; {both_fail} fail in both; {total - agree - both_fail} differ")


if __name__ == "__main__":
    main()
