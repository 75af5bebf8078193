"""The documents that users read first agree with the code."""

from pathlib import Path

from harts.controller import isa
from harts.machine.config import KEYS

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


def test_readme_table_of_which_broadcast_runs_where_is_the_data():
    """One row per group of algorithms that share everything but the name, in the table's order."""
    from itertools import groupby

    from harts.broadcasts.table import BROADCASTS
    from harts.controller.microcode import assemble
    from harts.machine.config import MICROCODE_DIR
    readme = (REPO / "README.md").read_text()
    rows = []
    for (paper, topology, switching, all_port, faults, config), group in groupby(
            BROADCASTS.values(), key=lambda b: (b.paper, b.topology, b.switching, b.all_port, b.faults, b.config)):
        names = ", ".join(f"`{b.name}`" for b in group)
        fitting = ", ".join(sorted(p.stem for p in MICROCODE_DIR.glob("*.yaml") if switching.fits(assemble(p))))
        ports = "all-port (`flow.np_channels: 0`)" if all_port else "any"
        rows.append(f"| {names} | {paper} | {topology} | {switching}: {fitting} | {ports} | {faults} | `{config}` |")
    header = "| algorithm | paper | networks | switching: shipped microprograms | NP ports | `harts faults` reports " \
             "| runs on |\n|---|---|---|---|---|---|---|\n"
    assert header + "\n".join(rows) + "\n\n" in readme


def test_readme_refusal_examples_are_what_harts_prints(capsys, tmp_path, monkeypatch):
    from harts.cli import main
    readme = (REPO / "README.md").read_text()
    section = readme[readme.index("### Which broadcast runs where"):readme.index("## Faults and reliable reception")]
    block = section[section.index("```\n$ harts") + 4:]
    block = block[:block.index("```")].splitlines()
    one_port = (REPO / "configs" / "circuit_torus_25x25.yaml").read_text().replace("np_channels: 0 ", "np_channels: 1 ")
    (tmp_path / "one_port_torus_25x25.yaml").write_text(one_port)
    (tmp_path / "configs").symlink_to(REPO / "configs")
    monkeypatch.chdir(tmp_path)
    assert len(block) == 6
    for command, printed in zip(block[::2], block[1::2]):
        args = command.split("#")[0].split()[2:]  # after "$ harts"
        assert main(args) == 2
        assert capsys.readouterr().err.strip() == printed, command


def python_examples(text: str) -> list[str]:
    blocks = text.split("```python\n")[1:]
    return [block[:block.index("```")] for block in blocks]


def test_the_readme_python_api_examples_run(monkeypatch, capsys):
    readme = (REPO / "README.md").read_text()
    section = readme[readme.index("## Python API"):]
    section = section[:section.index("\n## ", 1)]
    examples = python_examples(section)
    assert len(examples) >= 3
    monkeypatch.chdir(REPO)
    for example in examples:
        exec(compile(example, "README.md", "exec"), {})
    printed = capsys.readouterr().out
    assert "160/3" in printed and "1384 1384" in printed
    # the loop over rates: three lines of rate, accepted throughput, latency and verdict, every run stable
    loop = [line.split() for line in printed.splitlines() if line.split()[:1] in (["0.1"], ["0.2"], ["0.3"])]
    assert [row[0] for row in loop] == ["0.1", "0.2", "0.3"] and all(row[3] == "True" for row in loop)


def test_the_package_docstring_example_runs(monkeypatch, capsys):
    import textwrap

    import harts
    lines = harts.__doc__.splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("    "))
    end = next((i for i in range(first, len(lines)) if lines[i] and not lines[i].startswith("    ")), len(lines))
    monkeypatch.chdir(REPO)
    exec(compile(textwrap.dedent("\n".join(lines[first:end])), "harts/__init__.py", "exec"), {})
    assert len(capsys.readouterr().out.splitlines()) == 3
