"""An embedded cluster on a network of its own (network faults need links to cut): each node in a network
namespace on a Linux bridge, on a private subnet no route of the machine already points into.

- subnets.py: which subnet, chosen against the machine's routes and addresses (pure);
- routes.py: the check that every cluster address routes into the cluster's own bridge, never out;
- bridge.py: the namespaces, the bridge and the veths, made and removed with `ip`, each recorded with its maker so
  that one left by a killed process is removed (`remove_stale`).
"""
