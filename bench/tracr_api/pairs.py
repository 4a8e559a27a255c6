"""The Tracr-API programs (lib_programs.py) and their RASP versions (bench/tracr_programs/*.rasp):
name in lib_programs -> (RASP file, vocabulary). Shared by the test and the size benchmark."""
PAIRS = {
    "length": ("length.rasp", "abc"),
    "reverse": ("reverse.rasp", "abc"),
    "frac_prevs": ("frac_prevs.rasp", "abc"),
    "pair_balance": ("pair_balance.rasp", "()"),
    "shuffle_dyck1": ("shuffle_dyck.rasp", "()"),
    "shuffle_dyck2": ("shuffle_dyck2.rasp", "(){}"),
    "histogram": ("histogram.rasp", "abc"),
    "sort_unique": ("sort_unique.rasp", "abc"),
    "sort": ("sort.rasp", [1, 2, 3]),
    "sort_freq": ("sort_freq.rasp", "abc"),
    "shift_by_2": ("shift_by.rasp", "abc"),
    "detect_abc": ("detect_pattern.rasp", "abc"),
    "count_less_freq": ("count_less_freq.rasp", "abc"),
    "count_a": ("count.rasp", "abc"),
    "nary_sum": ("nary_sequencemap.rasp", "123"),
}
