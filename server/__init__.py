"""rasplay's server side: the FastAPI application, its worker pools and training jobs, and its stores (the
`rasplay` command that starts it is rasplay.cli). Holds no RASP logic."""
