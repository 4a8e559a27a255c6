"""Program mode's options (torch-free): defaults, limits and the options it refuses, with clear messages."""
import pytest

from rasplay.engine.train import TrainConfig, TrainError
from rasplay.engine.train.config import PROGRAM_LR, STANDARD_LR
from rasplay.engine.train.memory import estimate_bytes


def cfg(**kw):
    return TrainConfig.from_dict({"vocab": "abc", "max_len": 4, **kw})


def test_mode_defaults_and_learning_rates():
    assert cfg().mode == "standard" and cfg().lr == STANDARD_LR
    p = cfg(mode="program")
    assert p.lr == PROGRAM_LR and p.eos is False and p.num_heads is None
    assert cfg(mode="program", lr=0.01).lr == 0.01


@pytest.mark.parametrize("options, message", [
    ({"mode": "programme"}, "mode must be one of standard, program"),
    ({"num_heads": 1}, "num_heads apply to program mode only"),
    ({"eos": True}, "eos apply to program mode only"),
    ({"mode": "program", "supervise": True}, "program mode does not take supervise"),
    ({"mode": "program", "test_min_len": 5, "test_max_len": 8}, "program mode does not take test_min_len"),
    ({"mode": "program", "device": "auto"}, "program mode does not take device"),
    ({"mode": "program", "kind": "numerical"}, "categorical outputs only"),
    ({"mode": "program", "bos": False}, "leave bos on"),
    ({"mode": "program", "layers": 5}, "at most 4 layers of 8 heads"),
    ({"mode": "program", "mlps": 5}, "mlps 5 is above program mode's limit of 4"),
    ({"mode": "program", "max_len": 40}, "inputs of at most 39 tokens"),
    ({"mode": "program", "max_len": 39, "eos": True}, "inputs of at most 38 tokens"),
    ({"mode": "program", "vocab": [1, 2]}, "program mode reads string tokens"),
    ({"mode": "program", "eos": "yes"}, "eos must be true or false"),
    ({"mode": "program", "num_heads": -1}, "num_heads must be an integer >= 0"),
])
def test_refusals_name_the_option(options, message):
    with pytest.raises(TrainError, match=message):
        cfg(**options)


def test_program_memory_estimate_grows_with_the_tables():
    small = estimate_bytes(cfg(mode="program"), 1, 1)
    large = estimate_bytes(cfg(mode="program", max_len=39, batch_size=512), 4, 8)
    assert small < large and large > 10 * (small - (350 << 20))
