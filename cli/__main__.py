"""`python -m rasplay.cli ...`: the `rasplay` command."""
import sys

from .main import main

sys.exit(main())
