"""Paper 000's section 5: its workload's points (points.py), Figs 10-14 (figures.py) and its statements
about them (claims.py)."""
