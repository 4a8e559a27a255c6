"""Small Tracr programs (rasplay's own) whose values and compiled outputs are recorded from the real Tracr
(bench/tracr_record.py writes tests/fixtures/tracr_recorded.json) and checked under rasplay's alias
(tests/unit/test_tracr_fidelity.py). Each case: a builder, inputs to evaluate, and optionally (vocab, max_len)
to compile. The file imports `tracr` like any Tracr program, so it runs under both."""
from tracr.compiler import lib
from tracr.rasp import rasp


def none_then_mean():
    """A categorical Aggregate that may select nothing (None at position 0), a Map of it to numbers, and a
    numerical mean of that: the values must be the numbers' mean, never a mean of codes."""
    prev = rasp.Aggregate(rasp.Select(rasp.indices, rasp.indices, lambda k, q: k == q - 1), rasp.tokens).named("prev")
    prev_is_b = rasp.numerical(rasp.Map(lambda x: 1 if x == "b" else 0, prev)).named("prev_is_b")
    after_first = rasp.Select(rasp.indices, rasp.indices, lambda k, q: 0 < k <= q).named("after_first")
    return rasp.numerical(rasp.Aggregate(after_first, prev_is_b, default=0)).named("frac_prev_b")


def none_then_sequencemap():
    """None from a shift feeding a SequenceMap and a Map (None stays None)."""
    prev = lib.shift_by(1, rasp.tokens)
    both = rasp.SequenceMap(lambda a, b: (a, b), prev, rasp.tokens).named("pair")
    return rasp.Map(lambda p: p[0] == p[1], both).named("same_as_prev")


def categorical_mean():
    """A categorical Aggregate that selects several numbers: Tracr's evaluator averages them."""
    return rasp.Aggregate(rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.TRUE), rasp.tokens).named("mean")


def compare_none():
    """A comparison reading None: Tracr raises."""
    prev = lib.shift_by(1, rasp.tokens)
    return rasp.SelectorWidth(rasp.Select(prev, prev, rasp.Comparison.EQ)).named("width")


def custom_predicate_none():
    """A custom predicate receives None (no error unless it fails on None)."""
    prev = lib.shift_by(1, rasp.tokens)
    return rasp.SelectorWidth(rasp.Select(prev, rasp.tokens, lambda k, q: k is None or k == q)).named("width")


def full_plus_tokens():
    return (rasp.Full(3) + rasp.tokens).named("plus3")


def full_alone():
    return rasp.Full(3)


def constant_sop():
    return rasp.ConstantSOp([5, 6, 7]).named("c")


def mixed_vocab():
    return rasp.Map(lambda x: str(x) + "!", rasp.tokens).named("shout")


def mean_of_strings():
    """Several strings selected: Tracr raises (a mean of non-numbers)."""
    return rasp.Aggregate(rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.EQ), rasp.tokens).named("same")


def numerical_mean_of_strings():
    """Compiling a numerical aggregate of strings: Tracr refuses."""
    every = rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.LEQ)
    return rasp.numerical(rasp.Aggregate(every, rasp.tokens, default=0)).named("mean_tokens")


def tuple_values():
    pair = rasp.SequenceMap(lambda a, b: (a, b), rasp.tokens, rasp.indices).named("pair")
    return rasp.Aggregate(rasp.Select(rasp.indices, rasp.indices, lambda k, q: k == 0), pair).named("first_pair")


CASES = {
    "none_then_mean": (none_then_mean, ["a", "b", "ab", "bb", "abb", "bab", "ac", "bbbb", "abab"], ("ab", 4)),
    "none_then_sequencemap": (none_then_sequencemap, ["a", "aa", "ab", "aab", "abba"], ("ab", 4)),
    "categorical_mean": (categorical_mean, [[1, 2], [1, 1], [2, 3, 3], [4]], None),
    "compare_none": (compare_none, ["ab", "a"], None),
    "custom_predicate_none": (custom_predicate_none, ["ab", "aab", "a"], None),
    "full_plus_tokens": (full_plus_tokens, [[1, 2, 3], [0]], ([0, 1, 2, 3], 3)),
    "full_alone": (full_alone, ["abc", "a"], None),
    "constant_sop": (constant_sop, ["abc", "ab"], None),
    "mixed_vocab": (mixed_vocab, [[1, "a", True], ["b"]], None),
    "mean_of_strings": (mean_of_strings, ["ab", "aa"], None),
    "numerical_mean_of_strings": (numerical_mean_of_strings, [], ("ab", 3)),
    "tuple_values": (tuple_values, ["ab", "ba", "bb"], ("ab", 3)),
}

# lib.py's programs with arguments (name -> builder, inputs, (vocab, max_len))
LIB = {
    "make_length": (lambda: lib.make_length(), ["abc", "a", "abca"], ("abc", 5)),
    "make_reverse": (lambda: lib.make_reverse(rasp.tokens), ["abc", "a", "abca"], ("abc", 5)),
    "make_hist": (lambda: lib.make_hist(), ["abac", "a", "bbcc"], ("abc", 5)),
    "make_sort_unique": (lambda: lib.make_sort_unique(rasp.tokens, rasp.tokens), [[2, 4, 3, 1], [3, 1]],
                         ([1, 2, 3, 4], 4)),
    "make_sort": (lambda: lib.make_sort(rasp.tokens, rasp.tokens, max_seq_len=5, min_key=1), [[2, 4, 1, 2], [3, 3]],
                  ([1, 2, 3, 4], 5)),
    "make_sort_freq": (lambda: lib.make_sort_freq(5), [[2, 4, 2, 1], [1, 1, 3]], ([1, 2, 3, 4], 5)),
    "make_frac_prevs": (lambda: lib.make_frac_prevs(rasp.tokens == "l"), ["hello", "l", "lol"], ("helo", 5)),
    "make_pair_balance": (lambda: lib.make_pair_balance(rasp.tokens, "(", ")"), ["a()b(c))", "((", ")("],
                          ("()ab", 5)),
    "make_shuffle_dyck": (lambda: lib.make_shuffle_dyck(["()"]), ["()", "(()", ")(", "(())"], ("()", 5)),
    "make_shuffle_dyck2": (lambda: lib.make_shuffle_dyck2(), ["({)}", "(){)}", "{}"], ("(){}", 5)),
    "shift_by": (lambda: lib.shift_by(2, rasp.tokens), ["abcd", "a", "abc"], ("abcd", 5)),
    "detect_pattern": (lambda: lib.detect_pattern(rasp.tokens, "abc"), ["abcabc", "ab", "cabc"], ("abc", 6)),
    "make_count_less_freq": (lambda: lib.make_count_less_freq(2), ["aaabbc", "aacbbc", "a"], ("abc", 6)),
    "make_count": (lambda: lib.make_count(rasp.tokens, "a"), ["aaabbc", "cabc"], ("abc", 6)),
    "make_nary_sequencemap": (lambda: lib.make_nary_sequencemap(lambda x, y, z: x + y - z, rasp.tokens, rasp.tokens,
                                                                rasp.indices), [[1, 2, 3], [3, 3]], ([1, 2, 3], 3)),
}
