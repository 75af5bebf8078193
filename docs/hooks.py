"""The reference pages, filled in from the code as the site is built (mkdocs.yml lists this file under `hooks:`).

A page asks for a generated part with a line of its own, `<!-- generated: NAME -->`:

* `config-keys`: every key of harts.machine.config.KEYS, with its type, default, allowed values, kernels and meaning;
* `commands`: every command and option of harts.cli.build_parser();
* `result-fields`: every field of harts.machine.results.RESULT_FIELDS, which `harts run` prints from;
* `instructions cut-through` and `instructions flit`: the micro-instruction set of one kernel, the names from
  harts.controller.isa and the assembler's operand tables, the meanings from harts.instructions;
* `include FILE`: a document of the repository (MODEL.md, say), its links into docs/ made relative to the page.

An unknown name fails the build. tests/test_docs_site.py imports this file to check what it generates.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
MARKER = re.compile(r"^<!-- generated: (.+?) -->$", re.MULTILINE)
KERNEL_NAMES = {"cut-through": "cut-through", "flit": "flit-level"}
KERNEL_FIELDS = {"cut-through": "cut_through", "flit": "flit"}  # harts.instructions.Meaning's


def on_page_markdown(markdown: str, page, **_) -> str:
    """MkDocs' hook: each marker replaced by what it names."""
    depth = page.file.src_uri.count("/")
    return MARKER.sub(lambda match: generate(match.group(1), depth), markdown)


def generate(name: str, depth: int = 0) -> str:
    """The Markdown a marker names; `depth`: how many folders below docs/ the page is."""
    kind, _, argument = name.partition(" ")
    if kind == "include":
        return include(argument, depth)
    makers = {"config-keys": config_keys, "commands": commands, "result-fields": result_fields,
              "instructions": instructions}
    if kind not in makers:
        raise ValueError(f"unknown generated part {name!r}, expected one of {', '.join(makers)} or include FILE")
    return makers[kind](argument) if argument else makers[kind]()


def include(path: str, depth: int) -> str:
    """A repository document; its links to docs/ (written from the repository's root) point from the page instead."""
    text = (ROOT / path).read_text()
    return text.replace("](docs/", "](" + "../" * depth)


def cell(text: str) -> str:
    """Text that stays in one table cell: a | outside a code span escaped (inside one it is kept as it is)."""
    parts = text.replace("\n", " ").split("`")
    return "`".join(part if i % 2 else part.replace("|", "\\|") for i, part in enumerate(parts))


# ---- config keys -------------------------------------------------------------------------------------------------

TYPES = {"int": "integer", "float": "number", "str": "string", "list": "list", "mapping": "mapping",
         "ints": "list of integers", "numbers": "list of numbers"}


def yaml_value(value) -> str:
    """A value as a config file writes it."""
    value = list(value) if isinstance(value, tuple) else value
    return yaml.safe_dump(value, default_flow_style=True, width=10_000).strip().removesuffix("\n...").strip()


def read_by(kernels: tuple[str, ...]) -> str:
    names = [f"the {KERNEL_NAMES[k]} kernel" for k in kernels]
    return "Read by " + " and ".join(names) + "."


def config_keys() -> str:
    from harts.machine.config import KEYS
    lines = []
    section = None
    for key in KEYS:
        head = key.name.split(".")[0] if "." in key.name else "Top level"
        if head != section:
            section = head
            lines += [f"## {head}", ""]
        allowed = key.choices and "one of " + ", ".join(f"`{c}`" for c in key.choices) or key.allowed
        facts = [TYPES[key.kind], f"default `{yaml_value(key.default)}`"] + ([allowed] if allowed else [])
        facts[0] = facts[0].capitalize()
        lines += [f"### `{key.name}`", "", f"{', '.join(facts)}. {read_by(key.kernels)}", "",
                  key.meaning[0].upper() + key.meaning[1:] + ".", ""]
    return "\n".join(lines)


# ---- commands ----------------------------------------------------------------------------------------------------

def command_parsers(parser: argparse.ArgumentParser, path: str = "harts"):
    """(command, its parser, its one-line help) for every command that runs, subcommands included."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help for choice in action._choices_actions}
            for name, sub in action.choices.items():
                if any(isinstance(a, argparse._SubParsersAction) for a in sub._actions):
                    yield from command_parsers(sub, f"{path} {name}")
                else:
                    yield f"{path} {name}", sub, helps[name]


def arguments(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    """A command's arguments as its --help lists them, -h apart."""
    return [a for a in parser._actions if not isinstance(a, argparse._HelpAction)]


def argument_name(action: argparse.Action) -> str:
    if not action.option_strings:
        return action.metavar or action.dest
    takes_value = action.nargs != 0
    return " ".join(action.option_strings) + (f" {action.metavar or action.dest.upper()}"
                                              if takes_value and not action.choices else "")


def argument_meaning(parser: argparse.ArgumentParser, action: argparse.Action) -> str:
    text = argparse.HelpFormatter(parser.prog)._expand_help(action) if action.help else ""
    notes = []
    if action.choices and not isinstance(action, argparse._SubParsersAction):
        notes.append("One of " + ", ".join(f"`{c}`" for c in action.choices) + ".")
    if action.required and action.option_strings:
        notes.append("Required.")
    for group in parser._mutually_exclusive_groups:
        if action in group._group_actions:
            others = [a.option_strings[0] for a in group._group_actions if a is not action]
            notes.append(("Exactly one of this and " if group.required else "Not with ")
                         + ", ".join(f"`{o}`" for o in others) + ".")
    if text and not text.endswith("."):
        text += "."
    return " ".join([text] + notes).strip()


def argument_default(action: argparse.Action) -> str:
    default = action.default
    if default is None or default is False or default == [] or "default" in (action.help or ""):
        return ""
    return f"`{default}`"


def commands() -> str:
    from harts.cli import build_parser
    lines = []
    for path, parser, help_text in command_parsers(build_parser()):
        formatter = argparse.HelpFormatter(parser.prog, width=88)
        formatter.add_usage(parser.usage, parser._actions, parser._mutually_exclusive_groups)
        lines += [f"## {path}", "", help_text[0].upper() + help_text[1:] + ".", "", "```text",
                  formatter.format_help().strip(), "```", "", "| argument | meaning | default |", "|---|---|---|"]
        lines += [f"| {cell('`' + argument_name(a) + '`')} | {cell(argument_meaning(parser, a))} | "
                  f"{argument_default(a)} |" for a in arguments(parser)]
        lines.append("")
    return "\n".join(lines)


# ---- result fields -----------------------------------------------------------------------------------------------

def result_fields() -> str:
    from harts.machine.results import RESULT_FIELDS
    lines = ["| field | unit | kernels | meaning |", "|---|---|---|---|"]
    for field in RESULT_FIELDS:
        kernels = " and ".join(KERNEL_NAMES[k] for k in field.kernels)
        lines.append(f"| `{field.name}` | {cell(field.unit)} | {kernels} | {cell(field.meaning)} |")
    return "\n".join(lines) + "\n"


# ---- micro-instructions ------------------------------------------------------------------------------------------

# Operands the assembler refuses on one kernel though the instruction takes them on the other (tests/test_docs_site.py
# checks that it does): `vc` picks a virtual channel, which cut-through has not; `until` reads a header field, which
# a flit-level packet has not.
OPERANDS_NOT_ON = {"cut-through": {"vc"}, "flit": {"until"}}


def operands(name: str, kernel: str) -> str:
    from harts.controller import microcode
    required = sorted(microcode._REQUIRED.get(name, ()))
    optional = sorted(microcode._ALLOWED.get(name, set()) - OPERANDS_NOT_ON[kernel])
    return ", ".join([f"`{o}`" for o in required] + [f"[`{o}`]" for o in optional]) or "–"


def switchings(name: str) -> str:
    """The flit-level switchings whose assembler takes the instruction."""
    from harts.controller import isa
    return ", ".join(s for s in ("wormhole", "circuit") if name not in isa.NOT_IN[isa.SWITCHINGS[s]])


def meanings_table(header: str, meanings: dict, kernel: str | None) -> list[str]:
    """A table `| name | meaning |` of harts.instructions, one kernel's meanings (None: a table of one meaning only)."""
    rows = [f"| {header} | meaning |", "|---|---|"]
    for name, meaning in meanings.items():
        text = meaning if kernel is None else getattr(meaning, KERNEL_FIELDS[kernel])
        if text is not None:
            rows.append(f"| `{name}` | {cell(text)} |")
    return rows + [""]


def instructions(kernel: str) -> str:
    """The instruction set of the cut-through or the flit-level kernel: instructions, conditions, routes (and, at
    flit level, VC policies), each with its meaning on that kernel."""
    from harts import instructions as meaning
    from harts.controller import isa
    flit = kernel == "flit"
    lines = ["## Instructions", "",
             "| instruction | operands | " + ("switching | " if flit else "") + "shared | meaning |",
             "|---|---|---|---|" + ("---|" if flit else "")]
    for name, texts in meaning.INSTRUCTIONS.items():
        text = getattr(texts, KERNEL_FIELDS[kernel])
        if text is None:
            continue
        shared = "yes" if isa.OPCODES[name] in isa.SHARED else ""
        lines.append(f"| `{name}` | {operands(name, kernel)} | " + (f"{switchings(name)} | " if flit else "")
                     + f"{shared} | {cell(text)} |")
    lines += ["", "Every instruction also takes `label`, `cycles` (default 1) and `comment`.",
              "Operands in brackets are optional.", "", "## Conditions (`branch`)", ""]
    lines += meanings_table("condition", meaning.CONDITIONS, kernel)
    comparisons = " ".join(f"`{c}`" for c in isa.COMPARISONS)
    operand = "a pseudo-field (a flit-level packet has no fields)" if flit else "a declared field or a pseudo-field"
    lines += [f"A condition may also be a comparison `F OP K`: F is {operand}, K an integer.",
              f"OP is one of {comparisons}; `F & K` holds when F and K share a bit.", ""]
    lines += meanings_table("pseudo-field", meaning.PSEUDO_FIELDS, kernel)
    lines += ["## Routes (`via`)", ""]
    lines += meanings_table("route", meaning.VIAS, kernel)
    if flit:
        lines += ["## Virtual channels (`vc`)", "", "A `forward` takes the lowest free VC its policy allows.",
                  "With `flow.vc_choice: round_robin` it takes the first free one after the last one its port gave.",
                  ""]
        lines += meanings_table("policy", meaning.VCS, None)
    return "\n".join(lines)
