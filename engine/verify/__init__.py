"""Exercise verdicts that are proofs, for programs in causal B-RASP or causal C-RASP (docs/exercises.md):
"proved equal at every length", "different on this input", or "not proved: identical on every input up
to length N".

    model.py      a causal program as a machine reading one token at a time (its state: counters,
                  previous values, latest values per key)
    build.py      program text -> that machine, when the dialect check puts it in the fragments
    search.py     breadth-first search over the product of two machines: a shortest difference, or a
                  proof when the reachable states run out
    induction.py  counter machines (C-RASP) proved equal by k-induction with z3 (the optional extra
                  `verify`)
    verdict.py    the verdict of one check, every counterexample replayed through the evaluator
"""
