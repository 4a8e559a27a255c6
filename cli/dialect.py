"""`rasplay dialect FILE`: which fragments a program belongs to (B-RASP, C-RASP, TL[#], length-free), each
with the line that keeps it out of the smaller ones (docs/every_length.md), and what the length-generalisation
results predict: C-RASP[periodic, local] (a theorem) and RASP-L (a conjecture), with the program's size
(docs/dialects.md)."""
from __future__ import annotations

import json

from .common import print_error, read_program


def add_parser(sub) -> None:
    p = sub.add_parser("dialect", help="which fragments a program belongs to (B-RASP, C-RASP, TL[#], length-free) and "
                                        "what that predicts for length generalisation (C-RASP[periodic, local], "
                                        "RASP-L)")
    p.add_argument("file", help="the program (.rasp), or - for standard input")
    p.add_argument("--output", help="the s-op to check (default: the '# output:' header, else the last s-op)")
    p.add_argument("--json", action="store_true", help="print the dialect document as JSON")
    p.set_defaults(func=run)


def run(args) -> int:
    from .. import engine

    source, load_dirs = read_program(args.file)
    try:
        doc = engine.check_dialect(source, args.output, load_dirs=load_dirs)
    except engine.RaspError as e:
        print_error(args.file, e)
        return 1
    if args.json:
        print(json.dumps(doc, ensure_ascii=False))
        return 0
    from .text_display import render_dialect
    print(render_dialect(args.file, doc))
    return 0

