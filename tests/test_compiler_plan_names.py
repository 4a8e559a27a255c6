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
