"""Pass 5, allocate the residual stream (engine/compiler/residual.py), on a hand-built plan: fixed blocks
first, then the others by the sublayer that writes them."""
from support.compiler_plans import block, blocks

from rasplay.engine.compiler.residual import allocate_residual


def test_residual_allocation_orders_fixed_blocks_then_by_writer():
    from rasplay.engine.compiler.plan import Availability
    one, bos, tokens, x, out, cat = blocks()
    late, early = block("late", "categorical", [1, 2], -1, written=4), block("early", "numerical", None, -1,
                                                                             written=1)
    avail = Availability({})
    for b in (late, cat, early, tokens, bos, one):
        avail.register(b)

    class P:
        blocks = [late, cat, early, tokens, bos, one]
    width = allocate_residual(P)
    assert [b.name for b in P.blocks] == ["one", "bos", "tokens", "early", "cat", "late"]
    assert [b.start for b in P.blocks] == [0, 1, 2, 5, 6, 9]
    assert width == 11
