"""The `rasplay` command: its parser (one sub-command a module of this folder) and the dispatch."""
from __future__ import annotations

import argparse
import sys

from . import compile, dialect, evaluate, exercise, learn, serve, store, train, worker

COMMANDS = (evaluate, serve, train, exercise, compile, store, worker, dialect, learn)   # in the order of --help


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rasplay", description="A visual playground for RASP.")
    sub = parser.add_subparsers(dest="command", required=True)
    for command in COMMANDS:
        command.add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
