"""Paper 003 (Al-Mahadeen & Omari): the all-port wormhole broadcast on the mesh-hypercube MH(m, n), run on the
flit-level controller (harts/np/mesh_hypercube.py is the plan: Algorithms 1 and 2 as printed, "+" on cube
addresses read as XOR).

The paper gives no timing, so the runs take our T3D mapping of paper 002 (configs/t3d_mesh_8x8.yaml: one
cycle = one flit time, start-up 227 cycles, all-port NPs, one injection and one ejection channel per link
port) on the MH network, idle, with 100-flit messages. Every run is held against its plan inside run_plan
(every node other than the source gets exactly one copy, by the plan's routes); a DeadlockError propagates.

* The MH(9,8) example from (6,000): the per-step senders of the plan beside those of the copies the run made.
* Steps against size from runs, source at the middle level (m+1) div 2, cube address 0, beside
  log2(m) + log2(n/4): the paper gives only O(log m + log(n/4)), so that column is a shape reference.
* n >= 16: the source's n/4 - 1 sends to the other subcubes (S XOR 4i) take dimension-order routes that
  share links (S XOR 4 and S XOR 12 both leave by bit 2). Each of the source's step-1 copies is timed three
  ways on the idle network: in the broadcast, in a run of only the step-1 sends linked to it by shared links
  (at most n/4 - 1 sends, fewer than the source's injection channels, so they wait for links only), and
  alone. The second minus the third is its link wait; the first minus the second is the rest (negative when
  the other sends change the order on a shared link): with all-port NPs (C = P = 2 + log2 n channels) the
  source of MH(9,16) has 7 step-1 sends for 6 injection channels and MH(9,32)'s 11 for 7, so some wait for
  a channel (the config refuses more NP channels than ports).
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from ...broadcasts.plans import run_plan
from ...machine.config import CONFIGS_DIR, load_config
from ...machine.flits import DeadlockError
from ...network.build import build_topology
from ...np import mesh_hypercube
from ...np.send_plan import (
    TRIGGER_START,
    Send,
    SendPlan,
    dimension_order_path,
    send_steps,
    shared_links_by_step,
)
from ...output import save_figure, write_text
from ..sweep import markdown_table, run_tasks, write_csv

CONFIG = CONFIGS_DIR / "t3d_mesh_8x8.yaml"
LENGTH = 100  # flits
EXAMPLE = (9, 8, "(6,000)")  # the paper's illustrative example
LEVELS = (1, 2, 3, 5, 9, 17, 33)
CUBES = (4, 8, 16, 32)
SHARING_LEVELS = (1, 9)
SHARING_CUBES = (8, 16, 32)
QUICK_LEVELS = (1, 3, 9)
QUICK_CUBES = (4, 8, 16)
QUICK_SHARING_LEVELS = (9,)
QUICK_SHARING_CUBES = (8, 16)


def mh(m: int, n: int) -> dict:
    return {"kind": "mesh_hypercube", "levels": m, "cube": n}


def t3d_config(m: int, n: int):
    """Our T3D mapping on MH(m, n), all-port (C = P), idle."""
    return load_config(CONFIG).with_topology(**mh(m, n))


def middle_source(m: int, n: int) -> int:
    """Node (L, 0) with L = (m+1) div 2, the middle level (node numbers are (L-1)*n + cube address)."""
    return ((m + 1) // 2 - 1) * n


def _checked(key: str, function):
    try:
        return function()
    except DeadlockError as exc:
        raise DeadlockError(f"{key}: {exc}", exc.cycle) from exc


@dataclass(frozen=True)
class ExamplePoint:
    """The paper's MH(9,8) broadcast from (6,000)."""

    @property
    def key(self) -> str:
        return "paper003-example-mh9x8-from-6,000"

    @property
    def cost(self) -> float:
        return 72

    def run(self) -> dict:
        return _checked(self.key, self._run)

    def _run(self) -> dict:
        m, n, label = EXAMPLE
        topology = build_topology(mh(m, n))
        source = next(v for v in range(topology.n_nodes) if topology.coordinates(v) == label)
        plan = mesh_hypercube.plan(topology, source)
        run = run_plan(t3d_config(m, n), plan, LENGTH, at_cycle=0)
        ran = defaultdict(list)
        for copy in run.copies:
            ran[(copy.step, copy.sender)].append((copy.arrival, copy.node))
        rows = []
        for step, senders in mesh_hypercube.senders_by_step(plan).items():
            for sender, destinations in senders:
                copies = sorted(ran.pop((step, sender), []))
                rows.append({"step": step, "sender": topology.coordinates(sender),
                             "plan_sends_to": " ".join(map(topology.coordinates, destinations)),
                             "run_copies_at": " ".join(topology.coordinates(v) for _, v in copies),
                             "run_arrival_cycles": " ".join(str(t) for t, _ in copies),
                             "plan_equals_run": sorted(destinations) == sorted(v for _, v in copies)})
        if ran:  # a copy of the run at a (step, sender) the plan has no send for
            rows += [{"step": step, "sender": topology.coordinates(sender), "plan_sends_to": "",
                      "run_copies_at": " ".join(topology.coordinates(v) for _, v in copies),
                      "run_arrival_cycles": " ".join(str(t) for t, _ in copies), "plan_equals_run": False}
                     for (step, sender), copies in sorted(ran.items())]
        summary = run.summary()
        return {"key": self.key, "network": topology.name, "source_label": label, "length_flits": LENGTH,
                "steps": summary["steps"], "latency_cycles": summary["latency_cycles"],
                "copies_total": summary["copies_total"], "copies_per_node_min": summary["copies_per_node_min"],
                "copies_per_node_max": summary["copies_per_node_max"],
                "links_shared_within_a_step": summary["links_shared_within_a_step"], "rows": rows}


@dataclass(frozen=True)
class StepsPoint:
    m: int
    n: int

    @property
    def key(self) -> str:
        return f"paper003-steps-mh{self.m}x{self.n}"

    @property
    def cost(self) -> float:
        return self.m * self.n

    def run(self) -> dict:
        return _checked(self.key, self._run)

    def _run(self) -> dict:
        topology = build_topology(mh(self.m, self.n))
        source = middle_source(self.m, self.n)
        plan = mesh_hypercube.plan(topology, source)
        run = run_plan(t3d_config(self.m, self.n), plan, LENGTH, at_cycle=0)
        summary = run.summary()
        return {"key": self.key, "m": self.m, "n": self.n, "nodes": topology.n_nodes,
                "source_label": summary["source_label"], "steps_measured": summary["steps"],
                "steps_of_the_plan": max(send_steps(plan)),
                "shape_reference_log2m_plus_log2n4": math.log2(self.m) + math.log2(self.n / 4),
                "latency_cycles": summary["latency_cycles"], "sends": summary["sends"],
                "links_shared_within_a_step": summary["links_shared_within_a_step"],
                "copies_per_node_min": summary["copies_per_node_min"],
                "copies_per_node_max": summary["copies_per_node_max"]}


@dataclass(frozen=True)
class SharingPoint:
    """MH(m, n) from the middle level, all-port: the latency, and each of the source's step-1 copies in the
    broadcast, in a run of only the step-1 sends that share a link with it (directly or through another), and
    alone."""
    m: int
    n: int

    @property
    def key(self) -> str:
        return f"paper003-sharing-mh{self.m}x{self.n}"

    @property
    def cost(self) -> float:
        return self.m * self.n * 2

    def run(self) -> dict:
        return _checked(self.key, self._run)

    def _run(self) -> dict:
        topology = build_topology(mh(self.m, self.n))
        config = t3d_config(self.m, self.n)
        source = middle_source(self.m, self.n)
        plan = mesh_hypercube.plan(topology, source)
        run = run_plan(config, plan, LENGTH, at_cycle=0)
        summary = run.summary()
        steps = send_steps(plan)
        first = [k for k, send in enumerate(plan.sends) if steps[k] == 1]
        routes = {k: dimension_order_path(topology, source, plan.sends[k].destination) for k in first}
        users = defaultdict(list)
        for k in first:
            for link in zip(routes[k], routes[k][1:]):
                users[link].append(k)
        arrival = {c.node: c.arrival for c in run.copies}
        label = topology.coordinates

        def only(sends: list[int]) -> dict[int, int]:
            """Arrival of each of these step-1 sends' copies when they are the only packets."""
            alone = SendPlan("mh", topology, source,
                             tuple(Send(source, TRIGGER_START, -1, plan.sends[k].destination) for k in sends))
            return {c.node: c.arrival for c in run_plan(config, alone, LENGTH, at_cycle=0).copies}

        copies = []
        for k in first:
            destination = plan.sends[k].destination
            group = _linked(k, routes, users)
            shared = [(link, [j for j in users[link] if j != k]) for link in zip(routes[k], routes[k][1:])
                      if len(users[link]) > 1]
            level, cube = destination // self.n, destination % self.n
            kind = ("level" if level != source // self.n else
                    "subcube" if cube >> 2 != (source % self.n) >> 2 else "own subcube")
            alone, together = only([k])[destination], only(group)[destination]
            copies.append({"destination": label(destination), "kind": kind, "hops": len(routes[k]) - 1,
                           "route": " ".join(map(label, routes[k])),
                           "shares_links": "; ".join(f"{label(a)}->{label(b)} with the send to "
                                                     + ", ".join(label(plan.sends[j].destination) for j in others)
                                                     for (a, b), others in shared),
                           "arrival_cycles": arrival[destination], "alone_cycles": alone,
                           "with_link_sharers_cycles": together, "link_wait_cycles": together - alone,
                           "broadcast_minus_sharers_cycles": arrival[destination] - together,
                           "waited_cycles": arrival[destination] - alone})
        return {"key": self.key, "m": self.m, "n": self.n, "nodes": topology.n_nodes, "ports": topology.n_ports,
                "source_label": summary["source_label"], "steps": summary["steps"],
                "latency_cycles": summary["latency_cycles"],
                "links_shared_within_a_step": summary["links_shared_within_a_step"],
                "shared_links_by_step": " ".join(f"{s}:{c}" for s, c in shared_links_by_step(plan).items()),
                "step1_sends": len(first), "copies_per_node_min": summary["copies_per_node_min"],
                "copies_per_node_max": summary["copies_per_node_max"], "first_step": copies}


def _linked(k: int, routes: dict, users: dict) -> list[int]:
    """Send k and every step-1 send joined to it by a chain of shared links, in send order."""
    group, todo = {k}, [k]
    while todo:
        j = todo.pop()
        for link in zip(routes[j], routes[j][1:]):
            for other in users[link]:
                if other not in group:
                    group.add(other)
                    todo.append(other)
    return sorted(group)


def reproduce(results: Path, quick: bool = False, resume: bool = False, workers: int | None = None,
              dask_scheduler: str | None = None, progress: bool = True) -> dict:
    """Run every point (saved under results/points as it finishes) and write paper003/'s CSVs, PNG and
    tables.md. Returns {name: path} of what it wrote."""
    levels, cubes = (QUICK_LEVELS, QUICK_CUBES) if quick else (LEVELS, CUBES)
    sharing_levels, sharing_cubes = ((QUICK_SHARING_LEVELS, QUICK_SHARING_CUBES) if quick
                                     else (SHARING_LEVELS, SHARING_CUBES))
    example = ExamplePoint()
    steps = [StepsPoint(m, n) for n in cubes for m in levels]
    sharing = [SharingPoint(m, n) for m in sharing_levels for n in sharing_cubes]
    done = run_tasks([example, *steps, *sharing], results, resume=resume, workers=workers,
                     dask_scheduler=dask_scheduler, progress=progress, description="paper 003")
    out = results / "paper003"
    out.mkdir(parents=True, exist_ok=True)
    files = {name: out / name for name in ("mh_9_8_example.csv", "mh_9_8_example.md", "steps_vs_size.csv",
                                            "steps_vs_size.png", "sharing_first_step.csv", "sharing_latency.csv",
                                            "tables.md")}
    ran = done[example.key]
    write_csv(ran["rows"], files["mh_9_8_example.csv"])
    write_text(files["mh_9_8_example.md"], example_markdown(ran))
    step_rows = [{k: v for k, v in done[p.key].items() if k != "key"} for p in steps]
    write_csv(step_rows, files["steps_vs_size.csv"])
    draw_steps(step_rows, files["steps_vs_size.png"])
    latency, first = sharing_rows([done[p.key] for p in sharing])
    write_csv(first, files["sharing_first_step.csv"])
    write_csv(latency, files["sharing_latency.csv"])
    write_text(files["tables.md"], example_markdown(ran) + "\n" + example_summary_markdown(ran) + "\n"
               + tables_markdown(step_rows, latency, first))
    return files


def sharing_rows(points: list[dict]) -> tuple[list[dict], list[dict]]:
    """(latency per MH(m, n) against n = 8's with the same m; each step-1 copy with its waits)."""
    eight = {p["m"]: p["latency_cycles"] for p in points if p["n"] == 8}
    latency, first = [], []
    for p in points:
        subcube = [c for c in p["first_step"] if c["kind"] == "subcube"]
        latency.append({"m": p["m"], "n": p["n"], "nodes": p["nodes"], "ports": p["ports"],
                        "source_label": p["source_label"], "steps": p["steps"], "step1_sends": p["step1_sends"],
                        "latency_cycles": p["latency_cycles"],
                        "latency_minus_n8_cycles": p["latency_cycles"] - eight[p["m"]] if p["m"] in eight else None,
                        "links_shared_within_a_step": p["links_shared_within_a_step"],
                        "shared_links_by_step": p["shared_links_by_step"],
                        "subcube_copies_step1": len(subcube),
                        "subcube_copies_with_link_wait": sum(c["link_wait_cycles"] > 0 for c in subcube),
                        "subcube_link_wait_max_cycles": max((c["link_wait_cycles"] for c in subcube), default=0),
                        "step1_wait_max_cycles": max(c["waited_cycles"] for c in p["first_step"]),
                        "copies_per_node_min": p["copies_per_node_min"],
                        "copies_per_node_max": p["copies_per_node_max"]})
        first += [{"m": p["m"], "n": p["n"], **c} for c in p["first_step"]]
    return latency, first


def example_markdown(ran: dict) -> str:
    head = (f"## MH(9,8) from {ran['source_label']}, {ran['length_flits']} flits, idle: {ran['steps']} steps, "
            f"{ran['copies_total']} copies, copies per node {ran['copies_per_node_min']}..{ran['copies_per_node_max']}, "
            f"latency {ran['latency_cycles']} cycles\n\n")
    return head + markdown_table(ran["rows"], [("step", "step"), ("sender", "sender"),
                                               ("plan_sends_to", "plan: sends to"), ("run_copies_at", "run: copies at"),
                                               ("run_arrival_cycles", "arrival (cycles)"),
                                               ("plan_equals_run", "same")])


def example_summary_markdown(ran: dict) -> str:
    """The MH(9,8) example in one row: its steps, copies and latency, and whether every sender sent as planned."""
    senders = ran["rows"]
    row = {"steps": ran["steps"], "copies": ran["copies_total"],
           "per_node": f"{ran['copies_per_node_min']}..{ran['copies_per_node_max']}",
           "latency": ran["latency_cycles"], "senders": len(senders),
           "same": sum(r["plan_equals_run"] is True for r in senders)}
    return ("## The MH(9,8) example in numbers\n\n"
            + markdown_table([row], [("steps", "steps"), ("copies", "copies"), ("per_node", "copies per node"),
                                     ("latency", "latency (cycles)"), ("senders", "(step, sender) pairs"),
                                     ("same", "pairs where the run's copies are the plan's")]))


def _minus_n8(row: dict) -> str:
    """The latency minus n = 8's, in cycles and in per cent of n = 8's."""
    more = row["latency_minus_n8_cycles"]
    return "" if more is None else f"{more:+d} ({100 * more / (row['latency_cycles'] - more):+.0f}%)"


def tables_markdown(steps: list[dict], latency: list[dict], first: list[dict]) -> str:
    cubes = sorted({r["n"] for r in steps})
    wide = []
    for m in sorted({r["m"] for r in steps}):
        row = {"m": m}
        for n in cubes:
            r = next(r for r in steps if r["m"] == m and r["n"] == n)
            row[f"n={n}"] = f"{r['steps_measured']} ({r['shape_reference_log2m_plus_log2n4']:.2f})"
        wide.append(row)
    text = ["## Steps against size: measured (log2 m + log2(n/4), a shape reference only)\n",
            markdown_table(wide, [("m", "m")] + [(f"n={n}", f"n = {n}") for n in cubes]),
            "\n## Latency (cycles) of the same runs\n",
            markdown_table([{"m": w["m"], **{f"n={n}": next(r["latency_cycles"] for r in steps
                                                        if r["m"] == w["m"] and r["n"] == n) for n in cubes}}
                       for w in wide], [("m", "m")] + [(f"n={n}", f"n = {n}") for n in cubes]),
            "\n## Latency minus n = 8's at the same m (cycles)\n",
            markdown_table([{"m": w["m"], **{f"n={n}": _latency_minus_n8(steps, w["m"], n) for n in cubes if n != 8}}
                            for w in wide], [("m", "m")] + [(f"n={n}", f"n = {n}") for n in cubes if n != 8]),
            "\n## n >= 16: latency against n = 8, idle, source at the middle level\n",
            markdown_table([{**r, "minus_n8": _minus_n8(r)} for r in latency],
                           [("m", "m"), ("n", "n"), ("ports", "ports = NP channels"),
                                ("step1_sends", "step-1 sends"), ("steps", "steps"),
                                ("links_shared_within_a_step", "links shared in a step"),
                                ("shared_links_by_step", "shared links (step:count)"),
                                ("latency_cycles", "latency"), ("minus_n8", "minus n = 8's"),
                                ("subcube_copies_with_link_wait", "subcube copies with a link wait"),
                                ("subcube_link_wait_max_cycles", "longest link wait"),
                                ("step1_wait_max_cycles", "longest step-1 wait")]),
            "\n## The source's step-1 copies: arrival in the broadcast against the same send alone\n",
            markdown_table(first, [("m", "m"), ("n", "n"), ("destination", "copy at"), ("kind", "kind"),
                              ("hops", "hops"), ("shares_links", "shares"), ("arrival_cycles", "in the broadcast"),
                              ("with_link_sharers_cycles", "with its link sharers only"),
                              ("alone_cycles", "alone"), ("link_wait_cycles", "link wait"),
                              ("broadcast_minus_sharers_cycles", "broadcast minus sharers-only")]),
            "\n## A step-1 send alone, by hops\n",
            markdown_table(alone_by_hops(first), [("hops", "hops"), ("alone", "alone (cycles)"),
                                                  ("copies", "step-1 copies")])]
    return "".join(text)


def _latency_minus_n8(steps: list[dict], m: int, n: int) -> int | str:
    latency = {r["n"]: r["latency_cycles"] for r in steps if r["m"] == m}
    return latency[n] - latency[8] if 8 in latency and n in latency else ""


def alone_by_hops(first: list[dict]) -> list[dict]:
    """What one of the source's step-1 sends takes with no other packet, by its hops (every distinct value)."""
    hops = sorted({c["hops"] for c in first})
    return [{"hops": h, "alone": " ".join(str(t) for t in sorted({c["alone_cycles"] for c in first if c["hops"] == h})),
             "copies": sum(c["hops"] == h for c in first)} for h in hops]


def draw_steps(rows: list[dict], path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.6), layout="constrained")
    cubes = sorted({r["n"] for r in rows})
    for index, n in enumerate(cubes):
        mine = sorted((r for r in rows if r["n"] == n), key=lambda r: r["m"])
        # equal step counts would hide each other: the larger n, the thinner the line and the smaller the marker
        size = 2 * (len(cubes) - index)
        ax.plot([r["m"] for r in mine], [r["steps_measured"] for r in mine], marker="o", ms=2 + size,
                lw=0.8 + size / 2, color=f"C{index}", label=f"n = {n}: measured")
        ax.plot([r["m"] for r in mine], [r["shape_reference_log2m_plus_log2n4"] for r in mine], ls=":",
                color=f"C{index}", label=f"n = {n}: log2 m + log2(n/4)")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("levels m of MH(m, n)")
    ax.set_ylabel("message-passing steps")
    ax.set_title("Paper 003: steps of the copies each run made, source (middle level, 0); "
                 "dotted: the O() shape only", fontsize=8)
    ax.legend(fontsize=7, ncol=2)
    save_figure(fig, path, dpi=130)
    plt.close(fig)
