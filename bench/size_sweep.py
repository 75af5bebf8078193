"""How each kernel's time per hop grows with the network, beside the size of the tables it reads at random and this
machine's time for a random read from that much memory: the measurement behind the size ratios
(docs/explanation/performance.md, Why the large networks are slower per hop). Writes bench/results/size_sweep.json.

    python bench/size_sweep.py [--repeat 5] [--only cut-through|flit|flit-load|memory]

- cut-through: E-n for n in SIZES, uniform at link load 0.3, engine and limit on the same packets, alternately
  (bench/cut_through_limit.one_point): ns per packet-hop of each, the engine's events and micro-instructions per
  hop (flat in size if the work per hop is), and the bytes of each one's tables indexed by node, context or event
  id (the packets, logs and traffic apart);
- flit: k x k tori for k in SIDES at 0.2 of the channel-load bound (bench/flits_limit.one_point): ns per flit-hop of
  each, and the bytes of each one's tables indexed by node, input or port;
- flit-load: the 8x8 and 64x64 tori at the same fractions of their channel-load bounds, from 0.025 to 0.4: ns per
  flit-hop of engine and limit beside the flit-hops a cycle. The allocator visits every bound input every cycle, so
  the flit-hops a cycle count the inputs whose rows one cycle reads, 8 x 8 / (64 x 64) as many on the small torus at
  the same fraction, where the contention per router is alike. What a load costs through contention shows on the 8x8
  torus; if the large network is slower per hop because what one cycle reads outgrows the cache, its time per
  flit-hop rises with the load beyond that;
- memory: ns per read when each read's address comes from the one before (so none overlaps), over a random cycle
  through one 64-byte line in each of W bytes, for W from 64 KB to 64 MB.

--co-runner MB runs every point twice, alone and then beside a second process that reads MB megabytes at random
(as the memory part does) on the other core, crowding the shared L3: a kernel whose time goes to reads from
memory slows beside it, one that works from its own core's caches does not.

If the large networks are slower per hop because their tables outgrow the caches, each kernel's ns per hop rises
where its tables pass the sizes at which the random read gets slower, and the limit's (smaller tables) later and
less; if the work per hop grew instead, the events or micro-instructions per hop would grow with it.
"""

import argparse
import multiprocessing
import statistics
import sys
import time
from pathlib import Path

import numpy as np
from numba import njit

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from cut_through_limit import one_point as cut_through_point  # noqa: E402
from cut_through_limit import warm_up  # noqa: E402
from flits_limit import machine  # noqa: E402
from flits_limit import one_point as flit_point  # noqa: E402
from record import write_results  # noqa: E402

from bench.limits import flits as flit_limit  # noqa: E402
from bench.limits.cut_through import Limit, workload  # noqa: E402
from harts.controller.observations import OB_ROWS  # noqa: E402
from harts.machine.config import hex_config  # noqa: E402
from harts.machine.simulation import Simulation  # noqa: E402

SIZES = (5, 9, 13, 17, 25, 33, 41)  # E-n
LOAD = 0.3
SIDES = (8, 16, 24, 32, 48, 64)  # k x k tori
RATE_OF_BOUND = 0.2
LOAD_SIDES = {8: 20_000, 64: 2_000}  # flit-load: each torus, with its cycles of traffic at 0.2 of its bound
LOAD_FRACTIONS = (0.025, 0.05, 0.1, 0.2, 0.4)  # of the channel-load bound
MEMORY_BYTES = [2**k for k in range(16, 27)]  # 64 KB .. 64 MB
LINE = 64


def _bytes(tables) -> int:
    return sum(int(a.nbytes) for a in tables if isinstance(a, np.ndarray))


def _arrays(bundle) -> list:
    """The arrays of a named tuple of arrays (nested ones included)."""
    found = []
    for item in bundle:
        if isinstance(item, np.ndarray):
            found.append(item)
        elif isinstance(item, tuple):
            found.extend(_arrays(item))
    return found


def cut_through_tables(size: int) -> dict:
    """Bytes of the tables indexed by node, context or event id: the engine's (machine, controller, clock) and the
    limit's (receivers, interfaces, nodes, events, neighbours, routes)."""
    config = hex_config(size, traffic__uniform__load=LOAD, run__cycles=10)
    sim = Simulation(config)
    state = sim._initial_state(sim.faults, False, 0, False, np.zeros(OB_ROWS, np.int64))
    engine = _bytes(_arrays(state["machine"]) + _arrays(state["controller"]) + _arrays(state["clock"]))
    limit = Limit(config)
    arrays = limit.prepare(workload(config))
    # prepare's arguments: 4 traffic columns, route table, neighbours, BMU capacity, packets, then the state
    node_tables = [arrays[4], arrays[5], *arrays[8:]]
    return {"engine_table_bytes": engine, "limit_table_bytes": _bytes(node_tables)}


def flit_tables(side: int) -> dict:
    """Bytes of the tables indexed by node, input or port: the engine's (machine, switch: the inputs hold their buffer
    slots) and the limit's (bench/limits/flits.router_tables, and the first packet of each router)."""
    sim = machine("torus", side)
    state = sim._state(sim.faults, False, False, 0, False, np.zeros(OB_ROWS, np.int64))
    engine = _bytes(_arrays(state["machine"]) + _arrays(state["switch"]))
    first_of = np.zeros(side * side + 1, np.int64)  # each router's first packet, which _run also takes
    limit = _bytes([first_of, *flit_limit.router_tables("torus", side, side, sim.params.virtual_channels,
                                                        sim.params.buffer_flits, first_of)])
    return {"engine_table_bytes": engine, "limit_table_bytes": limit}


@njit(cache=True)
def _chase(following, steps):
    i = 0
    for _ in range(steps):
        i = following[i]
    return i


def _random_cycle(size_bytes: int) -> np.ndarray:
    """following[i] is the next index of a random cycle through the first word of every LINE bytes."""
    lines = size_bytes // LINE
    stride = LINE // 8
    order = np.random.default_rng(1).permutation(lines)
    following = np.zeros(lines * stride, np.int64)
    following[order * stride] = np.roll(order, -1) * stride
    return following


def memory_latency(size_bytes: int, steps: int = 2_000_000, repeat: int = 5) -> float:
    """ns per dependent read over a random cycle through one line in each LINE bytes of size_bytes."""
    following = _random_cycle(size_bytes)
    _chase(following, 1000)
    best = []
    for _ in range(repeat):
        started = time.perf_counter()
        _chase(following, steps)
        best.append((time.perf_counter() - started) / steps * 1e9)
    return statistics.median(best)


def _read_forever(size_bytes: int) -> None:
    following = _random_cycle(size_bytes)
    while True:
        _chase(following, 1_000_000)


class CoRunner:
    """A second process reading `megabytes` at random while the block runs (nothing when megabytes is None)."""

    def __init__(self, megabytes: int | None):
        self.megabytes = megabytes
        self.process = None

    def __enter__(self):
        if self.megabytes is not None:
            self.process = multiprocessing.Process(target=_read_forever, args=(self.megabytes << 20,), daemon=True)
            self.process.start()
            time.sleep(2)  # its table built and its reads under way
        return self

    def __exit__(self, *exc):
        if self.process is not None:
            self.process.terminate()
            self.process.join()


def _runs(measure, co_runner: int | None) -> dict:
    """measure() alone; with a co-runner, also beside it (its figures under "beside_co_runner")."""
    point = measure()
    if co_runner is not None:
        with CoRunner(co_runner):
            point["beside_co_runner"] = measure()
    return point


def _cut_through_rates(size: int, cycles: int, repeat: int) -> dict:
    point = cut_through_point(size, cycles, LOAD, repeat)
    point["engine_ns_per_hop"] = 1e9 / point["engine_packet_hops_per_second"]
    point["limit_ns_per_hop"] = 1e9 / point["limit_packet_hops_per_second"]
    return point


def _flit_rates(side: int, cycles: int, repeat: int) -> dict:
    point = flit_point("torus", side, RATE_OF_BOUND, "bound", cycles, repeat)
    point["engine_ns_per_flit_hop"] = 1e9 / point["engine_flit_hops_per_second"]
    point["limit_ns_per_flit_hop"] = 1e9 / point["limit_flit_hops_per_second"]
    return point


def _flit_load_rates(side: int, fraction: float, repeat: int) -> dict:
    cycles = round(LOAD_SIDES[side] * RATE_OF_BOUND / fraction)  # about the same packets at each load
    point = flit_point("torus", side, fraction, "bound", cycles, repeat)
    point["engine_ns_per_flit_hop"] = 1e9 / point["engine_flit_hops_per_second"]
    point["limit_ns_per_flit_hop"] = 1e9 / point["limit_flit_hops_per_second"]
    point["flit_hops_per_cycle"] = point["flit_hops"] / point["cycles"]
    return point


def _beside(point: dict, key: str) -> str:
    return f" ({point['beside_co_runner'][key]:.1f} beside the co-runner)" if "beside_co_runner" in point else ""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="runs of each per point; medians are reported")
    parser.add_argument("--only", choices=("cut-through", "flit", "flit-load", "memory"), help="one part")
    parser.add_argument("--co-runner", type=int, metavar="MB",
                        help="also run every point beside a process reading MB megabytes at random")
    args = parser.parse_args()
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    if args.co_runner is not None and args.co_runner < 1:
        parser.error("--co-runner must be at least 1 (megabytes)")
    out = {"repeat": args.repeat, "co_runner_megabytes": args.co_runner}
    if args.only in (None, "memory"):
        out["memory"] = []
        for size in MEMORY_BYTES:
            ns = memory_latency(size)
            out["memory"].append({"bytes": size, "ns_per_read": ns})
            print(f"random read over {size / 2**20:7.3f} MB: {ns:6.1f} ns", flush=True)
    if args.only in (None, "cut-through"):
        warm_up()
        out["cut_through"] = []
        for size in SIZES:
            cycles = max(2_000, round(50_000 * 81 / size**2))  # about E-9's 600,000 packet-hops at each size
            point = _runs(lambda: _cut_through_rates(size, cycles, args.repeat), args.co_runner)
            point.update(cut_through_tables(size))
            out["cut_through"].append(point)
            hops = point["packet_hops"]
            print(f"E-{size:<2} ({point['nodes']:5d} nodes): engine {point['engine_ns_per_hop']:6.1f} ns/hop"
                  f"{_beside(point, 'engine_ns_per_hop')}, tables {point['engine_table_bytes'] / 2**20:6.2f} MB, "
                  f"{point['engine_events'] / hops:.2f} events and {point['engine_microinstructions'] / hops:.2f} "
                  f"micro-instructions per hop; limit {point['limit_ns_per_hop']:5.1f} ns/hop"
                  f"{_beside(point, 'limit_ns_per_hop')}, tables {point['limit_table_bytes'] / 2**20:6.2f} MB",
                  flush=True)
    if args.only in (None, "flit", "flit-load"):
        flit_point("torus", 4, 0.05, "flits", 100, 1)  # load the kernel and compile the limit outside the timings
    if args.only in (None, "flit"):
        out["flit"] = []
        for side in SIDES:
            cycles = max(2_000, round(20_000 * 64 / side**2))  # about the 8x8 torus's flit-hops at each size
            point = _runs(lambda: _flit_rates(side, cycles, args.repeat), args.co_runner)
            point.update(flit_tables(side))
            out["flit"].append(point)
            print(f"{side}x{side} torus: engine {point['engine_ns_per_flit_hop']:6.1f} ns/flit-hop"
                  f"{_beside(point, 'engine_ns_per_flit_hop')}, tables {point['engine_table_bytes'] / 2**20:6.2f} "
                  f"MB; limit {point['limit_ns_per_flit_hop']:5.1f} ns/flit-hop"
                  f"{_beside(point, 'limit_ns_per_flit_hop')}, tables {point['limit_table_bytes'] / 2**20:6.2f} MB; "
                  f"{point['flit_hops']} flit-hops", flush=True)
    if args.only in (None, "flit-load"):
        out["flit_load"] = []
        for side in LOAD_SIDES:
            for fraction in LOAD_FRACTIONS:
                point = _runs(lambda: _flit_load_rates(side, fraction, args.repeat), args.co_runner)
                out["flit_load"].append(point)
                print(f"{side}x{side} torus at {fraction} of its bound: {point['flit_hops_per_cycle']:7.0f} "
                      f"flit-hops a cycle; engine {point['engine_ns_per_flit_hop']:6.1f} ns/flit-hop"
                      f"{_beside(point, 'engine_ns_per_flit_hop')}, limit {point['limit_ns_per_flit_hop']:5.1f} "
                      f"ns/flit-hop{_beside(point, 'limit_ns_per_flit_hop')}", flush=True)
    write_results("size_sweep" if args.only is None else f"size_sweep_{args.only}", out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
