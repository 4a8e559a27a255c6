"""What a training job runs in its worker process (see server/training_jobs.py), and the request check done
before it is queued. Torch is imported only inside the job."""
from __future__ import annotations


def check(spec: dict) -> dict:
    """Validate a training request without torch (in an evaluation worker): the options, the program
    and its output s-op. Raises TrainError with a message for the user."""
    from ..engine.train import TrainConfig, load_task
    from ..engine.train.data import check_vocab

    from ..engine.train.memory import estimate_bytes

    config = TrainConfig.from_dict({k: v for k, v in spec["config"].items()})
    check_vocab(config.vocab)
    task = load_task(spec["source"], config.output)
    layers = config.layers if config.layers is not None else task.layers
    heads = config.heads or max(task.heads_per_layer or [1])
    return {"output": task.output, "layers": task.layers, "heads_per_layer": task.heads_per_layer,
            "memory": estimate_bytes(config, layers, heads)}


def compiled_init(init: dict, directory: str) -> str:
    """Compile the model to start from and write its weights where the trainer can load them."""
    import os

    from .. import engine

    model = engine.compile_spec(init["spec"])
    path = os.path.join(directory, f"{init['id']}.npz")
    model.export_npz(path)
    return path


def warm() -> None:
    """Run in a spare job process before it gets a job: import PyTorch and the trainer, and take one
    tiny training step, so that a job started in it begins training at once."""
    import torch

    from ..engine.train import torch_transformer as model_module
    from ..engine.train import run as _run  # noqa: F401  (the import is the point)

    torch.set_num_threads(1)
    config = model_module.ModelConfig(vocab=["a", "b", "<bos>"], max_len=4, d_model=8, n_layers=1, n_heads=1,
                                      output={"kind": "categorical", "classes": ["a", "b"]})
    net = model_module.TrainableTransformer(config)
    ids = torch.zeros((2, 4), dtype=torch.long)
    net(ids).sum().backward()
    torch.optim.AdamW(net.parameters()).step()


def run(spec: dict, emit, should_stop, workdir: str) -> dict:
    """Train (engine.train.train), streaming its progress as job events; with spec["init"], start from
    a compiled model's weights (written into the job's `workdir`, which the job manager removes)."""
    from ..engine.train import train

    if spec.get("init"):
        emit({"point": "phase", "phase": "init", "message": "compiling the program to start from its weights"})
    init = compiled_init(spec["init"], workdir) if spec.get("init") else None
    return train(spec["source"], spec["config"], progress=emit, should_stop=should_stop, init=init)
