"""Breadth-first search over the product of two programs' states: the shortest input on which their
targets differ, a proof that they never do (every reachable state explored: the machines are
finite), or "identical on every input up to length N" when the bound or the time runs out."""
from __future__ import annotations

import time
from dataclasses import dataclass

from ..exercises.grading import same_values
from .model import ERROR, Product


class ReferenceFails(Exception):
    """The reference fails on an input (its file's own check did not reach it)."""

    def __init__(self, tokens: list):
        super().__init__(tokens)
        self.tokens = tokens


@dataclass
class Search:
    outcome: str                 # proved | different | bounded
    tokens: list | None = None   # different: the shortest input that tells them apart
    length: int = 0              # bounded: every input up to this length is identical; proved: depth explored
    states: int = 0


def differ(a, b) -> bool:
    if a is ERROR or b is ERROR:
        return a is not b
    return not same_values([a], [b])


def _path(parents: dict, state, token) -> list:
    out = [token]
    while parents[state] is not None:
        state, t = parents[state]
        out.append(t)
    return out[::-1]


class Searcher:
    """The search, resumable: run() goes on from where the last call stopped."""

    def __init__(self, product: Product, max_states: int = 2_000_000):
        self.product, self.max_states = product, max_states
        start = product.initial()
        self.parents: dict = {start: None}
        self.frontier = [start]
        self.length = 0                      # every input up to this length has been read
        self.done: Search | None = None

    def run(self, max_length: int, deadline: float) -> Search:
        if self.done is not None:
            return self.done
        product, parents = self.product, self.parents
        while self.length < max_length:
            nxt = []
            for state in self.frontier:
                for t in product.alphabet:
                    new, (ref, mine) = product.step(state, t)
                    if ref is ERROR:
                        raise ReferenceFails(_path(parents, state, t))
                    if differ(ref, mine):
                        self.done = Search("different", _path(parents, state, t), self.length + 1, len(parents))
                        return self.done
                    if new not in parents:
                        parents[new] = (state, t)
                        nxt.append(new)
                if time.monotonic() > deadline or len(parents) > self.max_states:
                    return Search("bounded", None, self.length, len(parents))   # this length unfinished
            self.length += 1
            if not nxt:
                self.done = Search("proved", None, self.length, len(parents))
                return self.done
            self.frontier = nxt
        return Search("bounded", None, self.length, len(parents))


def search(product: Product, max_length: int, deadline: float, max_states: int = 2_000_000) -> Search:
    """The search up to inputs of max_length tokens (or the deadline, or max_states states)."""
    return Searcher(product, max_states).run(max_length, deadline)
