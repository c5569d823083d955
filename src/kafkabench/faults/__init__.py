"""The fault kinds a lab can schedule, process and network behind one grammar and one seam:

- spec.py: the grammar, `ACTION-TARGET[:SECONDS][,OPTION[=VALUE]...]` (`kill-leader:5`,
  `partition-leader:40,from=followers+controllers`, `delay-follower:30,ms=50,jitter=10`, `loss-2:20,percent=5`,
  `bandwidth-leader:30,mbit=10`), checked when a scenario is read;
- inject.py: a fault fired on a cluster through `cluster.faults.Faults`: its victim and peers looked up when it
  fires (the leader of the lab's partition then), what it did in words for the run's notes, and its heal.

A lab owns only its schedule (when faults fire, see `labs/delivery/faults.py`); a new kind goes here.
"""
