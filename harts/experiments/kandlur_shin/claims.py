"""The statements section 5 of the paper makes about Figs 10-14, each checked against measured rows.

Each check returns (holds, evidence): `evidence` gives the numbers the verdict rests on. The checks use
only points below saturation (accepted/offered >= 95%), where the paper's curves are drawn.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np


def _curves(rows: list[dict]) -> dict[tuple[str, int], dict[float, dict]]:
    curves: dict = defaultdict(dict)
    for r in rows:
        curves[(r["algorithm"], int(r["size"]))][float(r["load"])] = r
    return curves


def _unsaturated(curve: dict[float, dict]) -> list[float]:
    return sorted(load for load, r in curve.items() if not _flag(r["saturated"]))


def _flag(value) -> bool:
    return value if isinstance(value, bool) else str(value) == "True"


def _value(r: dict) -> float:
    return float(r["value"])


def _rank_correlation(x: list[float], y: list[float]) -> float:
    """Spearman's rho: does y rise (+1) or fall (-1) with x, whatever the shape of the curve."""
    rank = lambda v: np.argsort(np.argsort(v))
    return float(np.corrcoef(rank(np.asarray(x)), rank(np.asarray(y)))[0, 1])


def grows_with_size_and_load(fig10: list[dict]) -> tuple[bool, str]:
    c = _curves(fig10)
    sizes = sorted(s for _, s in c)
    common = sorted(set.intersection(*[set(_unsaturated(c[("sbcast", s)])) for s in sizes]))
    by_size = all(_value(c[("sbcast", a)][x]) < _value(c[("sbcast", b)][x])
                  for x in common for a, b in zip(sizes, sizes[1:]))
    rho = min(_rank_correlation(_unsaturated(c[("sbcast", s)]),
                                [_value(c[("sbcast", s)][x]) for x in _unsaturated(c[("sbcast", s)])])
              for s in sizes)
    low, high = common[0], common[-1]
    evidence = "; ".join(f"E-{s}: {_value(c[('sbcast', s)][low]):.0f} at load {low:g}, "
                         f"{_value(c[('sbcast', s)][high]):.0f} at {high:g}" for s in sizes)
    return by_size and rho > 0.9, f"{evidence}; ordered by size at all {len(common)} common loads: {by_size}; " \
                                   f"smallest rank correlation of latency with load {rho:.2f}"


def linear_across_sizes(fig10: list[dict]) -> tuple[bool, str]:
    """Over the loads up to 0.5, the latency step from E-7 to E-9 against the step from E-5 to E-7,
    pooled over the loads (a ratio of 1 is linear in the mesh size)."""
    c = _curves(fig10)
    steps = []
    for x in _unsaturated(c[("sbcast", 9)]):
        if x > 0.5 or x not in c[("sbcast", 5)] or x not in c[("sbcast", 7)]:
            continue
        a, b, d = (_value(c[("sbcast", s)][x]) for s in (5, 7, 9))
        steps.append((x, b - a, d - b))
    pooled = sum(s[2] for s in steps) / sum(s[1] for s in steps)
    return 0.75 <= pooled <= 1.33, f"pooled ratio {pooled:.2f}; per load: " + \
        ", ".join(f"{d / b:.2f} at {x:g}" for x, b, d in steps)


def knee_load(curve: dict[float, dict]) -> float:
    """The first load from which latency rises at more than twice its slope over the first half."""
    loads = _unsaturated(curve) + [max(curve)]
    values = [_value(curve[x]) for x in loads]
    base = (values[len(values) // 2] - values[0]) / (loads[len(loads) // 2] - loads[0])
    for (x0, v0), (x1, v1) in zip(zip(loads, values), zip(loads[1:], values[1:])):
        if x0 >= loads[len(loads) // 2] and (v1 - v0) / (x1 - x0) > 2 * base:
            return x0
    return loads[-1]


def steep_rise_beyond_half(fig10: list[dict]) -> tuple[bool, str]:
    c = _curves(fig10)
    knees = {s: knee_load(c[("sbcast", s)]) for _, s in c}
    holds = all(0.4 <= k <= 0.6 for k in knees.values())
    return holds, "latency slope doubles from load " + ", ".join(f"{k:g} (E-{s})" for s, k in sorted(knees.items()))


def regular_saturation_above(probes: dict[int, dict]) -> tuple[bool, str]:
    """`probes`: each size's saturation probe (SaturationProbe.run), whose last probe is the saturated one."""
    holds = all(0.7 < p["saturation_load"] <= 0.8 for p in probes.values())
    parts = []
    for size, p in sorted(probes.items()):
        last = p["probes"][-1]
        busy = (f" (links {last['link_utilisation']:.2f} busy on average, {last['link_utilisation_max']:.2f} "
                f"at most; bus interfaces {last['bmu_interface_utilisation']:.2f})" if "link_utilisation" in last
                else " (deadlocked)")
        parts.append(f"{p['saturation_load']:g} (E-{size}){busy}")
    return holds, "regular traffic first carried < 95% of the offered bytes at load " + ", ".join(parts)


def multicopy_increase_grows(fig11: list[dict]) -> tuple[bool, str]:
    c = _curves(fig11)
    parts, holds = [], True
    for (alg, size), curve in sorted(c.items()):
        loads = _unsaturated(curve)
        lo, hi = _value(curve[loads[0]]), _value(curve[loads[-1]])
        rho = _rank_correlation(loads, [_value(curve[x]) for x in loads])
        holds &= hi > lo and rho > 0.5
        parts.append(f"{alg}: {lo:.0f}% at {loads[0]:g} -> {hi:.0f}% at {loads[-1]:g} (rank r = {rho:.2f})")
    return holds, "; ".join(parts)


def four_five_six_close(fig11: list[dict]) -> tuple[bool, str]:
    c = _curves(fig11)
    loads = _unsaturated(c[("6bcast", 7)])
    spread = [np.ptp([_value(c[(k, 7)][x]) for k in ("4bcast", "5bcast", "6bcast")]) for x in loads]
    gap = [min(_value(c[(k, 7)][x]) for k in ("4bcast", "5bcast", "6bcast"))
           - max(_value(c[(k, 7)][x]) for k in ("2bcast", "3bcast")) for x in loads]
    holds = float(np.median(spread)) < float(np.median(gap))
    return holds, f"over {len(loads)} loads the median spread among 4/5/6-BCAST is {np.median(spread):.1f} " \
                  f"points and their median gap above 2/3-BCAST {np.median(gap):.1f} points; at load " \
                  f"{loads[0]:g}: " + ", ".join(f"{k} {_value(c[(k, 7)][loads[0]]):.0f}%" for k in
                                             ("2bcast", "3bcast", "4bcast", "5bcast", "6bcast"))


def sfbcast_slow_at_low_load_grows_gradually(fig12: list[dict]) -> tuple[bool, str]:
    c = _curves(fig12)
    sb, sf = c[("sbcast", 5)], c[("sfbcast", 5)]
    loads = sorted(set(_unsaturated(sb)) & set(_unsaturated(sf)))
    lo, hi = loads[0], loads[-1]
    slower = _value(sf[lo]) / _value(sb[lo])
    growth_sb, growth_sf = _value(sb[hi]) - _value(sb[lo]), _value(sf[hi]) - _value(sf[lo])
    holds = slower > 1.3 and _value(sf[hi]) / _value(sf[lo]) < _value(sb[hi]) / _value(sb[lo])
    return holds, f"at load {lo:g} SFBCAST {_value(sf[lo]):.0f} vs SBCAST {_value(sb[lo]):.0f} cycles " \
                  f"({slower:.2f}x); from {lo:g} to {hi:g} SFBCAST grows {growth_sf:.0f} cycles " \
                  f"({_value(sf[hi]) / _value(sf[lo]):.2f}x), SBCAST {growth_sb:.0f} " \
                  f"({_value(sb[hi]) / _value(sb[lo]):.2f}x)"


def difference_shrinks_with_load_grows_with_size(fig13: list[dict]) -> tuple[bool, str]:
    c = _curves(fig13)
    parts, holds = [], True
    for (alg, size), curve in sorted(c.items()):
        loads = _unsaturated(curve)
        rho = _rank_correlation(loads, [_value(curve[x]) for x in loads])
        holds &= rho < -0.5
        parts.append(f"E-{size}: {_value(curve[loads[0]]):.0f}% at {loads[0]:g} -> "
                     f"{_value(curve[loads[-1]]):.0f}% at {loads[-1]:g} (rank r = {rho:.2f})")
    low = min(min(curve) for curve in c.values())
    by_size = [_value(c[("sfbcast", s)][low]) for s in (5, 7, 9)]
    grows = by_size[0] < by_size[1] < by_size[2]
    return holds and grows, "; ".join(parts) + f"; at load {low:g}: " + \
        ", ".join(f"{v:.0f}% (E-{s})" for s, v in zip((5, 7, 9), by_size))


def larger_for_mean_delivery(fig13: list[dict], fig14: list[dict]) -> tuple[bool, str]:
    a, b = _curves(fig13), _curves(fig14)
    pairs = [(_value(a[k][x]), _value(b[k][x])) for k in a for x in _unsaturated(a[k]) if x in b[k]]
    share = sum(mean > latency for latency, mean in pairs) / len(pairs)
    mean_l, mean_m = np.mean([p[0] for p in pairs]), np.mean([p[1] for p in pairs])
    return share > 0.8, f"mean delivery time increase {mean_m:.0f}% vs latency increase {mean_l:.0f}% " \
                        f"on average; larger at {share:.0%} of the {len(pairs)} unsaturated points"


def check_all(rows: dict[int, list[dict]], probes: dict[int, dict]) -> list[dict]:
    checks = [
        ("Latency grows with mesh size and with link load (Fig. 10)", grows_with_size_and_load, (10,)),
        ("At a fixed load the increase from size to size is close to linear (Fig. 10)",
         linear_across_sizes, (10,)),
        ("Latency rises steeply for link loads beyond 0.5 (Fig. 10)", steep_rise_beyond_half, (10,)),
        ("Regular traffic saturates for link loads greater than 0.7", None, ()),
        ("The multi-copy increase over SBCAST grows with load (Fig. 11)", multicopy_increase_grows, (11,)),
        ("4-, 5- and 6-BCAST cost about the same (Fig. 11)", four_five_six_close, (11,)),
        ("SFBCAST is much slower at low load but grows more gradually (Fig. 12)",
         sfbcast_slow_at_low_load_grows_gradually, (12,)),
        ("SFBCAST's increase over SBCAST shrinks with load and grows with mesh size (Fig. 13)",
         difference_shrinks_with_load_grows_with_size, (13,)),
        ("The increase is substantially larger for mean delivery time (Fig. 14 vs 13)",
         larger_for_mean_delivery, (13, 14)),
    ]
    out = []
    for claim, check, figures in checks:
        if check is None:
            holds, evidence = regular_saturation_above(probes)
        else:
            holds, evidence = check(*[rows[f] for f in figures])
        out.append({"claim": claim, "holds": bool(holds), "evidence": evidence})
    return out
