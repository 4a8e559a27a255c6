"""Training small transformers on a RASP program's task, and laying their attention over its selectors.

The torch-free parts (options, data, matching, imported maps) import without torch; the model, the
loop and the `train` pipeline need the optional extra: pip install 'rasplay[train]'.
"""
from .config import TrainConfig
from .data import BOS_TOKEN, Task, TaskData, load_task, make_data, program_on
from .errors import TrainError
from .imported import ImportedAttention, overlay_imported, read_attention, validate_attention
from .match import best_pairing, head_scores, match_heads, overlay

_TORCH_NAMES = {
    "train": "run", "build_model": "run", "extract_attention": "run", "attention_maps": "run", "predict": "run",
    "example_overlay": "run", "supervision_pairs": "run",
    "train_model": "loop",
    "TrainableTransformer": "torch_transformer", "ModelConfig": "torch_transformer", "load_model": "torch_transformer",
    "save_model": "torch_transformer",
    "model_from_state": "torch_transformer",
}


def torch_available() -> bool:
    try:
        import torch  # noqa: F401
    except ImportError:
        return False
    return True


def __getattr__(name):
    if name in _TORCH_NAMES:
        if not torch_available():
            raise TrainError("training needs PyTorch: pip install 'rasplay[train]'")
        import importlib
        return getattr(importlib.import_module(f".{_TORCH_NAMES[name]}", __name__), name)
    raise AttributeError(name)


__all__ = ["TrainConfig", "TrainError", "Task", "TaskData", "load_task", "make_data", "program_on", "BOS_TOKEN",
           "ImportedAttention", "read_attention", "validate_attention", "overlay_imported", "head_scores",
           "best_pairing", "match_heads", "overlay", "torch_available", *_TORCH_NAMES]
