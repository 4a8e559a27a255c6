"""`tracr.compiler.lib` under rasplay's alias: every program of Tracr's lib.py, written for Tracr's
`rasp` API from lib.py's documentation (rasplay's own code, not Tracr's), with lib.py's names and
arguments. `from tracr.compiler import lib` gives this module once `rasplay.tracr.install_alias()` ran.
"""
from . import tracr_rasp as rasp


def make_length():
    """The number of tokens, at every position: the width of a selector that selects everything."""
    everything = rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.TRUE).named("all_true")
    return rasp.SelectorWidth(everything).named("length")


def make_reverse(sop):
    """sop read backwards: position i takes the value at length - 1 - i."""
    mirror = (make_length() - rasp.indices).named("length_minus_index")
    mirror = (mirror - 1).named("mirror")
    read_mirror = rasp.Select(rasp.indices, mirror, rasp.Comparison.EQ).named("read_mirror")
    return rasp.Aggregate(read_mirror, sop).named("reverse")


def make_frac_prevs(bools):
    """At each position, the fraction of positions up to it where `bools` is true."""
    up_to_here = rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.LEQ).named("up_to_here")
    return rasp.numerical(rasp.Aggregate(up_to_here, rasp.numerical(bools), default=0)).named("frac_prevs")


def make_pair_balance(sop, open_token, close_token):
    """Fraction of opening tokens so far minus the fraction of closing tokens so far."""
    opens = rasp.numerical(make_frac_prevs(sop == open_token)).named("opens")
    closes = rasp.numerical(make_frac_prevs(sop == close_token)).named("closes")
    return rasp.numerical(rasp.LinearSequenceMap(opens, closes, 1, -1)).named("pair_balance")


def make_shuffle_dyck(pairs):
    """True at every position when every kind of bracket in `pairs` (strings like "()") is balanced on its
    own and no prefix closes more than it opened; else False."""
    balances = [make_pair_balance(rasp.tokens, p[0], p[1]).named(f"balance_{i}") for i, p in enumerate(pairs)]
    negative = balances[0] < 0
    zero = balances[0] == 0
    for b in balances[1:]:
        negative = rasp.SequenceMap(lambda a, c: a or c, negative, b < 0)
        zero = rasp.SequenceMap(lambda a, c: a and c, zero, b == 0)
    negative = rasp.numerical(rasp.Map(lambda x: 1 if x else 0, negative.named("any_negative"))).named("negative01")
    everything = rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.TRUE).named("everywhere")
    has_negative = rasp.numerical(rasp.Aggregate(everything, negative, default=0)).named("has_negative")
    last = rasp.Select(rasp.indices, make_length() - 1, rasp.Comparison.EQ).named("last_position")
    zero_at_end = rasp.Aggregate(last, zero.named("all_zero"), default=False).named("zero_at_end")
    no_negative = rasp.Map(lambda h: not h, has_negative).named("no_negative")
    return rasp.SequenceMap(lambda z, n: z and n, zero_at_end, no_negative).named("shuffle_dyck")


def make_shuffle_dyck2():
    """Shuffle-Dyck with () and {}."""
    return make_shuffle_dyck(["()", "{}"]).named("shuffle_dyck2")


def make_hist():
    """How often each position's token occurs in the input."""
    same = rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.EQ).named("same_token")
    return rasp.SelectorWidth(same).named("hist")


def make_sort_unique(vals, keys):
    """vals ordered by keys (keys all different): a key's place is the number of smaller keys."""
    smaller = rasp.Select(keys, keys, rasp.Comparison.LT).named("smaller")
    place = rasp.SelectorWidth(smaller).named("place")
    goes_here = rasp.Select(place, rasp.indices, rasp.Comparison.EQ).named("goes_here")
    return rasp.Aggregate(goes_here, vals).named("sort_unique")


def make_sort(vals, keys, *, max_seq_len, min_key):
    """vals ordered by numerical keys that may repeat: each key gets a position-dependent offset
    below min_key so that all keys differ and ties keep their input order."""
    unique = rasp.SequenceMap(lambda k, i: k + min_key * i / max_seq_len, keys, rasp.indices).named("unique_keys")
    return make_sort_unique(vals, unique).named("sort")


def make_sort_freq(max_seq_len):
    """Tokens from the most to the least frequent; equally frequent ones in input order."""
    minus_hist = (-1 * make_hist()).named("minus_hist")
    return make_sort(rasp.tokens, minus_hist, max_seq_len=max_seq_len, min_key=1).named("sort_freq")


def shift_by(offset, sop):
    """sop moved `offset` positions to the right; the first `offset` positions have no value (None)."""
    back = rasp.Select(rasp.indices, rasp.indices, lambda k, q: k == q - offset).named(f"back_{offset}")
    return rasp.Aggregate(back, sop, default=None).named(f"shift_by_{offset}")


def detect_pattern(sop, pattern):
    """True where `pattern` ends at that position, False elsewhere, None in the first len-1 positions."""
    n = len(pattern)
    found = None
    for j, value in enumerate(pattern):
        here = sop if j == n - 1 else shift_by(n - 1 - j, sop)
        matches = (here == value).named(f"matches_{j}")
        found = matches if found is None else rasp.SequenceMap(lambda a, b: a and b, found, matches)
    return found.named("detect_pattern")


def make_count_less_freq(n):
    """How many positions hold a token that occurs at most n times (lib.py's examples count those)."""
    hist = make_hist()
    rare = rasp.Select(hist, hist, lambda k, q: k <= n).named("rare")
    return rasp.SelectorWidth(rare).named("count_less_freq")


def make_count(sop, token):
    """How many positions of sop hold `token`, at every position."""
    is_token = rasp.Select(sop, sop, lambda k, q: k == token).named(f"is_{token}")
    return rasp.SelectorWidth(is_token).named(f"count_{token}")


def make_nary_sequencemap(f, *sops):
    """f of several s-ops at each position: pairs grow into tuples by binary SequenceMaps, then a Map."""
    packed = sops[0]
    for sop in sops[1:]:
        packed = rasp.SequenceMap(lambda acc, y: (*acc, y) if isinstance(acc, tuple) else (acc, y), packed, sop)
    return rasp.Map(lambda t: f(*t), packed)


length = make_length()
