"""Topologies from plain specs such as ``{"kind": "torus", "dims": [8, 8]}`` (as read from a config).

``node_count`` checks a spec exactly as ``build_topology`` does but only computes N, so a caller can
refuse a huge network before anything is allocated.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from .grid import MIN_MESH_SIDE, MIN_TORUS_SIDE, mesh, require_dims, torus
from .hexmesh import MIN_SIZE, hex_mesh, hex_node_count
from .hypercube import MAX_DIMENSION, MIN_DIMENSION, hypercube
from .mesh_hypercube import MIN_CUBE, MIN_LEVELS, mesh_hypercube, require_power_of_two
from .topology import Topology, require_int

# The keys each kind takes besides "kind", in the order its builder takes them.
_KEYS = {
    "hex": ("size",),
    "mesh": ("dims",),
    "torus": ("dims",),
    "hypercube": ("dimension",),
    "mesh_hypercube": ("levels", "cube"),
}
KINDS = tuple(_KEYS)
_BUILDERS = {"hex": hex_mesh, "mesh": mesh, "torus": torus, "hypercube": hypercube,
             "mesh_hypercube": mesh_hypercube}


def node_count(spec) -> int:
    """Number of nodes of the network the spec describes, without building it."""
    kind, args = _parse(spec)
    if kind == "hex":
        return hex_node_count(args[0])
    if kind in ("mesh", "torus"):
        return math.prod(args[0])
    if kind == "hypercube":
        return 2 ** args[0]
    return args[0] * args[1]


def port_count(spec) -> int:
    """Number of ports per node of the network the spec describes, without building it."""
    kind, args = _parse(spec)
    if kind == "hex":
        return 6
    if kind in ("mesh", "torus"):
        return 2 * len(args[0])
    if kind == "hypercube":
        return args[0]
    return 2 + int(math.log2(args[1]))


def build_topology(spec) -> Topology:
    kind, args = _parse(spec)
    return _BUILDERS[kind](*args)


def _parse(spec) -> tuple[str, tuple]:
    """The kind and its checked builder arguments, or ValueError with one sentence naming the bad key."""
    if not isinstance(spec, Mapping):
        # ValueError like every other bad spec, so callers need to catch one exception type.
        raise ValueError(  # noqa: TRY004
            f"a topology spec must be a mapping with a 'kind' key, got {spec!r}")
    if "kind" not in spec:
        raise ValueError(f"the topology spec has no 'kind'; expected one of {', '.join(KINDS)}")
    kind = spec["kind"]
    if kind not in KINDS:
        raise ValueError(f"unknown topology kind {kind!r}; expected one of {', '.join(KINDS)}")
    keys = _KEYS[kind]
    for key in spec:
        if key != "kind" and key not in keys:
            raise ValueError(f"{key!r} is not a key of topology kind '{kind}', which takes {_quoted(keys)}")
    for key in keys:
        if key not in spec:
            raise ValueError(f"topology kind '{kind}' needs {_quoted(keys)}; '{key}' is missing")
    return kind, tuple(_check(kind, key, spec[key]) for key in keys)


def _check(kind: str, key: str, value):
    what = f"topology '{key}'"
    if key == "size":
        return require_int(value, what, MIN_SIZE)
    if key == "dims":
        return require_dims(value, what, MIN_TORUS_SIDE if kind == "torus" else MIN_MESH_SIDE)
    if key == "dimension":
        return require_int(value, what, MIN_DIMENSION, MAX_DIMENSION)
    if key == "levels":
        return require_int(value, what, MIN_LEVELS)
    return require_power_of_two(require_int(value, what, MIN_CUBE), what)


def _quoted(keys: tuple) -> str:
    return " and ".join(f"'{key}'" for key in keys)
