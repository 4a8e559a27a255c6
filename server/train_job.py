"""What a training job runs in its worker process (see server/jobs.py), and the request check done
before it is queued. Torch is imported only inside the job."""
from __future__ import annotations


def check(spec: dict) -> dict:
    """Validate a training request without torch (in an evaluation worker): the options, the program
    and its output s-op. Raises TrainError with a message for the user."""
    from rasplay.engine.train import TrainConfig, load_task
    from rasplay.engine.train.data import check_vocab

    from rasplay.engine.train.memory import estimate_bytes

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

    from rasplay import engine

    model = engine.compile_spec(init["spec"])
    path = os.path.join(directory, f"{init['id']}.npz")
    model.export_npz(path)
    return path


def run(spec: dict, emit, should_stop, workdir: str) -> dict:
    """Train (engine.train.train), streaming its progress as job events; with spec["init"], start from
    a compiled model's weights (written into the job's `workdir`, which the job manager removes)."""
    from rasplay.engine.train import train

    init = compiled_init(spec["init"], workdir) if spec.get("init") else None
    return train(spec["source"], spec["config"], progress=emit, should_stop=should_stop, init=init)
