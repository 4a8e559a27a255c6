"""The plan's numbering of sublayers and the names the compiler's reports give them (engine/compiler/plan.py):
-1 the embedding, 2l-1 the attention of layer l, 2m the MLP of layer m (0: the MLP before the first
attention, when there is one), and an offset that shifts the 1-based layer numbers of a model whose layer 1
is preceded by such an MLP."""
from rasplay.engine.compiler.plan import EMBEDDING, attn, mlp, sublayer_name


def test_the_sublayers_are_numbered_in_forward_order():
    assert [attn(1), mlp(1), attn(2), mlp(2), attn(3)] == [1, 2, 3, 4, 5]
    assert EMBEDDING == -1 < mlp(0) == 0 < attn(1)


def test_each_sublayer_has_its_layer_s_name():
    assert sublayer_name(EMBEDDING) == "embedding"
    assert sublayer_name(-5) == "embedding"
    for layer in range(1, 7):
        assert sublayer_name(attn(layer)) == f"layer {layer} attention"
        assert sublayer_name(mlp(layer)) == f"layer {layer} MLP"
    assert sublayer_name(mlp(0)) == "layer 0 MLP"


def test_an_offset_shifts_the_layer_numbers_but_not_the_embedding():
    for layer in range(0, 5):
        assert sublayer_name(mlp(layer), offset=1) == f"layer {layer + 1} MLP"
        assert sublayer_name(attn(layer + 1), offset=2) == f"layer {layer + 3} attention"
    assert sublayer_name(EMBEDDING, offset=3) == "embedding"


def _block(name, kind, written, provides=("x",), values=(0, 1, 2), phys=None):
    import numpy as np

    from rasplay.engine.compiler.plan import Block

    return Block(name=name, kind=kind, values=np.asarray(values), written=written, phys=phys,
                 provides={k: np.asarray(values) for k in provides})


def test_availability_prefers_a_categorical_block_of_its_own_then_the_value_itself_then_the_earliest():
    """The planner reads a value from the best block that holds it before a sublayer: a block of its own
    before a joint block, categorical before numerical, a number stored as itself before a coded one, then
    the earliest written; never one written at or after that sublayer, and only of the kind asked for."""
    import numpy as np

    from rasplay.engine.compiler.plan import Availability

    av = Availability({})
    joint = _block("joint", "categorical", 1, provides=("x", "y"))
    coded = _block("coded", "numerical", 1, phys=np.array([5.0, 6.0, 7.0]))
    itself = _block("itself", "numerical", 2)
    late_cat = _block("late", "categorical", 4)
    early_cat = _block("early", "categorical", 3)
    for b in (joint, coded, itself, late_cat, early_cat):
        av.register(b)
    assert [b.order for b in (joint, coded, itself, late_cat, early_cat)] == [1, 2, 3, 4, 5] and av.count == 5
    assert av.best("x", before=1) is None                       # nothing is written before sublayer 1
    assert av.best("x", before=2) is coded                      # own block before the joint one
    assert av.best("x", before=3) is itself                     # the value itself before a coded number
    assert av.best("x", before=4) is early_cat                  # categorical first
    assert av.best("x", before=5) is early_cat                  # then the earliest written
    assert av.best("x", before=5, kind="numerical") is itself   # only the kind asked for
    assert av.best("y", before=5) is joint and av.best("z", before=5) is None
    assert itself.identity and not coded.identity and not early_cat.identity
    assert early_cat.size == 3 and itself.size == 1
    assert early_cat.labels() == ["0", "1", "2"] and itself.labels() == ["itself"]


def test_the_one_and_bos_blocks_are_single_dimensions_named_as_themselves():
    """The embedding's constant blocks ("one", "bos") hold no values: each is one dimension labelled with its
    own name, and neither is a numerical block storing a value as itself."""
    from rasplay.engine.compiler.plan import EMBEDDING, Block

    for kind in ("one", "bos"):
        b = Block(kind, kind, None, {}, EMBEDDING)
        assert b.size == 1 and b.labels() == [kind] and not b.identity


def test_a_block_of_another_kind_is_never_returned_for_the_kind_asked():
    """Asked for a categorical block of a key held only as a number (or the other way round), the planner
    finds none rather than handing back a block of the wrong kind."""
    from rasplay.engine.compiler.plan import Availability

    av = Availability({})
    number = _block("number", "numerical", 1)
    letters = _block("letters", "categorical", 1, provides=("y",))
    av.register(number)
    av.register(letters)
    assert av.best("x", before=2, kind="categorical") is None
    assert av.best("y", before=2, kind="numerical") is None
    assert av.best("x", before=2, kind="numerical") is number and av.best("y", before=2, kind="categorical") is letters
