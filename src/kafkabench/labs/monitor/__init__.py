"""`kafkabench monitor` (seed 001's motive: is my cluster delivering right now?): a continuous end-to-end probe per
partition, each broker's liveness and the consumer lag of every group, as Prometheus metrics, a table kept up to date
in the terminal and a result document.

`scenario` its parameters; `run` the serving process (endpoint, windows, result); `parts` the parts' processes,
restarted and counted, and `part_main` a part's own process; `probe_topic` a partition led by each broker; `prober`
the probes sent and read back; `sequences` what their sequences say (lost, late, duplicated, out of order); `lag` and
`lag_collector` consumer lag in offsets and seconds, and a status per group; `brokers` liveness (up, fenced, not
answering); `metrics` the Prometheus registry and the `Recorder` a part sends; `config_files` what `--write-config`
writes; `report` the tables and `screen` what a terminal or a log gets per window; `lab` the command.
"""
