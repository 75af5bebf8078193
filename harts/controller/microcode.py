"""Assembler: a YAML microprogram for the receivers becomes the integer array the kernel interprets.

A microprogram declares the header fields it reads and writes by name (``header.fields``) and, if it
routes source-routed or table-routed packets, the route words it needs (``header.segments``,
``header.table``). The assembled code addresses fields by their position in that declaration; the
simulation places them in the packet header after the route words (``Microprogram.placed``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import InputError
from ..yamlsource import Located, load_located
from . import isa
from .records import ROUTE_NAMES

# Operand keys each instruction requires (besides 'op') and allows.
_REQUIRED = {
    "branch": {"goto"},
    "jump": {"goto"},
    "forward": {"via", "else"},
    "tee": {"via", "else"},
    "wait": {"cycles"},
    **{name: {"field", "value"} for name in isa.FIELD_OPS},
}
_ALLOWED = {"tee": {"until", "vc"}, "branch": {"if", "unless"}, "forward": {"vc"}}
_OPTIONAL = {"label", "cycles", "comment"}
ENTRY_POINTS = ("receive", "inject")
_COMPARISON = re.compile(r"^\s*([A-Za-z_]\w*)\s*(==|!=|<=|>=|<|>|&)\s*(-?\w+)\s*$")
_NAME = re.compile(r"^[A-Za-z_]\w*$")


@dataclass(frozen=True)
class Microprogram:
    """An assembled microprogram: ``code[isa.CODE_*, pc]`` with fields numbered in declaration order."""

    name: str
    path: str
    code: np.ndarray  # int64 (isa.CODE_ROWS, length)
    entry_receive: int
    entry_inject: int
    labels: dict[str, int]
    source_lines: tuple[int, ...]  # YAML line of each instruction
    fields: tuple[str, ...]  # declared header fields
    segments: int  # segment slots of source-routed packets (0: none)
    table: bool  # whether table-routed packets carry a route-table word
    switching: int = isa.SWITCHING_CUT_THROUGH  # isa.SWITCHING_*

    def __len__(self) -> int:
        return self.code.shape[1]

    def describe(self, pc: int) -> str:
        """Where instruction ``pc`` is written, for run-time error messages."""
        op = isa.OPCODE_NAMES[int(self.code[isa.CODE_OP, pc])]
        return f"{self.path}:{self.source_lines[pc]}: '{op}' (address {pc})"

    def placed(self, words: dict[str, int]) -> np.ndarray:
        """The code with every declared field replaced by its header word (``words``: name -> word)."""
        code = self.code.copy()
        op = code[isa.CODE_OP]
        names_field = np.isin(op, [isa.OPCODES[name] for name in isa.FIELD_OPS]) | (
            (op == isa.OP_BRANCH) & (code[isa.CODE_ARG] == isa.COND_COMPARE) & (code[isa.CODE_FIELD] >= 0))
        code[isa.CODE_FIELD, names_field] = [words[self.fields[i]] for i in code[isa.CODE_FIELD, names_field]]
        until = code[isa.CODE_UNTIL] >= 0
        code[isa.CODE_UNTIL, until] = [words[self.fields[i]] for i in code[isa.CODE_UNTIL, until]]
        return code


def _int_field(item: Located, key: str, minimum: int | None = None) -> int:
    value = item.value[key]
    if isinstance(value.value, bool) or not isinstance(value.value, int) or \
            (minimum is not None and value.value < minimum):
        expected = f"an integer >= {minimum}" if minimum is not None else "an integer"
        raise value.error(f"'{key}' must be {expected}, got {value.value!r}")
    return value.value


def _name_field(item: Located, key: str, choices: dict[str, int]) -> int:
    value = item.value[key]
    if value.value not in choices:
        expected = ", ".join(sorted(choices))
        raise value.error(f"'{key}' must be one of {expected}, got {value.value!r}")
    return choices[value.value]


def _declaration(root: Located) -> tuple[tuple[str, ...], int, bool]:
    """The `header` section: declared fields, segment slots, table word."""
    if "header" not in root.value:
        return (), 0, False
    header = root.value["header"]
    if not isinstance(header.value, dict):
        raise header.error("'header' must be a mapping with keys fields, segments, table")
    for key in header.value:
        if key not in ("fields", "segments", "table"):
            raise header.value[key].error(f"unknown key '{key}' in 'header', expected fields, segments, table")
    fields: list[str] = []
    if "fields" in header.value:
        listing = header.value["fields"]
        if not isinstance(listing.value, list):
            raise listing.error("'fields' must be a list of names")
        for item in listing.value:
            if not isinstance(item.value, str) or not _NAME.match(item.value):
                raise item.error(f"a header field must be a name (letters, digits, _), got {item.value!r}")
            if item.value in fields:
                raise item.error(f"header field '{item.value}' is declared twice")
            if item.value in isa.PSEUDO_FIELDS:
                raise item.error(f"'{item.value}' is built in and cannot be declared")
            fields.append(item.value)
    segments = _int_field(header, "segments", 0) if "segments" in header.value else 0
    table = False
    if "table" in header.value:
        table_item = header.value["table"]
        if not isinstance(table_item.value, bool):
            raise table_item.error("'table' must be true or false")
        table = table_item.value
    return tuple(fields), segments, table


def _field_index(item: Located, key: str, fields: tuple[str, ...]) -> int:
    name = item.value[key]
    if name.value not in fields:
        declared = ", ".join(fields) if fields else "none"
        raise name.error(f"'{key}' names {name.value!r}, which is not a declared header field (declared: {declared})")
    return fields.index(name.value)


def _condition(item: Located, key: str, fields: tuple[str, ...], code: np.ndarray, pc: int) -> None:
    text = item.value[key]
    if text.value in isa.CONDITIONS:
        code[isa.CODE_ARG, pc] = isa.CONDITIONS[text.value]
        return
    match = _COMPARISON.match(str(text.value)) if isinstance(text.value, str) else None
    if match is None:
        raise text.error(f"'{key}' must be arrived, local, setup_retries or a comparison 'FIELD OP VALUE' (OP one of "
                         f"{' '.join(isa.COMPARISONS)}), got {text.value!r}")
    name, compare, value = match.groups()
    if name in isa.PSEUDO_FIELDS:
        field = isa.PSEUDO_FIELDS[name]
    elif name in fields:
        field = fields.index(name)
    else:
        raise text.error(f"{name!r} is not a declared header field (declared: {', '.join(fields) or 'none'}; "
                         f"built in: {', '.join(isa.PSEUDO_FIELDS)})")
    if name == "route" and value in ROUTE_NAMES:
        number = ROUTE_NAMES[value]
    else:
        try:
            number = int(value)
        except ValueError:
            known = f" or one of {', '.join(ROUTE_NAMES)}" if name == "route" else ""
            raise text.error(f"the value compared must be an integer{known}, got {value!r}") from None
    code[isa.CODE_ARG, pc] = isa.COND_COMPARE
    code[isa.CODE_FIELD, pc] = field
    code[isa.CODE_COMPARE, pc] = isa.COMPARISONS[compare]
    code[isa.CODE_VALUE, pc] = number


def _header_run(code: np.ndarray, pc: int, route: int, arrived: bool) -> int:
    """The wait_header at `pc` and the branches after it that read only the route kind or `arrived`, run for a packet
    of kind `route` that has (or has not) arrived: packed (isa.RUN_FIELD_BITS each, lowest first) the pc where the
    run ends, the instructions it executes, the cycles from its first to the start of its last, and its cycles in
    all; NO_HEADER_RUN if a number does not fit."""
    executed, before_last, cycles = 1, 0, int(code[isa.CODE_CYCLES, pc])
    seen = {pc}
    following = pc + 1
    while following < code.shape[1] and following not in seen and code[isa.CODE_OP, following] == isa.OP_BRANCH:
        kind = code[isa.CODE_ARG, following]
        if kind == isa.COND_ARRIVED:
            taken = arrived
        elif kind == isa.COND_COMPARE and code[isa.CODE_FIELD, following] == isa.FIELD_ROUTE:
            taken = bool(isa.compared(route, code[isa.CODE_COMPARE, following], code[isa.CODE_VALUE, following]))
        else:
            break
        seen.add(following)
        executed += 1
        before_last = cycles
        cycles += int(code[isa.CODE_CYCLES, following])
        following = int(code[isa.CODE_TARGET, following]) if taken != bool(code[isa.CODE_NEGATE, following]) \
            else following + 1
    numbers = (following, executed, before_last, cycles)
    if max(numbers) > isa.RUN_FIELD_MASK:
        return isa.NO_HEADER_RUN
    return sum(n << (k * isa.RUN_FIELD_BITS) for k, n in enumerate(numbers))


def _predecode_header_runs(code: np.ndarray) -> None:
    """Fill the rows isa.CODE_HEADER_RUN.. of every wait_header for each route kind and arrival (ISA.md, Pre-decoded
    header runs)."""
    code[isa.CODE_HEADER_RUN:] = isa.NO_HEADER_RUN
    for pc in np.flatnonzero(code[isa.CODE_OP] == isa.OP_WAIT_HEADER):
        for route in range(isa.ROUTE_KINDS):
            for arrived in (False, True):
                code[isa.CODE_HEADER_RUN + 2 * route + arrived, pc] = _header_run(code, int(pc), route, arrived)


def _touches_registers(column: np.ndarray) -> bool:
    """Whether an instruction reads or writes the header registers (the route kind and `local` are not in them)."""
    op = column[isa.CODE_OP]
    if op == isa.OP_BRANCH:
        kind = column[isa.CODE_ARG]
        return kind == isa.COND_ARRIVED or (kind == isa.COND_COMPARE and column[isa.CODE_FIELD] != isa.FIELD_ROUTE)
    return op == isa.OP_WAIT_HEADER or isa.OPCODE_NAMES[int(op)] in isa.FIELD_OPS


def _refuse_registers_after_stream(code: np.ndarray, program: Located) -> None:
    """Refuse an instruction that could touch the header registers after a stream started (ISA.md, The header and
    the registers): the registers are the packet's header row, which its next holder owns from then on."""
    streams = (isa.OP_FORWARD, isa.OP_TEE, isa.OP_DELIVER, isa.OP_STORE)
    for start in np.flatnonzero(np.isin(code[isa.CODE_OP], streams)):
        seen: set[int] = set()
        waiting = [int(start) + 1]
        while waiting:
            pc = waiting.pop()
            if pc in seen or pc >= code.shape[1]:
                continue
            seen.add(pc)
            op = code[isa.CODE_OP, pc]
            if op == isa.OP_DONE or op in streams:  # a second stream is a run-time error of its own
                continue
            if _touches_registers(code[:, pc]):
                started = program.value[int(start)]
                raise program.value[pc].error(
                    f"'{isa.OPCODE_NAMES[int(op)]}' uses the header registers after the "
                    f"'{isa.OPCODE_NAMES[int(code[isa.CODE_OP, start])]}' of line {started.line} started the "
                    f"packet's stream: from then on they belong to the packet's next holder; use them before it")
            if op == isa.OP_JUMP:
                waiting.append(int(code[isa.CODE_TARGET, pc]))
                continue
            if op == isa.OP_BRANCH:
                waiting.append(int(code[isa.CODE_TARGET, pc]))
            waiting.append(pc + 1)


def assemble(path: str | Path) -> Microprogram:
    """Assemble the microprogram in ``path``; every mistake is an InputError naming its line."""
    root = load_located(path)
    if not isinstance(root.value, dict):
        raise root.error("expected a mapping with keys name, header, entry, program")
    for key in root.value:
        if key not in ("name", "description", "switching", "header", "entry", "program"):
            raise root.value[key].error(f"unknown key '{key}', expected name, description, switching, header, "
                                        f"entry, program")
    for key in ("name", "entry", "program"):
        if key not in root.value:
            raise root.error(f"missing key '{key}'")
    fields, segments, table = _declaration(root)
    switching = _name_field(root, "switching", isa.SWITCHINGS) if "switching" in root.value \
        else isa.SWITCHING_CUT_THROUGH
    switching_name = next(k for k, v in isa.SWITCHINGS.items() if v == switching)
    program = root.value["program"]
    if not isinstance(program.value, list) or not program.value:
        raise program.error("'program' must be a non-empty list of instructions")

    labels: dict[str, int] = {}
    for pc, item in enumerate(program.value):
        if not isinstance(item.value, dict):
            raise item.error("each instruction must be a mapping with an 'op' key")
        if "label" in item.value:
            label = item.value["label"]
            if not isinstance(label.value, str) or not label.value:
                raise label.error("'label' must be a non-empty string")
            if label.value == "retry":
                raise label.error("'retry' is reserved: 'else: retry' means wait for a transmitter")
            if label.value in labels:
                raise label.error(f"label '{label.value}' is defined twice")
            labels[label.value] = pc

    def resolve(item: Located, key: str) -> int:
        target = item.value[key]
        if target.value not in labels:
            raise target.error(f"'{key}' names undefined label {target.value!r}")
        return labels[target.value]

    code = np.zeros((isa.CODE_ROWS, len(program.value)), dtype=np.int64)
    code[isa.CODE_UNTIL] = -1
    lines = []
    for pc, item in enumerate(program.value):
        operands = item.value
        if "op" not in operands:
            raise item.error("instruction has no 'op'")
        op_name = operands["op"].value
        if op_name not in isa.OPCODES:
            raise operands["op"].error(f"unknown instruction {op_name!r}, expected one of {', '.join(isa.OPCODES)}")
        if op_name in isa.NOT_IN[switching]:
            raise operands["op"].error(f"'{op_name}' has no meaning under 'switching: {switching_name}'")
        allowed = {"op"} | _OPTIONAL | _REQUIRED.get(op_name, set()) | _ALLOWED.get(op_name, set())
        for key in operands:
            if key not in allowed:
                raise operands[key].error(f"'{op_name}' takes no operand '{key}'")
        for key in _REQUIRED.get(op_name, ()):
            if key not in operands:
                raise item.error(f"'{op_name}' needs operand '{key}'")
        code[isa.CODE_OP, pc] = isa.OPCODES[op_name]
        code[isa.CODE_SHARED, pc] = isa.OPCODES[op_name] in isa.SHARED
        code[isa.CODE_CYCLES, pc] = _int_field(item, "cycles", 1) if "cycles" in operands else 1
        if op_name == "branch":
            given = [k for k in ("if", "unless") if k in operands]
            if len(given) != 1:
                raise item.error("'branch' needs exactly one of 'if' or 'unless'")
            _condition(item, given[0], fields, code, pc)
            if code[isa.CODE_ARG, pc] == isa.COND_SETUP_RETRIES and switching != isa.SWITCHING_CIRCUIT:
                raise operands[given[0]].error("'setup_retries' needs 'switching: circuit' (it reads "
                                               "flow.circuit_setup)")
            code[isa.CODE_NEGATE, pc] = 1 if given[0] == "unless" else 0
            code[isa.CODE_TARGET, pc] = resolve(item, "goto")
        elif op_name == "jump":
            code[isa.CODE_TARGET, pc] = resolve(item, "goto")
        elif op_name in isa.FIELD_OPS:
            code[isa.CODE_FIELD, pc] = _field_index(item, "field", fields)
            code[isa.CODE_VALUE, pc] = _int_field(item, "value")
        elif op_name in ("forward", "tee"):
            via = _name_field(item, "via", isa.VIAS)
            if via == isa.VIA_SEGMENT and not segments:
                raise operands["via"].error("'via: segment' needs 'header: {segments: K}' with K >= 1")
            if via == isa.VIA_TABLE and not table:
                raise operands["via"].error("'via: table' needs 'header: {table: true}'")
            code[isa.CODE_ARG, pc] = via
            if operands["else"].value == "retry":
                code[isa.CODE_TARGET, pc] = isa.RETRY
            else:
                code[isa.CODE_TARGET, pc] = resolve(item, "else")
            if "until" in operands:
                if switching != isa.SWITCHING_CUT_THROUGH:
                    raise operands["until"].error("'until' reads a header field; a flit-level packet carries "
                                                  "only its route (end a coded path with its segments instead)")
                code[isa.CODE_UNTIL, pc] = _field_index(item, "until", fields)
            if "vc" in operands:
                if switching == isa.SWITCHING_CUT_THROUGH:
                    raise operands["vc"].error("'vc' needs 'switching: wormhole' or 'switching: circuit' "
                                               "(cut-through has no virtual channels)")
                code[isa.CODE_VC, pc] = _name_field(item, "vc", isa.VCS)
        lines.append(item.line)

    _predecode_header_runs(code)
    _refuse_registers_after_stream(code, program)
    last_op = int(code[isa.CODE_OP, -1])
    if last_op not in (isa.OP_JUMP, isa.OP_DONE):
        raise program.value[-1].error("the last instruction must be 'done' or 'jump', or execution runs off the end")

    entry = root.value["entry"]
    if not isinstance(entry.value, dict):
        raise entry.error("'entry' must map receive and inject to labels")
    for key in entry.value:
        if key not in ENTRY_POINTS:
            raise entry.value[key].error(f"unknown entry point '{key}', expected receive or inject")
    for key in ENTRY_POINTS:
        if key not in entry.value:
            raise entry.error(f"'entry' needs '{key}'")
    name = root.value["name"]
    if not isinstance(name.value, str):
        raise name.error("'name' must be a string")
    return Microprogram(
        name=name.value,
        path=str(path),
        code=code,
        entry_receive=resolve(entry, "receive"),
        entry_inject=resolve(entry, "inject"),
        labels=labels,
        source_lines=tuple(lines),
        fields=fields,
        segments=segments,
        table=table,
        switching=switching,
    )


# Instructions that neither consume input nor act nor change a header field: a context that comes round to one of
# them through such instructions alone finds everything its branches read as it was, and comes round again for ever.
_IDLE = (isa.OP_WAIT_HEADER, isa.OP_BRANCH, isa.OP_JUMP, isa.OP_WAIT, isa.OP_WAIT_TAIL)


def _successors(code: np.ndarray, pc: int) -> list[tuple[int, tuple | None]]:
    """Where execution can go after instruction pc, each with what a branch then knows: (condition, its truth), or
    None. `done` ends the packet's program; a forward or tee goes on, or to its `else` label."""
    op = code[isa.CODE_OP, pc]
    if op == isa.OP_DONE:
        return []
    target = int(code[isa.CODE_TARGET, pc])
    if op == isa.OP_JUMP:
        return [(target, None)]
    following = [(pc + 1, None)] if pc + 1 < code.shape[1] else []
    if op == isa.OP_BRANCH:
        arg = int(code[isa.CODE_ARG, pc])
        condition = (arg, int(code[isa.CODE_FIELD, pc]), int(code[isa.CODE_COMPARE, pc]),
                     int(code[isa.CODE_VALUE, pc])) if arg == isa.COND_COMPARE else (arg,)
        goes = code[isa.CODE_NEGATE, pc] == 0  # the condition's truth on the way to the label
        return [(target, (condition, goes))] + [(n, (condition, not goes)) for n, _ in following]
    if op in (isa.OP_FORWARD, isa.OP_TEE) and target != isa.RETRY:
        return following + [(target, None)]
    return following


def _reachable(code: np.ndarray, starts: list[int]) -> set[int]:
    seen: set[int] = set()
    waiting = list(starts)
    while waiting:
        pc = waiting.pop()
        if pc not in seen:
            seen.add(pc)
            waiting.extend(n for n, _ in _successors(code, pc))
    return seen


def _endless_loop(code: np.ndarray, reachable: set[int]) -> list[int]:
    """A cycle of idle instructions (_IDLE) a packet can enter, as its instructions from the lowest one, [] if none.
    On such a cycle every condition keeps its truth, so one that needs a condition and its negation cannot
    happen and is not one."""
    idle = {pc for pc in reachable if code[isa.CODE_OP, pc] in _IDLE}
    for root in sorted(idle):
        paths = [(root, {}, [root])]
        while paths:
            pc, known, path = paths.pop()
            for following, fact in _successors(code, pc):
                then = known
                if fact is not None:
                    condition, truth = fact
                    if known.get(condition, truth) != truth:
                        continue
                    then = {**known, condition: truth}
                if following == root:
                    return path
                if following > root and following in idle and following not in path:
                    paths.append((following, then, path + [following]))
    return []


def _unacknowledged_delivery(code: np.ndarray, receive: int) -> int | None:
    """The first `deliver` a circuit's probe can reach from `receive` with no `ack` before it, else None."""
    seen: set[tuple[int, bool]] = set()
    waiting = [(receive, False)]
    while waiting:
        pc, acked = waiting.pop()
        if (pc, acked) in seen:
            continue
        seen.add((pc, acked))
        op = code[isa.CODE_OP, pc]
        if op == isa.OP_DELIVER and not acked:
            return pc
        waiting.extend((n, acked or op == isa.OP_ACK) for n, _ in _successors(code, pc))
    return None


def check(program: Microprogram) -> None:
    """What `harts microcode check` finds before any run (ISA.md, Checks before a run), as an InputError at the
    offending instruction's line: an instruction a packet can come round to for ever without consuming input,
    and a circuit program whose probe can be delivered, or its path end, without an `ack`."""
    code = program.code
    loop = _endless_loop(code, _reachable(code, [program.entry_receive, program.entry_inject]))
    if loop:
        op = isa.OPCODE_NAMES[int(code[isa.CODE_OP, loop[0]])]
        lines = " -> ".join(str(program.source_lines[pc]) for pc in loop + loop[:1])
        raise InputError(f"'{op}' can loop for ever: it comes back to itself (lines {lines}) through instructions "
                         f"that consume no input, act on nothing and change no header field (wait_header, branch, "
                         f"jump, wait, wait_tail)", program.path, program.source_lines[loop[0]])
    if program.switching != isa.SWITCHING_CIRCUIT:
        return
    receive = program.entry_receive
    unacknowledged = _unacknowledged_delivery(code, receive)
    if unacknowledged is not None:
        raise InputError("'deliver' can end a circuit that was never acknowledged: no 'ack' comes before it on the "
                         "way from 'receive', so the source's data, which wait for the acknowledgment, never leave "
                         "and the circuit holds its links for ever", program.path, program.source_lines[unacknowledged])
    if not any(code[isa.CODE_OP, pc] == isa.OP_ACK for pc in _reachable(code, [receive])):
        raise InputError("the circuit program never acks: no 'ack' can be reached from 'receive', so no source's data "
                         "ever leave", program.path, program.source_lines[receive])


def listing(program: Microprogram) -> str:
    """A human-readable listing: address, label, instruction, operands, cycles; * marks shared instructions,
    which execute at their own tick (the others run ahead of the clock, see ISA.md)."""
    label_at = {pc: name for name, pc in program.labels.items()}
    cond_names = {v: k for k, v in isa.CONDITIONS.items()}
    compare_names = {v: k for k, v in isa.COMPARISONS.items()}
    pseudo_names = {v: k for k, v in isa.PSEUDO_FIELDS.items()}
    route_names = {v: k for k, v in ROUTE_NAMES.items()}
    via_names = {v: k for k, v in isa.VIAS.items()}
    vc_names = {v: k for k, v in isa.VCS.items()}
    rows = []
    width = max([len(name) for name in program.labels] + [5])
    for pc in range(len(program)):
        column = program.code[:, pc]
        op = int(column[isa.CODE_OP])
        target = label_at.get(int(column[isa.CODE_TARGET]), "")
        field = int(column[isa.CODE_FIELD])
        field_name = pseudo_names[field] if field < 0 else program.fields[field] if program.fields else ""
        if op == isa.OP_BRANCH:
            word = "unless" if column[isa.CODE_NEGATE] else "if"
            if column[isa.CODE_ARG] == isa.COND_COMPARE:
                value = int(column[isa.CODE_VALUE])
                shown = route_names.get(value, value) if field == isa.FIELD_ROUTE else value
                condition = f"{field_name} {compare_names[int(column[isa.CODE_COMPARE])]} {shown}"
            else:
                condition = cond_names[int(column[isa.CODE_ARG])]
            operands = f"{word} {condition} goto {target}"
        elif op == isa.OP_JUMP:
            operands = f"goto {target}"
        elif isa.OPCODE_NAMES[op] in isa.FIELD_OPS:
            operands = f"{field_name} {int(column[isa.CODE_VALUE])}"
        elif op in (isa.OP_FORWARD, isa.OP_TEE):
            failure = "retry" if column[isa.CODE_TARGET] == isa.RETRY else target
            operands = f"via {via_names[int(column[isa.CODE_ARG])]} else {failure}"
            if program.switching != isa.SWITCHING_CUT_THROUGH:
                operands += f" vc {vc_names[int(column[isa.CODE_VC])]}"
            if column[isa.CODE_UNTIL] >= 0:
                operands += f" until {program.fields[int(column[isa.CODE_UNTIL])]}"
        else:
            operands = ""
        shared = "*" if op in isa.SHARED else " "
        label = label_at.get(pc, "")
        rows.append(f"{pc:4d}  {label:{width}s}  {shared}{isa.OPCODE_NAMES[op]:12s}  {operands:40s}  "
                    f"{int(column[isa.CODE_CYCLES])} cyc")
    return "\n".join(rows)
