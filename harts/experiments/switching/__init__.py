"""Wormhole and circuit switching under load (issue 11): latency against offered load and saturation against
the channel-load bound of each traffic pattern."""
