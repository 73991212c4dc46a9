"""The embedded default runs with onnxruntime alone: an install without torch scores with its shipped int8 copy."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytest.importorskip("onnxruntime")

CODE = """
import sys
for name in ("torch", "transformers"):
    sys.modules[name] = None  # as if not installed: importing them raises ImportError
import veridic
v = veridic.score(sources=["The company hired 200 engineers in 2023."], claims=["The company laid off engineers in 2023."])[0]
s = veridic.load_scorer()
print(v.label, s.describe()["backend"]["backend"], s.describe()["backend"]["model"])
"""


@pytest.mark.integration
def test_the_default_scores_without_torch():
    done = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    label, backend, model = done.stdout.split()[-3:]
    assert (label, backend, model) == ("unsupported", "onnx", "veridic-nli-minilm-l6#model.int8.onnx")
