"""The Java client worker's source, read with importlib.resources and compiled on first use."""
