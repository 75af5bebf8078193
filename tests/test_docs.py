"""The documents that users read first agree with the code."""

from pathlib import Path

from harts.machine.config import KEYS
from harts.controller import isa

REPO = Path(__file__).resolve().parent.parent


def test_readme_lists_every_config_key_with_its_default():
    readme = (REPO / "README.md").read_text()
    for key in KEYS:
        assert f"| `{key.name}` | {key.default!r} | {key.meaning} | {key.allowed} |" in readme, key.name


def test_ci_runs_the_readme_test_command():
    readme = (REPO / "README.md").read_text()
    ci = (REPO / ".ci" / "run").read_text()
    command = next(line.strip() for line in readme.splitlines() if "pytest" in line and "venv" in line)
    assert command in ci


def test_isa_document_covers_every_instruction_condition_route_and_pseudo_field():
    text = (REPO / "microcode" / "ISA.md").read_text()
    for name in list(isa.OPCODES) + list(isa.CONDITIONS) + list(isa.VIAS) + list(isa.PSEUDO_FIELDS) \
            + list(isa.COMPARISONS):
        assert f"`{name}`" in text, name


def test_default_config_file_matches_declared_defaults():
    from harts.machine.config import load_config
    config = load_config(REPO / "configs" / "default.yaml")
    for key in KEYS:
        value = config[key.name]
        value = value.plain() if hasattr(value, "plain") else value
        assert value == key.default, key.name
