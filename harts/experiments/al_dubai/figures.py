"""Paper 002, Section 5 (Al-Dubai, Ould-Khaoua & Mackenzie): Figs 4, 5 and 6 from runs on the flit-level
wormhole controller, with the Cray T3D parameters mapped as configs/t3d_mesh_8x8.yaml says (one cycle = one
flit time = 0.0033 us, start-up 227 cycles ~ 0.75 us, all-port NPs; the router's own timing is ours).

The paper gives no numbers, only shapes and step counts. Fig. 4's steps here are the steps of the copies each
run made, not a formula; the paper's stated counts (PCP 2, RD log2 N = 2k, EDN k+1, NP-D k+2 on 2^k x 2^k) sit
beside them in fig4_steps.csv in columns of their own.

Every broadcast is held against its plan inside run_plan (each node other than the source gets each piece
exactly once, by the plan's routes; it raises otherwise), and a DeadlockError propagates and stops the sweep:
a row here is a run that finished.

Background traffic (Figs 5 and 6 and the deadlock check) is uniform Poisson unicasts of PACKET_FLITS flits,
which cpr.yaml routes in the lower virtual channel (PCP's coded paths have the upper one; RD's unicasts share
the lower one with the background). Its rate is a fraction of each mesh's channel-load bound for uniform
traffic under dimension-order routing, 4(N-1)/(kN) flits/node/cycle on the k x k mesh (0.94 on 4x4, 0.062
on 64x64): one rate in flits/node/cycle for every size would leave 4x4 nearly idle while 64x64 saturates. The
broadcast starts after WARMUP cycles of it, and the background is generated until the broadcast has ended
(run.cycles is doubled and the run repeated until it is), except in the deadlock check, past saturation,
where it is generated for DEADLOCK_WINDOW cycles after the start.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ...broadcasts.plans import make_plan, run_plan
from ...errors import SimulationError
from ...machine.config import CONFIGS_DIR, load_config
from ...machine.flits import DeadlockError
from ...network.build import build_topology
from ...output import save_figure, write_text
from ..sweep import run_tasks, write_csv

CONFIG = CONFIGS_DIR / "t3d_mesh_8x8.yaml"
ALGORITHMS = ("pcp", "rd", "edn", "npd")
LABELS = {"pcp": "PCP", "rd": "RD", "edn": "EDN", "npd": "NP-D"}
# The paper's own step counts on the 2^k x 2^k mesh (Section 5): statements, not measurements.
PAPER_STEPS = {"pcp": (lambda k: 2, "2 whatever the size (Theorem 1)"),
               "rd": (lambda k: 2 * k, "log2 N = 2k"),
               "edn": (lambda k: k + 1, "k + 1 (citing Tsai & McKinley)"),
               "npd": (lambda k: k + 2, "k + 2 (citing its ref. [10])")}
LENGTH = 100  # flits: Figs 4 and 5
PACKET_FLITS = 16  # background packets
WARMUP = 2_000  # cycles of background before the broadcast starts
BACKGROUND_SEED = 1  # run.seed of the background traffic
SOURCE_SEED = 2002  # the random sources of each size
MAX_ATTEMPTS = 8  # doublings of run.cycles before a run that will not end inside its background is an error
# The deadlock check's background runs for this many cycles after the broadcast starts, ended or not: past
# saturation a broadcast that must end inside the background chases it (the longer the background, the longer
# the broadcast: 107,819 cycles and 1.16 million cycles simulated for one PCP run on 16x16 at 1.2 x bound).
DEADLOCK_WINDOW = 20_000


@dataclass(frozen=True)
class Sweep:
    fig4_k: tuple[int, ...]  # 2^k x 2^k, source (0,0), idle
    fig5_sides: tuple[int, ...]
    fractions: tuple[float, ...]  # background, as fractions of the uniform channel-load bound (0: idle)
    fig6_sides: tuple[int, ...]
    fig6_lengths: tuple[int, ...]
    random_sources: int  # per size, beside (0,0)
    deadlock: dict  # side -> fractions of its bound, PCP only
    deadlock_sources: int  # random sources per (side, fraction)
    # (side, fraction) of Fig. 5 rerun with 4 VCs (2 for unicasts, 2 for coded paths in cpr.yaml): how much of
    # RD's loss under load comes from sharing one VC with the background
    vc_check: tuple = ()
    # Fig. 4's runs continued past the paper's sizes for PCP and RD: where PCP's lead goes
    beyond_k: tuple = ()


FULL = Sweep(fig4_k=(3, 4, 5, 6, 7), fig5_sides=(4, 8, 16, 32, 64), fractions=(0.0, 0.2, 0.4),
             fig6_sides=(4, 8), fig6_lengths=tuple(range(30, 211, 30)), random_sources=5,
             deadlock={8: (0.4, 0.8, 1.2), 16: (0.4, 0.8, 1.2)}, deadlock_sources=5,
             vc_check=((8, 0.4), (16, 0.4), (64, 0.4)), beyond_k=(8, 9))
QUICK = Sweep(fig4_k=(3, 4), fig5_sides=(4, 8), fractions=(0.0, 0.4), fig6_sides=(4, 8), fig6_lengths=(30, 210),
              random_sources=1, deadlock={8: (0.8,)}, deadlock_sources=1)


def mesh(side: int) -> dict:
    return {"kind": "mesh", "dims": [side, side]}


def t3d_config(side: int):
    """Our T3D mapping (configs/t3d_mesh_8x8.yaml) on the side x side mesh, idle."""
    return load_config(CONFIG).with_topology(**mesh(side))


def uniform_bound(side: int) -> float:
    """The channel-load bound of uniform traffic under dimension-order routing on the side x side mesh, in
    flits/node/cycle at one flit per cycle: the busiest links are the middle ones, each carrying side/4 x
    N/(N-1) of a node's rate. Equals harts.machine.patterns.throughput_bound(..., "uniform") (tests check it), which
    takes half a minute on 64x64."""
    n = side * side
    return 4 * (n - 1) / (side * n)


def sources(side: int, count: int) -> list[int]:
    """(0,0) and `count` other nodes drawn with a fixed seed per size."""
    rng = np.random.default_rng(SOURCE_SEED + side)
    drawn = rng.choice(np.arange(1, side * side), size=min(count, side * side - 1), replace=False)
    return [0, *sorted(int(v) for v in drawn)]


@dataclass(frozen=True)
class BroadcastPoint:
    """One broadcast from `source` on the side x side mesh: idle when `fraction` is 0, else over uniform
    background at that fraction of the mesh's channel-load bound, generated until the broadcast has ended
    (`window` 0) or for `window` cycles after it starts."""
    side: int
    algorithm: str
    length: int
    fraction: float
    source: int
    window: int = 0
    virtual_channels: int = 2

    @property
    def key(self) -> str:
        return (f"paper002-{self.algorithm}-{self.side}x{self.side}-len{self.length}-bg{self.fraction:g}"
                f"-src{self.source}" + (f"-window{self.window}" if self.window else "")
                + (f"-vc{self.virtual_channels}" if self.virtual_channels != 2 else ""))

    @property
    def cost(self) -> float:
        return self.side ** 2 * (1 + 20 * self.fraction) * self.length

    def run(self) -> dict:
        try:
            return self._run()
        except DeadlockError as exc:
            raise DeadlockError(f"{self.key}: {exc}", exc.cycle) from exc

    def _run(self) -> dict:
        topology = build_topology(mesh(self.side))
        plan = make_plan(topology, self.algorithm, self.source)
        base = t3d_config(self.side).with_values(flow__virtual_channels=self.virtual_channels)
        idle = run_plan(base, plan, self.length, at_cycle=0)
        run, config, attempts, rate, tried = idle, base, 1, 0.0, []
        if self.fraction > 0:
            rate = self.fraction * uniform_bound(self.side)
            margin = self.window or 2 * idle.latency + 1000
            for attempts in range(1, MAX_ATTEMPTS + 1):
                config = base.with_values(traffic__synthetic__rate=rate, traffic__synthetic__pattern="uniform",
                                          traffic__synthetic__packet_flits=PACKET_FLITS, run__warmup_cycles=WARMUP,
                                          run__cycles=WARMUP + margin, run__seed=BACKGROUND_SEED)
                run = run_plan(config, plan, self.length)
                tried.append(f"{config['run.cycles']}:{run.latency}")
                if self.window or run.start + run.latency <= config["run.cycles"]:
                    break
                margin *= 2
            else:
                raise SimulationError(f"{self.key}: the broadcast had not ended when the background stopped, "
                                      f"{MAX_ATTEMPTS} times (last run.cycles {config['run.cycles']})")
        summary = run.summary()
        period = base["timing.clock_period_us"]
        return {"key": self.key, "network": topology.name, "side": self.side, "nodes": topology.n_nodes,
                "algorithm": self.algorithm, "source": self.source, "source_label": summary["source_label"],
                "length_flits": self.length, "virtual_channels": self.virtual_channels,
                "background_fraction_of_bound": self.fraction,
                "background_rate": rate, "steps": summary["steps"], "latency_cycles": summary["latency_cycles"],
                "latency_us": summary["latency_cycles"] * period, "idle_latency_cycles": idle.latency,
                "copies_per_node_min": summary["copies_per_node_min"],
                "copies_per_node_max": summary["copies_per_node_max"], "sends": summary["sends"],
                "links_shared_within_a_step": summary["links_shared_within_a_step"],
                "background_packets": summary["background_packets"],
                "background_latency_mean_cycles": summary["background_latency_mean_cycles"],
                "broadcast_start": run.start, "background_until_cycle": config["run.cycles"],
                "ended_inside_background": run.start + run.latency <= config["run.cycles"],
                "cycles_simulated": int(run.result.cycles), "attempts": attempts,
                "latency_by_background_cycles": " ".join(tried), "deadlocked": False}


def fig4_points(sweep: Sweep) -> list[BroadcastPoint]:
    return [BroadcastPoint(2 ** k, algorithm, LENGTH, 0.0, 0) for k in sweep.fig4_k for algorithm in ALGORITHMS]


def fig5_points(sweep: Sweep) -> list[BroadcastPoint]:
    return [BroadcastPoint(side, algorithm, LENGTH, fraction, source) for side in sweep.fig5_sides
            for algorithm in ("pcp", "rd") for fraction in sweep.fractions
            for source in sources(side, sweep.random_sources)]


def fig6_points(sweep: Sweep) -> list[BroadcastPoint]:
    return [BroadcastPoint(side, algorithm, length, fraction, source) for side in sweep.fig6_sides
            for algorithm in ("pcp", "rd") for fraction in sweep.fractions for length in sweep.fig6_lengths
            for source in sources(side, sweep.random_sources)]


def deadlock_points(sweep: Sweep) -> list[BroadcastPoint]:
    return [BroadcastPoint(side, "pcp", LENGTH, fraction, source, DEADLOCK_WINDOW)
            for side, fractions in sweep.deadlock.items() for fraction in fractions
            for source in sources(side, sweep.deadlock_sources)[1:]]


def beyond_points(sweep: Sweep) -> list[BroadcastPoint]:
    return [BroadcastPoint(2 ** k, algorithm, LENGTH, 0.0, 0) for k in sweep.beyond_k for algorithm in ("pcp", "rd")]


def vc_points(sweep: Sweep) -> list[BroadcastPoint]:
    """Fig. 5's loaded points of sweep.vc_check, with 2 VCs (the same points as Fig. 5's) and with 4."""
    return [BroadcastPoint(side, algorithm, LENGTH, fraction, source, virtual_channels=vcs)
            for side, fraction in sweep.vc_check for algorithm in ("pcp", "rd") for vcs in (2, 4)
            for source in sources(side, sweep.random_sources)]


def fig4_rows(done: dict, sweep: Sweep) -> list[dict]:
    rows = []
    for point in fig4_points(sweep):
        r = done[point.key]
        k = int(np.log2(point.side))
        stated, text = PAPER_STEPS[point.algorithm]
        rows.append({"k": k, "side": point.side, "nodes": r["nodes"], "algorithm": LABELS[point.algorithm],
                     "steps_measured": r["steps"], "paper_statement_steps": stated(k),
                     "paper_statement": text, "latency_cycles": r["latency_cycles"], "latency_us": r["latency_us"],
                     "sends": r["sends"], "links_shared_within_a_step": r["links_shared_within_a_step"],
                     "copies_per_node_min": r["copies_per_node_min"],
                     "copies_per_node_max": r["copies_per_node_max"]})
    return rows


def aggregate(runs: list[dict]) -> list[dict]:
    """Per network, algorithm, message length and background: the runs' (sources') mean, least and greatest
    latency, and what every run held to."""
    groups = defaultdict(list)
    for r in runs:
        groups[(r["side"], r["algorithm"], r["length_flits"], r["background_fraction_of_bound"],
                r["virtual_channels"])].append(r)
    out = []
    for (side, algorithm, length, fraction, vcs), mine in groups.items():
        latency = [r["latency_cycles"] for r in mine]
        period = mine[0]["latency_us"] / mine[0]["latency_cycles"]
        background = [r["background_latency_mean_cycles"] for r in mine if r["background_latency_mean_cycles"]]
        out.append({"network": mine[0]["network"], "side": side, "nodes": mine[0]["nodes"],
                    "algorithm": LABELS[algorithm], "length_flits": length, "virtual_channels": vcs,
                    "background_fraction_of_bound": fraction,
                    "background_rate": mine[0]["background_rate"], "runs": len(mine),
                    "sources": " ".join(r["source_label"] for r in mine),
                    "steps_min": min(r["steps"] for r in mine), "steps_max": max(r["steps"] for r in mine),
                    "latency_mean_cycles": float(np.mean(latency)), "latency_min_cycles": min(latency),
                    "latency_max_cycles": max(latency), "latency_mean_us": float(np.mean(latency)) * period,
                    "latency_max_us": max(latency) * period,
                    "idle_latency_mean_cycles": float(np.mean([r["idle_latency_cycles"] for r in mine])),
                    "background_latency_mean_cycles": float(np.mean(background)) if background else None,
                    "copies_per_node_min": min(r["copies_per_node_min"] for r in mine),
                    "copies_per_node_max": max(r["copies_per_node_max"] for r in mine),
                    "deadlocked_runs": sum(bool(r["deadlocked"]) for r in mine)})
    return sorted(out, key=lambda r: (r["side"], r["background_fraction_of_bound"], r["algorithm"], r["length_flits"],
                                      r["virtual_channels"]))


def deadlock_summary(runs: list[dict]) -> list[dict]:
    groups = defaultdict(list)
    for r in runs:
        groups[(r["side"], r["background_fraction_of_bound"])].append(r)
    return [{"network": mine[0]["network"], "algorithm": "PCP", "background_fraction_of_bound": fraction,
             "background_rate": mine[0]["background_rate"], "runs": len(mine),
             "sources": " ".join(r["source_label"] for r in mine),
             "cycles_simulated_total": sum(r["cycles_simulated"] for r in mine),
             "cycles_simulated_max": max(r["cycles_simulated"] for r in mine),
             "background_packets_total": sum(r["background_packets"] for r in mine),
             "background_latency_mean_cycles": float(np.mean([r["background_latency_mean_cycles"] for r in mine])),
             "background_window_cycles": mine[0]["background_until_cycle"] - mine[0]["broadcast_start"],
             "ended_inside_background": sum(bool(r["ended_inside_background"]) for r in mine),
             "broadcast_latency_min_cycles": min(r["latency_cycles"] for r in mine),
             "broadcast_latency_max_cycles": max(r["latency_cycles"] for r in mine),
             "idle_latency_max_cycles": max(r["idle_latency_cycles"] for r in mine),
             "copies_per_node_min": min(r["copies_per_node_min"] for r in mine),
             "copies_per_node_max": max(r["copies_per_node_max"] for r in mine),
             "deadlocked_runs": sum(bool(r["deadlocked"]) for r in mine)}
            for (side, fraction), mine in sorted(groups.items())]


def reproduce(results: Path, quick: bool = False, resume: bool = False, workers: int | None = None,
              dask_scheduler: str | None = None, progress: bool = True) -> dict:
    """Run every point (saved under results/points as it finishes) and write paper002/'s CSVs, PNGs and
    tables.md. Returns {name: path} of what it wrote."""
    sweep = QUICK if quick else FULL
    groups = {"fig4": fig4_points(sweep), "fig5": fig5_points(sweep), "fig6": fig6_points(sweep),
              "deadlock": deadlock_points(sweep), "vc_check": vc_points(sweep), "beyond": beyond_points(sweep)}
    done = run_tasks([p for points in groups.values() for p in points], results, resume=resume, workers=workers,
                     dask_scheduler=dask_scheduler, progress=progress, description="paper 002")
    runs = {name: [{k: v for k, v in done[p.key].items() if k != "key"} for p in points]
            for name, points in groups.items()}
    out = results / "paper002"
    out.mkdir(parents=True, exist_ok=True)
    files = {}

    def csv(name: str, rows: list[dict]) -> None:
        files[name] = out / f"{name}.csv"
        write_csv(rows, files[name])

    fig4 = fig4_rows(done, sweep)
    csv("fig4_steps", fig4)
    fig5, fig6 = aggregate(runs["fig5"]), aggregate(runs["fig6"])
    csv("fig5_runs", runs["fig5"])
    csv("fig5_latency", fig5)
    csv("fig6_runs", runs["fig6"])
    csv("fig6_latency", fig6)
    deadlock = deadlock_summary(runs["deadlock"])
    csv("deadlock_runs", runs["deadlock"])
    csv("deadlock_check", deadlock)
    beyond = [{"k": int(np.log2(r["side"])), **{k: r[k] for k in ("network", "nodes", "algorithm", "steps",
                                                                      "latency_cycles", "latency_us",
                                                                      "copies_per_node_min", "copies_per_node_max")}}
              for r in runs["fig4"] + runs["beyond"] if r["algorithm"] in ("pcp", "rd")]
    if runs["beyond"]:
        csv("fig4_beyond", sorted(beyond, key=lambda r: (r["algorithm"], r["k"])))
    vc_check = aggregate(runs["vc_check"]) if runs["vc_check"] else []
    if vc_check:
        csv("vc_check_runs", runs["vc_check"])
        csv("vc_check", vc_check)
    for name, draw in (("fig4_steps", draw_fig4), ("fig5_latency", draw_fig5), ("fig6_latency", draw_fig6)):
        files[f"{name}_png"] = out / f"{name}.png"
        draw({"fig4_steps": fig4, "fig5_latency": fig5, "fig6_latency": fig6}[name], files[f"{name}_png"])
    files["tables"] = out / "tables.md"
    write_text(files["tables"], tables_markdown(fig4, fig5, fig6, deadlock, vc_check,
                                                beyond if runs["beyond"] else []))
    return files


def _markdown(rows: list[dict], columns: list[tuple[str, str]]) -> str:
    def shown(value):
        if isinstance(value, float):
            return f"{value:.4g}" if abs(value) < 1 else f"{value:.1f}"
        return str(value)
    lines = ["| " + " | ".join(title for _, title in columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(shown(r[key]) for key, _ in columns) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def tables_markdown(fig4: list[dict], fig5: list[dict], fig6: list[dict], deadlock: list[dict],
                    vc_check: list[dict] = (), beyond: list[dict] = ()) -> str:
    k_values = sorted({r["k"] for r in fig4})
    wide = []
    for k in k_values:
        mine = {r["algorithm"]: r for r in fig4 if r["k"] == k}
        row = {"mesh": f"{2 ** k}x{2 ** k}", "nodes": 4 ** k}
        for algorithm in LABELS.values():
            row[algorithm] = f"{mine[algorithm]['steps_measured']} ({mine[algorithm]['paper_statement_steps']})"
        wide.append(row)
    text = ["## Fig. 4: steps measured (the paper's statement), source (0,0), 100 flits, idle\n",
            _markdown(wide, [("mesh", "mesh"), ("nodes", "nodes")] + [(a, a) for a in LABELS.values()]),
            "\n## Fig. 4: latency of the same runs (cycles)\n",
            _markdown([{"mesh": w["mesh"], **{a: next(r["latency_cycles"] for r in fig4 if r["k"] == k
                                                    and r["algorithm"] == a) for a in LABELS.values()}}
                       for k, w in zip(k_values, wide)], [("mesh", "mesh")] + [(a, a) for a in LABELS.values()])]
    columns = [("network", "network"), ("algorithm", "alg."), ("length_flits", "flits"), ("virtual_channels", "VCs"),
               ("background_fraction_of_bound", "bg (x bound)"), ("background_rate", "bg flits/node/cycle"),
               ("runs", "runs"), ("steps_max", "steps"), ("latency_mean_cycles", "mean cycles"),
               ("latency_max_cycles", "max cycles"), ("latency_mean_us", "mean us"), ("latency_max_us", "max us"),
               ("idle_latency_mean_cycles", "idle mean cycles"),
               ("background_latency_mean_cycles", "bg packet latency"), ("copies_per_node_min", "copies min"),
               ("copies_per_node_max", "copies max"), ("deadlocked_runs", "deadlocks")]
    text += ["\n## Fig. 5: latency against network size, 100 flits\n", _markdown(fig5, columns),
             "\n## Fig. 6: latency against message length\n", _markdown(fig6, columns),
             "\n## Deadlock check: PCP over uniform background\n",
             _markdown(deadlock, [("network", "network"), ("background_fraction_of_bound", "bg (x bound)"),
                                  ("background_rate", "bg flits/node/cycle"), ("runs", "runs"),
                                  ("cycles_simulated_total", "cycles simulated"),
                                  ("background_packets_total", "bg packets"),
                                  ("background_latency_mean_cycles", "bg packet latency"),
                                  ("background_window_cycles", "bg after start"),
                                  ("ended_inside_background", "ended inside bg"),
                                  ("broadcast_latency_min_cycles", "bcast min"),
                                  ("broadcast_latency_max_cycles", "bcast max"),
                                  ("idle_latency_max_cycles", "idle max"), ("copies_per_node_min", "copies min"),
                                  ("copies_per_node_max", "copies max"), ("deadlocked_runs", "deadlocks")])]
    if beyond:
        sizes = sorted({r["k"] for r in beyond})
        table = [{"mesh": f"{2 ** k}x{2 ** k}", "nodes": 4 ** k,
                  **{f"{a} {what}": next(r[key] for r in beyond if r["k"] == k and r["algorithm"] == a)
                     for a in ("pcp", "rd") for what, key in (("steps", "steps"), ("cycles", "latency_cycles"))}}
                 for k in sizes]
        for row in table:
            row["RD / PCP"] = row["rd cycles"] / row["pcp cycles"]
        text += ["\n## Fig. 4's PCP and RD runs continued past the paper's sizes, source (0,0), idle\n",
                 _markdown(table, [("mesh", "mesh"), ("nodes", "nodes"), ("pcp steps", "PCP steps"),
                                   ("pcp cycles", "PCP cycles"), ("rd steps", "RD steps"), ("rd cycles", "RD cycles"),
                                   ("RD / PCP", "RD / PCP")])]
    if vc_check:
        text += ["\n## Fig. 5's loaded points with 2 and with 4 virtual channels (cpr.yaml: half for unicasts, "
                 "half for coded paths)\n", _markdown(list(vc_check), columns)]
    return "".join(text)


def _pyplot():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def draw_fig4(rows: list[dict], path: Path) -> None:
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.6), layout="constrained")
    for index, algorithm in enumerate(LABELS.values()):
        mine = [r for r in rows if r["algorithm"] == algorithm]
        nodes = [r["nodes"] for r in mine]
        ax.plot(nodes, [r["steps_measured"] for r in mine], marker="o", color=f"C{index}",
                label=f"{algorithm}: measured")
        ax.plot(nodes, [r["paper_statement_steps"] for r in mine], ls=":", marker="x", ms=8, color=f"C{index}",
                label=f"{algorithm}: the paper's statement")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("nodes (2^k x 2^k mesh)")
    ax.set_ylabel("message-passing steps")
    ax.set_title("Paper 002, Fig. 4: steps of the copies each run made, source (0,0)", fontsize=9)
    ax.legend(fontsize=7, ncol=2)
    save_figure(fig, path, dpi=130)
    plt.close(fig)


def _condition(fraction: float) -> str:
    return "idle" if fraction == 0 else f"background {fraction:g} x bound"


def draw_fig5(rows: list[dict], path: Path) -> None:
    plt = _pyplot()
    fractions = sorted({r["background_fraction_of_bound"] for r in rows})
    fig, axes = plt.subplots(1, len(fractions), figsize=(4.6 * len(fractions), 4.4), layout="constrained",
                             squeeze=False)
    for ax, fraction in zip(axes[0], fractions):
        for index, algorithm in enumerate(("PCP", "RD")):
            mine = [r for r in rows if r["algorithm"] == algorithm and r["background_fraction_of_bound"] == fraction]
            nodes = [r["nodes"] for r in mine]
            ax.plot(nodes, [r["latency_mean_us"] for r in mine], marker="o", color=f"C{index}",
                    label=f"{algorithm}: mean of {mine[0]['runs']} sources")
            ax.plot(nodes, [r["latency_max_us"] for r in mine], ls="--", color=f"C{index}", label=f"{algorithm}: max")
        ax.set_xscale("log", base=2)
        ax.set_xlabel("nodes (k x k mesh)")
        ax.set_ylabel("broadcast latency (us, our T3D mapping)")
        ax.set_title(_condition(fraction), fontsize=9)
        ax.legend(fontsize=7)
    fig.suptitle("Paper 002, Fig. 5: latency against network size, 100 flits", fontsize=10)
    save_figure(fig, path, dpi=130)
    plt.close(fig)


def draw_fig6(rows: list[dict], path: Path) -> None:
    plt = _pyplot()
    sides = sorted({r["side"] for r in rows})
    fractions = sorted({r["background_fraction_of_bound"] for r in rows})
    styles = ["-", "--", ":", "-."]
    fig, axes = plt.subplots(1, len(sides), figsize=(6 * len(sides), 4.4), layout="constrained", squeeze=False)
    for ax, side in zip(axes[0], sides):
        for index, algorithm in enumerate(("PCP", "RD")):
            for style, fraction in zip(styles, fractions):
                mine = [r for r in rows if r["side"] == side and r["algorithm"] == algorithm
                        and r["background_fraction_of_bound"] == fraction]
                ax.plot([r["length_flits"] for r in mine], [r["latency_mean_us"] for r in mine], ls=style,
                        marker="o", ms=3, color=f"C{index}", label=f"{algorithm}, {_condition(fraction)}")
        ax.set_xlabel("message length (flits)")
        ax.set_ylabel("broadcast latency (us, mean over sources)")
        ax.set_title(f"{side}x{side}", fontsize=9)
        ax.legend(fontsize=7)
    fig.suptitle("Paper 002, Fig. 6: latency against message length (our T3D mapping)", fontsize=10)
    save_figure(fig, path, dpi=130)
    plt.close(fig)
