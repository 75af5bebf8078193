"""Paper 001 (Lee & Shin 1994): all-to-all reliable broadcast on the engine."""
