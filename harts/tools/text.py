"""Text for pictures."""

from __future__ import annotations

import math
import textwrap


def balanced_lines(text: str, width: int) -> str:
    """`text` broken into lines of about `width` characters at most and of similar lengths, so that no
    line holds a word or two left over."""
    lines = math.ceil(len(text) / width)
    # Lines break between words, so each needs some room beyond an exact share of the characters.
    return textwrap.fill(text, math.ceil(len(text) / lines) + 8)
