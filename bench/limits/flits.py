"""Speed of light of the flit-level kernel: wormhole.yaml's workload (dimension-order wormhole routing with
credits, V virtual channels, B-flit input buffers, the dateline on a torus) on a 2-D mesh or torus, as one
tight numba loop with nothing interpreted and nothing general.

It computes what the engine (harts/controller/flits, microcode "wormhole", the default config: one NP channel
each way) computes, and tests/test_flit_limit.py checks every packet's delivery cycle against it to the cycle.
What the microprogram does is folded into fixed delays (MODEL.md, Flow-controlled switching; every
instruction of wormhole.yaml costs 1 cycle):
- a link input's context started at a (its head usable at the front of the buffer, the context idle) runs
  wait_header at a, branch at a + 1, and forward (or deliver, at the destination) from a + 2, retried every
  cycle until a VC is free; an injection context started at a = max(created + n_s, idle from) forwards from
  a + 1;
- wait_tail sees a tail granted at s at s + 1, done runs at s + 2, so the context is idle from s + 3.
The route is recomputed from coordinates at each hop (the remaining dimension-order offsets from the current
node are the header's offsets), and "took the wrap link of this axis before" from the source's coordinate.

The loop visits only busy routers (an input routing or bound), and each router only its routing and bound
inputs, as bit masks. Within a cycle routers do not affect each other (a flit lands Lk >= 1 cycles after its
grant, a credit comes back C >= 1 cycles after its slot frees, VC ownership is per router), so the busy
routers are visited in any order, each running MODEL.md's steps (contexts in input order, then the
separable input-first allocator) in turn. An input's fields and buffer slots share one int32 row, since a
candidate check or a grant reads most of them together (on the bench's 8x8 mesh, 16x16 and 64x64 tori this
ran 10-35% faster than one int64 array per field).
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numba.cpython.unsafe.numbers import trailing_zeros

from harts.jit import index_without_wraparound

index_without_wraparound("bench.limits")  # indexed as the engine is (harts/jit.py)

MESH, TORUS = 0, 1
PORTS = 4  # +x, +y, -x, -y: harts/network's grid ports (axis_positive [0, 1], axis_negative [2, 3])
SPAN = PORTS + 1  # physical inputs and outputs per router: the links and one NP channel
EJECT = PORTS  # the ejection output
LINK_ROUTE_DELAY = 2  # wait_header, branch: a link context's forward or deliver runs 2 cycles after its start
INJECT_ROUTE_DELAY = 1  # wait_header: an injection context's forward runs 1 cycle after its start
TAIL_TO_IDLE = 3  # wait_tail at s + 1, done at s + 2: idle from s + 3
LAST_CYCLE = (1 << 30) - 64  # cycles are int32: a run must end before this
LONG_AGO = -(1 << 30)  # the freeing cycle of a buffer slot never used
HELD = 1 << 30  # the "freeing cycle" of a slot holding a flit: never credited, so no count check is needed

# An input is numbered v * (PORTS * V + 1) + l: l = p * V + c for VC c of receiver p, l = PORTS * V for the
# injection channel. Its row (int32) holds what a grant touches together:
OUT = 0  # the output it is bound to (EJECT: the ejection channel), -1 unbound
DOWN = 1  # the downstream input its flits land in, -1 for the ejection channel
FIRST = 2  # buffer: ring position of the oldest flit
NEXT = 3  # ring position the next flit lands in
COUNT = 4  # flits in the buffer (landed or on the wire)
PKT = 5  # the packet its context handles, -1 idle
SENT = 6  # flits of it granted here
DUE = 7  # the cycle its forward (or deliver) is due
IDLE = 8  # the cycle its context is idle from
OWNS = 9  # the bit of the router's `owned` mask it holds (port * V + c), -1 none
DOWN_NODE = 10  # the router of DOWN
SLOTS = 11  # then per buffer slot s: USABLE, FREED, SLOT_PKT at SLOTS + 3 s + 0, 1, 2
# A router's row (int64):
ROUTE = 0  # mask of inputs with a forward or deliver pending (bit l)
BOUND = 1  # mask of bound inputs
BUSY = 2  # inputs routing or bound: the router is visited while this is > 0
OWNED = 3  # mask of owned output VCs (bit port * V + c)
LISTED = 4  # in the list of routers to visit
BUSY_UNTIL = 5  # per output o: its previous flit's grant + k
PTR_IN = BUSY_UNTIL + SPAN  # per physical input: round-robin pointer over its VCs
PTR_OUT = PTR_IN + SPAN  # per output: round-robin pointer over the physical inputs
ROUTER_ROW = PTR_OUT + SPAN


@njit(cache=True, _nrt=False, forceinline=True)
def _grant(inp, rt, v, i, l, p, o, t, M, B, V, ni, kf, lk, eject_delay, delivered, create, by_source, first_of,
           inj_next, n_s, nxt, n_next):
    """Input i (local l, physical input p) of router v sends its oldest flit through output o at t. Returns
    (n_next, whether a packet was delivered)."""
    rt[v, PTR_OUT + o] = p + 1 if p + 1 < SPAN else 0
    rt[v, BUSY_UNTIL + o] = t + kf
    q = inp[i, PKT]
    if p < PORTS:
        c = l - p * V
        rt[v, PTR_IN + p] = c + 1 if c + 1 < V else 0
        s = inp[i, FIRST]
        inp[i, SLOTS + 3 * s + 1] = t
        inp[i, FIRST] = s + 1 if s + 1 < B else 0
        inp[i, COUNT] -= 1
    sn = inp[i, SENT] + 1
    inp[i, SENT] = sn
    d = inp[i, DOWN]
    fin = False
    if d >= 0:
        s = inp[d, NEXT]
        inp[d, SLOTS + 3 * s] = t + lk
        inp[d, SLOTS + 3 * s + 1] = HELD
        inp[d, SLOTS + 3 * s + 2] = q
        inp[d, NEXT] = s + 1 if s + 1 < B else 0
        k = inp[d, COUNT]
        inp[d, COUNT] = k + 1
        if sn == 1 and k == 0:  # a head reaches an empty buffer: its (idle) context starts
            w = inp[i, DOWN_NODE]
            inp[d, PKT] = q
            inp[d, SENT] = 0
            inp[d, DUE] = max(t + lk, inp[d, IDLE]) + LINK_ROUTE_DELAY
            rt[w, ROUTE] |= 1 << (d - w * ni)
            rt[w, BUSY] += 1
            if rt[w, LISTED] == 0:
                rt[w, LISTED] = 1
                nxt[n_next] = w
                n_next += 1
    elif sn == M:
        delivered[q] = t + eject_delay
        fin = True
    if sn == M:  # the tail: the output VC frees, the input unbinds, its context is idle from t + 3
        if inp[i, OWNS] >= 0:
            rt[v, OWNED] ^= 1 << inp[i, OWNS]
        rt[v, BOUND] ^= 1 << l
        rt[v, BUSY] -= 1
        inp[i, IDLE] = t + TAIL_TO_IDLE
        inp[i, PKT] = -1
        if p < PORTS:
            if inp[i, COUNT] > 0:  # the next packet's head is at the front
                s = inp[i, FIRST]
                inp[i, PKT] = inp[i, SLOTS + 3 * s + 2]
                inp[i, SENT] = 0
                inp[i, DUE] = max(inp[i, SLOTS + 3 * s], t + TAIL_TO_IDLE) + LINK_ROUTE_DELAY
                rt[v, ROUTE] |= 1 << l
                rt[v, BUSY] += 1
        else:  # the injection context takes the next packet of the NP queue, if it was made by now
            nq = inj_next[v]
            if nq < first_of[v + 1] and create[by_source[nq]] <= t:
                q2 = by_source[nq]
                inj_next[v] = nq + 1
                inp[i, PKT] = q2
                inp[i, SENT] = 0
                inp[i, DUE] = max(create[q2] + n_s, t + TAIL_TO_IDLE) + INJECT_ROUTE_DELAY
                rt[v, ROUTE] |= 1 << l
                rt[v, BUSY] += 1
    return n_next, fin


@njit(cache=True, _nrt=False, forceinline=True)
def _ring_step(offset, at, source, side, axis):
    """One hop on a torus ring of `side` routers (axis 0: x, ports 0 and 2; axis 1: y, ports 1 and 3) from
    position `at` towards a destination `offset` away (non-zero), for a packet that entered the ring at
    `source`: the port (the shorter way round, the + way at exactly half) and whether this hop or an earlier
    one on this axis takes the wrap link (the dateline), so that it uses the upper VCs."""
    if offset < 0:
        offset += side
    if offset > side // 2:
        return axis + 2, at == 0 or at > source
    return axis, at == side - 1 or at < source


@njit(cache=True, _nrt=False)
def _run(kind, sx, sy, V, B, M, kf, lk, credit, n_s, eject_delay, create, source, dest, by_source, first_of,
         delivered, nbr, down, phys_of, inp, rt, inj_next, cur, nxt, cx, cy, req, pick):
    n = create.shape[0]
    pv = PORTS * V
    ni = pv + 1
    vmask = (1 << V) - 1
    half = (V + 1) // 2
    n_cur = 0
    arrived = 0
    done = 0
    t = create[0] if n > 0 else 0
    while done < n:
        if t >= LAST_CYCLE:
            return -1
        # arrivals: a packet created at t is taken by its source's injection context if that is idle (the NP
        # queue is the source's packets in creation order, by_source from inj_next on)
        while arrived < n and create[arrived] <= t:
            q = arrived
            arrived += 1
            v = source[q]
            j = v * ni + pv
            if inp[j, PKT] < 0:
                inj_next[v] += 1
                inp[j, PKT] = q
                inp[j, SENT] = 0
                inp[j, DUE] = max(t + n_s, inp[j, IDLE]) + INJECT_ROUTE_DELAY
                rt[v, ROUTE] |= 1 << pv
                rt[v, BUSY] += 1
                if rt[v, LISTED] == 0:
                    rt[v, LISTED] = 1
                    cur[n_cur] = v
                    n_cur += 1
        n_next = 0
        for r in range(n_cur):
            v = cur[r]
            ib = v * ni
            # ---- step 1: the contexts due at t (a forward or a deliver), in input order ----
            m = rt[v, ROUTE]
            while m != 0:
                l = trailing_zeros(m)
                m &= m - 1
                j = ib + l
                if inp[j, DUE] > t:
                    continue
                q = inp[j, PKT]
                d = dest[q]
                x = cx[v]
                y = cy[v]
                dx = cx[d] - x
                dy = cy[d] - y
                if dx == 0 and dy == 0:  # deliver: bound to the ejection channel
                    inp[j, OUT] = EJECT
                    inp[j, DOWN] = -1
                    inp[j, OWNS] = -1
                    rt[v, ROUTE] ^= 1 << l
                    rt[v, BOUND] |= 1 << l
                    continue
                classes = vmask
                if kind == MESH:
                    if dx != 0:
                        port = 0 if dx > 0 else 2
                    else:
                        port = 1 if dy > 0 else 3
                else:
                    if dx != 0:
                        port, late = _ring_step(dx, x, cx[source[q]], sx, 0)
                    else:
                        port, late = _ring_step(dy, y, cy[source[q]], sy, 1)
                    classes = (vmask >> half) << half if late else (1 << half) - 1
                free = ~(rt[v, OWNED] >> (port * V)) & classes
                if free != 0:  # the lowest free VC of the class
                    c = trailing_zeros(free)
                    rt[v, OWNED] |= 1 << (port * V + c)
                    inp[j, OWNS] = port * V + c
                    inp[j, OUT] = port
                    inp[j, DOWN] = down[v * PORTS + port] + c
                    inp[j, DOWN_NODE] = nbr[v * PORTS + port]
                    rt[v, ROUTE] ^= 1 << l
                    rt[v, BOUND] |= 1 << l
            # ---- step 2: separable input-first allocation among the bound inputs ----
            mb = rt[v, BOUND]
            if mb != 0:
                cm = 0  # candidates
                mm = mb
                while mm != 0:
                    l = trailing_zeros(mm)
                    mm &= mm - 1
                    i = ib + l
                    if rt[v, BUSY_UNTIL + inp[i, OUT]] > t:
                        continue
                    if l < pv and (inp[i, COUNT] == 0 or inp[i, SLOTS + 3 * inp[i, FIRST]] > t):
                        continue
                    d = inp[i, DOWN]
                    if d >= 0 and inp[d, SLOTS + 3 * inp[d, NEXT] + 1] + credit > t:
                        continue
                    cm |= 1 << l
                if cm == 0:
                    pass
                elif cm & (cm - 1) == 0:  # one candidate: it wins its input and its output
                    l = trailing_zeros(cm)
                    i = ib + l
                    n_next, fin = _grant(inp, rt, v, i, l, phys_of[l], inp[i, OUT], t, M, B, V, ni, kf, lk,
                                         eject_delay, delivered, create, by_source, first_of, inj_next, n_s, nxt,
                                         n_next)
                    done += fin
                else:
                    # input arbitration: each physical input picks its first candidate VC from ptr_in
                    for p in range(SPAN):
                        bits = (cm >> (p * V)) & vmask
                        if bits == 0:
                            continue
                        c = 0
                        if p < PORTS:
                            sp = rt[v, PTR_IN + p]
                            rot = ((bits >> sp) | (bits << (V - sp))) & vmask
                            c = trailing_zeros(rot) + sp
                            if c >= V:
                                c -= V
                        i = ib + p * V + c
                        req[inp[i, OUT]] |= 1 << p
                        pick[p] = i
                    # output arbitration: each output picks its first requesting physical input from ptr_out
                    for o in range(SPAN):
                        rq = req[o]
                        if rq == 0:
                            continue
                        req[o] = 0
                        sp = rt[v, PTR_OUT + o]
                        rot = ((rq >> sp) | (rq << (SPAN - sp))) & ((1 << SPAN) - 1)
                        p = trailing_zeros(rot) + sp
                        if p >= SPAN:
                            p -= SPAN
                        i = pick[p]
                        n_next, fin = _grant(inp, rt, v, i, i - ib, p, o, t, M, B, V, ni, kf, lk, eject_delay,
                                             delivered, create, by_source, first_of, inj_next, n_s, nxt, n_next)
                        done += fin
            if rt[v, BUSY] > 0:
                nxt[n_next] = v
                n_next += 1
            else:
                rt[v, LISTED] = 0
        cur, nxt = nxt, cur
        n_cur = n_next
        if n_cur == 0:
            if arrived >= n:
                break
            t = max(t + 1, create[arrived])
        else:
            t += 1
    return t


@njit(cache=True, _nrt=False)
def _by_source(source, by_source, first_of):
    """Each node's packets in creation order (a counting sort): its NP queue, past and future."""
    for q in range(source.shape[0]):
        first_of[source[q] + 1] += 1
    for v in range(first_of.shape[0] - 1):
        first_of[v + 1] += first_of[v]
    for q in range(source.shape[0]):
        v = source[q]
        by_source[first_of[v]] = q
        first_of[v] += 1
    for v in range(first_of.shape[0] - 1, 0, -1):
        first_of[v] = first_of[v - 1]
    first_of[0] = 0


def links(kind: str, sx: int, sy: int, V: int) -> tuple[np.ndarray, np.ndarray]:
    """Per node and port: the neighbour (-1: no link) and the input number of that link's VC 0 there (a flit
    sent through port p lands on receiver p)."""
    nodes = np.arange(sx * sy, dtype=np.int64)
    x, y = nodes % sx, nodes // sx
    steps = ((1, 0), (0, 1), (-1, 0), (0, -1))
    nbr = np.empty((sx * sy, PORTS), np.int64)
    for p, (ax, ay) in enumerate(steps):
        fx, fy = x + ax, y + ay
        inside = (fx >= 0) & (fx < sx) & (fy >= 0) & (fy < sy)
        nbr[:, p] = np.where(inside | (kind == "torus"), fx % sx + sx * (fy % sy), -1)
    ni = PORTS * V + 1
    down = np.where(nbr >= 0, nbr * ni + np.arange(PORTS) * V, -1)
    return nbr.reshape(-1), down.reshape(-1)


def router_tables(kind: str, sx: int, sy: int, V: int, B: int, first_of: np.ndarray) -> tuple:
    """The tables _run takes that are indexed by router, input or link, in its order: links, downstream inputs,
    each input's physical port, the input rows, the router rows, each router's next packet (from first_of, its
    first), two per-router counters, and each router's x and y."""
    n_nodes = sx * sy
    ni = PORTS * V + 1
    nbr, down = links(kind, sx, sy, V)
    inputs = np.zeros((n_nodes * ni, SLOTS + 3 * B), np.int32)
    inputs[:, [OUT, DOWN, PKT, OWNS]] = -1
    inputs[:, SLOTS + 1::3] = LONG_AGO
    nodes = np.arange(n_nodes, dtype=np.int64)
    phys_of = np.minimum(np.arange(ni) // V, PORTS)
    return (nbr, down, phys_of, inputs, np.zeros((n_nodes, ROUTER_ROW), np.int64), first_of[:-1].copy(),
            np.zeros(n_nodes, np.int64), np.zeros(n_nodes, np.int64), nodes % sx, nodes // sx)


def deliveries(kind: str, dims, params, packet_flits: int, create, source, destination) -> np.ndarray:
    """Every packet's delivery cycle (the cycle its NP has it), packets given as the engine takes them: creation
    cycles (non-decreasing), sources and destinations (!= source) of `packet_flits`-flit unicasts. `kind` is
    "mesh" or "torus", `dims` (x side, y side), `params` the engine's FlitParams (np_channels must be 1)."""
    if kind not in ("mesh", "torus"):
        raise ValueError(f"the limit models a 2-D mesh or torus, not {kind!r}")
    if params.np_channels != 1:
        raise ValueError("the limit models one NP channel each way")
    if params.torus_tie_key != 0:
        raise ValueError("the limit sends a packet half-way round a torus ring the + way: routing.torus_tie: positive")
    sx, sy = (int(d) for d in dims)
    V, B = params.virtual_channels, params.buffer_flits
    if PORTS * V + 1 > 62:
        raise ValueError("the limit keeps a router's inputs in a 64-bit mask: at most 15 VCs")
    n_nodes = sx * sy
    create = np.ascontiguousarray(create, dtype=np.int64)
    source = np.ascontiguousarray(source, dtype=np.int64)
    destination = np.ascontiguousarray(destination, dtype=np.int64)
    n = create.shape[0]
    by_source = np.empty(n, np.int64)
    first_of = np.zeros(n_nodes + 1, np.int64)
    _by_source(source, by_source, first_of)
    delivered = np.full(n, -1, np.int64)
    last = _run(MESH if kind == "mesh" else TORUS, sx, sy, V, B, packet_flits, params.flit_cycles,
                params.link_latency, params.credit_delay, params.np_send,
                params.bus_delay + params.flit_cycles + params.deliver, create, source, destination, by_source,
                first_of, delivered, *router_tables(kind, sx, sy, V, B, first_of), np.zeros(SPAN, np.int64),
                np.zeros(SPAN, np.int64))
    if last < 0:
        raise ValueError(f"the run went past cycle {LAST_CYCLE}, the limit's int32 cycles")
    return delivered
