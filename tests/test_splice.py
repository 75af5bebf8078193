"""The tables EXPERIMENTS.md quotes from the reproductions are their result files as written
(harts/experiments/splice.py). No simulation here: the files are the committed ones under bench/results/reproduce/."""

from pathlib import Path

import pytest

from harts.experiments import splice

REPO = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("name", splice.DOCUMENTS)
def test_each_generated_block_is_its_result_file(name):
    text = (REPO / name).read_text()
    blocks = splice.blocks(text)
    assert blocks, f"{name} has no generated block"
    for block in blocks:
        assert (REPO / block.path).is_file(), f"{name} names {block.path}, which does not exist"
        assert text[block.start:block.stop] == splice.content(block), (
            f"{name}: the block from {block.path} {block.section or ''} differs from the file; "
            "run `python -m harts.experiments.splice`")
    assert splice.spliced(text) == text


def test_each_kept_markdown_file_is_shown():
    named = {block.path for name in splice.DOCUMENTS for block in splice.blocks((REPO / name).read_text())}
    kept = {str(path.relative_to(REPO)) for path in (REPO / splice.COMMITTED).rglob("*.md")}
    assert kept and kept <= named, kept - named


def test_splice_rewrites_whole_files_and_sections(tmp_path):
    (tmp_path / "r.md").write_text("intro\n\n## First table: a\n| a |\n|---|\n| 1 |\n\n## Second\n| b |\n")
    document = ('x\n<!-- generated from r.md, section "First table" by hand -->\nold\n<!-- end -->\ny\n'
                "<!-- generated from r.md -->\n<!-- end -->\n")
    new = splice.spliced(document, tmp_path)
    assert new == ('x\n<!-- generated from r.md, section "First table" by hand -->\n| a |\n|---|\n| 1 |\n'
                   "<!-- end -->\ny\n<!-- generated from r.md -->\n" + (tmp_path / "r.md").read_text() +
                   "<!-- end -->\n")
    assert splice.spliced(new, tmp_path) == new
    with pytest.raises(KeyError, match="Third"):
        splice.spliced('<!-- generated from r.md, section "Third" -->\n<!-- end -->\n', tmp_path)
    with pytest.raises(ValueError, match="no <!-- end -->"):
        splice.blocks("<!-- generated from r.md -->\n<!-- generated from r.md -->\n<!-- end -->\n")


def test_refresh_copies_only_the_kept_files(tmp_path):
    root, results = tmp_path / "repo", tmp_path / "results"
    kept = root / splice.COMMITTED / "paper009"
    kept.mkdir(parents=True)
    (kept / "tables.md").write_text("old\n")
    (results / "paper009").mkdir(parents=True)
    (results / "paper009" / "tables.md").write_bytes(b"a,b\r\n1,2\r\n")  # as csv writes it: kept as is
    (results / "paper009" / "runs.csv").write_text("not kept\n")
    assert splice.refresh(results, root) == [kept / "tables.md"]
    assert (kept / "tables.md").read_bytes() == b"a,b\r\n1,2\r\n" and not (kept / "runs.csv").exists()
