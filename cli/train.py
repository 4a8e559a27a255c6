"""`rasplay train FILE`: train a small transformer on a program's task (torch, the rasplay[train] extra) and
match its heads to the program's selectors; or `--import-attention MAPS` to score another tool's maps."""
from __future__ import annotations

import json
import sys

from .common import parse_vocab, read_program


def add_parser(sub) -> None:
    p = sub.add_parser("train", help="train a transformer on a program's task and match its heads to the selectors")
    p.add_argument("file", help="the program (.rasp), or - for standard input")
    p.add_argument("--output", help="the s-op to learn (default: the '# output:' header, else the last s-op)")
    p.add_argument("--vocab", default="abcdefgh", help="input tokens: characters (abc) or a JSON list (default abcdefgh)")
    p.add_argument("--min-len", type=int, default=1, help="shortest input (default 1)")
    p.add_argument("--max-len", type=int, default=16, help="longest input (default 16)")
    p.add_argument("--train-lengths", metavar="LO-HI", help="training lengths, e.g. 1-20 (sets --min-len and --max-len)")
    p.add_argument("--test-lengths", metavar="LO-HI",
                   help="longer held-out lengths, e.g. 21-60: accuracy per length and per bin (docs/length_generalization.md)")
    p.add_argument("--blocks", type=int, metavar="N",
                   help="inputs as 1..N runs of one token (a+b+a+..., as the L_k data of Yang et al.), not uniform tokens")
    p.add_argument("--bin-width", type=int, help="lengths per test bin (default: the training range's width)")
    p.add_argument("--positional", choices=["learned", "random_offset", "none"],
                   help="position encoding: learned (default), random_offset (learned, trained at random offsets), none")
    p.add_argument("--causal", action="store_true", help="a causal (decoder) mask: each position sees itself and before")
    p.add_argument("--device", choices=["cpu", "cuda", "auto"], help="where to train (default cpu; auto: cuda when present)")
    p.add_argument("--n-train", type=int, help="training inputs sampled (default 20000)")
    p.add_argument("--n-test", type=int, help="held-out inputs (default 1000; with --test-lengths, also per test bin)")
    p.add_argument("--no-bos", action="store_true", help="no BOS token at position 0")
    p.add_argument("--layers", type=int, help="layers (default: the program's analysis)")
    p.add_argument("--heads", type=int, help="heads per layer (default: the analysis' largest layer)")
    p.add_argument("--d-model", type=int, help="residual width (default 64)")
    budget = p.add_mutually_exclusive_group()
    budget.add_argument("--steps", type=int, help="training steps (default 2000)")
    budget.add_argument("--time-budget", type=float, help="seconds of training instead of a step count")
    p.add_argument("--batch-size", type=int, help="inputs per step (default 64)")
    p.add_argument("--lr", type=float, help="AdamW learning rate (default 1e-3)")
    p.add_argument("--supervise", action="store_true",
                   help="pull each head's attention towards its selector's pattern (the paper's method)")
    p.add_argument("--stop-at", type=float, help="stop once held-out per-sequence accuracy reaches this (0-1)")
    p.add_argument("--seed", type=int, help="random seed (default 0)")
    p.add_argument("--threads", type=int, help="CPU threads for torch (default 1)")
    p.add_argument("--example", help="the input whose attention maps are shown (default: a held-out input)")
    p.add_argument("--init", help="start from these weights (.pt or .npz, docs/weights.md), e.g. a compiled model")
    p.add_argument("--import-attention", metavar="MAPS",
                   help="do not train: score attention maps from another tool (.json or .npz) against the selectors")
    p.add_argument("--json", action="store_true", help="print only the result, as one JSON object")
    p.add_argument("-o", metavar="MODEL", help="save the trained model (.pt, or .npz)")
    p.add_argument("--mode", choices=["standard", "program"],
                   help="standard (default): a transformer; program: a constrained transformer read back as a "
                        "RASP program (docs/learned_programs.md)")
    p.add_argument("--num-heads", type=int, help="program mode: counting heads per layer (default 1)")
    p.add_argument("--mlps", type=int, help="program mode: table MLPs per layer (default 1)")
    p.add_argument("--eos", action="store_true", help="program mode: an end token </s> after each input")
    p.add_argument("--emit", metavar="OUT.rasp", help="program mode: write the learned program to this file")
    p.set_defaults(func=run)


def _pct(x) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def _print_matches(matches: list[dict]) -> None:
    print("selector matches (mean attention mass on the selected keys, per query row that selects):")
    if not matches:
        print("  (the output uses no selectors)")
    width = max((len(m["name"]) for m in matches), default=0)
    for m in matches:
        paired = (f"head {m['head']}: {m['score']:.3f}" if m["head"] is not None and m["score"] is not None
                  else "no head in that layer")
        b = m["best"]
        best = f"   (best: layer {b['layer']} head {b['head']}, {b['score']:.3f})" if b["score"] is not None else ""
        if m.get("score_without_bos") is not None:
            paired += f", {m['score_without_bos']:.3f} without BOS"
        print(f"  layer {m['layer']}  {m['name']:<{width}}  {paired}{best}")


def _length_options(args) -> dict:
    from ..engine.train.lengths import parse_range

    out = {"n_train": args.n_train, "n_test": args.n_test, "bin_width": args.bin_width, "blocks": args.blocks,
           "positional": args.positional, "causal": args.causal or None, "device": args.device}
    if args.train_lengths:
        out["min_len"], out["max_len"] = parse_range(args.train_lengths, "--train-lengths")
    if args.test_lengths:
        out["test_min_len"], out["test_max_len"] = parse_range(args.test_lengths, "--test-lengths")
    return out


def _print_lengths(doc: dict) -> None:
    lf = doc["compiled"]["length_free"]
    lf_bins = {(b["lo"], b["hi"]): b["seq_acc"] for b in lf.get("bins", [])}
    print(f"accuracy by length ({doc['positional']} positions, {'causal' if doc['causal'] else 'bidirectional'}, "
          f"on {doc['device']}): per position / per sequence; the length-free compiled model per sequence")
    for b in doc["bins"]:
        where = "held out by length" if b["held_out"] else "training lengths"
        compiled = _pct(lf_bins.get((b["lo"], b["hi"]))) if lf["available"] else "-"
        print(f"  {b['lo']:>4}-{b['hi']:<4} {_pct(b['acc']):>7} {_pct(b['seq_acc']):>7}   compiled {compiled:>7}"
              f"   ({b['count']} inputs, {where})")
    if not lf["available"]:
        print(f"  no length-free compiled model: {lf['reason']}")
    print(f"  a model compiled with max_len {doc['compiled']['max_len']['defined_up_to']} is defined up to that length")
    if doc["unseen_values"]:
        print(f"  {doc['unseen_values']} longer positions take a value training never showed (scored wrong)")


def run(args) -> int:
    import signal

    from ..engine.train import TrainError, overlay_imported, read_attention, torch_available

    source, load_dirs = read_program(args.file)
    try:
        if args.import_attention:
            doc = overlay_imported(source, read_attention(args.import_attention), args.output, load_dirs)
            if args.json:
                print(json.dumps(doc, ensure_ascii=False))
            else:
                print(f"{args.import_attention}: {doc['layers']} layers x {doc['heads']} heads on "
                      f"{len(doc['tokens'])} tokens; the program's {doc['output']} needs {doc['program_layers']} layers")
                _print_matches(doc["matches"])
            return 0
        if not torch_available():
            print("rasplay: training needs PyTorch: pip install 'rasplay[train]'", file=sys.stderr)
            return 1
        from ..engine.train import TrainConfig, train

        options = dict(vocab=parse_vocab(args.vocab), output=args.output, min_len=args.min_len,
                       max_len=args.max_len, bos=not args.no_bos, layers=args.layers, heads=args.heads,
                       d_model=args.d_model, steps=args.steps, time_budget=args.time_budget,
                       batch_size=args.batch_size, lr=args.lr, supervise=args.supervise, seed=args.seed,
                       stop_at=args.stop_at, threads=args.threads, mode=args.mode, num_heads=args.num_heads,
                       mlps=args.mlps, eos=args.eos or None)
        if args.emit and args.mode != "program":
            raise TrainError("--emit writes the program that --mode program learns; add --mode program")
        options.update(_length_options(args))
        if args.example is not None:
            options["example"] = parse_vocab(args.example) if args.example.startswith("[") else args.example
        config = TrainConfig(**{k: v for k, v in options.items() if v is not None}).validated()
        stop = {"now": False}
        signal.signal(signal.SIGINT, lambda *_: stop.update(now=True))
        last = {"t": -1.0}

        def progress(p):
            if args.json or p["point"] not in ("eval", "curve") or p["elapsed"] - last["t"] < 1.0:
                return
            if p["point"] == "curve":
                print(f"step {p['step']:>6}  {p['elapsed']:7.1f} s  loss {p['loss']:.4f}  tau {p['tau']:.3f}  "
                      f"program held-out {_pct(p['test_acc'])}  per sequence {_pct(p['test_seq_acc'])}", flush=True)
                return
            last["t"] = p["elapsed"]
            print(f"step {p['step']:>6}  {p['elapsed']:7.1f} s  loss {p['loss']:.4f}  train {_pct(p['train_acc'])}"
                  f"  held-out {_pct(p['test_acc'])}  per sequence {_pct(p['test_seq_acc'])}", flush=True)

        result = train(source, config, progress, lambda: stop["now"], load_dirs, init=args.init, save_path=args.o)
    except TrainError as e:
        print(f"rasplay: {e}", file=sys.stderr)
        return 1
    if result.get("mode") == "program":
        from .train_program import report
        return report(result, args)
    if args.json:
        print(json.dumps(result, ensure_ascii=False))
        return 0
    m, f = result["model"], result["final"]
    plural = lambda n, word: f"{n} {word}{'' if n == 1 else 's'}"
    print(f"{result['output']}: {plural(m['n_layers'], 'layer')} x {plural(m['n_heads'], 'head')}, d_model {m['d_model']}, "
          f"{result['params']:,} parameters; {result['steps']} steps in {result['elapsed']:.1f} s "
          f"(stopped: {result['stopped']})")
    d = result["data"]
    best = f" (the best checkpoint, step {f['step']}, kept)" if result.get("last", f)["step"] != f["step"] else ""
    print(f"held-out accuracy: {_pct(f['test_acc'])} per position, {_pct(f['test_seq_acc'])} per sequence{best} "
          f"({d['test']} inputs; trained on {d['train']}; {d['dropped']} sampled inputs dropped)")
    _print_matches(result["matches"])
    ex = result["example"]
    print(f"example: {ex['input']} -> {ex['prediction']} (program: {ex['target']})")
    if result.get("lengths"):
        _print_lengths(result["lengths"])
    if args.o:
        print(f"saved the model to {args.o}")
    return 0

