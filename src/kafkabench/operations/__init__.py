"""What operators do to a cluster on purpose, scheduled and recorded as faults are (labs/delivery/faults.py) and
judged by the same checker:

- spec.py: the grammar, `NAME[,OPTION[=VALUE]...]` (`rolling-restart`, `rolling-restart,kill,pause=5`,
  `elect-leaders`, `config,topic=min.insync.replicas=3`), checked when a scenario is read;
- perform.py: an operation carried out step by step through `cluster.faults.Faults` (restarts: the embedded
  cluster) or the Admin API (elections and settings: any cluster), each step's seconds recorded.

A new operation goes here; what it costs the clients is measured by the lab that schedules it.
"""
