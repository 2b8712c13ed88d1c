"""``python -m agentic_eval``: the same as the ``agentic-eval`` console script."""

from agentic_eval.cli.main import main

main()
