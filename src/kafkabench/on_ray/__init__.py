"""Workers on a Ray cluster (the `ray` extra): the launcher, the actor that hosts a worker on a node, and a local
multi-node cluster to try it. Imported only when `--launcher ray` or `kafkabench ray` is used."""
