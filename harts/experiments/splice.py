"""Copies result files into the documents that quote them, so a quoted table is never typed.

A block of a document runs from a line

    <!-- generated from PATH by `python -m harts.experiments.splice` -->

to the next line `<!-- end -->`, and holds PATH's text as it is. PATH is relative to the repository root (the
committed results are under bench/results/reproduce/). A block may hold one section of PATH instead:

    <!-- generated from PATH, section "TITLE" by `python -m harts.experiments.splice` -->

holds the lines under PATH's first heading `## TITLE...` (a heading that starts with TITLE), up to its next `## `
heading, without the heading and without blank lines at either end.

`python -m harts.experiments.splice [RESULTS]` rewrites every block of the DOCUMENTS from its file. Given
RESULTS, a `harts reproduce --results` directory, it first refreshes each committed file under
bench/results/reproduce/ from the file of the same relative path in RESULTS, where RESULTS has one (that
folder is laid out as a results directory: paper001/ ... paper004/, and Kandlur & Shin's figures/ and
claims_*.json at its top).
tests/test_splice.py fails when a block differs from its file or names a missing file.
"""

from __future__ import annotations

import re
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from ..output import write_text

REPO = Path(__file__).resolve().parents[2]
DOCUMENTS = ("EXPERIMENTS.md",)
COMMITTED = Path("bench/results/reproduce")
BEGIN = re.compile(r'^<!-- generated from (?P<path>[^\s,]+)(?:, section "(?P<section>[^"]+)")?[^\n]*-->\n',
                   re.MULTILINE)
END = "<!-- end -->\n"


@dataclass(frozen=True)
class Block:
    path: str  # relative to the repository root
    section: str | None
    start: int  # where the block's content starts in the document's text
    stop: int  # where its end marker starts


def blocks(text: str) -> list[Block]:
    """The generated blocks of a document's text, in order."""
    found = []
    for match in BEGIN.finditer(text):
        stop = text.find(END, match.end())
        if stop < 0 or (found and match.start() < found[-1].stop):
            raise ValueError(f"the block from {match.group('path')} has no {END.strip()} of its own")
        found.append(Block(match.group("path"), match.group("section"), match.end(), stop))
    return found


def section(text: str, title: str) -> str:
    """The lines under `text`'s first heading `## title...`, to the next `## ` heading, trimmed."""
    lines = text.splitlines()
    heads = [i for i, line in enumerate(lines) if line.startswith("## ")]
    first = next((i for i in heads if lines[i][3:].startswith(title)), None)
    if first is None:
        raise KeyError(f"no heading '## {title}'")
    stop = next((i for i in heads if i > first), len(lines))
    return "\n".join(lines[first + 1:stop]).strip("\n") + "\n"


def content(block: Block, root: Path = REPO) -> str:
    """What `block` must hold: its file's text, or the section it names."""
    text = (root / block.path).read_text()
    if block.section is not None:
        return section(text, block.section)
    return text if text.endswith("\n") else text + "\n"


def spliced(text: str, root: Path = REPO) -> str:
    """The document's text with every block rewritten from its file."""
    for block in reversed(blocks(text)):
        text = text[:block.start] + content(block, root) + text[block.stop:]
    return text


def refresh(results: Path, root: Path = REPO) -> list[Path]:
    """Copy over each committed result file the file of the same relative path in `results`; return those
    copied."""
    copied = []
    for committed in sorted((root / COMMITTED).rglob("*")):
        fresh = results / committed.relative_to(root / COMMITTED)
        if committed.is_file() and fresh.is_file():
            shutil.copyfile(fresh, committed)  # bytes as written: a CSV's lines end in \r\n
            copied.append(committed)
    return copied


def main(arguments: list[str]) -> None:
    if arguments:
        for path in refresh(Path(arguments[0])):
            print(f"refreshed {path.relative_to(REPO)}")
    for name in DOCUMENTS:
        document = REPO / name
        text = document.read_text()
        new = spliced(text)
        if new != text:
            write_text(document, new)
        print(f"{name}: {len(blocks(new))} blocks, {'rewritten' if new != text else 'unchanged'}")


if __name__ == "__main__":  # python -m harts.experiments.splice [RESULTS]
    main(sys.argv[1:])
