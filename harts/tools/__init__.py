"""Tools around the engine: zero-load calibration, the speed benchmark, VCD waveforms."""
