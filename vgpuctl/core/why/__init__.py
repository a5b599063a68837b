"""`why`: replay Volcano's device filters to say why a pod is Pending, and where it would land
(docs/contracts.md#interfaces).

`simulate.py` is the entry (`explain_in_snapshot`, `simulate_node`); `request.py` reads the pod, `env.py`
the scheduler's settings, `model.py` holds the verdicts and reason keys; one module per device filter.
Import names from the module that defines them.
"""
