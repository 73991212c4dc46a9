"""The README's two set-up commands are exactly what CI runs."""

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_ci_runs_the_readme_commands():
    blocks = re.findall(r"```bash\n(.*?)```", (REPO / "README.md").read_text(), flags=re.S)
    install, tests = blocks[0].strip(), blocks[1].strip()
    assert "\n" not in install and "\n" not in tests, "each set-up step must be one command"
    ci = (REPO / ".ci" / "run").read_text()
    assert install in ci and tests in ci
    assert "torch==2.13.0" in install
