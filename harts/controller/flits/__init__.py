"""The flit-level controller: wormhole and circuit switching with credit flow control and virtual channels.

MODEL.md (Flow-controlled switching) defines what happens in every cycle; harts/reference/flits.py is
the plain-Python model of the same rules that the tests hold this kernel to.
"""
