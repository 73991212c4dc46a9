"""Every docs/integrations page's Python example runs, offline, with the embedded model, and says what the page says."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import re
from pathlib import Path

import pytest
from test_integrations_common import no_network  # noqa: F401

DOCS = Path(__file__).resolve().parents[1] / "docs" / "integrations"
#: page -> (the module it needs, text its output must hold)
PAGES = {
    "dataframes": ("pandas", ["supported", "unsupported", "Unsupported: answer [0:39] 'The company laid off engineers in 2023.'"]),
    "langchain": ("langchain_core", ["I could not find that in the sources.", "Unsupported: answer [0:39]"]),
    "ragas": ("ragas", ["veridic_faithfulness", "Unsupported: answer [0:39]"]),
    "deepeval": ("deepeval", ["What is the capital of France?", "True", "False", "Unsupported: answer [0:39]"]),
    "llamaindex": ("llama_index.core", ["True", "False", "veridic hybrid:"]),
    "haystack": ("haystack", ["faithfulness", "Unsupported: answer [0:39]"]),
}


def python_blocks(page: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", (DOCS / f"{page}.md").read_text(), flags=re.S)


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False


def test_every_page_is_listed_and_linked_from_the_index():
    pages = {p.stem for p in DOCS.glob("*.md")} - {"index"}
    assert pages == set(PAGES)
    index = (DOCS / "index.md").read_text()
    for page in pages:
        assert f"({page}.md)" in index and python_blocks(page), page


@pytest.mark.parametrize("page", sorted(PAGES))
def test_docs_example_runs(page, monkeypatch, tmp_path, no_network):
    module, expected = PAGES[page]
    if not _installed(module):
        pytest.skip(f"pip install 'veridic[{page if page != 'dataframes' else 'frames'}]'")
    for var, value in (("RAGAS_DO_NOT_TRACK", "true"), ("DEEPEVAL_TELEMETRY_OPT_OUT", "1"), ("HAYSTACK_TELEMETRY_ENABLED", "False")):
        monkeypatch.setenv(var, value)
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        for block in python_blocks(page):
            exec(compile(block, f"docs/integrations/{page}.md", "exec"), {"__name__": f"docs_{page}"})
    for text in expected:
        assert text in out.getvalue(), f"{text!r} not in the output of {page}.md:\n{out.getvalue()}"
