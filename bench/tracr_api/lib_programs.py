"""Every program of Tracr's lib.py, written for Tracr's Python `rasp` API from lib.py's documentation
(rasplay's own code, not Tracr's). The file imports `from tracr.rasp import rasp`, as a Tracr
program does: run it through rasplay's alias (`rasplay eval --tracr bench/tracr_api/lib_programs.py:reverse`,
or `rasplay.tracr.install_alias()` before importing it).

The zero-argument functions at the end (`length`, `reverse`, ...) pick the arguments the RASP versions
in bench/tracr_programs/ use, so each pair can be compared value for value.
"""
from tracr.compiler.lib import *  # noqa: F401,F403 - the library programs, as Tracr names them
from tracr.compiler.lib import (detect_pattern, make_count, make_count_less_freq, make_frac_prevs, make_hist,  # noqa: F401
                                make_length, make_nary_sequencemap, make_pair_balance, make_reverse, make_shuffle_dyck,
                                make_shuffle_dyck2, make_sort, make_sort_freq, make_sort_unique, shift_by)
from tracr.rasp import rasp


# ------------------------------------------------------------------ the programs compared with bench/tracr_programs

def length():
    return make_length()


def reverse():
    return make_reverse(rasp.tokens)


def frac_prevs():
    return make_frac_prevs(rasp.tokens == "a")


def pair_balance():
    return make_pair_balance(rasp.tokens, "(", ")")


def shuffle_dyck2():
    return make_shuffle_dyck2()


def histogram():
    return make_hist()


def sort_unique():
    return make_sort_unique(rasp.tokens, rasp.tokens)


def sort(max_seq_len=10):
    """On numbers (Tracr's make_sort needs numerical keys): the bench compares it on the vocab 1, 2, 3."""
    return make_sort(rasp.tokens, rasp.tokens, max_seq_len=max_seq_len, min_key=1)


def sort_freq(max_seq_len=10):
    return make_sort_freq(max_seq_len=max_seq_len)


def shift_by_2():
    return shift_by(2, rasp.tokens)


def detect_abc():
    return detect_pattern(rasp.tokens, "abc")


def count_less_freq():
    return make_count_less_freq(2)


def count_a():
    return make_count(rasp.tokens, "a")


def nary_sum():
    """int(tokens) + indices + length as one 3-ary SequenceMap (tuples inside), on the digits "123"."""
    return make_nary_sequencemap(lambda a, b, c: int(a) + b + c, rasp.tokens, rasp.indices, make_length())


def shuffle_dyck1():
    return make_shuffle_dyck(["()"])
