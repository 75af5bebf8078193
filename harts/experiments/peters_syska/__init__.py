"""Paper 004 (Peters & Syska): circuit-switched broadcasting on tori."""
