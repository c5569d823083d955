"""The labs: each one turns a seed's hand-made experiment into one measured, reproducible run."""
