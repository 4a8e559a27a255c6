"""RASP programs other people published, run through the original interpreter (tech-srl/RASP) and
rasplay, every top-level name compared on every input (issue 27).

The programs are not part of rasplay (most of their repositories carry no licence that would let us
copy them): fetch the repositories yourself and point this script at them, e.g.

    git clone https://github.com/tech-srl/RASP /tmp/RASP
    python3 -m venv /tmp/origrasp && /tmp/origrasp/bin/pip install antlr4-python3-runtime==4.9.1 termcolor
    for r in KentaWood/RASP-HW willy-b/learning-rasp EthanTu2/rasp danzhechen/RASP_solutions \\
             willy-b/RASP-for-COGS; do git clone https://github.com/$r /tmp/corpus/${r/\\//+}; done
    python bench/corpus_against_original.py --original /tmp/RASP --python /tmp/origrasp/bin/python \\
        --corpus /tmp/corpus

Homework READMEs are REPL transcripts: their `>` lines are the program, and each transcript
application `f(x)("hello")` becomes a named s-op `_applyN = f(x);` compared on that input. Prints each
differing value and, per program, the values that agree, and the time each interpreter took.
"""
from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from against_original import DRIVER, same  # noqa: E402

from rasplay import engine  # noqa: E402

BIG_INPUTS = [["a", "boy", "painted", "the", "girl", "|"], ["the", "girl", "was", "painted", "by", "the", "boy", "|"],
              ["the", "guest", "smiled", "|"], ["ella", "sold", "a", "car", "to", "the", "customer", "|"],
              ["a", "boy", "painted", "the", "girl", "|", "girl", "("]]


def transcript(text: str) -> tuple[str, list[tuple[str, str]]]:
    """The program of a README transcript, and (name, input) pairs for its applications. A `>` line
    starts a statement; the lines after it belong to it while its brackets are open (the rest are the
    REPL's printed values)."""
    lines, applications = [], []
    in_code, depth = False, 0
    for raw in text.splitlines():
        if raw.strip().startswith("```"):
            in_code, depth = not in_code, 0
            continue
        if not in_code:
            continue
        line = raw.rstrip()
        if re.match(r"\s*\.\.", line):  # a continuation prompt
            stmt = re.sub(r"^\s*\.\.\s?", "", line)
            if lines and stmt.strip() == ";" and lines[-1].endswith(";"):
                continue
            lines.append(stmt)
            continue
        if line.lstrip().startswith(">"):
            stmt = re.sub(r"^\s*>+\s?", "", line).strip()
            m = re.fullmatch(r'(.+?)\s*\((".*?"|\[.*?\])\)\s*;?', stmt)
            if m and not stmt.startswith("def") and "=" not in stmt.split("(")[0]:
                name = f"apply{len(applications)}"
                lines.append(f"{name} = {m.group(1)};")
                applications.append((name, json.loads(m.group(2))))
                continue
            depth = 0
        elif depth <= 0:
            continue
        else:
            stmt = line
        lines.append(stmt)
        depth += stmt.count("{") + stmt.count("(") - stmt.count("}") - stmt.count(")")
    return "\n".join(lines), applications


def cases(corpus: Path) -> list[dict]:
    out = []
    for repo, path in (("willy-b+learning-rasp", "word-level-pos-tokens-recogs-style-decoder-loop.rasp"),
                       ("willy-b+RASP-for-COGS", "rasp-for-cogs.rasp"),
                       ("willy-b+learning-rasp", "other-examples/example-word-type-dictionary-lookup.rasp"),
                       ("willy-b+learning-rasp",
                        "why-is-parity-so-easy-to-program-in-rasp-when-hard-for-transformers-to-learn.rasp")):
        file = corpus / repo / path
        if not file.is_file():
            continue
        src = file.read_text()
        lists = [json.loads(m) for m in re.findall(r"^set example (\[.*\])\s*$", src, re.M)]
        inputs = ([i + ["|"] for i in lists[:3]] + BIG_INPUTS[:2]) if lists else ["hello", "abcab", "10110"]
        names = list(dict.fromkeys(re.findall(r"^([A-Za-z]\w*)\s*=[^=]", src, re.M)))
        out.append({"id": f"{repo}/{path}", "program": src, "inputs": inputs, "names": names})
    for repo in ("KentaWood+RASP-HW", "EthanTu2+rasp", "danzhechen+RASP_solutions"):
        readme = corpus / repo / "README.md"
        if not readme.is_file():
            continue
        program, applications = transcript(readme.read_text())
        names = list(dict.fromkeys(re.findall(r"^([A-Za-z]\w*)\s*=[^=]", program, re.M)))
        names = [n for n in names if not n.startswith("apply")]
        for name, inp in applications:
            out.append({"id": f"{repo} {name}", "program": program, "inputs": [inp], "names": [name]})
        out.append({"id": f"{repo} names", "program": program, "inputs": ["hello", "abcab"], "names": names})
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--original", type=Path, required=True, help="a checkout of tech-srl/RASP")
    ap.add_argument("--python", required=True, help="the Python that runs the original")
    ap.add_argument("--corpus", type=Path, required=True, help="a folder holding the repositories (owner+name)")
    ap.add_argument("--only", default="", help="run the cases whose id contains this")
    ap.add_argument("--show-program", action="store_true")
    ap.add_argument("--show-failures", action="store_true", help="also list the values that fail in both")
    args = ap.parse_args()
    todo = [c for c in cases(args.corpus) if args.only in c["id"]]
    if args.show_program:
        for c in todo:
            print(c["id"], "\n", c["program"])
    t0 = time.perf_counter()
    driver = DRIVER.replace("json.dump(out, sys.stdout)",
                            "json.dump(out, sys.stdout, default=lambda o: {'error': type(o).__name__})")
    run = subprocess.run([args.python, "-c", driver], input=json.dumps(todo), capture_output=True, text=True,
                         cwd=args.original)
    t_original = time.perf_counter() - t0
    if run.returncode != 0:
        sys.exit(f"the original interpreter failed:\n{run.stderr[-2000:]}")
    theirs = json.loads(run.stdout)
    totals: dict[str, list[int]] = {}
    t_ours = 0.0
    for case, values in zip(todo, theirs):
        t0 = time.perf_counter()
        doc = engine.evaluate(case["program"], case["inputs"])
        t_ours += time.perf_counter() - t0
        group = totals.setdefault(case["id"].split(" ")[0], [0, 0, 0])
        for name in case["names"]:
            if not any(isinstance(v, (list, dict)) for v in values[name]):
                continue  # an atom (a number...): not an s-op in either interpreter
            ours = doc["results"].get(name)
            if ours is None and isinstance(values[name][0], list) and all(v == values[name][0] for v in values[name]) \
                    and len(case["inputs"]) > 1:
                continue  # a list the program builds (the same on every input), not an s-op
            for i, inp in enumerate(case["inputs"]):
                group[2] += 1
                want = values[name][i]
                if ours is None or ours["errors"][i] is not None:
                    got = {"error": ours["errors"][i] if ours else "not defined"}
                elif ours["kind"] == "selector":
                    got = [[bool(x) for x in row] for row in ours["values"][i]]
                else:
                    got = ours["values"][i]
                if isinstance(want, dict) and isinstance(got, dict):
                    group[1] += 1
                    if args.show_failures:
                        print(f"BOTH FAIL {case['id']}: {name} on {str(inp)[:50]}\n  original {want['error'][:150]}\n"
                              f"  rasplay  {got['error'][:150]}")
                elif same(want, got):
                    group[0] += 1
                else:
                    print(f"DIFF {case['id']}: {name} on {str(inp)[:50]}\n  original {str(want)[:300]}\n"
                          f"  rasplay  {str(got)[:300]}")
    for group, (agree, both, total) in totals.items():
        print(f"{group}: {agree} of {total} values equal, {both} fail in both, {total - agree - both} differ")
    print(f"time: original {t_original:.1f} s, rasplay {t_ours:.1f} s")


if __name__ == "__main__":
    main()
