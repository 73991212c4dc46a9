"""The package's layering: the import-linter contract in pyproject.toml holds, and no module imports itself back.

Imports inside functions count: a lazy import hides a cycle from Python, not from the design.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _module_graph() -> dict[str, set[str]]:
    grimp = pytest.importorskip("grimp", reason="pip install 'veridic[test]' (import-linter brings grimp)")
    g = grimp.build_graph("veridic")
    return {m: {i for i in g.find_modules_directly_imported_by(m) if i.startswith("veridic")} for m in g.modules}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    out: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    m = stack.pop()
                    on_stack.discard(m)
                    comp.append(m)
                    if m == node:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def test_cycle_finder_finds_a_cycle_and_passes_a_tree():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b", "c"}, "b": {"c"}, "c": set()}) == []


def test_no_module_imports_itself_back():
    assert _cycles(_module_graph()) == []


def test_the_layer_contract_is_kept():
    pytest.importorskip("importlinter", reason="pip install 'veridic[test]'")
    exe = Path(sys.executable).parent / "lint-imports"
    done = subprocess.run([str(exe)], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "1 kept, 0 broken" in done.stdout


def test_the_core_does_not_load_the_capabilities():
    # Importing the scorer must not drag in the detector, the generators or the training code.
    code = ("import sys, veridic, veridic.factory, veridic.nli._scorer, veridic.nli._hybrid, veridic.nli._structure; "
            "print(sorted({m.split('.')[1] for m in sys.modules if m.startswith('veridic.') and m.count('.') >= 1}))")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=300, check=True)
    loaded = set(eval(done.stdout))  # noqa: S307 - our own printed list
    assert not loaded & {"detect", "synth", "train", "bench", "ais", "ablation", "congruity", "service", "scale", "cli"}, loaded
