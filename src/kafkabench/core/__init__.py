"""The measurement core: clocks, histograms, the worker protocol and results. No CLI or rendering imports."""
