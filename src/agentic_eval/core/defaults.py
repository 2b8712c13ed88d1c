"""The defaults of every run parameter, as plain constants: read by the settings models, the
backend spec and the command-line options alike (this module imports nothing, so a command's
``--help`` can show them without building the models)."""

from __future__ import annotations

SUBMIT_TOOL = "submit"
"""The tool an agent answers with, when its task asks for an answer."""
DEFAULT_MAX_TURNS = 12
MAX_TURNS = 200
"""The largest turn budget a run, a domain or a case may set."""
MAX_REJECTIONS = 3
"""``step --interactive``: how many times the operator may reject before the loop ends."""
DEFAULT_MAX_TOKENS = 1024
DEFAULT_TEMPERATURE = 0.0
DEFAULT_MAX_FAILURE_RATE = 0.01
DEFAULT_MAX_TRANSIENT = 0.2
USER_STOP = "###STOP###"
"""A simulated user's reply holding this ends the conversation (tau-bench's signal)."""
DEFAULT_TIMEOUT = 60.0
"""Seconds a provider request may take."""
DEFAULT_RETRIES = 2
"""Retries of a transient provider error."""
