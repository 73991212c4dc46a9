"""pytest: the framework adapters' doctests run only where their framework is installed."""

import importlib.util

_NEEDS = {"_frames.py": "pandas", "langchain.py": "langchain_core", "ragas.py": "ragas", "deepeval.py": "deepeval",
          "llamaindex.py": "llama_index.core", "haystack.py": "haystack"}


def _missing(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is None
    except ModuleNotFoundError:
        return True


collect_ignore = [path for path, module in _NEEDS.items() if _missing(module)]
