"""docs/evaluation.md is generated from docs/eval/: a hand edit, a stale number or a typed-in number fails here."""

from __future__ import annotations

import difflib
import re
import shutil
from pathlib import Path

import pytest

from hxdp.eval import doc_template, docs
from hxdp.eval.harness import ExperimentError

# References and names that carry digits without being results: Fig. 7, Figures 7-15, Table 3, Section 5, issue 9,
# OSDI'20, x86, Virtex-7, and identifiers such as xdp1, LUT6, fig12_13 or -O3 (a digit right after a letter, digit
# or underscore is part of a name).
REFERENCES = re.compile(r"(?:Fig(?:ure)?s?\.?|Table|Section|issue) \d+(?:[-/]\d+)?(?:(?:, | and )\d+(?:/\d+)?)*"
                        r"|OSDI'\d+|x86|Virtex-\d")
NUMBER = re.compile(r"(?<![\w.])\d")


def test_the_checked_in_page_is_the_generated_one() -> None:
    want = docs.render(docs.DOCS_EVAL, docs.DOC_PATH)
    have = docs.DOC_PATH.read_text()
    if have != want:
        diff = "".join(list(difflib.unified_diff(have.splitlines(True), want.splitlines(True), "checked in",
                                                 "generated", n=0))[:40])
        pytest.fail(f"{docs.DOC_PATH} is not what docs/eval gives: run `hxdp experiment --docs` (and edit "
                    f"hxdp/eval/doc_template.py, not the page)\n{diff}")


def _prose() -> list[str]:
    texts = [doc_template.TEMPLATE, *(t for pair in doc_template.MEASURED for t in pair),
             *doc_template.MODULES.values()]
    return [REFERENCES.sub("", re.sub(r"\{\w+\}", "", t)) for t in texts]


def test_the_template_types_no_number() -> None:
    typed = [line.strip() for text in _prose() for line in text.splitlines() if NUMBER.search(line)]
    assert not typed, "numbers typed into the prose (make them placeholders filled from the results):\n" + \
        "\n".join(typed)


def test_the_number_check_catches_a_typed_number() -> None:
    text = REFERENCES.sub("", "the core (Fig. 7, Table 3, xdp1) runs at 7.13 Mpps")
    assert NUMBER.findall(text) == ["7"]


def test_a_folder_of_results_gets_its_own_page(tmp_path: Path) -> None:
    res = tmp_path / "res"
    shutil.copytree(docs.DOCS_EVAL, res, ignore=shutil.ignore_patterns("*.png", "*.pdf", "work", "checkpoint*"))
    page = docs.write_evaluation_doc(res)
    assert page == res / "evaluation.md"
    text = page.read_text()
    assert "![Fig. 7](fig7.png)" in text and "[results.md](results.md)" in text and f"[{res}/](./)" in text
    # the same facts as the page of docs/eval: only the links and the folder's name differ
    canonical = docs.render(docs.DOCS_EVAL, docs.DOC_PATH)

    def numbers(page: str) -> list[str]:
        return re.findall(r"\d[\d,.]*", page.replace(str(res), "").replace("docs/eval", ""))

    assert numbers(text) == numbers(canonical)


def test_no_page_without_the_full_results(tmp_path: Path) -> None:
    (tmp_path / "fig7.json").write_text('{"quick": false, "rows": []}')
    assert "table3" in docs.missing_experiments(tmp_path)
    with pytest.raises(ExperimentError, match="no full-run results"):
        docs.render(tmp_path)
