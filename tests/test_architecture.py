"""The package's shape: imports run downwards (no cycle between packages, no library module importing the
commands), modules stay small, and docs/architecture.md's module map is the source's."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("architecture", ROOT / "scripts" / "architecture.py")
arch = importlib.util.module_from_spec(_spec)
sys.modules["architecture"] = arch
_spec.loader.exec_module(arch)  # type: ignore[union-attr]


def test_no_cycle_between_packages() -> None:
    import networkx as nx

    assert list(nx.simple_cycles(arch.graph())) == []


def test_no_library_module_imports_the_commands() -> None:
    bad = [name for name, path in arch.modules().items()
           if not name.startswith("hxdp.cli") and any(i.startswith("hxdp.cli") for i in arch.imports(path))]
    assert bad == [], f"library modules importing hxdp.cli: {bad}"


def test_largest_module_under_800_lines() -> None:
    sizes = {name: len(path.read_text().splitlines()) for name, path in arch.modules().items()}
    largest = max(sizes, key=sizes.__getitem__)
    assert sizes[largest] < 800, f"{largest}: {sizes[largest]} lines"


def test_every_module_says_what_it_is() -> None:
    import ast

    missing = [n for n, p in arch.modules().items() if not (ast.get_docstring(ast.parse(p.read_text())) or "").strip()]
    assert missing == [], f"modules without a docstring: {missing}"


def test_module_map_is_current() -> None:
    doc = arch.DOC.read_text()
    assert arch.render_doc(doc) == doc, "docs/architecture.md is stale: run python3 scripts/architecture.py"
