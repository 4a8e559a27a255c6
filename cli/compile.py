"""`rasplay compile FILE --vocab V --max-len N` (or `--length-free`): compile a program (or a Tracr program,
`--tracr`) to transformer weights; `--check` compares with the evaluator, `--soft` the soft-attention study,
`-o` and `--export` write the weights."""
from __future__ import annotations

import json
import sys

from .common import add_tracr_options, parse_encodings, parse_vocab, print_error, read_program

EXPORT_FORMATS = ("transformer-lens", "onnx")


def add_parser(sub) -> None:
    p = sub.add_parser("compile", help="compile a RASP program to transformer weights")
    p.add_argument("file", help="the program (.rasp), or - for standard input")
    p.add_argument("--vocab", required=True, help="the input tokens: a string (one per character) or a JSON list")
    p.add_argument("--max-len", type=int, help="the longest input the model must handle (or --length-free)")
    p.add_argument("--length-free", action="store_true",
                   help="weights that do not depend on the length, for a program in the length-free fragment "
                        "(see `rasplay dialect`); --check then compares at lengths 1..8 and 16..4096")
    p.add_argument("--output", help="the s-op to compile (default: the '# output:' header, else the last s-op)")
    p.add_argument("--bos", default="<bos>", help="the BOS token (default <bos>)")
    p.add_argument("--encoding", action="append", metavar="NAME=ENC",
                   help="force an s-op's encoding: categorical or numerical (repeat for several)")
    p.add_argument("--check", action="store_true",
                   help="compare with the evaluator on every input up to --max-len (a seeded sample when there "
                        "are more than --check-limit)")
    p.add_argument("--check-limit", type=int, default=200_000, metavar="N",
                   help="--check tries every input when there are at most N in all (default 200,000)")
    p.add_argument("--causal", action="store_true",
                   help="compile a causal (autoregressive) model: every selector must look only backwards")
    p.add_argument("--no-reuse-residual", dest="reuse_residual", action="store_false",
                   help="every value keeps its own residual dimensions (wider, fewer non-zeros: no erasure "
                        "units); by default a value's dimensions go to a later value once nothing reads it")
    p.add_argument("--soft", action="store_true", help="also run the soft-attention study (smallest exact beta)")
    p.add_argument("--seed", type=int, default=0, help="seed of the sample for --check and --soft")
    p.add_argument("--json", action="store_true", help="print one JSON object (summary, check, soft)")
    p.add_argument("-o", dest="weights", metavar="MODEL.npz", help="write the weights and config (.npz)")
    p.add_argument("--export", nargs=2, metavar=("FORMAT", "PATH"),
                   help="also write the model for another tool: `--export transformer-lens DIR` (config.json, "
                        "state_dict.pt/.npz for TransformerLens), `--export onnx FILE.onnx` (an ONNX graph, "
                        "the onnx extra); docs/interop.md")
    p.add_argument("--onnx-dtype", choices=("float64", "float32"), default="float64",
                   help="--export onnx: the graph's float type (default float64)")
    p.add_argument("--onnx-attention", choices=("hard", "soft"), default="hard",
                   help="--export onnx: average-hard attention (default, the exact model) or softmax at the "
                        "model's attention scale")
    add_tracr_options(p)
    p.set_defaults(func=run)


def run(args) -> int:
    from .. import engine

    output, limits = args.output, None
    if args.export and args.export[0] not in EXPORT_FORMATS:
        print(f"rasplay: unknown export format {args.export[0]!r}; the formats are {', '.join(EXPORT_FORMATS)}",
              file=sys.stderr)
        return 2
    if args.export and args.export[0] == "onnx":
        from ..interop.onnx_graph import onnx_available
        if not onnx_available():
            print("rasplay: --export onnx needs the onnx package: pip install 'rasplay[onnx]'", file=sys.stderr)
            return 2
    if args.tracr:   # FILE.py:NAME, a Tracr program (runs its Python): see docs/interop.md
        from .tracr_option import lower_for_compile
        source, lowered_output, limits = lower_for_compile(args, parse_vocab(args.vocab))
        output, load_dirs = output or lowered_output, None
    else:
        source, load_dirs = read_program(args.file)
    if args.length_free or args.max_len is None:
        return _compile_length_free(args, source, output, load_dirs, limits)

    def build() -> dict:
        model = engine.compile(source, output, vocab=parse_vocab(args.vocab), max_len=args.max_len,
                               bos=args.bos, encodings=parse_encodings(args.encoding), load_dirs=load_dirs,
                               eval_limits=limits, causal=args.causal, reuse_residual=args.reuse_residual)
        if args.tracr:   # check() against Tracr's evaluation rules, not the lowered program
            from .tracr_option import tracr_model
            model = tracr_model(args, model)
        doc = {"summary": model.summary()}
        if args.check:
            doc["check"] = model.check(seed=args.seed, exhaustive_limit=args.check_limit)
        _soft_and_weights(args, model, doc)
        if args.export:
            doc["export"] = _export(args, model)
        return doc

    doc, code = _reporting_errors(args, build)
    if doc is None:
        return code
    if args.json:
        print(json.dumps(doc, ensure_ascii=False))
    else:
        from .text_display import render_compiled
        print(render_compiled(args.file, doc))
    ok = "check" not in doc or doc["check"]["agree"] == doc["check"]["inputs"]
    return 0 if ok else 1


def _export(args, model) -> dict:
    """--export FORMAT PATH: the model written for TransformerLens (a folder) or ONNX (a file)."""
    fmt, path = args.export
    if fmt == "onnx":
        from ..interop.onnx_graph import export_onnx
        export_onnx(model, path, dtype=args.onnx_dtype, attention=args.onnx_attention)
        return {"format": fmt, "file": path, "dtype": args.onnx_dtype, "attention": args.onnx_attention}
    from ..interop.export_tl import export_transformer_lens
    export_transformer_lens(model, path)
    return {"format": fmt, "dir": path}


def _soft_and_weights(args, model, doc: dict) -> None:
    """--soft (the soft-attention study) and -o (the weights), for either kind of model."""
    if args.soft:
        doc["soft"] = model.soft_study(seed=args.seed)
    if args.weights:
        model.export_npz(args.weights)
        doc["weights"] = args.weights


def _reporting_errors(args, build) -> tuple[dict | None, int]:
    """build()'s document and 0, or None and the exit code after saying what went wrong: the program's
    error with its line and column (1), a file that cannot be written (1), a bug in rasplay, without a
    traceback (2)."""
    from .. import engine
    from ..interop.onnx_graph import OnnxExportError

    try:
        return build(), 0
    except engine.RaspError as e:
        print_error(args.file, e)
        return None, 1
    except OnnxExportError as e:     # a model or an option the ONNX export refuses, with the reason
        print(f"rasplay: --export onnx: {e}", file=sys.stderr)
        return None, 2
    except OSError as e:
        print(f"rasplay: cannot write {e.filename or args.weights}: {e}", file=sys.stderr)
        return None, 1
    except Exception as e:  # a bug in rasplay: say so, without a traceback
        print(f"{args.file}: internal error: {type(e).__name__}: {e} (please report this)", file=sys.stderr)
        return None, 2


def _compile_length_free(args, source, output, load_dirs, limits) -> int:
    """`rasplay compile --length-free`: a model for every length (docs/every_length.md); --check compares it
    with the evaluator at lengths 1..8 (every input) and 16..4096 (seeded samples)."""
    from .. import engine
    from .text_display import render_length_free

    if not args.length_free:
        print("rasplay: compile needs --max-len N (or --length-free)", file=sys.stderr)
        return 2
    if (args.export and args.export[0] != "onnx") or args.encoding:
        print("rasplay: --export transformer-lens and --encoding apply to max_len models (a length-free model "
              "exports as --export onnx)", file=sys.stderr)
        return 2

    def build() -> dict:
        model = engine.compile(source, output, vocab=parse_vocab(args.vocab), bos=args.bos, load_dirs=load_dirs,
                               eval_limits=limits, causal=args.causal, length_free=True)
        doc = {"summary": model.summary()}
        if args.check:
            doc["check"] = model.check(seed=args.seed)
        _soft_and_weights(args, model, doc)
        if args.export:
            doc["export"] = _export(args, model)
        return doc

    doc, code = _reporting_errors(args, build)
    if doc is None:
        return code
    print(json.dumps(doc, ensure_ascii=False) if args.json else render_length_free(args.file, doc))
    return 0 if "check" not in doc or doc["check"]["all_agree"] else 1
