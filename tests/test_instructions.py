"""Standing instructions are found wherever they stand in a sentence and carried verbatim."""

from __future__ import annotations

import pytest

from recap_memory.instructions import standing_instructions
from tests.conftest import user


@pytest.mark.parametrize(
    "text",
    [
        "Never restart production without asking me first.",
        "Also, never call me on my phone, email only.",
        "My order is late, and please always use UPS from now.",
        "Oh and don't email my boss about this.",
        "From now on, answer in French.",
        "Please stop sending me newsletters.",
        "The refund is fine - but never charge my old card again.",
    ],
)
def test_an_instruction_is_found_wherever_it_stands(text: str):
    assert standing_instructions([user(f"Some context first. {text} Thanks!")]) == [text]


@pytest.mark.parametrize(
    "text",
    ["I never thought of that.", "I can never remember my PIN.", "We always went there."],
)
def test_a_statement_about_always_or_never_is_not_an_instruction(text: str):
    assert standing_instructions([user(text)]) == []
