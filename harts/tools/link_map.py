"""The link map of a run: every directed link coloured by its utilisation and every node by what fills first
in it, on a drawing of the network, to show where it saturates (`harts run CONFIG --link-map FILE.png`). On
the cut-through kernel a node's colour is its BMU bus interfaces' utilisation (the part of a node that fills
first under the default BMU, MODEL.md); on the flit-level kernel, the mean share of its input buffer slots
in use. The colour bar and the title say which.

The nodes sit where ``Topology.positions`` puts them: the hexagonal mesh as the hexagon around node 0 (as
in the broadcast plots), meshes and tori on their grid (a k-D grid as a row of 2-D layers), the hypercube
on a grid with the low half of the address bits along x and the high half along y, each in Gray order,
and the mesh-hypercube with one row per level and the cube addresses in binary order along it.

Each direction of a link is drawn on the right-hand side of its way of travel, so the two directions of a
link are two parallel strokes (or two arcs on either side). Links between neighbouring grid points are
straight; longer ones (the hypercube bits that are not neighbours in Gray order, the mesh-hypercube's
cube bits above the lowest, the links between the layers of a k-D grid) are arcs that bulge more the
longer they are, so they do not run over the nodes in between. Links that wrap around the drawing (over
the edges of the hexagon or of the torus, ``Topology.wrap_links``) are stubs at both ends, labelled at
each end with the node at the other end.
"""

from __future__ import annotations

import numpy as np

from ..machine.results import Result
from ..network import Topology
from ..output import save_figure
from .text import balanced_lines

# Lengths in drawing units, where neighbouring grid points are one unit apart.
KEEP_RIGHT = 0.06  # how far each direction of a link is drawn from the line between the two nodes
STROKE = 0.05  # width of a link's stroke
NODE_RADIUS = 0.2
NODE_OUTLINE = 0.012
STUB = 0.36  # length of each stub of a wrap link
STUB_LABEL = 0.52  # distance from a node to the label at the end of its stub
# Per unit of length: how far an arc's control point leaves the line. An arc's top is half that away, so
# arcs up to 7 units long (those of a row of 8 hypercube nodes) stay clear of the next row.
ARC_BULGE = 0.12
POINTS_PER_CURVE = 17
# The picture's larger side in inches, and the largest and smallest scale it may have in inches per unit.
PICTURE_INCHES = 13.0
INCHES_PER_UNIT = (0.3, 0.75)


def draw_link_map(result: Result, path: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.collections import LineCollection, PatchCollection
    from matplotlib.colors import ListedColormap, Normalize
    from matplotlib.patches import Circle

    topo = result.topology
    usage = result.link_utilisation()
    load, load_name = result.node_load()
    xy = topo.positions()
    strokes, owner, labels = link_strokes(topo)

    points = np.concatenate([xy, strokes.reshape(-1, 2)])
    low, high = points.min(axis=0) - 0.7, points.max(axis=0) + 0.7
    width, height = high - low
    scale = float(np.clip(PICTURE_INCHES / max(width, height), *INCHES_PER_UNIT))  # inches per unit
    points_per_unit = 72 * scale
    # At least 5 inches high, so that the colour bars have room for their labels.
    size = (width * scale + 1.8, max(height * scale + 1.4, 5.0))
    fig = plt.figure(figsize=size, layout="constrained")
    grid = fig.add_gridspec(2, 2, width_ratios=(1, 0.02))
    ax = fig.add_subplot(grid[:, 0])

    # The pale end of YlOrRd is cut off so that an idle link still shows on white.
    link_colours = ListedColormap(plt.get_cmap("YlOrRd")(np.linspace(0.2, 1, 256)))
    drawn = LineCollection(strokes, cmap=link_colours, norm=Normalize(0, 1),
                           linewidths=STROKE * points_per_unit, capstyle="butt", zorder=1)
    drawn.set_array(usage[owner])
    ax.add_collection(drawn)

    nodes = PatchCollection([Circle(p, NODE_RADIUS) for p in xy], cmap="Blues", norm=Normalize(0, 1),
                            edgecolors="black", linewidths=NODE_OUTLINE * points_per_unit, zorder=2)
    nodes.set_array(load)
    ax.add_collection(nodes)

    digits = len(str(topo.n_nodes - 1))
    font = _font_to_fit(2 * NODE_RADIUS * points_per_unit, digits)
    if font:
        dark = nodes.norm(load) > 0.6
        for v, (x, y) in enumerate(xy):
            ax.text(x, y, str(v), fontsize=font, ha="center", va="center", zorder=3,
                    color="white" if dark[v] else "black")
    # The stub labels of neighbouring nodes on the hexagon's rim are half a unit apart.
    stub_font = _font_to_fit(0.45 * points_per_unit, digits)
    if stub_font:
        for (x, y), text in labels:
            ax.text(x, y, text, fontsize=stub_font, ha="center", va="center", color="dimgrey")

    ax.set_xlim(low[0], high[0])
    ax.set_ylim(low[1], high[1])
    ax.set_aspect("equal")
    ax.axis("off")
    fig.colorbar(drawn, cax=fig.add_subplot(grid[0, 1]), label="link utilisation")
    fig.colorbar(nodes, cax=fig.add_subplot(grid[1, 1]), label=load_name)
    node_line = f"{load_name} mean {load.mean():.3f}, max {load.max():.3f}"
    if result.kernel == "cut_through":
        node_line += f"; BMU storage {result.network.bmu_utilisation().mean():.2g} of capacity"
        caption = ("Link utilisation: bytes sent / (bytes per cycle x cycles). Node: the share of time its BMU's "
                   "bus interfaces held a packet. Storage: mean transit bytes held / BMU capacity.")
    else:
        caption = ("Link utilisation: flits sent x cycles per flit / cycles. Node: flits held in its link input "
                   "buffers, averaged over the run, / its buffer slots (ports x VCs x buffer depth).")
    caption += " Each direction of a link is drawn on the right of its way of travel."
    fig.suptitle(f"{topo.name}, {_traffic_text(result.config)}: link utilisation mean {usage.mean():.3f}, "
                 f"max {usage.max():.3f}\n{node_line}\n"
                 f"{float(result.cycles):,.0f} cycles simulated, microcode {result.config['microcode']} "
                 f"({result.switching.replace('_', '-')})", fontsize=10)
    if labels:
        caption += " Stubs: links that wrap around" + (", labelled with the node at their other end."
                                                        if stub_font else ".")
    # About 16 characters of an 8-point font fit in an inch.
    fig.supxlabel(balanced_lines(caption, int(16 * size[0])), fontsize=8)
    save_figure(fig, path, dpi=150)
    plt.close(fig)


def _traffic_text(config) -> str:
    """The config's own traffic, for the title."""
    parts = []
    if config["traffic.uniform.load"]:
        parts.append(f"uniform {config['traffic.uniform.load_basis']} load {config['traffic.uniform.load']:g}")
    if config["traffic.synthetic.rate"]:
        parts.append(f"{config['traffic.synthetic.pattern']} {config['traffic.synthetic.rate']:g} flits/node/cycle")
    return ", ".join(parts) or "explicit traffic"


def _font_to_fit(points: float, digits: int) -> float:
    """The font size (at most 7) at which a node number of `digits` digits is `points` wide, or 0 if that
    would be too small to read."""
    size = min(7.0, points / (0.62 * digits))
    return size if size >= 3.5 else 0.0


def link_strokes(topology: Topology) -> tuple[np.ndarray, np.ndarray, list[tuple[np.ndarray, str]]]:
    """The polylines that draw the directed links, shape (S, POINTS_PER_CURVE, 2); for each the row of
    ``topology.links()`` it draws (a wrap link has two, one stub at each end); and the labels at the
    outer ends of the stubs, as (position, text)."""
    xy = topology.positions()
    links = topology.links()
    start, end = xy[links[:, 0]], xy[links[:, 2]]
    wraps = topology.wrap_links()[links[:, 0], links[:, 1]]
    t = np.linspace(0, 1, POINTS_PER_CURVE)
    plain = np.nonzero(~wraps)[0]
    strokes = [_curves(start[plain], end[plain], t)]
    owner = [plain]
    labels = []
    wrapped = np.nonzero(wraps)[0]
    if len(wrapped):
        # A wrap link is drawn as the link its port makes between neighbours would be, cut short at both
        # ends: from the sender towards where that neighbour would be, and into the receiver from where
        # the sender would be.
        step = _port_steps(links[plain], start[plain], end[plain], topology.n_ports)[links[wrapped, 1]]
        length = np.linalg.norm(step, axis=1)[:, None]
        sender, receiver = start[wrapped], end[wrapped]
        strokes += [_curves(sender, sender + step, STUB / length * t),
                    _curves(receiver - step, receiver, 1 - STUB / length * t[::-1])]
        owner += [wrapped, wrapped]
        tips = _curves(sender, sender + step, STUB_LABEL / length)[:, 0]
        labels = [(tip, str(int(v))) for tip, v in zip(tips, links[wrapped, 2])]
    return np.concatenate(strokes), np.concatenate(owner), labels


def _port_steps(links: np.ndarray, start: np.ndarray, end: np.ndarray, ports: int) -> np.ndarray:
    """For each port, the drawing displacement of a link through it that does not wrap (they all agree)."""
    step = np.zeros((ports, 2))
    step[links[:, 1]] = end - start
    return step


def _curves(start: np.ndarray, end: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Points at parameters t (one row per link, or one row for all) of the quadratic Bezier curves that
    draw the directed links start -> end: kept right by KEEP_RIGHT, and bulging to the right by
    ARC_BULGE x length if the link is longer than one unit."""
    along = end - start
    length = np.linalg.norm(along, axis=1)[:, None]
    right = np.column_stack((along[:, 1], -along[:, 0])) / length
    bulge = np.where(np.isclose(length, 1), 0.0, ARC_BULGE * length)
    a, b = start + KEEP_RIGHT * right, end + KEEP_RIGHT * right
    control = (a + b) / 2 + bulge * right
    t = np.atleast_2d(t)[..., None]
    return (1 - t) ** 2 * a[:, None] + 2 * (1 - t) * t * control[:, None] + t ** 2 * b[:, None]
