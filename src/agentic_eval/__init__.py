"""agentic-eval: deterministic, keyless, replayable evaluation of LLM agents."""

from agentic_eval._version import __version__

__all__ = ["__version__"]
