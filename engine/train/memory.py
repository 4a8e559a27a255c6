"""An estimate of a training job's peak memory, from its options alone (torch-free, so the server can
refuse a job before queueing it). Float32 throughout; deliberately on the high side."""
from __future__ import annotations

from .config import TrainConfig

BASE_BYTES = 350 << 20       # python, numpy, torch and the engine, before any data
FLOAT = 4
PYTHON_TOKEN_BYTES = 64      # a token while the evaluator labels the sampled inputs (lists, arrays)


def estimate_bytes(config: TrainConfig, layers: int, heads: int) -> int:
    """Peak resident bytes of training `config` with `layers` x `heads`: the process, the parameters
    with their gradients and AdamW's two moments, the activations kept for one backward pass (and
    60% more while it runs), the attention maps extracted for head matching, and the data set."""
    if config.mode == "program":
        return _program_bytes(config, layers, heads)
    d, d_mlp = config.d_model, config.d_mlp or 4 * config.d_model
    T = config.longest + (1 if config.bos else 0)   # the position table reaches the longest test input
    vocab = len(config.vocab) + 2
    classes = max(64, vocab, T)
    params = layers * (4 * d * d + 2 * d * d_mlp + 9 * d + d_mlp) + (vocab + T) * d + (d + 1) * classes
    training_state = 4 * params * FLOAT
    batch = config.batch_size
    per_layer = batch * T * (10 * d + 3 * d_mlp) + 3 * batch * heads * T * T
    activations = 16 * (layers * per_layer + batch * T * (2 * d + classes)) * FLOAT // 10  # + the backward's own
    attention_maps = min(config.match_examples, config.n_test) * max(layers, 1) * heads * T * T * FLOAT
    inputs = config.n_train + config.n_test
    if config.test_min_len is not None:    # n_test longer inputs per test bin (engine/train/lengths.py)
        width = config.bin_width or (config.max_len - config.min_len + 1)
        inputs += config.n_test * -(-(config.test_max_len - config.test_min_len + 1) // width)
    data = inputs * T * (3 * 8 + PYTHON_TOKEN_BYTES)
    return BASE_BYTES + training_state + activations + attention_maps + data


def _program_bytes(config: TrainConfig, layers: int, heads: int) -> int:
    """Program mode (program_model.py): variables of d_var values per position, the MLPs' d_var^3 tables,
    and per head a (batch, T, T) match matrix; activations kept for the backward pass, doubled."""
    T = config.max_len + 1 + config.eos
    D = max(T, len(config.vocab) + 1 + config.eos)
    parts = heads + (config.num_heads if config.num_heads is not None else 1) + (config.mlps if config.mlps is not None else 1)
    n_vars = 2 + layers * parts
    params = layers * parts * (D ** 3 + D * D + 3 * n_vars) + n_vars * D * 64
    batch = config.batch_size
    activations = 2 * layers * parts * (6 * batch * T * T + 4 * batch * T * D * D + n_vars * batch * T * D) * FLOAT
    data = (config.n_train + config.n_test) * T * (3 * 8 + PYTHON_TOKEN_BYTES)
    return BASE_BYTES + 4 * params * FLOAT + activations + data
