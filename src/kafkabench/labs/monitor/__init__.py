"""`kafkabench monitor` (seed 001's motive: is my cluster delivering right now?): a continuous end-to-end probe per
partition and consumer lag, as Prometheus metrics. Built so far: the pure parts it counts with (`sequences`, `lag`);
the probe loop, the endpoint and the command come next."""
