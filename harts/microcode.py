"""Assembler: a YAML microprogram for the HARTS receivers becomes the integer array the kernel interprets."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from . import isa
from .yamlsource import Located, load_located

# Operand keys each instruction requires (besides 'op') and allows.
_REQUIRED = {
    "branch": {"goto"},
    "jump": {"goto"},
    "forward": {"via", "else"},
    "tee": {"via", "else"},
    "wait": {"cycles"},
}
_OPTIONAL = {"label", "cycles", "comment"}
_BRANCH_ONE_OF = ("if", "unless")
ENTRY_POINTS = ("receive", "inject")


@dataclass(frozen=True)
class Microprogram:
    """An assembled microprogram: ``code[isa.CODE_*, pc]`` plus what a listing or an error message needs."""

    name: str
    path: str
    code: np.ndarray  # int64 (isa.CODE_ROWS, length)
    entry_receive: int
    entry_inject: int
    labels: dict[str, int]
    source_lines: tuple[int, ...]  # YAML line of each instruction

    def __len__(self) -> int:
        return self.code.shape[1]

    def describe(self, pc: int) -> str:
        """Where instruction ``pc`` is written, for run-time error messages."""
        op = isa.OPCODE_NAMES[int(self.code[isa.CODE_OP, pc])]
        return f"{self.path}:{self.source_lines[pc]}: '{op}' (address {pc})"


def _int_field(item: Located, key: str, minimum: int) -> int:
    value = item.value[key]
    if isinstance(value.value, bool) or not isinstance(value.value, int) or value.value < minimum:
        raise value.error(f"'{key}' must be an integer >= {minimum}, got {value.value!r}")
    return value.value


def _name_field(item: Located, key: str, choices: dict[str, int]) -> int:
    value = item.value[key]
    if value.value not in choices:
        expected = ", ".join(sorted(choices))
        raise value.error(f"'{key}' must be one of {expected}, got {value.value!r}")
    return choices[value.value]


def assemble(path: str | Path) -> Microprogram:
    """Assemble the microprogram in ``path``; every mistake is an InputError naming its line."""
    root = load_located(path)
    if not isinstance(root.value, dict):
        raise root.error("expected a mapping with keys name, entry, program")
    for key in root.value:
        if key not in ("name", "description", "entry", "program"):
            raise root.value[key].error(f"unknown key '{key}', expected name, description, entry, program")
    for key in ("name", "entry", "program"):
        if key not in root.value:
            raise root.error(f"missing key '{key}'")
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
    lines = []
    for pc, item in enumerate(program.value):
        fields = item.value
        if "op" not in fields:
            raise item.error("instruction has no 'op'")
        op_name = fields["op"].value
        if op_name not in isa.OPCODES:
            raise fields["op"].error(f"unknown instruction {op_name!r}, expected one of {', '.join(isa.OPCODES)}")
        allowed = {"op"} | _OPTIONAL | _REQUIRED.get(op_name, set())
        if op_name == "branch":
            allowed |= set(_BRANCH_ONE_OF)
        for key in fields:
            if key not in allowed:
                raise fields[key].error(f"'{op_name}' takes no operand '{key}'")
        for key in _REQUIRED.get(op_name, ()):
            if key not in fields:
                raise item.error(f"'{op_name}' needs operand '{key}'")
        op = isa.OPCODES[op_name]
        code[isa.CODE_OP, pc] = op
        code[isa.CODE_CYCLES, pc] = _int_field(item, "cycles", 1) if "cycles" in fields else 1
        if op_name == "branch":
            given = [k for k in _BRANCH_ONE_OF if k in fields]
            if len(given) != 1:
                raise item.error("'branch' needs exactly one of 'if' or 'unless'")
            code[isa.CODE_ARG, pc] = _name_field(item, given[0], isa.CONDITIONS)
            code[isa.CODE_NEGATE, pc] = 1 if given[0] == "unless" else 0
            code[isa.CODE_TARGET, pc] = resolve(item, "goto")
        elif op_name == "jump":
            code[isa.CODE_TARGET, pc] = resolve(item, "goto")
        elif op_name in ("forward", "tee"):
            code[isa.CODE_ARG, pc] = _name_field(item, "via", isa.VIAS)
            if fields["else"].value == "retry":
                code[isa.CODE_TARGET, pc] = isa.RETRY
            else:
                code[isa.CODE_TARGET, pc] = resolve(item, "else")
        elif op_name == "wait":
            code[isa.CODE_ARG, pc] = code[isa.CODE_CYCLES, pc]
        lines.append(item.line)

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
    )


def listing(program: Microprogram) -> str:
    """A human-readable listing: address, label, instruction and operands."""
    label_at = {pc: name for name, pc in program.labels.items()}
    target_name = {pc: name for name, pc in program.labels.items()}
    cond_names = {v: k for k, v in isa.CONDITIONS.items()}
    via_names = {v: k for k, v in isa.VIAS.items()}
    rows = []
    width = max([len(name) for name in program.labels] + [5])
    for pc in range(len(program)):
        op = int(program.code[isa.CODE_OP, pc])
        arg = int(program.code[isa.CODE_ARG, pc])
        target = target_name.get(int(program.code[isa.CODE_TARGET, pc]), "")
        if op == isa.OP_BRANCH:
            word = "unless" if program.code[isa.CODE_NEGATE, pc] else "if"
            operands = f"{word} {cond_names[arg]} goto {target}"
        elif op == isa.OP_JUMP:
            operands = f"goto {target}"
        elif op in (isa.OP_FORWARD, isa.OP_TEE):
            failure = "retry" if program.code[isa.CODE_TARGET, pc] == isa.RETRY else target
            operands = f"via {via_names[arg]} else {failure}"
        else:
            operands = ""
        cycles = int(program.code[isa.CODE_CYCLES, pc])
        label = label_at.get(pc, "")
        rows.append(f"{pc:4d}  {label:{width}s}  {isa.OPCODE_NAMES[op]:12s}  {operands:36s}  {cycles} cyc")
    return "\n".join(rows)
