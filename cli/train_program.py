"""`rasplay train FILE --mode program`: the summary of a program-mode run, and its learned program
(printed, or written with --emit)."""
from __future__ import annotations

import json
import sys


def report(result: dict, args) -> int:
    lp = result["learned_program"]
    if args.emit:
        try:
            with open(args.emit, "w", encoding="utf-8") as f:
                f.write(lp["source"])
        except OSError as e:
            print(f"rasplay: cannot write {args.emit}: {e.strerror}", file=sys.stderr)
            return 1
    if args.json:
        print(json.dumps(result, ensure_ascii=False))
        return 0
    m, f, d = result["model"], result["final"], result["data"]
    print(f"{result['output']}: program model of {m['layers']} layer(s), {m['cat_heads']} categorical + "
          f"{m['num_heads']} counting head(s) and {m['mlps']} table MLP(s) per layer, {result['params']:,} "
          f"parameters; {result['steps']} steps in {result['seconds']:.1f} s (stopped: {result['stopped']})")
    print(f"the learned program on held-out inputs: {100 * f['test']['test_acc']:.1f}% per position, "
          f"{100 * f['test']['test_seq_acc']:.1f}% per sequence ({d['test']} inputs; trained on {d['train']})")
    print(f"its analysis: {lp['layers']} layer(s), heads per layer {lp['heads']}")
    if args.emit:
        print(f"wrote the learned program to {args.emit}")
    else:
        print()
        print(lp["source"], end="" if lp["source"].endswith("\n") else "\n")
    return 0
