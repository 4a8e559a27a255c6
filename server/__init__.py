"""rasplay's server side: the CLI, the FastAPI application and its stores. Holds no RASP logic."""
