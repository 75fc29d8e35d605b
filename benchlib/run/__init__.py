"""Running an experiment: each run, its steps, the client processes and their hot loops
(layer 5)."""
