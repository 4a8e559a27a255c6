"""The one error type of engine.train: a problem a user can fix (bad task, bad file, bad option)."""


class TrainError(ValueError):
    """A clear, user-facing message; never a programming error."""
