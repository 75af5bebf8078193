"""Drawings of one broadcast (`plot_broadcast`, whichever paper's): paper 000's tree on the hexagonal mesh, in
the manner of the paper's Figs 2 and 4-8 (the nodes laid out as the hexagon around the source, an arrow per
link transmission, the first hop of each send_packet, a start after store-and-forward, drawn apart from the
hops that cut through a node, and wrap links drawn as stubs at both ends, one label per link); papers
002-003's routes coloured by step; paper 004's circuits one panel per phase."""

from __future__ import annotations

import itertools
import string

import numpy as np

from ..broadcasts.kandlur_shin import BroadcastRun
from ..network.hexmesh import UNIT
from ..output import save_figure

START_STYLE = {"color": "tab:orange", "lw": 2.2}
CUT_STYLE = {"color": "tab:blue", "lw": 1.0}


def positions(run: BroadcastRun) -> np.ndarray:
    """Each node's place in the hexagon centred on the source: the mesh is circulant, so node v sits where
    v - source sits in the hexagon around node 0 that ``Topology.positions`` draws."""
    topo = run.result.topology
    return topo.positions()[(np.arange(topo.n_nodes) - run.source) % topo.n_nodes]


def _wrap_labels():
    """a..z, A..Z, then two letters, and so on: as many short labels as a mesh has wrap links."""
    for width in itertools.count(1):
        for letters in itertools.product(string.ascii_letters, repeat=width):
            yield "".join(letters)


def plot_broadcast(run, path: str) -> None:
    """The drawing that fits the broadcast's paper."""
    from ..broadcasts.plans import PlanRun
    from ..broadcasts.torus import TorusBroadcast

    if isinstance(run, TorusBroadcast):
        plot_torus_broadcast(run, path)
    elif isinstance(run, PlanRun):
        plot_plan_broadcast(run, path)
    else:
        plot_tree(run, path)


def plot_tree(run: BroadcastRun, path: str) -> None:
    """Paper 000's tree."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    topo = run.result.topology
    xy = positions(run)
    n = int(topo.shape[0])
    fig, ax = plt.subplots(figsize=(2.0 + 1.2 * n, 1.6 + 1.1 * n))
    ax.scatter(xy[:, 0], xy[:, 1], s=60, color="white", edgecolors="black", zorder=3)
    ax.scatter(*xy[run.source], s=160, color="tab:red", edgecolors="black", zorder=4)
    if topo.n_nodes <= 127:
        for v, (x, y) in enumerate(xy):
            ax.annotate(str(v), (x, y), fontsize=6, ha="center", va="center", zorder=5)
    labels = _wrap_labels()
    # Both directions of a wrap link share its stubs, so each link is labelled once at each end.
    labelled = set()
    for worm in run.worms:
        node = worm.sender
        for hop in range(worm.hops):
            nxt = int(topo.neighbours[node, worm.direction])
            style = START_STYLE if hop == 0 else CUT_STYLE
            step = UNIT[worm.direction]
            if np.allclose(xy[node] + step, xy[nxt]):
                _arrow(ax, xy[node], xy[nxt], style)
            else:  # a wrap link: a stub leaving one side of the hexagon and one entering the other
                _arrow(ax, xy[node], xy[node] + 0.45 * step, style)
                _arrow(ax, xy[nxt] - 0.45 * step, xy[nxt], style)
                link = (min(node, nxt), max(node, nxt))
                if link not in labelled:
                    labelled.add(link)
                    label = next(labels)
                    for where in (xy[node] + 0.62 * step, xy[nxt] - 0.62 * step):
                        ax.annotate(label, where, fontsize=8, color="tab:green", ha="center", va="center",
                                    annotation_clip=False)
            node = nxt
    ax.plot([], [], **START_STYLE, label="send_packet: first hop (a start after store-and-forward)")
    ax.plot([], [], **CUT_STYLE, label="hop after cutting through a node")
    ax.plot([], [], color="tab:green", marker="$a$", ls="",
            label=f"wrap link (either direction), labelled at both ends ({len(labelled)} links)")
    ax.set_title(f"{run.algorithm.upper()} on {topo.name} from node {run.source}, M = {run.length} bytes: "
                 f"latency {float(run.latency):.2f} cycles", fontsize=9)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.02), fontsize=7, ncol=1, frameon=False)
    ax.set_aspect("equal")
    ax.margins(0.1)
    ax.axis("off")
    fig.tight_layout()
    save_figure(fig, path, dpi=150)
    plt.close(fig)


def _arrow(ax, start, end, style) -> None:
    ax.annotate("", xy=end, xytext=start,
                arrowprops={"arrowstyle": "-|>", "color": style["color"], "lw": style["lw"],
                            "shrinkA": 5, "shrinkB": 5, "mutation_scale": 8},
                annotation_clip=False)


STEP_COLOURS = ("tab:orange", "tab:blue", "tab:green", "tab:purple", "tab:brown", "tab:pink", "tab:olive",
                "tab:cyan", "tab:red", "tab:gray")


def plot_plan_broadcast(run, path: str) -> None:
    """A broadcast of papers 002/003 on its network: every send's route coloured by its step, dashed where the
    worm passes a node without leaving a copy, the source in red. Nodes are drawn where the topology puts
    them (a mesh's grid; a mesh-hypercube's levels as rows of cube addresses)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    from ..np.send_plan import route_copies, send_steps

    plan = run.plan
    topo = plan.topology
    xy = topo.positions()
    width = np.ptp(xy[:, 0]) + 1
    height = np.ptp(xy[:, 1]) + 1
    scale = min(1.0, 14.0 / max(width, height))
    fig, ax = plt.subplots(figsize=(2.0 + 0.9 * width * scale, 1.6 + 0.9 * height * scale))
    ax.scatter(xy[:, 0], xy[:, 1], s=40 * scale, color="white", edgecolors="black", zorder=3)
    ax.scatter(*xy[plan.source], s=120 * scale, color="tab:red", edgecolors="black", zorder=4)
    steps = send_steps(plan)
    for k, send in enumerate(plan.sends):
        colour = STEP_COLOURS[(steps[k] - 1) % len(STEP_COLOURS)]
        copies = route_copies(topo, send)
        route = copies[-1][1]
        absorbing = {node for node, _ in copies}
        # the link into a node that takes a copy is solid, one into a node it only passes dashed
        for a, b in zip(route, route[1:]):
            offset = 0.08 * (steps[k] % 3 - 1)
            ax.annotate("", xy=xy[b] + offset, xytext=xy[a] + offset,
                        arrowprops={"arrowstyle": "->", "color": colour, "lw": 1.4,
                                    "linestyle": "-" if b in absorbing else "--"}, zorder=2)
    legend = [Line2D([0], [0], color=STEP_COLOURS[(s - 1) % len(STEP_COLOURS)], lw=2, label=f"step {s}")
              for s in sorted(set(steps))]
    ax.legend(handles=legend, loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8)
    summary = run.summary()
    ax.set_title(f"{plan.algorithm} on {topo.name} from {topo.coordinates(plan.source)}: {summary['steps']} steps, "
                 f"{summary['latency_cycles']} cycles ({run.length} flits)", fontsize=9)
    ax.set_aspect("equal")
    ax.axis("off")
    fig.tight_layout()
    save_figure(fig, path, dpi=120)
    plt.close(fig)


def plot_torus_broadcast(broadcast, path: str) -> None:
    """Paper 004's broadcast on its torus, one panel per phase: that phase's circuits (the first packet's,
    for a pipelined broadcast) as arrows from sender to destination, nodes that hold the message by the
    phase's end filled, the source in red. A route that wraps round is drawn to the edge and on from the
    opposite one."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ..np.send_plan import route_copies

    plan = broadcast.run.plan
    topo = plan.topology
    width, height = (int(side) for side in topo.shape)
    xy = topo.positions()
    steps = broadcast.steps
    # the first packet (the H-trees: of each half) shows the tree; later packets repeat it
    leading = {0, plan.pieces // 2} if plan.algorithm == "htree" else {0}
    first = [k for k, send in enumerate(plan.sends) if send.piece in leading]
    phases = sorted({steps[k] for k in first})
    columns = min(len(phases), 4)
    rows = -(-len(phases) // columns)
    side = min(4.0, 16.0 / columns)
    fig, axes = plt.subplots(rows, columns, figsize=(side * columns, side * rows + 0.6), squeeze=False)
    informed = {plan.source}
    lw = max(0.5, 2.0 - width / 40)
    for ax, phase in zip(axes.flat, phases):
        sends = [plan.sends[k] for k in first if steps[k] == phase]
        for send in sends:
            colour = STEP_COLOURS[send.piece * 2 // max(plan.pieces, 1) % len(STEP_COLOURS)]
            route = route_copies(topo, send)[-1][1]
            for a, b in zip(route, route[1:]):
                start, end = xy[a], xy[b]
                if abs(end - start).sum() > 1:  # a wrap link: half an arrow at each edge
                    step = np.sign(start - end)
                    ax.plot(*zip(start, start + 0.5 * step), color=colour, lw=lw)
                    ax.annotate("", xy=end, xytext=end - 0.5 * step,
                                arrowprops={"arrowstyle": "->", "color": colour, "lw": lw})
                else:
                    ax.annotate("", xy=end, xytext=start, arrowprops={"arrowstyle": "->", "color": colour, "lw": lw})
            informed.add(send.destination)
        held = np.array(sorted(informed))
        marker = max(2.0, 60.0 / max(width, height))
        ax.scatter(xy[:, 0], xy[:, 1], s=marker, color="white", edgecolors="grey", linewidths=0.4, zorder=3)
        ax.scatter(xy[held, 0], xy[held, 1], s=marker, color="black", zorder=4)
        ax.scatter(*xy[plan.source], s=2.5 * marker, color="tab:red", zorder=5)
        ax.set_title(f"phase {phase}: {len(sends)} circuits", fontsize=9)
        ax.set_xlim(-1, width)
        ax.set_ylim(-1, height)
        ax.set_aspect("equal")
        ax.axis("off")
    for ax in list(axes.flat)[len(phases):]:
        ax.axis("off")
    summary = broadcast.summary()
    fig.suptitle(f"{plan.algorithm} on {topo.name} from {topo.coordinates(plan.source)}: {summary['phases']} phases, "
                 f"{summary['completion_cycles']} cycles (formula {summary['formula_cycles']}), "
                 f"{broadcast.run.length} flits", fontsize=10)
    fig.tight_layout()
    save_figure(fig, path, dpi=110)
    plt.close(fig)
