"""Deterministic doubles for users' own tests: a fake provider server speaking the Anthropic and
OpenAI wire formats on 127.0.0.1, so that live code paths are testable with no network."""

from agentic_eval.testing.fake_provider import FakeProvider, Fault, scripted_responder

__all__ = ["FakeProvider", "Fault", "scripted_responder"]
