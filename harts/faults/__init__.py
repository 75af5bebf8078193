"""Faults: which nodes crash or turn Byzantine and which links die (fault_set), how a node decides a
broadcast's value from its copies (reception), and what each algorithm tolerates (tolerance)."""
