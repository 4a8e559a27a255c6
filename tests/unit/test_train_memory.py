"""The memory estimate of a training job (engine/train/memory.py), which the server compares with its limit
before queueing a job (tests/api/test_api_train_memory.py)."""


def test_the_memory_estimate_follows_the_model_and_batch():
    from rasplay.engine.train.config import TrainConfig
    from rasplay.engine.train.memory import estimate_bytes

    small = estimate_bytes(TrainConfig(vocab=list("abcdefgh")).validated(), 2, 1)
    big = estimate_bytes(TrainConfig(vocab=list("abcdefgh"), layers=12, heads=16, d_model=1024, batch_size=4096,
                                     max_len=128).validated(), 12, 16)
    assert small < 1 << 30 < 3 << 30 < big
    wider = estimate_bytes(TrainConfig(vocab=list("abcdefgh"), d_model=256).validated(), 2, 1)
    larger_batch = estimate_bytes(TrainConfig(vocab=list("abcdefgh"), batch_size=1024).validated(), 2, 1)
    assert small < wider and small < larger_batch
