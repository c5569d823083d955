"""A consumer group of worker processes as an orchestrator runs it, below the labs that run one: its members in slots
(group: started, killed, paused, replaced, restarted, added, closed) and its committed offsets looked at from outside
(watch). What each member processed is its history (core.delivery_processed)."""
