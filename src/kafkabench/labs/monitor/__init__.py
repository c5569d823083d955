"""`kafkabench monitor` (seed 001's motive: is my cluster delivering right now?): a continuous end-to-end probe per
partition and the consumer lag of every group, as Prometheus metrics, a table per interval and a result document.

`scenario` its parameters; `probe_topic` a partition led by each broker; `prober` the probes sent and read back in
this process; `sequences` what their sequences say (lost, late, duplicated, out of order); `lag` and
`lag_collector` consumer lag in offsets and seconds, and a status per group; `metrics` the Prometheus registry;
`config_files` what `--write-config` writes; `run` the watch loop; `report` its tables; `lab` the command.
"""
