"""What a training job runs in its worker process (see server/jobs.py), and the request check done
before it is queued. Torch is imported only inside the job."""
from __future__ import annotations


def check(spec: dict) -> dict:
    """Validate a training request without torch (in an evaluation worker): the options, the program
    and its output s-op. Raises TrainError with a message for the user."""
    from engine.train import TrainConfig, load_task

    config = TrainConfig.from_dict(dict(spec["config"]))
    task = load_task(spec["source"], config.output)
    return {"output": task.output, "layers": task.layers, "heads_per_layer": task.heads_per_layer}


def run(spec: dict, emit, should_stop) -> dict:
    """Train (engine.train.train), streaming its progress as job events."""
    from engine.train import train

    return train(spec["source"], spec["config"], progress=emit, should_stop=should_stop)
