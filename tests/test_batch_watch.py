"""How often the submitter of a run on other processes polls the store (`batch.watch`)."""

from __future__ import annotations

import pytest

from agentic_eval.batch.watch import MIN_POLL_SECONDS, next_poll


@pytest.mark.parametrize(
    ("left", "stored", "elapsed", "expected"),
    [
        (100, 0, 1.0, 0.25),  # nothing stored yet: no rate to go by
        (100, 10, 0.0, 0.25),
        (100, 100, 1.0, 0.25),  # 1 s to go at 100/s: the usual pause
        (10, 100, 1.0, 0.1),  # 0.1 s to go: poll when they should be done
        (1, 1000, 1.0, MIN_POLL_SECONDS),  # never faster than the floor
        (1, 100, 1.0, 0.02),
        (1, 100, 30.0, 0.25),  # a long tail lowered the rate: back to the usual pause
        (0, 100, 1.0, MIN_POLL_SECONDS),
    ],
)
def test_the_next_poll_comes_sooner_only_when_the_end_is_near(
    left: int, stored: int, elapsed: float, expected: float
) -> None:
    assert next_poll(0.25, left, stored, elapsed) == pytest.approx(expected)
