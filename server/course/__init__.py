"""Course mode (docs/deploy.md): what replicas of a course share, imported only when `rasplay serve` is
given --store, --redis or --broker (the `course` extra): the PostgreSQL store, the Redis write buckets,
the Celery app run by `rasplay worker`, the heavy queue and the training board."""
