"""The statements section 5 of the paper makes about Figs 10-14, each checked against measured rows.

Each check returns (holds, evidence, numbers): `evidence` gives the numbers the verdict rests on in a sentence,
`numbers` the same numbers as data. The checks use only points below saturation (accepted/offered >= 95%),
where the paper's curves are drawn. `markdown` renders the verdicts as the table EXPERIMENTS.md shows: the
paper's words (STATEMENTS), what was measured (from `numbers`) and the verdict.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass

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


def grows_with_size_and_load(fig10: list[dict]) -> tuple[bool, str, dict]:
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
    numbers = {"sizes": sizes, "low": low, "high": high, "common_loads": len(common),
               "at_low": [_value(c[("sbcast", s)][low]) for s in sizes],
               "at_high": [_value(c[("sbcast", s)][high]) for s in sizes],
               "ordered_by_size": by_size, "rank_correlation": rho}
    return by_size and rho > 0.9, f"{evidence}; ordered by size at all {len(common)} common loads: {by_size}; " \
                                   f"smallest rank correlation of latency with load {rho:.2f}", numbers


def linear_across_sizes(fig10: list[dict]) -> tuple[bool, str, dict]:
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
    numbers = {"pooled": pooled, "loads": [x for x, _, _ in steps], "ratios": [d / b for _, b, d in steps]}
    return 0.75 <= pooled <= 1.33, f"pooled ratio {pooled:.2f}; per load: " + \
        ", ".join(f"{d / b:.2f} at {x:g}" for x, b, d in steps), numbers


def knee_load(curve: dict[float, dict]) -> float:
    """The first load from which latency rises at more than twice its slope over the first half."""
    loads = _unsaturated(curve) + [max(curve)]
    values = [_value(curve[x]) for x in loads]
    base = (values[len(values) // 2] - values[0]) / (loads[len(loads) // 2] - loads[0])
    for (x0, v0), (x1, v1) in zip(zip(loads, values), zip(loads[1:], values[1:])):
        if x0 >= loads[len(loads) // 2] and (v1 - v0) / (x1 - x0) > 2 * base:
            return x0
    return loads[-1]


def steep_rise_beyond_half(fig10: list[dict]) -> tuple[bool, str, dict]:
    c = _curves(fig10)
    knees = {s: knee_load(c[("sbcast", s)]) for _, s in c}
    holds = all(0.4 <= k <= 0.6 for k in knees.values())
    numbers = {"sizes": sorted(knees), "knees": [knees[s] for s in sorted(knees)]}
    return holds, "latency slope doubles from load " + \
        ", ".join(f"{k:g} (E-{s})" for s, k in sorted(knees.items())), numbers


def _saturates_above(load: float) -> bool:
    return 0.7 < load <= 0.8


def regular_saturation_above(probes: dict[int, dict]) -> tuple[bool, str, dict]:
    """`probes`: each size's saturation probe (SaturationProbe.run), whose last probe is the saturated one."""
    holds = all(_saturates_above(p["saturation_load"]) for p in probes.values())
    parts = []
    numbers = {"sizes": [], "saturation_loads": [], "holds_by_size": [], "step": None, "link_utilisation": [],
               "link_utilisation_max": [], "bmu_interface_utilisation": []}
    for size, p in sorted(probes.items()):
        last = p["probes"][-1]
        busy = (f" (links {last['link_utilisation']:.2f} busy on average, {last['link_utilisation_max']:.2f} "
                f"at most; bus interfaces {last['bmu_interface_utilisation']:.2f})" if "link_utilisation" in last
                else " (deadlocked)")
        parts.append(f"{p['saturation_load']:g} (E-{size}){busy}")
        numbers["sizes"].append(size)
        numbers["saturation_loads"].append(p["saturation_load"])
        numbers["holds_by_size"].append(_saturates_above(p["saturation_load"]))
        numbers["step"] = p["probes"][0]["load"]  # the probe's loads are its step, twice its step, ...
        for field in ("link_utilisation", "link_utilisation_max", "bmu_interface_utilisation"):
            numbers[field].append(last.get(field))  # None: deadlocked
    return holds, "regular traffic first carried < 95% of the offered bytes at load " + ", ".join(parts), numbers


def multicopy_increase_grows(fig11: list[dict]) -> tuple[bool, str, dict]:
    c = _curves(fig11)
    parts, holds = [], True
    numbers = {"size": None, "algorithms": [], "low_loads": [], "high_loads": [], "low": [], "high": [],
               "rank_correlations": []}
    for (alg, size), curve in sorted(c.items()):
        loads = _unsaturated(curve)
        lo, hi = _value(curve[loads[0]]), _value(curve[loads[-1]])
        rho = _rank_correlation(loads, [_value(curve[x]) for x in loads])
        holds &= hi > lo and rho > 0.5
        parts.append(f"{alg}: {lo:.0f}% at {loads[0]:g} -> {hi:.0f}% at {loads[-1]:g} (rank r = {rho:.2f})")
        numbers["size"] = size
        for key, value in (("algorithms", alg), ("low_loads", loads[0]), ("high_loads", loads[-1]), ("low", lo),
                           ("high", hi), ("rank_correlations", rho)):
            numbers[key].append(value)
    return holds, "; ".join(parts), numbers


def four_five_six_close(fig11: list[dict]) -> tuple[bool, str, dict]:
    c = _curves(fig11)
    loads = _unsaturated(c[("6bcast", 7)])
    spread = [np.ptp([_value(c[(k, 7)][x]) for k in ("4bcast", "5bcast", "6bcast")]) for x in loads]
    gap = [min(_value(c[(k, 7)][x]) for k in ("4bcast", "5bcast", "6bcast"))
           - max(_value(c[(k, 7)][x]) for k in ("2bcast", "3bcast")) for x in loads]
    holds = float(np.median(spread)) < float(np.median(gap))
    numbers = {"size": 7, "loads": loads, "median_spread": float(np.median(spread)),
               "median_gap": float(np.median(gap)),
               "increase": {k: [_value(c[(k, 7)][x]) for x in loads] for k in
                            ("2bcast", "3bcast", "4bcast", "5bcast", "6bcast")}}
    return holds, f"over {len(loads)} loads the median spread among 4/5/6-BCAST is {np.median(spread):.1f} " \
                  f"points and their median gap above 2/3-BCAST {np.median(gap):.1f} points; at load " \
                  f"{loads[0]:g}: " + ", ".join(f"{k} {_value(c[(k, 7)][loads[0]]):.0f}%" for k in
                                             ("2bcast", "3bcast", "4bcast", "5bcast", "6bcast")), numbers


def sfbcast_slow_at_low_load_grows_gradually(fig12: list[dict]) -> tuple[bool, str, dict]:
    c = _curves(fig12)
    sb, sf = c[("sbcast", 5)], c[("sfbcast", 5)]
    loads = sorted(set(_unsaturated(sb)) & set(_unsaturated(sf)))
    lo, hi = loads[0], loads[-1]
    slower = _value(sf[lo]) / _value(sb[lo])
    growth_sb, growth_sf = _value(sb[hi]) - _value(sb[lo]), _value(sf[hi]) - _value(sf[lo])
    holds = slower > 1.3 and _value(sf[hi]) / _value(sf[lo]) < _value(sb[hi]) / _value(sb[lo])
    numbers = {"size": 5, "low": lo, "high": hi, "sfbcast": [_value(sf[lo]), _value(sf[hi])],
               "sbcast": [_value(sb[lo]), _value(sb[hi])]}
    return holds, f"at load {lo:g} SFBCAST {_value(sf[lo]):.0f} vs SBCAST {_value(sb[lo]):.0f} cycles " \
                  f"({slower:.2f}x); from {lo:g} to {hi:g} SFBCAST grows {growth_sf:.0f} cycles " \
                  f"({_value(sf[hi]) / _value(sf[lo]):.2f}x), SBCAST {growth_sb:.0f} " \
                  f"({_value(sb[hi]) / _value(sb[lo]):.2f}x)", numbers


def _unsaturated_curves(c: dict) -> dict:
    """Each size's unsaturated loads and values, keyed by the size as text (as JSON keeps them)."""
    return {str(size): {"loads": _unsaturated(curve), "values": [_value(curve[x]) for x in _unsaturated(curve)]}
            for (_, size), curve in sorted(c.items())}


def difference_shrinks_with_load_grows_with_size(fig13: list[dict]) -> tuple[bool, str, dict]:
    c = _curves(fig13)
    parts, holds, rhos = [], True, []
    for (alg, size), curve in sorted(c.items()):
        loads = _unsaturated(curve)
        rho = _rank_correlation(loads, [_value(curve[x]) for x in loads])
        holds &= rho < -0.5
        rhos.append(rho)
        parts.append(f"E-{size}: {_value(curve[loads[0]]):.0f}% at {loads[0]:g} -> "
                     f"{_value(curve[loads[-1]]):.0f}% at {loads[-1]:g} (rank r = {rho:.2f})")
    low = min(min(curve) for curve in c.values())
    by_size = [_value(c[("sfbcast", s)][low]) for s in (5, 7, 9)]
    grows = by_size[0] < by_size[1] < by_size[2]
    numbers = {"sizes": [5, 7, 9], "curves": _unsaturated_curves(c), "rank_correlations": rhos, "low": low,
               "at_low": by_size, "grows_with_size": grows}
    return holds and grows, "; ".join(parts) + f"; at load {low:g}: " + \
        ", ".join(f"{v:.0f}% (E-{s})" for s, v in zip((5, 7, 9), by_size)), numbers


def larger_for_mean_delivery(fig13: list[dict], fig14: list[dict]) -> tuple[bool, str, dict]:
    a, b = _curves(fig13), _curves(fig14)
    pairs = [(_value(a[k][x]), _value(b[k][x])) for k in a for x in _unsaturated(a[k]) if x in b[k]]
    share = sum(mean > latency for latency, mean in pairs) / len(pairs)
    mean_l, mean_m = np.mean([p[0] for p in pairs]), np.mean([p[1] for p in pairs])
    numbers = {"mean_delivery": float(mean_m), "latency": float(mean_l), "share": share, "points": len(pairs),
               "curves": _unsaturated_curves(b)}
    return share > 0.8, f"mean delivery time increase {mean_m:.0f}% vs latency increase {mean_l:.0f}% " \
                        f"on average; larger at {share:.0%} of the {len(pairs)} unsaturated points", numbers


# What the measured column quotes: the loads at which it gives curves' values (those of them measured below
# saturation), and how a load under the node reading maps to the link utilisation it offers on E-n: a node load L
# offers the links L x n/12 (a mean route of n/2 hops shared by a node's 6 links; MODEL.md, Traffic).
QUOTED_LOADS = (0.05, 0.3, 0.5)


def _link_load(load: float, size: int) -> float:
    return load * size / 12


def _name(algorithm: str) -> str:
    return algorithm.upper().replace("BCAST", "-BCAST") if algorithm[0].isdigit() else algorithm.upper()


def _loads(loads: list[float]) -> str:
    return f"{min(loads):g}" if min(loads) == max(loads) else f"{min(loads):g}-{max(loads):g}"


def _sizes(values: list, sizes: list[int], form: str) -> str:
    return ", ".join(f"{format(v, form)} (E-{s})" for v, s in zip(values, sizes))


def _quoted(curve: dict, form: str = ".0f", unit: str = "%") -> tuple[list[float], str]:
    shown = [x for x in QUOTED_LOADS if x in curve["loads"]]
    return shown, ", ".join(f"{format(curve['values'][curve['loads'].index(x)], form)}{unit}" for x in shown)


def _measured_1(n: dict, basis: str) -> str:
    order = (" < ".join(f"E-{s}" for s in n["sizes"]) + f" at all {n['common_loads']} common loads"
             if n["ordered_by_size"] else f"not ordered by size at every one of the {n['common_loads']} common loads")
    return (f"SBCAST at load {n['low']:g}: {_sizes(n['at_low'], n['sizes'], '.0f')}; at {n['high']:g}: "
            + ", ".join(f"{v:.0f}" for v in n["at_high"]) + f". {order}; the smallest rank correlation of latency "
            f"with load is {n['rank_correlation']:.2f}")


def _measured_2(n: dict, basis: str) -> str:
    return (f"step E-7→E-9 over step E-5→E-7 at loads {_loads(n['loads'])}: "
            + ", ".join(f"{r:.2f}" for r in n["ratios"]) + f" (pooled {n['pooled']:.2f})")


def _measured_3(n: dict, basis: str) -> str:
    return "the slope of latency against load doubles from load " + _sizes(n["knees"], n["sizes"], "g")


def _note_3(n: dict, basis: str) -> str:
    if basis != "node":
        return ""
    return ("a node load L offers the links L x n/12, so these knees lie at link loads "
            + _sizes([_link_load(k, s) for k, s in zip(n["knees"], n["sizes"])], n["sizes"], ".2f"))


def _measured_4(n: dict, basis: str) -> str:
    text = (f"regular traffic first carries less than 95% of the offered bytes at load "
            f"{_sizes(n['saturation_loads'], n['sizes'], 'g')}, in steps of {n['step']:g}")
    deadlocked = [s for s, u in zip(n["sizes"], n["link_utilisation"]) if u is None]
    busy = [i for i, u in enumerate(n["link_utilisation"]) if u is not None]
    if busy:
        pick = lambda field: ", ".join(f"{n[field][i]:.2f}" for i in busy)
        text += (f". There the links are {pick('link_utilisation')} busy on average ({pick('link_utilisation_max')}"
                 f" at most), the BMU bus interfaces {pick('bmu_interface_utilisation')}")
    if deadlocked:
        text += ". " + ", ".join(f"E-{s}" for s in deadlocked) + " deadlocked there"
    return text


def _verdict_4(n: dict, basis: str) -> str | None:
    """Statement 4 holds on some sizes and not on others: say which."""
    held = [s for s, h in zip(n["sizes"], n["holds_by_size"]) if h]
    if not held or len(held) == len(n["sizes"]):
        return None
    missed = [(s, x) for s, x, h in zip(n["sizes"], n["saturation_loads"], n["holds_by_size"]) if not h]
    return ("holds on " + " and ".join(f"E-{s}" for s in held) + "; "
            + ", ".join(f"E-{s} saturates at {x:g}, {'not above 0.7' if x <= 0.7 else 'above 0.8'}"
                        for s, x in missed))


def _note_4(n: dict, basis: str) -> str:
    cause = "the cause is not the one the paper gives (What saturates, below)"
    if basis != "node":
        return cause
    return ("a node load L offers the links L x n/12, so these are link loads "
            + _sizes([_link_load(x, s) for x, s in zip(n["saturation_loads"], n["sizes"])], n["sizes"], ".2f")
            + "; " + cause)


def _measured_5(n: dict, basis: str) -> str:
    return (f"increase over SBCAST on E-{n['size']} from load {_loads(n['low_loads'])} to the last unsaturated "
            f"load ({_loads(n['high_loads'])}): "
            + ", ".join(f"{_name(a)} {lo:.0f}% → {hi:.0f}%" for a, lo, hi in zip(n["algorithms"], n["low"], n["high"]))
            + f"; the smallest rank correlation with load is {min(n['rank_correlations']):.2f}")


def _measured_6(n: dict, basis: str) -> str:
    shown = [x for x in QUOTED_LOADS if x in n["loads"]]
    at = "; ".join(f"at {x:g}: " + ", ".join(f"{n['increase'][k][n['loads'].index(x)]:.0f}%"
                                             for k in ("4bcast", "5bcast", "6bcast")) for x in shown)
    return (f"4-, 5- and 6-BCAST over SBCAST on E-{n['size']} {at}. Over the {len(n['loads'])} unsaturated loads the "
            f"median spread among the three is {n['median_spread']:.1f} points, against a median gap of "
            f"{n['median_gap']:.1f} points above 2- and 3-BCAST")


def _measured_7(n: dict, basis: str) -> str:
    (sf_lo, sf_hi), (sb_lo, sb_hi) = n["sfbcast"], n["sbcast"]
    return (f"E-{n['size']} at load {n['low']:g}: SFBCAST {sf_lo:.0f}, SBCAST {sb_lo:.0f} ({sf_lo / sb_lo:.2f}x). "
            f"From {n['low']:g} to {n['high']:g}, SFBCAST grows {sf_hi / sf_lo:.2f}x and SBCAST {sb_hi / sb_lo:.2f}x")


def _by_size_at_quoted_loads(curves: dict) -> str:
    """Each size's percent increases at the QUOTED_LOADS and at its highest unsaturated load."""
    parts, tails = [], False
    for size, curve in curves.items():
        shown, values = _quoted(curve)
        last = curve["loads"][-1]
        tail = "" if last in shown else f" and {curve['values'][-1]:.0f}% at {last:g}"
        tails |= bool(tail)
        parts.append(f"E-{size}: {values} at {', '.join(f'{x:g}' for x in shown)}{tail}")
    return "; ".join(parts) + (", the highest unsaturated loads" if tails else "")


def _measured_8(n: dict, basis: str) -> str:
    order = " < " if n["grows_with_size"] else ", "
    return (_by_size_at_quoted_loads(n["curves"]) + ". Rank correlation with load "
            + ", ".join(f"{r:.2f}" for r in n["rank_correlations"])
            + f". At {n['low']:g}: " + order.join(f"{v:.0f}%" for v in n["at_low"]))


def _measured_9(n: dict, basis: str) -> str:
    where = (f"at all {n['points']}" if n["share"] == 1 else f"at {n['share']:.0%} of the {n['points']}")
    return (_by_size_at_quoted_loads(n["curves"]) + f". Mean {n['mean_delivery']:.0f}% against "
            f"{n['latency']:.0f}% for latency; higher {where} unsaturated points")


@dataclass(frozen=True)
class Statement:
    claim: str  # the short form kept in claims_*.json
    quote: str  # what the paper says, in its words
    check: Callable  # the figures' rows (or, with figures (), the saturation probes) -> (holds, evidence, numbers)
    figures: tuple[int, ...]
    measured: Callable[[dict, str], str]  # (numbers, basis) -> the measured column
    note: Callable[[dict, str], str] = lambda numbers, basis: ""  # said after the verdict; no typed numbers
    verdict: Callable[[dict, str], str | None] = lambda numbers, basis: None  # a verdict finer than holds or not


STATEMENTS = (
    Statement("Latency grows with mesh size and with link load (Fig. 10)",
              '"the latency increases with mesh size and with link load" (Fig. 10)',
              grows_with_size_and_load, (10,), _measured_1),
    Statement("At a fixed load the increase from size to size is close to linear (Fig. 10)",
              '"For a particular link load the increase is close to linear when we move from one mesh size to '
              'another"', linear_across_sizes, (10,), _measured_2),
    Statement("Latency rises steeply for link loads beyond 0.5 (Fig. 10)",
              '"The latency increases super-exponentially for link loads beyond 0.5, indicating that the network is '
              'close to saturation at that point"', steep_rise_beyond_half, (10,), _measured_3, _note_3),
    Statement("Regular traffic saturates for link loads greater than 0.7",
              '"saturation (for regular messages) sets in for link loads greater than 0.7", because of link access '
              'overheads such as the 8-byte forced idle time', regular_saturation_above, (), _measured_4, _note_4,
              _verdict_4),
    Statement("The multi-copy increase over SBCAST grows with load (Fig. 11)",
              '"the percentage increases with increasing link load" for the multiple-copy broadcasts (Fig. 11)',
              multicopy_increase_grows, (11,), _measured_5),
    Statement("4-, 5- and 6-BCAST cost about the same (Fig. 11)",
              '"The cost of 4, 5, and 6 copy broadcasts is quite close"', four_five_six_close, (11,), _measured_6,
              lambda numbers, basis: "see Statement 6, below"),
    Statement("SFBCAST is much slower at low load but grows more gradually (Fig. 12)",
              '"The latency of SFBCAST is substantially higher than that of SBCAST for low link loads, but it '
              'increases more gradually" (Fig. 12, E-5)', sfbcast_slow_at_low_load_grows_gradually, (12,),
              _measured_7),
    Statement("SFBCAST's increase over SBCAST shrinks with load and grows with mesh size (Fig. 13)",
              'the SFBCAST-over-SBCAST difference "reduces as the link load increases" and "increases with '
              'increases in mesh size" (Fig. 13)', difference_shrinks_with_load_grows_with_size, (13,), _measured_8),
    Statement("The increase is substantially larger for mean delivery time (Fig. 14 vs 13)",
              'for mean delivery time (Fig. 14) "the percent difference is substantially higher"',
              larger_for_mean_delivery, (13, 14), _measured_9),
)


def check_all(rows: dict[int, list[dict]], probes: dict[int, dict]) -> list[dict]:
    out = []
    for statement in STATEMENTS:
        given = [rows[f] for f in statement.figures] if statement.figures else [probes]
        holds, evidence, numbers = statement.check(*given)
        out.append({"claim": statement.claim, "holds": bool(holds), "evidence": evidence,
                    "numbers": _plain(numbers)})
    return out


def _plain(value):
    """`value` as JSON gives it back (numpy scalars as Python numbers), so a table made from the verdicts at the
    end of a run and one made from their JSON file later are the same."""
    return json.loads(json.dumps(value, default=lambda v: v.item()))


def markdown(verdicts: list[dict], basis: str) -> str:
    """The verdicts as the table EXPERIMENTS.md shows: a row per statement, with the paper's words, what was
    measured and the verdict. `basis`: the reading of the load the verdicts were measured under."""
    by_claim = {statement.claim: (number, statement) for number, statement in enumerate(STATEMENTS, start=1)}
    lines = ["| # | the paper says | measured | verdict |", "|---|---|---|---|"]
    for verdict in verdicts:
        number, statement = by_claim[verdict["claim"]]
        numbers = _plain(verdict["numbers"])
        said = statement.verdict(numbers, basis) or ("holds" if verdict["holds"] else "does not hold")
        note = statement.note(numbers, basis)
        if note:
            said += f"; {note}"
        lines.append(f"| {number} | {statement.quote} | {statement.measured(numbers, basis)} | {said} |")
    return "\n".join(lines) + "\n"
