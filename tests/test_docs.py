"""The documents that users read first agree with the code."""

from pathlib import Path

from harts.controller import isa
from harts.machine.config import KEYS

REPO = Path(__file__).resolve().parent.parent


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


def test_every_program_in_the_isa_document_assembles_on_the_kernel_its_part_explains(tmp_path):
    """ISA.md has a part per kernel (its `## ` headings name the flit-level or the cut-through kernel); each ```yaml
    program in a part assembles, and its switching runs on that part's kernel."""
    import re

    from harts.controller.microcode import assemble
    text = (REPO / "microcode" / "ISA.md").read_text()
    shown = 0
    for match in re.finditer(r"^```yaml\n(.*?)^```$", text, re.MULTILINE | re.DOTALL):
        part = re.findall(r"^## (.+)$", text[:match.start()], re.MULTILINE)[-1]
        path = tmp_path / f"program_{shown}.yaml"
        path.write_text(match.group(1))
        flit = assemble(path).switching != isa.SWITCHING_CUT_THROUGH
        assert ("flit-level kernel" in part, "cut-through kernel" in part) == (flit, not flit), (part, match.group(1))
        shown += 1
    assert shown >= 2
    from harts.machine.config import load_config
    config = load_config(REPO / "configs" / "default.yaml")
    for key in KEYS:
        value = config[key.name]
        value = value.plain() if hasattr(value, "plain") else value
        assert value == key.default, key.name


def load_hooks():
    import importlib.util
    spec = importlib.util.spec_from_file_location("docs_hooks", REPO / "docs" / "hooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_table_of_which_broadcast_runs_where_is_the_data():
    """One row per group of algorithms that share everything but the name, in the table's order; the page shows it."""
    from itertools import groupby

    from harts.broadcasts.table import BROADCASTS
    from harts.controller.microcode import assemble
    from harts.machine.config import MICROCODE_DIR
    hooks = load_hooks()
    assert set(hooks.PAPERS) >= {b.paper for b in BROADCASTS.values()}
    rows = []
    for (paper, topology, switching, all_port, faults, config), group in groupby(
            BROADCASTS.values(), key=lambda b: (b.paper, b.topology, b.switching, b.all_port, b.faults, b.config)):
        names = ", ".join(f"`{b.name}`" for b in group)
        fitting = ", ".join(sorted(p.stem for p in MICROCODE_DIR.glob("*.yaml") if switching.fits(assemble(p))))
        ports = "all-port (`flow.np_channels: 0`)" if all_port else "any"
        rows.append(f"| {names} | {hooks.PAPERS[paper]} | {topology} | {switching}: {fitting} | {ports} | {faults} "
                    f"| `{config}` |")
    header = "| algorithm | paper | networks | switching: shipped microprograms | NP ports | `harts faults` reports " \
             "| runs on |\n|---|---|---|---|---|---|---|\n"
    assert hooks.generate("broadcasts") == header + "\n".join(rows) + "\n"
    assert sum(name.count("`") // 2 for name in [row.split(" | ")[0] for row in rows]) == len(BROADCASTS)
    page = (REPO / "docs" / "reference" / "broadcasts.md").read_text()
    assert "\n<!-- generated: broadcasts -->\n" in page


def shown_outputs(page: Path) -> list[str]:
    """The ```text blocks of a page: the outputs its examples show, which tests/test_docs_site.py checks."""
    text = page.read_text()
    return [block[:block.index("```")] for block in text.split("```text\n")[1:]]


def test_the_broadcasts_page_shows_a_refusal_of_each_kind():
    """A network, a microprogram with its NP ports, and NP ports alone that do not fit: each refused with exit 2."""
    refusals = [out for out in shown_outputs(REPO / "docs" / "reference" / "broadcasts.md") if "harts: error:" in out]
    assert len(refusals) == 3 and all(out.rstrip().endswith("exit code 2") for out in refusals)
    assert any("not on torus 8x8" in out for out in refusals)
    assert any("switches by cut-through" in out for out in refusals)
    assert any("needs all-port NPs" in out and "switches" not in out for out in refusals)


def test_the_python_loop_tutorial_shows_a_sweep_an_exact_latency_and_a_broadcast():
    """Its examples run with the other pages' (tests/test_docs_site.py); here, that they still show these."""
    shown = "\n".join(shown_outputs(REPO / "docs" / "tutorials" / "python-loop.md"))
    assert "160/3" in shown and "1384 1384 True" in shown
    loop = [line.split() for line in shown.splitlines() if line.split()[:1] in (["0.1"], ["0.2"], ["0.3"])]
    assert [row[0] for row in loop] == ["0.1", "0.2", "0.3"] and all(row[3] == "True" for row in loop)


def test_the_configs_page_names_every_shipped_config_with_its_network_and_kernel():
    from harts import Simulation
    from harts.machine.config import CONFIGS_DIR, load_config
    page = (REPO / "docs" / "reference" / "configs-and-networks.md").read_text()
    rows = {line.split(" | ")[0].strip("|` "): line.split(" | ") for line in page.splitlines()
            if line.startswith("| `") and ".yaml` |" in line}
    shipped = sorted(CONFIGS_DIR.glob("*.yaml"))
    assert sorted(rows) == [p.name for p in shipped]
    kernels = {"cut_through": "cut-through", "wormhole": "flit-level (wormhole)", "circuit": "flit-level (circuit)"}
    for path in shipped:
        machine = Simulation(load_config(path))
        assert rows[path.name][1:3] == [machine.topology.name, kernels[machine.switching]], path.name


def test_the_readme_is_a_front_page_whose_links_lead_somewhere():
    import re
    readme = (REPO / "README.md").read_text()
    assert len(readme.splitlines()) <= 200
    targets = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", readme)
    assert targets and all((REPO / target).is_file() for target in targets if "://" not in target), targets


def test_the_package_docstring_example_runs(monkeypatch, capsys):
    import textwrap

    import harts
    lines = harts.__doc__.splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("    "))
    end = next((i for i in range(first, len(lines)) if lines[i] and not lines[i].startswith("    ")), len(lines))
    monkeypatch.chdir(REPO)
    exec(compile(textwrap.dedent("\n".join(lines[first:end])), "harts/__init__.py", "exec"), {})
    assert len(capsys.readouterr().out.splitlines()) == 3


USER_DOCUMENTS = [REPO / "README.md", REPO / "MODEL.md", REPO / "EXPERIMENTS.md", REPO / "microcode" / "ISA.md",
                  REPO / "bench" / "SPEED.md", *sorted((REPO / "docs").rglob("*.md"))]
MONTHS = "January|February|March|April|May|June|July|August|September|October|November|December"
WORK_RECORDS = {
    "an internal label for a paper (name its authors)": r"(?<!-)\b[Pp]aper 00[0-4]\b",
    "an issue or stop number": r"\b(?:[Ii]ssue|[Ss]top) #?\d+\b",
    "a date": rf"\b20\d\d-\d\d-\d\d\b|\b\d{{1,2}} (?:{MONTHS})\b|\b(?:{MONTHS}) \d{{1,2}}\b",
    "a commit hash": r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40}\b",
}


def test_user_documents_hold_no_work_records():
    """No internal label, date or commit in what users read: git history and bench/results keep those."""
    import re
    found = []
    for path in USER_DOCUMENTS:
        for number, line in enumerate(path.read_text().splitlines(), 1):
            found += [f"{path.relative_to(REPO)}:{number}: {what}: {line.strip()[:100]}"
                      for what, pattern in WORK_RECORDS.items() if re.search(pattern, line)]
    assert not found, "\n".join(found)
