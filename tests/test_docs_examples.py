"""The user guide's examples run, the README's commands parse, and the user-facing pages stay free of process words.

A fenced block in docs/guide/*.md preceded by ``<!-- test -->`` runs in the default suite (with the dummy
backend, no model); one preceded by ``<!-- test: slow -->`` runs under ``-m slow`` (the embedded model).
The Python blocks of one page share a namespace and run in order; shell blocks run with bash -e. Both run in
a fresh folder whose parent holds ``shared`` (a link to the real shared data when present), so the pages'
``../shared/data/...`` paths resolve as they do beside a clone.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
GUIDE = REPO / "docs" / "guide"
DATA = Path(os.environ.get("VERIDIC_DATA", REPO.parent / "shared" / "data"))
BLOCK = re.compile(r"<!-- test(?:: (?P<mark>slow))? -->\n```(?P<lang>python|bash)\n(?P<code>.*?)```", re.S)


def _blocks(page: Path, *, slow: bool) -> list[tuple[str, str]]:
    return [(m["lang"], m["code"]) for m in BLOCK.finditer(page.read_text(encoding="utf-8")) if bool(m["mark"]) == slow]


def _pages(*, slow: bool) -> list[Path]:
    return [p for p in sorted(GUIDE.glob("*.md")) if _blocks(p, slow=slow)]


def _workdir(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    if DATA.is_dir():
        (tmp_path / "shared").mkdir()
        (tmp_path / "shared" / "data").symlink_to(DATA)
    return work


def _run_page(page: Path, *, slow: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import veridic.registry as registry

    # The extending page registers scorers, a backend and a dataset group: keep them out of the other tests.
    for reg in (registry.SCORERS, registry.PRESETS, registry.BACKENDS, registry.DATASET_GROUPS):
        monkeypatch.setattr(reg, "_entries", dict(reg._entries))
    work = _workdir(tmp_path)
    monkeypatch.chdir(work)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}", "HF_HUB_OFFLINE": "1"}
    namespace: dict = {"__name__": "__main__"}
    for i, (lang, code) in enumerate(_blocks(page, slow=slow)):
        where = f"{page.relative_to(REPO)}, tested block {i + 1}"
        if lang == "python":
            exec(compile(code, where, "exec"), namespace)  # noqa: S102 - the guide's own examples
        else:
            done = subprocess.run(["bash", "-euo", "pipefail", "-c", code], cwd=work, env=env, capture_output=True, text=True, timeout=900)
            assert done.returncode == 0, f"{where} failed ({done.returncode}):\n{code}\n--- stdout\n{done.stdout[-3000:]}\n--- stderr\n{done.stderr[-3000:]}"


def test_the_guide_has_tested_examples_on_its_main_pages():
    tested = {p.name for p in _pages(slow=False)} | {p.name for p in _pages(slow=True)}
    for name in ("getting-started.md", "concepts.md", "python.md", "cli.md", "detection.md", "extending.md"):
        assert name in tested, f"docs/guide/{name} has no tested example"
    extending = (GUIDE / "extending.md").read_text(encoding="utf-8")
    assert extending.count("<!-- test -->") >= 3, "each of scorer, dataset and backend needs a worked, tested example"


@pytest.mark.parametrize("page", _pages(slow=False), ids=lambda p: p.name)
def test_guide_examples(page, tmp_path, monkeypatch):
    if "spacy" in page.read_text(encoding="utf-8"):
        pytest.importorskip("spacy")
    _run_page(page, slow=False, tmp_path=tmp_path, monkeypatch=monkeypatch)


@pytest.mark.slow
@pytest.mark.parametrize("page", _pages(slow=True), ids=lambda p: p.name)
def test_guide_examples_with_the_embedded_model(page, tmp_path, monkeypatch):
    _run_page(page, slow=True, tmp_path=tmp_path, monkeypatch=monkeypatch)


# ------------------------------------------------------------------ README


def _readme_commands(page: Path = REPO / "README.md") -> list[str]:
    """Every `veridic ...` command of a page's bash blocks (the README's after its two set-up blocks), comments and pipes cut."""
    text = page.read_text(encoding="utf-8")
    out = []
    blocks = re.findall(r"```bash\n(.*?)```", text, flags=re.S)
    for block in blocks[2:] if page.name == "README.md" else blocks:
        block = block.replace("\\\n", " ")
        for line in block.splitlines():
            line = line.split("  #")[0].strip()
            for part in re.split(r"&&|\|", line):
                part = part.strip()
                if part.startswith("veridic "):
                    out.append(part)
    return out


def test_readme_lists_one_command_per_capability():
    commands = " ".join(_readme_commands())
    for sub in ("score", "detect", "bench", "serve", "--engine ray", "ais report", "ais init", "congruity", "ablation"):
        assert f" {sub}" in f" {commands}", f"README shows no `veridic {sub}` example"


@pytest.mark.parametrize("command", sorted({c for page in [REPO / "README.md", *sorted(GUIDE.glob("*.md"))] for c in _readme_commands(page)}))
def test_readme_and_guide_commands_parse(command):
    """Each README command names real subcommands and options: click rejects unknown ones before --help exits."""
    pytest.importorskip("typer")
    from typer.testing import CliRunner

    from veridic.cli import app

    args = [a for a in shlex.split(command.replace('"$PW"', "x"))[1:] if a not in (">",)]
    if ">" in command:
        args = shlex.split(command.split(">")[0])[1:]
    result = CliRunner().invoke(app, [*args, "--help"])
    assert result.exit_code == 0, f"{command!r} does not parse:\n{result.output}"


@pytest.mark.slow
def test_readme_commands_run(tmp_path):
    """The README's quick commands, run as written beside a clone (long-running servers and the LM probes aside)."""
    work = _workdir(tmp_path)
    if not DATA.is_dir():
        pytest.skip(f"no shared data at {DATA}")
    (work / "pairs.jsonl").write_text('{"source": "Paris is the capital of France.", "claim": "Lyon is the capital of France."}\n')
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}", "HF_HUB_OFFLINE": "1",
           "PW": "a long enough password"}
    skip = ("veridic serve", "veridic ais serve", "veridic congruity", "veridic ablation")
    for command in _readme_commands():
        if command.startswith(skip):
            continue
        line = next(line for line in (REPO / "README.md").read_text().splitlines() if command in line)
        run = line.split("  #")[0].strip()
        done = subprocess.run(["bash", "-euo", "pipefail", "-c", run], cwd=work, env=env, capture_output=True, text=True, timeout=900, stdin=subprocess.DEVNULL)
        if "annotator add alice" in run:  # prompts for a password: without a terminal it stops, asking
            assert "password" in (done.stdout + done.stderr).lower()
            continue
        assert done.returncode == 0, f"{run!r} failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
    for code in re.findall(r"```python\n(.*?)```", (REPO / "README.md").read_text(encoding="utf-8"), flags=re.S):
        exec(compile(code, "README.md", "exec"), {"__name__": "__main__"})  # noqa: S102 - the quickstart


# ------------------------------------------------------------------ words of the process

USER_PAGES = [REPO / "README.md", REPO / "benchmarks" / "README.md", *[REPO / "docs" / n for n in ("report.md", "benchmarks.md", "report_schema.md", "contrast-data.md", "contrast_suite.md")],
              *sorted(GUIDE.glob("*.md"))]
PROCESS_WORDS = re.compile(r"\bsessions?\b|\bissues? #?\d+|\bhelpers?\b", re.I)


@pytest.mark.parametrize("page", USER_PAGES, ids=lambda p: str(p.relative_to(REPO)))
def test_user_pages_do_not_speak_of_how_they_were_built(page):
    hits = [f"{i}: {line.strip()}" for i, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1) if PROCESS_WORDS.search(line)]
    assert not hits, f"{page.relative_to(REPO)} speaks of the development process:\n" + "\n".join(hits)


def test_guide_links_resolve():
    for page in [REPO / "README.md", REPO / "docs" / "report.md", *sorted(GUIDE.glob("*.md"))]:
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", page.read_text(encoding="utf-8")):
            if target.startswith(("http://", "https://", "mailto:")):
                continue
            assert (page.parent / target).exists(), f"{page.relative_to(REPO)} links to a missing {target}"


def test_the_benchmark_report_is_what_its_result_files_give():
    done = subprocess.run([sys.executable, str(REPO / "benchmarks" / "report.py"), "--check"], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


def test_the_readme_quality_table_is_the_report_s():
    import json

    results = REPO / "benchmarks" / "results"
    dev = json.loads((results / "dev" / "report.json").read_text())["mean"]
    contrast = json.loads((results / "contrast" / "report.json").read_text())["mean"]
    lines = (REPO / "README.md").read_text(encoding="utf-8").splitlines()
    for name in ("hybrid", "e-c", "overlap-bigram"):
        row = next(line for line in lines if line.startswith(f"| `{name}`"))
        cells = [c.strip() for c in row.strip().strip("|").split("|")]
        assert cells[1:3] == [f"{100 * dev[name]['auc']:.1f}", f"{100 * contrast[name]['auc']:.1f}"], f"README row {row!r} is not benchmarks/results/"
