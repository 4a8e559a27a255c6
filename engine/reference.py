"""The language reference: one entry for every built-in function, built-in s-op and standard-library name
(the lists of vocabulary.py), each with its signature, a one-line meaning and a small runnable example
(a program and the input it runs on). The browser shows it (Help, and hovering a name in the editor) from
GET /api/v1/language/reference; docs/language.md is the long form. tests/test_reference_entries.py checks
that every name the engine defines has an entry, that no entry names something the engine lacks, and that
every example runs through the evaluator without an error.
"""
from __future__ import annotations

import functools

# (name, kind, signature, meaning, example program, example input: a string, one token per character, or
# a list of tokens). kind: "built-in" (a function the
# interpreter defines, or `select`, a word of the grammar used as one), "input" (a built-in s-op) or
# "library" (defined in RASP in library.rasp).
_ENTRIES = [
    ("select", "built-in", "select(keys, queries, op)",
     "A selector: query q selects key k where keys[k] op queries[q] (op is == != < > <= >=).",
     "flip = select(indices, length - indices - 1, ==);", "abc"),
    ("aggregate", "built-in", "aggregate(sel, sop, default=0)",
     "Each query's value from the keys it selects: one key gives its value, several their mean, none the default.",
     "reverse = aggregate(select(indices, length - indices - 1, ==), tokens);", "abc"),
    ("selector_width", "built-in", "selector_width(sel)",
     "How many keys each query selects (one head).",
     "same = selector_width(select(tokens, tokens, ==));", "hello"),
    ("select_closest", "built-in", "select_closest(keys, queries, op) / select_closest(sel)",
     "A rasplay extension (learned programs): of the keys a query selects, only the closest; position 0 if none.",
     "nearest_a = select_closest(tokens, \"a\", ==);\nfrom_a = aggregate(nearest_a, indices);", "abbab"),
    ("aggregate_sum", "built-in", "aggregate_sum(sel, sop)",
     "A rasplay extension (learned programs): the sum of the values each query selects, 0 where none.",
     "before = aggregate_sum(select(indices, indices, <), indices);", "abcd"),
    ("round", "built-in", "round(x)",
     "Python's rounding to an int, elementwise (halves go to the even number: round(2.5) is 2).",
     "half = round(indices / 2);", "abcde"),
    ("indicator", "built-in", "indicator(x)",
     "1 where x is true, else 0, elementwise.",
     "is_l = indicator(tokens == \"l\");", "hello"),
    ("len", "built-in", "len(x)",
     "The number of elements of a list, string or dict (a value, not an s-op: use length for the input's).",
     "n = len([10, 20, 30]);\nplus_n = indices + n;", "abc"),
    ("range", "built-in", "range(stop) / range(start, stop[, step])",
     "The list of ints from start (0) up to, not including, stop: for loops and comprehensions.",
     "squares = [i * i for i in range(4)];\nlooked_up = squares[indices];", "abcd"),
    ("zip", "built-in", "zip(a, b, ...)",
     "The tuples of the lists' (or strings') elements side by side, stopping at the shortest.",
     "code = {k: v for k, v in zip(\"abc\", [1, 2, 3])};\nnumbers = code[tokens];", "cab"),
    ("tokens", "input", "tokens",
     "The input's tokens as given (characters of a string, or a JSON list's elements); may be reassigned.",
     "is_a = tokens == \"a\";", "banana"),
    ("indices", "input", "indices",
     "Each position's index: 0, 1, 2, ...",
     "from_end = length - indices - 1;", "abcd"),
    ("tokens_asis", "input", "tokens_asis",
     "The tokens exactly as given (what tokens is unless reassigned).",
     "same = tokens_asis == tokens;", "abc"),
    ("tokens_str", "input", "tokens_str",
     "Python's str of each token.",
     "joined = tokens_str + \"!\";", [1, 2, 3]),
    ("tokens_int", "input", "tokens_int",
     "Python's int of each token (a token that is not an int is an error for that input).",
     "doubled = tokens_int * 2;", "123"),
    ("tokens_float", "input", "tokens_float",
     "Python's float of each token.",
     "halves = tokens_float / 2;", "123"),
    ("tokens_bool", "input", "tokens_bool",
     "Python's bool of each token (a non-empty string is true).",
     "truth = tokens_bool;", [0, 1, 2]),
    ("full_s", "library", "full_s",
     "The selector in which every query selects every key.",
     "total = selector_width(full_s);", "abc"),
    ("length", "library", "length",
     "The number of tokens, at every position (1 layer, 1 head).",
     "n = length;", "hello"),
    ("has_focus", "library", "has_focus(sel)",
     "Does each query select at least one key?",
     "has_left = has_focus(select(indices, indices, <));", "abc"),
    ("count", "library", "count(sop, val)",
     "How many positions k have sop[k] == val (val a value or an s-op), at every position.",
     "ls = count(tokens, \"l\");", "hello"),
    ("contains", "library", "contains(sop, val)",
     "Is there a position k with sop[k] == val? At every position.",
     "has_z = contains(tokens, \"z\");", "lazy"),
    ("max", "library", "max(a, b)",
     "The larger of a and b, elementwise (s-ops or values).",
     "at_least_2 = max(indices, 2);", "abcde"),
    ("min", "library", "min(a, b)",
     "The smaller of a and b, elementwise (s-ops or values).",
     "at_most_2 = min(indices, 2);", "abcde"),
    ("average", "library", "average(sop)",
     "The mean of a numeric s-op over all positions, at every position.",
     "mean_index = average(indices);", "abcd"),
    ("load_from_location", "library", "load_from_location(sop, i)",
     "The value at position i (a value or an s-op), at every position.",
     "first = load_from_location(tokens, 0);", "hello"),
    ("shift", "library", "shift(sop, n, filler)",
     "The value n positions earlier; the first n positions get filler.",
     "previous = shift(tokens, 1, \"_\");", "hello"),
    ("mark_first_instance", "library", "mark_first_instance(sop, val)",
     "True where sop holds val for the first time.",
     "first_l = mark_first_instance(tokens, \"l\");", "hello"),
    ("mark_last_instance", "library", "mark_last_instance(sop, val)",
     "True where sop holds val for the last time.",
     "last_l = mark_last_instance(tokens, \"l\");", "hello"),
    ("select_from_first", "library", "select_from_first(sop, val)",
     "A selector in which every query selects the first position holding val.",
     "first_a_at = aggregate(select_from_first(tokens, \"a\"), indices);", "banana"),
    ("select_from_last", "library", "select_from_last(sop, val)",
     "A selector in which every query selects the last position holding val.",
     "last_a_at = aggregate(select_from_last(tokens, \"a\"), indices);", "banana"),
    ("sort", "library", "sort(sop, key)",
     "sop reordered by key, ties kept in input order (a stable sort, 2 layers).",
     "sorted_tokens = sort(tokens, tokens);", "banana"),
    ("select_next_identical", "library", "select_next_identical(sop)",
     "A selector in which each query selects the next position holding the same value.",
     "next_same_at = aggregate(select_next_identical(tokens), indices, -1);", "banana"),
]


@functools.lru_cache(maxsize=1)
def reference() -> list[dict]:
    """The entries, in the order of _ENTRIES (built-ins, inputs, library), as dicts: name, kind,
    signature, meaning, example (a program) and input (the input the example runs on: a string or a list)."""
    keys = ("name", "kind", "signature", "meaning", "example", "input")
    return [dict(zip(keys, entry)) for entry in _ENTRIES]
