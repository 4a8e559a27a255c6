"""What the replicas and `rasplay worker` share to meet through Celery: the queues' and tasks' names, the
key of a live worker, and the Celery application (Redis as broker; imported by training_board.py and
heavy_queue.py on the replicas' side and by celery_app.py on the worker's)."""
from __future__ import annotations

TRAIN_QUEUE = "rasplay-train"
HEAVY_QUEUE = "rasplay-heavy"
TRAIN_TASK = "rasplay.train"
HEAVY_TASK = "rasplay.heavy"
WORKER_KEY = "rasplay:worker:"   # + QUEUE:NAME, renewed every second by each live worker
RESULT_PREFIX = "celery-task-meta-"   # Celery's key of a task's result in its Redis result backend
QUEUES = {"train": TRAIN_QUEUE, "heavy": HEAVY_QUEUE}


def make_app(url: str, results: bool = True):
    """The Celery application: Redis at `url` as the broker (and the result backend, for workers: the
    replicas read results from Redis themselves, see RemotePool, since Celery's own result reader is
    neither async nor safe across threads)."""
    from celery import Celery

    app = Celery("rasplay", broker=url, backend=url if results else None, set_as_current=False)
    app.conf.update(
        task_serializer="json", result_serializer="json", accept_content=["json"],
        task_default_queue=HEAVY_QUEUE, task_routes={TRAIN_TASK: {"queue": TRAIN_QUEUE},
                                                     HEAVY_TASK: {"queue": HEAVY_QUEUE}},
        worker_prefetch_multiplier=1,       # a worker takes a task only when a thread is free for it
        task_acks_late=False,               # a job whose worker died is failed (lease), not run twice
        result_expires=600, task_track_started=True,
        broker_connection_retry_on_startup=True, broker_connection_timeout=5,
        broker_transport_options={"socket_timeout": 10, "socket_connect_timeout": 5},
        redis_socket_timeout=10, redis_socket_connect_timeout=5,
        task_publish_retry_policy={"max_retries": 2, "interval_start": 0.2, "interval_step": 0.5},
        worker_hijack_root_logger=False, worker_send_task_events=False,
    )
    return app
