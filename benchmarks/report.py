"""Regenerate docs/report.md, veridic's benchmark report, from the result files in benchmarks/results/.

    python benchmarks/report.py                 # render docs/report.md from benchmarks/results/ (seconds)
    python benchmarks/report.py --run           # re-run every measurement first (about 25 min on 2 busy CPU cores), then render
    python benchmarks/report.py --run contrast  # re-run one measurement (dev, contrast, accurate, distill, commercial, spans, spans-mpnet, spans-minilm, spans-accurate-judge, reading, uncontradicted-fast, uncontradicted-relevant-fast, uncontradicted, uncontradicted-relevant, speed), then render
    python benchmarks/report.py --check         # fail when docs/report.md differs from what the result files give

Each measurement is one or two commands (listed in MEASUREMENTS and printed on the page beside its
figures). ``--run`` executes them into runs/report/ and copies the small result files they write
(``report.json``, ``contrast.json``, a JSON line) into benchmarks/results/<name>/ together with
``meta.json``: the commands, the date, the machine, the veridic version and the wall time. The page is
rendered from those files only, so every figure on it comes from a recorded command.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from veridic.detect._tagger import EMBEDDED_TAGGER_NAME
from veridic.nli._models import ACCURATE_MODEL_NAME, EMBEDDED_MODEL_NAME, EMBEDDED_MODELS

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
PAGE = ROOT / "docs" / "report.md"
RUNS = Path("runs/report")
DEV_FILES = ("frank_test", "summac_polytope", "summac_factcc", "begin2_dev", "dialfact_small", "wice_dev", "tofueval_meetb_dev")
SCORERS = ("hybrid", "e-c", "overlap-bigram")
#: The registered readings that read other windows' contradiction (Readings R3 and R4): measurement name, model,
#: source aggregation, reading_variants.py grid and candidate.
CONTRADICTION_RUNS = (
    ("uncontradicted-fast", EMBEDDED_MODEL_NAME, "uncontradicted", "r3", "w2-k4-mean-u"),
    ("uncontradicted-relevant-fast", EMBEDDED_MODEL_NAME, "uncontradicted-relevant", "r4", "w2-k4-mean-r"),
    ("uncontradicted", ACCURATE_MODEL_NAME, "uncontradicted", "r3", "w2-k4-mean-u"),
    ("uncontradicted-relevant", ACCURATE_MODEL_NAME, "uncontradicted-relevant", "r4", "w2-k4-mean-r"),
)


@dataclass(frozen=True)
class Measurement:
    name: str
    what: str
    commands: tuple[tuple[str, ...], ...]
    keep: tuple[str, ...] = ()  # files of the last command's output folder to keep; empty: its stdout (one JSON line)


def _data_dir() -> str:
    return os.environ.get("VERIDIC_DATA", "../shared/data")


def measurements() -> list[Measurement]:
    bench = f"{_data_dir()}/bench"
    scorers = tuple(a for s in SCORERS for a in ("--scorer", s))
    return [
        Measurement(
            "dev",
            "Faithfulness ranking on the dev pool: a seeded sample of 200 rows per file of the seven dev files (eight datasets: BEGIN holds two).",
            (
                ("python", "benchmarks/sample_rows.py", "--n", "200", "--seed", "0", "--out", str(RUNS / "dev200"), *(f"{bench}/{f}.jsonl" for f in DEV_FILES)),
                ("veridic", "bench", "--data", str(RUNS / "dev200"), *scorers, "--compare", "hybrid", "e-c", "--no-progress", "-o", str(RUNS / "dev")),
            ),
            keep=("report.json",),
        ),
        Measurement(
            "contrast",
            "The scorer contrast suite: 652 hand-checked minimal pairs shipped in veridic/bench/data/contrast_suite.jsonl.",
            (("veridic", "bench", "--data", "contrast", *scorers, "--no-progress", "-o", str(RUNS / "contrast")),),
            keep=("report.json", "contrast.json"),
        ),
        Measurement(
            "binding",
            "The binding suite: 64 hand-written minimal pairs that move a fact to the other entity of its premise, through each shipped NLI model.",
            (("python", "benchmarks/binding_suite.py", "--out", str(RUNS / "binding")),),
        ),
        Measurement(
            "spans",
            "Span detection on human span annotations (every evaluation row of EntFA test, BUMP and DiaSumFact), WiCE tokens, the detector's suite and the tagger's cost: the default tagger and the detector with it beside the detector without a tagger and two baselines that read no meaning.",
            (("python", "benchmarks/tagger_eval.py", "--tagger", EMBEDDED_TAGGER_NAME, "--cost-also-model", ACCURATE_MODEL_NAME,
              "--force", "-o", str(RUNS / "spans")),),
            keep=("spans.json", "wice.json", "suite.json", "cost.json"),
        ),
        Measurement(
            "spans-mpnet",
            "The same span evaluation for the base-size tagger shipped beside the default (`veridic-tagger-mpnet-base`), "
            "its cost beside the default scorer's and the accurate tier's.",
            (("python", "benchmarks/tagger_eval.py", "--tagger", "veridic-tagger-mpnet-base", "--cost-also-model", ACCURATE_MODEL_NAME,
              "-o", str(RUNS / "spans-mpnet")),),
            keep=("spans.json", "wice.json", "suite.json", "cost.json"),
        ),
        Measurement(
            "spans-minilm",
            "The same span evaluation for the MiniLM-L6 tagger (`veridic-tagger-minilm-l6`), the default until the six-layer "
            "tagger replaced it.",
            (("python", "benchmarks/tagger_eval.py", "--tagger", "veridic-tagger-minilm-l6", "--force", "-o", str(RUNS / "spans-minilm")),),
            keep=("spans.json", "wice.json", "suite.json", "cost.json"),
        ),
        Measurement(
            "spans-accurate-judge",
            f"The same span evaluation for the default tagger with the accurate tier (`{ACCURATE_MODEL_NAME}`) as the judge "
            "of the detector and the pipeline, and the whole detector's cost with either judge.",
            (("python", "benchmarks/tagger_eval.py", "--tagger", EMBEDDED_TAGGER_NAME, "--judge", ACCURATE_MODEL_NAME,
              "--cost-also-model", ACCURATE_MODEL_NAME, "--cost-detector", "-o", str(RUNS / "spans-accurate-judge")),),
            keep=("spans.json", "wice.json", "suite.json", "cost.json"),
        ),
        Measurement(
            "accurate",
            f"The accurate tier (`{ACCURATE_MODEL_NAME}`) as its pre-registration scores it, beside the fast default and trivial baselines.",
            (("python", "benchmarks/accurate_tier.py", "--model", ACCURATE_MODEL_NAME, "--force", "--out", str(RUNS / "accurate")),),
        ),
        Measurement(
            "distill",
            "The fast model distilled from the accurate tier as its pre-registration scores it (held-back NLI, dev pool, "
            "contrast suite), beside the default; scored once, so the run's saved steps are read back, not recomputed.",
            (("python", "benchmarks/accurate_tier.py", "--model", "runs/models/veridic-nli-minilm-distill-l12", "--config",
              "configs/nli-minilm-distill-l12.yaml", "--steps", "heldout,contrast,dev", "--out", str(RUNS / "distill-l12")),),
        ),
        Measurement(
            "commercial",
            "The commercially usable fast model as its pre-registration scores it (held-back NLI, dev pool, contrast suite), beside the default.",
            (("python", "benchmarks/accurate_tier.py", "--model", "veridic-nli-minilm-commercial", "--config",
              "configs/nli-minilm-commercial.yaml", "--steps", "heldout,contrast,dev", "--force", "--out", str(RUNS / "commercial")),),
        ),
        Measurement(
            "reading",
            f"How the accurate tier (`{ACCURATE_MODEL_NAME}`) reads long sources: every registered reading of `e-c` on the "
            "eight dev sets, chosen leave-one-dataset-out and leave-one-task-out.",
            (("python", "benchmarks/reading_variants.py", "--model", ACCURATE_MODEL_NAME, "--data", bench, "--grid", "r2", "-o", str(RUNS / "reading-r2")),),
        ),
        *(Measurement(
            name,
            f"The scorer's `{agg}` source aggregation against `max` for `{model}`: `e-c` on the eight dev sets with "
            "paired tests, the contrast suite's target groups and the cost per FRANK row.",
            (("python", "benchmarks/reading_variants.py", "--model", model, "--data", bench, "--grid", grid, "--candidate", cand,
              "-o", str(RUNS / name)),),
        ) for name, model, agg, grid, cand in CONTRADICTION_RUNS),
        Measurement(
            "speed",
            "Whole-process throughput of the default scorer on the first 50 FRANK rows (long news sources).",
            (("python", "benchmarks/frank_speed.py", "--n", "50", "--data", f"{bench}/frank_test.jsonl"),),
        ),
    ]


def _shell(cmd: tuple[str, ...]) -> str:
    import shlex

    return shlex.join(cmd)


def _resolve(cmd: tuple[str, ...]) -> list[str]:
    exe = {"python": sys.executable, "veridic": str(Path(sys.executable).with_name("veridic"))}
    return [exe.get(cmd[0], cmd[0]), *cmd[1:]]


def run(m: Measurement) -> None:
    """Run one measurement's commands and store its result files and meta.json under benchmarks/results/<name>/."""
    started = time.time()
    out = ""
    for cmd in m.commands:
        print(f"$ {_shell(cmd)}", file=sys.stderr, flush=True)
        done = subprocess.run(_resolve(cmd), cwd=ROOT, check=True, text=True, stdout=subprocess.PIPE)
        out = done.stdout
        sys.stderr.write(out)
    dest = RESULTS / m.name
    dest.mkdir(parents=True, exist_ok=True)
    if m.keep:
        folder = ROOT / m.commands[-1][m.commands[-1].index("-o") + 1]
        for f in m.keep:
            data = json.loads((folder / f).read_text(encoding="utf-8"))
            for block in data.get("results", {}).values():  # per-example scores stay in runs/report/ (scores.csv)
                for res in block.values():
                    res.pop("scores", None)
            (dest / f).write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    else:
        line = [x for x in out.splitlines() if x.startswith("{")][-1]
        (dest / "result.json").write_text(json.dumps(json.loads(line), indent=2) + "\n", encoding="utf-8")
    import veridic

    meta = {
        "commands": [_shell(c) for c in m.commands],
        "finished": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "wall_seconds": round(time.time() - started),
        **_step_wall(m.commands[-1]),
        "veridic_version": veridic.__version__,
        "machine": f"{platform.machine()}, {os.cpu_count()} CPU cores, Python {platform.python_version()}",
    }
    (dest / "meta.json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")


def _step_wall(cmd: tuple[str, ...]) -> dict:
    """For a command built of resumable steps (benchmarks/_steps.py): each step's own wall time, and their sum as the
    measurement's wall time, so that a run which reused steps computed earlier still states what its figures cost."""
    flag = next((f for f in ("-o", "--out") if f in cmd), None)
    if flag is None:
        return {}
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from _steps import step_times

    times = step_times(ROOT / cmd[cmd.index(flag) + 1])
    if not times:
        return {}
    return {"wall_seconds": round(sum(t["wall_s"] for t in times.values())), "steps": times}


# ---------------------------------------------------------------- rendering


def _load(name: str, file: str) -> dict:
    return json.loads((RESULTS / name / file).read_text(encoding="utf-8"))


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.1f}"


def _commands(meta: dict, report: dict | None = None) -> list[str]:
    cached = report is not None and any("cache" in str(r.get("timing")) for r in report.get("cost", []))
    lines = ["```bash", *meta["commands"], "```", "",
             f"Ran {meta['finished']} on {meta['machine']}, veridic {meta['veridic_version']}, {max(1, round(meta['wall_seconds'] / 60))} min wall"
             + (" (model scores read from the score cache of an earlier identical run; `--no-cache` recomputes them)." if cached else ".")]
    if meta.get("note"):  # what the commands alone do not say: a file kept from another run, and why
        lines.append(f"Note: {meta['note']}.")
    return lines


def _auc_table(rep: dict) -> list[str]:
    """Per-dataset ROC AUC × 100 with CIs for every scorer of a bench report, the mean, and its --compare column."""
    names = list(rep["mean"])
    lines: list[str] = []
    comps = {c["dataset"]: c for c in rep.get("comparisons", [])}
    pair = next(iter(comps.values()), None)
    head = [f"`{n}`" for n in names] + ([f"`{pair['a']}` − `{pair['b']}` (p)"] if pair else [])
    lines += ["| dataset | n | " + " | ".join(head) + " |", "|---|---:|" + "---:|" * len(head)]

    def diff(key: str) -> list[str]:
        c = comps.get(key)
        if c is None:
            return [] if not pair else ["–"]
        star = "*" if c["significant"] else ""
        pv = "< 0.001" if c["p_value"] < 0.001 else f"{c['p_value']:.3f}"
        return [f"{100 * c['diff']:+.1f}{star} ({pv})"]

    for ds, block in rep["results"].items():
        cells = [f"{_pct(block[n]['auc'])} [{_pct(block[n]['auc_ci_low'])}, {_pct(block[n]['auc_ci_high'])}]" for n in names]
        lines.append(f"| {ds} | {rep['datasets'][ds]['n']} | " + " | ".join(cells + diff(ds)) + " |")
    mean = [f"**{_pct(rep['mean'][n]['auc'])}** [{_pct(rep['mean'][n]['auc_ci_low'])}, {_pct(rep['mean'][n]['auc_ci_high'])}]" for n in names]
    lines += [f"| **mean** | {sum(rep['datasets'][d]['n'] for d in rep['results'])} | " + " | ".join(mean + diff("mean")) + " |", ""]
    if pair:
        lines += [f"Last column: the paired difference of AUC × 100 with the p-value of an approximate-randomization test "
                  f"({pair['trials']:,} trials); * marks p ≤ 0.05.", ""]
    return lines


def _dev(lines: list[str]) -> None:
    meta, rep = _load("dev", "meta.json"), _load("dev", "report.json")
    names = list(rep["mean"])
    lines += ["## Faithfulness ranking on the dev pool", "",
              "ROC AUC × 100 (faithful rows positive), 95 % stratified bootstrap CI in brackets, per dataset and macro-mean. "
              "`overlap-bigram` (the share of the claim's word bigrams found in the source, no model) is the trivial baseline "
              "every model score must beat. None of these rows was used to train the embedded model; the hybrid's two weights "
              "were fitted on samples of the same pool (validated leave-one-dataset-out, see the model card).", ""]
    lines += _auc_table(rep)
    bal = [f"{_pct(sum(rep['results'][d][n]['balanced_accuracy'] for d in rep['results']) / len(rep['results']))}" for n in names]
    lines += ["Mean balanced accuracy × 100 at a threshold fitted on the other half of each dataset (2-fold cross-fitting): "
              + ", ".join(f"`{n}` {b}" for n, b in zip(names, bal)) + ".", ""]
    cost = {r["scorer"]: r for r in rep.get("cost", [])}
    if cost:
        lines += ["Seconds per example in this run (wall, shared machine): "
                  + ", ".join(f"`{n}` {cost[n]['seconds_per_example']:.3f}" for n in names if n in cost and cost[n].get("seconds_per_example") is not None) + ".", ""]
    lines += _commands(meta, rep) + [""]


def _contrast(lines: list[str]) -> None:
    meta, rep, con = _load("contrast", "meta.json"), _load("contrast", "report.json"), _load("contrast", "contrast.json")
    names = list(rep["mean"])
    lines += ["## The contrast suite", "",
              "652 hand-checked minimal pairs (`veridic/bench/data/contrast_suite.jsonl`, data card: "
              "[contrast-data.md](contrast-data.md)): role swaps, bag-of-words swaps, negations, number and entity "
              "substitutions, each beside faithful rewrites (passives that keep the roles, converses, symmetric predicates). "
              "Word overlap cannot separate them, so this is where a model score earns its keep.", "",
              "| | " + " | ".join(f"`{n}`" for n in names) + " |", "|---|" + "---:|" * len(names)]
    lines.append("| ROC AUC × 100 | " + " | ".join(f"{_pct(rep['mean'][n]['auc'])} [{_pct(rep['mean'][n]['auc_ci_low'])}, {_pct(rep['mean'][n]['auc_ci_high'])}]" for n in names) + " |")
    per = con["contrast"]
    rules = [r for r in per[names[0]] if not r.startswith("_")]
    for rule in sorted(rules, key=lambda r: (not r.startswith("group:"), r)):
        label = f"**{rule[6:]}**" if rule.startswith("group:") else f"`{rule}`"
        lines.append(f"| {label} ({per[names[0]][rule]['n']}) | " + " | ".join(_pct(per[n][rule]["accuracy"]) for n in names) + " |")
    lines += ["", "Rows below the AUC: accuracy × 100 per rule (pairs in brackets), the share of pairs on the right side of the scorer's own threshold; "
              "`overlap-bigram` has none, so it gets the threshold with the best balanced accuracy on the whole suite, which flatters it. "
              "The groups in bold pool the rules that swap arguments, that keep the same words in another order, and the faithful rewrites.", ""]
    lines += _commands(meta, rep) + [""]


def _binding(lines: list[str]) -> None:
    meta, res = _load("binding", "meta.json"), _load("binding", "result.json")
    lines += ["## The binding suite", "",
              f"{res['rows']} hand-written hypotheses (`veridic/bench/data/binding_suite.jsonl`, data card: "
              "[contrast-data.md](contrast-data.md#the-binding-suite)): each premise gives two entities an attribute of the same "
              "kind (two places, two years, two designers); each hypothesis gives one entity either its own value (faithful) or "
              "the other entity's (a moved fact). The two hypotheses of a frame differ only in which of the premise's two values "
              "fills it, so word overlap cannot separate them, and neither can a judge that reads the premise as a bag of facts.", "",
              "| model | scorer | ROC AUC × 100 | faithful accepted | moved rejected | pair accuracy |", "|---|---|---:|---:|---:|---:|"]
    for model, by_scorer in res["models"].items():
        for scorer, x in by_scorer.items():
            own = "" if x["threshold_kind"] == "own" else " (oracle threshold)"
            lines.append(f"| `{model}` | `{scorer}` | {_pct(x['auc'])} [{_pct(x['auc_ci'][0])}, {_pct(x['auc_ci'][1])}] | "
                         f"{_pct(x['keep_accuracy'])}{own} | {_pct(x['swap_accuracy'])} | {_pct(x['pair_accuracy'])} |")
    lines += ["", f"Accuracies × 100 at each scorer's own threshold; pair accuracy: the share of the {res['pairs']} minimal pairs "
              "(one hypothesis frame, its own entity's value against the other's) where the faithful hypothesis scores higher, "
              "with no threshold (50 is chance). `overlap-bigram` reads no meaning and is the same under every model.", ""]
    lines += _commands(meta) + [""]


def _speed(lines: list[str]) -> None:
    meta, res = _load("speed", "meta.json"), _load("speed", "result.json")
    lines += ["## Speed", "",
              f"The default scorer (`hybrid`, ONNX int8 backend, structure check on) scored {res['n']} FRANK examples "
              f"(news articles of about 2,500 characters) at **{res['examples_per_s']:.2f} examples per second** of wall time "
              f"({res['scoring_s']:.0f} s), and the whole process (imports and model load included) used {res['process_cpu_s']:.0f} CPU seconds "
              f"({res['n'] / res['process_cpu_s']:.2f} examples per CPU second). Wall time depends on what else runs on the machine; "
              "CPU seconds much less.", ""]
    lines += _commands(meta) + [""]


def _span_section(lines: list[str], folder: str, intro: Callable[[dict], list[str]]) -> None:
    """One tagger's results folder: ``intro(spans.json)``, then its tables and the command that measured them."""
    meta, rep = _load(folder, "meta.json"), _load(folder, "spans.json")
    lines += intro(rep)
    _span_tables(lines, folder, rep)
    lines += _commands(meta) + [""]


def _spans(lines: list[str]) -> None:
    def intro(rep: dict) -> list[str]:
        out = ["## Span detection on human annotations", "",
               "Which characters of a generated text are unsupported, against human span annotations of real model output "
               "(`../shared/data/spans`: EntFA annotates entities in XSum summaries, BUMP marks the edits of CNN/DM summaries, "
               "DiaSumFact marks errors in dialogue summaries). *mark-everything* and *absent-words* (words the source never "
               "uses) read no meaning; a detector that does not beat them on span F1 does not yet mark the right words. "
               "70 % of the rows hold a span, so flagging every claim already gives example F1 0.83; balanced accuracy, the "
               "flag rate beside the base rate and the paired difference against flagging everything say more.", ""]
        judge = rep["predictors"].get("detector", {}).get("detector", {}).get("scorer", {}).get("revision")
        if judge != _default_revision():
            out += [f"These figures were measured with an earlier default model as the judge (revision `{judge}`); "
                    "`python benchmarks/report.py --run spans` measures them with the shipped one.", ""]
        if "tagger" in rep["predictors"]:
            out += [f"*tagger* is the default span tagger (`{EMBEDDED_TAGGER_NAME}`, model card: "
                    f"`veridic/models/{EMBEDDED_TAGGER_NAME}/README.md`): token classification on the accurate tier's MPNet "
                    "encoder cut to its first six layers, trained and its flag threshold fitted as registered in "
                    "[preregistration/span-tagger.md](preregistration/span-tagger.md) (sixth and seventh recipes). *pipeline* "
                    "is `veridic detect` as shipped: the tagger proposes, the rules and the hybrid judge confirm, type and fix, "
                    "a proposal flagging a passage on its own from a score of 0.80 (Pipeline v14). "
                    "*detector* is the same detector without a tagger (`--tagger none`).", ""]
        return out

    _span_section(lines, "spans", intro)


def _spans_mpnet(lines: list[str]) -> None:
    def intro(rep: dict) -> list[str]:
        out = ["### The base-size tagger", "",
               "`veridic-tagger-mpnet-base`: the same token classification on all twelve layers of the accurate tier's "
               "MPNet-base encoder (109.5 M parameters; model card: `veridic/models/veridic-tagger-mpnet-base/README.md`), "
               "registered and scored once as the fourth recipe of [preregistration/span-tagger.md](preregistration/span-tagger.md). "
               "It failed only the cost condition, so it ships beside the default tagger: `--tagger veridic-tagger-mpnet-base`. "
               "*tagger* and *pipeline* below are this tagger alone and the detector with it.", ""]
        where = rep["predictors"].get("tagger", {}).get("tagger", {}).get("tagger", "")
        if where and not where.endswith("veridic/models/veridic-tagger-mpnet-base"):
            out += [f"The span table was measured on the same files at `{where}`, before they moved into the package "
                    "(the registered scoring).", ""]
        if not (RESULTS / "spans-mpnet" / "wice.json").exists():
            out += ["Its WiCE, detector-suite and cost figures, read in the same registered scoring, are in its model card and "
                    "the pre-registration (\"v4: result\"); `python benchmarks/report.py --run spans-mpnet` measures them here.", ""]
        return out

    _span_section(lines, "spans-mpnet", intro)


def _spans_minilm(lines: list[str]) -> None:
    _span_section(lines, "spans-minilm", lambda rep: [
        "### The MiniLM-L6 tagger", "",
        "`veridic-tagger-minilm-l6` (model card: `veridic/models/veridic-tagger-minilm-l6/README.md`): the same token "
        "classification on MiniLM-L6 (22.7 M parameters), registered as the first and second recipes of "
        "[preregistration/span-tagger.md](preregistration/span-tagger.md) and the default until the six-layer tagger above "
        "replaced it. It stays installed: `--tagger veridic-tagger-minilm-l6`. *tagger* and *pipeline* below are this tagger "
        "alone and the detector with it.", ""])


def _spans_accurate_judge(lines: list[str]) -> None:
    _span_section(lines, "spans-accurate-judge", lambda rep: [
        "### The detector judged by the accurate tier", "",
        f"`veridic detect --model {ACCURATE_MODEL_NAME}`: the default tagger and pipeline settings, with the accurate tier "
        "(its own fitted `hybrid`) deciding which passages are flagged and which proposals stand, and judging for the rules. "
        "Measured once as registered in [preregistration/span-tagger.md](preregistration/span-tagger.md) (\"Measurement J1\"); "
        "it changes nothing shipped. *tagger* is the default tagger alone (it reads no judge), *pipeline* the detector with "
        "it, *detector* the rules and this judge without a tagger.", ""])


def _span_tables(lines: list[str], folder: str, rep: dict) -> None:
    """The span table, the registered targets, WiCE, the suite and the cost of one tagger's results folder."""
    from veridic.detect._spans import render_markdown

    lines += [*render_markdown(rep).rstrip().splitlines(), ""]
    if (RESULTS / folder / "wice.json").exists():
        _spans_targets(lines, rep, folder)
        _spans_wice(lines, _load(folder, "wice.json"))
    if (RESULTS / folder / "suite.json").exists():
        _spans_suite(lines, _load(folder, "suite.json"))
    if (RESULTS / folder / "cost.json").exists():
        c = _load(folder, "cost.json")
        sp = c["seconds_per_passage"]
        beside = "".join(f"; the scorer on `{m}` {sp[m]:.3f} s (the tagger {r:.2f}× that)" for m, r in c.get("tagger_over", {}).items())
        lines += [f"**Cost** ({c['rows']} evaluation rows, the models loaded first, median of {c['repeats']} alternating runs in one "
                  f"process, 2 cores): the tagger {sp['tagger']:.3f} s per passage, the default scorer (`{c['scorer']}`) "
                  f"{sp['scorer']:.3f} s: **{c['tagger_over_scorer']:.2f}×** (target ≤ 2×){beside}.", ""]
        if "detector_over_scorer" in c:
            names = {"detector": "the detector as shipped", "detector-without-tagger": "without a tagger (`--tagger none`)"}
            parts = [f"{names.get(k, 'judged by `' + k.split('@', 1)[-1] + '`')} {sp[k]:.3f} s ({r:.2f}× the default scorer)"
                     for k, r in c["detector_over_scorer"].items()]
            lines += ["The whole detector per passage (parse, tagger, rules and judge, same rows and runs): " + "; ".join(parts) + ".", ""]


def _met(ok: bool) -> str:
    return "**met**" if ok else "missed"


def _spans_targets(lines: list[str], rep: dict, folder: str) -> None:
    """The registered targets, met or missed, for the tagger and the pipeline."""
    wice = _load(folder, "wice.json")
    who = [p for p in ("tagger", "pipeline") if p in rep["pooled"]["predictors"]]
    lines += ["**Registered targets** (each beside the best trivial baseline):", "",
              "| figure | target | " + " | ".join(who) + " |", "|---|---|" + "---|" * len(who)]
    for name, st in rep["sets"].items():
        best = max(st["predictors"][b]["span"]["f1"] or 0 for b in ("mark-everything", "absent-words"))
        cells = [f"{st['predictors'][p]['span']['f1']:.3f} {_met(st['predictors'][p]['span']['f1'] >= 2 * best)}" for p in who]
        lines.append(f"| span F1, {name} | ≥ 2 × {best:.3f} = {2 * best:.3f} | " + " | ".join(cells) + " |")
    po = rep["pooled"]["predictors"]
    lines.append("| span F1, pooled | ≥ 0.40 | " + " | ".join(f"{po[p]['span']['f1']:.3f} {_met(po[p]['span']['f1'] >= 0.40)}" for p in who) + " |")
    cells = []
    for p in who:
        v = po[p].get("example_f1_vs", {})
        ci = v.get("ci95") or (None, None)
        cells.append(f"{po[p]['example']['f1']:.3f} {_met(po[p]['example']['f1'] >= 0.70)} (vs mark-everything "
                     f"{v.get('diff', 0):+.3f} [{ci[0]:+.3f}, {ci[1]:+.3f}]; BAcc {po[p]['example']['balanced_accuracy']:.3f})"
                     if ci[0] is not None else f"{po[p]['example']['f1']:.3f} {_met(po[p]['example']['f1'] >= 0.70)}")
    lines.append("| example F1, pooled | ≥ 0.70 (flagging everything: "
                 f"{po['mark-everything']['example']['f1']:.3f}) | " + " | ".join(cells) + " |")
    t = wice["test"]
    base = t[who[0]]["baseline_all_tokens"]["f1"]
    lines.append(f"| WiCE test, non-supported token F1 | ≥ {base:.3f} + 0.10 = {base + 0.10:.3f} | "
                 + " | ".join(f"{t[p]['f1']:.3f} {_met(t[p]['f1'] >= base + 0.10)}" for p in who) + " |")
    if (RESULTS / folder / "cost.json").exists():
        r = _load(folder, "cost.json")["tagger_over_scorer"]
        lines.append(f"| cost per passage | ≤ 2 × the default scorer | {r:.2f}× {_met(r <= 2)} |" + " (the tagger's; the pipeline also runs the detector) |" * (len(who) > 1))
    lines += ["", "The example-F1 target is met by flagging every claim, so it shows no skill alone: the difference against "
              "mark-everything (paired bootstrap over rows) and the balanced accuracy (0.5 for any constant flag) stand beside it.", ""]


def _spans_wice(lines: list[str], wice: dict) -> None:
    lines += ["**WiCE non-supported tokens** (Wikipedia claims against their cited evidence; token F1 over WiCE's own tokens, "
              "95 % bootstrap intervals over claims):", "",
              "| split (claims) | predictor | token F1 [95 % CI] | P / R | all-tokens baseline | margin [95 % CI] |", "|---|---|---|---|---:|---|"]
    for split, block in wice.items():
        for p, r in block.items():
            ci, m = r.get("f1_ci95") or (None, None), r.get("margin_over_baseline_ci95") or (None, None)
            lines.append(f"| {split} ({r['claims']}) | {p} | {r['f1']:.3f} [{ci[0]:.3f}, {ci[1]:.3f}] | {r['precision']:.2f} / {r['recall']:.2f} "
                         f"| {r['baseline_all_tokens']['f1']:.3f} | {r['f1'] - r['baseline_all_tokens']['f1']:+.3f} [{m[0]:+.3f}, {m[1]:+.3f}] |")
    lines += ["", "WiCE dev is development data: the pipeline's registered selections (`benchmarks/pipeline_variants.py`) read it; the registered figure is test's.", ""]


def _spans_suite(lines: list[str], suite: dict) -> None:
    names = list(suite)
    lines += ["**The detector's contrast suite** (376 hand-written passages, [data card](contrast_suite.md)): per-type F1, "
              "passages left alone when fully correct, and the audit of every suggested edit (a replacement must leave a "
              "sentence the judge entails, a deletion a whole constituent or sentence):", "",
              "| | " + " | ".join(names) + " | mark-everything |", "|---|" + "---:|" * (len(names) + 1)]
    base = suite[names[0]]["baseline_mark_everything"]
    for t in ("entity", "relation", "contradictory", "invented", "subjective", "unverifiable"):
        lines.append(f"| F1 {t} | " + " | ".join(f"{suite[n]['per_type'][t]['f1']:.3f}" for n in names) + f" | {base['per_type_f1'][t]:.3f} |")
    lines.append("| binary F1 | " + " | ".join(f"{suite[n]['binary']['f1']:.3f}" for n in names) + f" | {base['binary_f1']:.3f} |")
    lines.append("| correct passages left alone | " + " | ".join(f"{1 - suite[n]['false_flags']['rate']:.3f}" for n in names)
                 + f" | {1 - base['false_flag_rate']:.3f} |")
    lines.append("| edits that pass the audit | " + " | ".join(
        f"{suite[n]['edit_audit']['passing']} of {suite[n]['edit_audit']['edits']}" for n in names) + " | |")
    lines += ["", "Targets for the pipeline: entity and relation F1 no worse than the detector's, correct passages left alone "
              "≥ 0.90, every edit passing the audit.", ""]


def _accurate(lines: list[str]) -> None:
    res = _load("accurate", "result.json")
    _candidate(lines, "accurate", "accurate", [
        "## The accurate tier", "",
        f"`{res['model']}`, {EMBEDDED_MODELS[res['model']]}: a 3-way NLI model trained on 2 CPU cores as registered in "
        f"[preregistration/nli-base.md](preregistration/nli-base.md) (model card: `veridic/models/{res['model']}/README.md`). "
        f"Select it with `--model {res['model']}`. Each figure "
        f"stands beside the fast default (`{res['baseline']}`, MiniLM-L6) and a baseline that reads no meaning.", ""])


def _distill(lines: list[str]) -> None:
    _candidate(lines, "distill", "distilled", [
        "## A fast model distilled from the accurate tier", "",
        "MiniLM-L6 trained for one epoch on the accurate tier's training pairs with the soft labels of "
        f"`{ACCURATE_MODEL_NAME}` beside the gold ones (`configs/nli-minilm-distill-l12.yaml`, registered in "
        "[preregistration/nli-base.md](preregistration/nli-base.md), amendment D2). It was to replace the default only "
        "if it was higher on the dev pool in the combination (`hybrid`, leave-one-dataset-out) and in `e-c` both, with "
        "no significant loss on a dialogue set. It is, barely: `hybrid` 79.3 against 78.7 (+0.6, p = 0.31), `e-c` "
        "74.14 against 74.10 (+0.05, p = 0.96; below), no dialogue set significantly worse; the per-set paired tests "
        "are in the pre-registration (\"D2: result\"). So it became the default, `veridic-nli-minilm-l6`, packed in "
        "int8 rows; the tables compare the scored form with the earlier default, as they stood when the rule was read "
        "(the other sections say which default they measured). Rebuild the scored form with "
        "`python scripts/ship_model.py --run RUN --dest runs/models/veridic-nli-minilm-distill-l12` after training, and "
        "the earlier default with `git worktree add OLD 20fde7d` (`--baseline OLD/veridic/models/veridic-nli-minilm-l6`).", ""],
        base="earlier default")


def _commercial(lines: list[str]) -> None:
    _candidate(lines, "commercial", "commercial", [
        "## The commercially usable fast model", "",
        "`veridic-nli-minilm-commercial`: MiniLM-L6 trained only on data whose licences allow commercial use "
        "(`configs/nli-minilm-commercial.yaml`, registered in [preregistration/nli-base.md](preregistration/nli-base.md), "
        "\"The commercially usable fast model\"; model card: `veridic/models/veridic-nli-minilm-commercial/README.md`). "
        "Select it with `--model veridic-nli-minilm-commercial`. It was to become the default if its combination "
        "(`hybrid`, leave-one-dataset-out) lost no more than 1.0 point of the default's mean and no dialogue set was "
        "significantly worse. Its mean was higher than the default's of the time (79.3 against 78.7), but BEGIN-TC was "
        "significantly worse (−2.6, p = 0.028; the per-set table is in the pre-registration), so it ships beside the "
        "default. The same rule against the current default (\"C2\" in the pre-registration) gives the same answer: "
        "79.25 against 79.28, but DialFact is significantly worse (−3.9, p = 0.012).", ""])


def _reading(lines: list[str]) -> None:
    res = _load("reading", "result.json")
    sel, cur = res["select"], res["current"]
    sets = list(sel["lodo"])  # every dev set, in the order the run read them
    short = {"begin2_cmu": "BEGIN-CMU", "begin2_tc": "BEGIN-TC", "dialfact_small": "DialFact", "frank_test": "FRANK",
             "summac_factcc": "FactCC", "summac_polytope": "Polytope", "tofueval_meetb": "MeetB", "wice_dev": "WiCE"}
    lines += ["## How the accurate tier reads long sources", "",
              f"`e-c` of `{res['model']}` under each registered reading ([preregistration/nli-base.md](preregistration/nli-base.md), "
              "\"Reading R1\" and \"Reading R2\"): `wW` source sentences per window, `kK` windows kept per claim sentence (most shared "
              "content words), claim sentences pooled by `mean`, `min` or `softmin`; `doc-chunks` judges the whole claim against "
              "token-budgeted chunks; `u12-k4` and `u13-k4` pool windows of two lengths (4 of each) and keep the best; `a12-k4` and "
              "`a13-k4` average the scores of the one-sentence reading and the two- or three-sentence one. "
              f"The current reading is `{cur}`. ROC AUC (%) per dev set (all rows); pairs put to the model.", "",
              "| reading | mean | " + " | ".join(short[s] for s in sets) + " | pairs |",
              "|---|---:|" + "---:|" * len(sets) + "---:|"]
    rows = sorted(sel["variants"].items(), key=lambda kv: -kv[1]["mean"])
    for name, v in rows:
        label = f"**{name}** (current)" if name == cur else (f"{name} (best on all sets)" if name == sel["best_on_all"] else name)
        lines.append(f"| {label} | {_pct(v['mean'])} | " + " | ".join(_pct(v["per_set"][s]) for s in sets) + f" | {v['pairs']:,} |")
    for b, v in sel["baselines"].items():
        lines.append(f"| {b} (no model) | {_pct(v['mean'])} | " + " | ".join(_pct(v["per_set"][s]) for s in sets) + " | |")
    lines += ["", "Chosen without the set it is scored on (leave-one-dataset-out), and without the task (leave-one-task-out):", "",
              "| held out | reading chosen on the rest | its AUC | current reading |", "|---|---|---:|---:|"]
    for s in sets:
        r = sel["lodo"][s]
        lines.append(f"| {short[s]} | {r['chosen']} | {_pct(r['auc'])} | {_pct(r['current'])} |")
    lines.append(f"| **mean over sets** | | **{_pct(sel['lodo_mean'])}** | {_pct(sel['current_mean'])} |")
    for task, r in sel["loto"].items():
        lines.append(f"| task: {task} ({', '.join(short[s] for s in r['sets'])}) | {r['chosen']} | {_pct(r['auc'])} | {_pct(r['current'])} |")
    lines.append(f"| **mean over tasks** | | **{_pct(sel['loto_mean'])}** | {_pct(sel['current_task_mean'])} |")
    worse = ", ".join(short[s] for s in sel["significantly_worse"]) or "none"
    lines += ["", f"Best on all sets: `{sel['best_on_all']}`; sets significantly worse than with the current reading "
              f"(paired approximate randomisation, p < 0.05): {worse}."]
    rule = sel["rule_dev"]
    held = (res.get("contrast") or {}).get("passes", True) and (res.get("cost") or {}).get("passes", True)
    lines.append(f"The registered rule: **{'adopted' if sel['passes_dev'] and held else 'not adopted, the current reading stays'}** "
                 f"(another reading than the current: {_met(rule['a_not_current'])}; held-out mean over sets at least the current + 0.5: "
                 f"{_met(rule['b_lodo_margin'])}; over tasks: {_met(rule['c_loto_margin'])}; no set significantly worse: "
                 f"{_met(rule['d_no_set_worse'])}).")
    if res.get("contrast"):
        c = res["contrast"]
        lines.append("Contrast suite (argument swaps / bag-of-words swaps / faithful counterparts): " + "; ".join(
            f"`{n}` " + " / ".join(_pct(x) for x in c[n].values()) for n in c if n != "passes") + ".")
    if res.get("cost"):
        k = res["cost"]
        lines.append(f"Seconds per FRANK row ({k['n']} rows, no cache): " + ", ".join(f"`{n}` {t:.3f}" for n, t in k["s_per_row"].items())
                     + f" ({k['ratio']:.2f} ×).")
    lines += ["", *_commands(_load("reading", "meta.json")), ""]


def _uncontradicted(lines: list[str]) -> None:
    runs = [(n, _load(n, "result.json")) for n, *_ in CONTRADICTION_RUNS if (RESULTS / n / "meta.json").is_file()]
    agg = {n: a for n, _, a, _, _ in CONTRADICTION_RUNS}
    short = {"begin2_cmu": "BEGIN-CMU", "begin2_tc": "BEGIN-TC", "dialfact_small": "DialFact", "frank_test": "FRANK",
             "summac_factcc": "FactCC", "summac_polytope": "Polytope", "tofueval_meetb": "MeetB", "wice_dev": "WiCE"}
    cur = runs[0][1]["current"]
    sets = list(runs[0][1]["select"]["lodo"])
    lines += ["## Reading every window's contradiction", "",
              "`source_aggregation=\"uncontradicted\"` keeps the window `max` keeps as a claim sentence's evidence and raises its "
              "contradiction to the strongest of the sentence's kept windows, so a claim one window supports and another contradicts "
              "is not read as supported; `uncontradicted-relevant` counts only windows holding half the claim sentence's content "
              "words. Registered as \"Reading R3\" and \"Reading R4\" in [preregistration/nli-base.md](preregistration/nli-base.md), "
              "which also holds the fast default's combination refitted on each; neither adopted. `e-c` ROC AUC (%) per dev set "
              "(all rows), `max` → the reading, with the paired difference's p (approximate randomisation, 10,000 trials):", "",
              "| dev set | " + " | ".join(f"`{r['model']}`, `{agg[n]}`" for n, r in runs) + " | bigram overlap (no model) |",
              "|---|" + "---:|" * (len(runs) + 1)]
    for s in sets + ["mean"]:
        cells = []
        for _, r in runs:
            v, cand = r["select"]["variants"], r["select"]["candidate"]
            if s == "mean":
                cells.append(f"**{_pct(v[cur]['mean'])} → {_pct(v[cand]['mean'])}**")
            else:
                t = r["select"]["candidate_paired"][s]
                cells.append(f"{_pct(v[cur]['per_set'][s])} → {_pct(v[cand]['per_set'][s])} ({_p(t['p'])})")
        b = runs[0][1]["select"]["baselines"]["overlap-bigram"]
        base = _pct(b["mean"]) if s == "mean" else _pct(b["per_set"][s])
        lines.append(f"| {'**mean**' if s == 'mean' else short[s]} | " + " | ".join(cells) + f" | {base} |")
    lines += ["", "| | " + " | ".join(f"`{r['model']}`, `{agg[n]}`" for n, r in runs) + " |", "|---|" + "---:|" * len(runs)]
    groups = list(runs[0][1]["contrast"][cur])
    for g in groups:
        lines.append(f"| contrast suite, {g.removeprefix('group:')} | " + " | ".join(
            f"{_pct(r['contrast'][cur][g])} → {_pct(r['contrast'][r['select']['candidate']][g])}" for _, r in runs) + " |")
    lines.append("| seconds per FRANK row (100 rows, no cache) | " + " | ".join(
        f"{r['cost']['s_per_row'][cur]:.3f} → {r['cost']['s_per_row'][r['select']['candidate']]:.3f}" for _, r in runs) + " |")
    lines += ["", "Both models read a window that merely lacks a fact as contradicting it, even a window about the claim, so both "
              "readings lower many faithful multi-window claims; they stay options (`--source-aggregation`), not the default.", ""]
    for name, _ in runs:
        lines += [*_commands(_load(name, "meta.json")), ""]


def _p(p: float) -> str:
    return "p < 0.001" if p < 0.001 else f"p {p:.3f}"


def _default_revision() -> str | None:
    from veridic.nli._backend import _read_revision
    from veridic.nli._models import embedded_model_path

    return _read_revision(embedded_model_path())


def _candidate(lines: list[str], name: str, label: str, intro: list[str], base: str = "default") -> None:
    """Held-back NLI, dev pool, contrast suite, cost and detector figures of a candidate model beside the default
    (benchmarks/accurate_tier.py's result), under ``intro``; ``label`` names the candidate in the tables, ``base``
    the default it was scored against."""
    meta, res = _load(name, "meta.json"), _load(name, "result.json")
    stale = base == "default" and res.get("baseline_revision") != _default_revision()
    lines += intro
    if stale:  # measured beside a default that has been replaced since
        base = "earlier default"
        lines += [f"These figures were measured beside an earlier default model than the shipped one; the tables name it "
                  f"the earlier default. `python benchmarks/report.py --run {name}` measures them beside the present one.", ""]
    h = res.get("heldout")
    if h:
        lines += [f"**Held-back NLI** ({h['n']:,} tier-A pairs that no veridic model trained on; 3-way accuracy on the "
                  f"{h['n_3way']:,} 3-way pairs, 2-way on all):", "",
                  "| model | 3-way accuracy | 2-way accuracy | F1 entailment / neutral / contradiction |", "|---|---:|---:|---|"]
        for role in ("accurate", "default"):
            m = h[role]
            f1 = " / ".join(f"{100 * m['per_class'][c]['f1']:.1f}" for c in ("entailment", "neutral", "contradiction"))
            lines.append(f"| {label if role == 'accurate' else base} | {100 * m['accuracy_3way']:.1f} | {100 * m['accuracy_2way']:.1f} | {f1} |")
        lines += [f"| majority class | {100 * h['majority_3way']:.1f} | | |", ""]
    d = res.get("dev")
    if d:
        lines += [f"**Dev pool**, the {label} model's `e-c` ROC AUC × 100 with 95 % CIs (every row of the eight dev sets), the "
                  f"{base}'s `e-c` (`e-c@default`) and word and bigram overlap beside it:", "", *_auc_table(d)]
    c = res.get("contrast")
    if c:
        groups = sorted(next(iter(c["groups"].values())))
        lines += ["**Contrast suite** (652 minimal pairs): ROC AUC × 100 and accuracy × 100 per group at each scorer's threshold:", "",
                  "| | " + " | ".join(f"`{n}`" for n in c["groups"]) + " |", "|---|" + "---:|" * len(c["groups"]),
                  "| ROC AUC | " + " | ".join(_pct(c["auc"][n]) for n in c["groups"]) + " |"]
        for g in groups:
            lines.append(f"| {g[6:]} | " + " | ".join(_pct(c["groups"][n][g]["accuracy"]) for n in c["groups"]) + " |")
        lines.append("")
    cost = res.get("cost")
    if cost:
        lines += ["**Cost on 2 cores**: `veridic score --method e-c` on the first FRANK rows (news articles), the whole process:", "",
                  "| model | rows | wall s | CPU s | peak memory MB |", "|---|---:|---:|---:|---:|"]
        for role in ("default", "accurate"):
            m = cost[role]
            lines.append(f"| {label if role == 'accurate' else base} | {m['n']} | {m['wall_s']:.1f} | {m['cpu_s']:.1f} | {m['peak_rss_mb']:,} |")
        lines.append("")
    det = res.get("detector")
    if det:
        roles = [r for r in ("default", "accurate") if r in det]
        lines += ["**The rule detector with each model as its judge** (`veridic detect bench suite` and `wice --split dev`, `e-c`):", "",
                  "| | " + " | ".join(label if r == "accurate" else base for r in roles) + " |", "|---|" + "---:|" * len(roles)]
        for t in det[roles[0]]["suite"]["per_type_f1"]:
            lines.append(f"| suite F1 {t} | " + " | ".join(f"{det[r]['suite']['per_type_f1'][t]:.3f}" for r in roles) + " |")
        lines.append("| suite correct passages left alone | " + " | ".join(f"{det[r]['suite']['left_alone']:.3f}" for r in roles) + " |")
        lines.append("| suite edits passing the audit | " + " | ".join(
            f"{det[r]['suite']['edit_audit']['passing']} of {det[r]['suite']['edit_audit']['edits']}" for r in roles) + " |")
        base = det[roles[0]]["wice_dev"]["baseline_all_tokens"]["f1"]
        lines.append(f"| WiCE dev token F1 (all tokens: {base:.3f}) | " + " | ".join(f"{det[r]['wice_dev']['f1']:.3f}" for r in roles) + " |")
        lines.append("")
    lines += _commands(meta) + [""]


def render() -> str:
    lines = ["# Benchmark report", "",
             "<!-- Generated by `python benchmarks/report.py` from benchmarks/results/; do not edit by hand. -->", "",
             "How well and how fast veridic's default scorer separates faithful from unfaithful claims, with the embedded "
             "model (`veridic-nli-minilm-l6`). Every figure below was produced by the command printed under it; "
             "`python benchmarks/report.py --run` re-runs them all and rewrites this page. Labels: 1 = faithful. "
             "Scores: higher = more faithful. CIs: 95 % percentile bootstrap, 1,000 stratified resamples, seed 0. "
             "The keys of each `report.json` are documented in [report_schema.md](report_schema.md).", "",
             "Figures not regenerated here (the detector's synthetic suites, the AIS and probe tables, training costs, the service "
             "load tests) are in the [development log](history/benchmarks-log.md) with their commands, and "
             "`benchmarks/README.md` in the repository lists the script behind each.", ""]
    for name, fn in (("dev", _dev), ("contrast", _contrast), ("binding", _binding), ("accurate", _accurate), ("distill", _distill), ("commercial", _commercial), ("spans", _spans),
                     ("spans-mpnet", _spans_mpnet), ("spans-minilm", _spans_minilm),
                     ("spans-accurate-judge", _spans_accurate_judge), ("reading", _reading), ("uncontradicted-fast", _uncontradicted),
                     ("speed", _speed)):
        if (RESULTS / name / "meta.json").is_file():
            fn(lines)
        else:
            lines += [f"## {name}", "", f"Not measured yet: `python benchmarks/report.py --run {name}`.", ""]
    return "\n".join(lines).rstrip() + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--run", nargs="*", metavar="NAME", default=None, help="re-run these measurements (none named: all) before rendering")
    ap.add_argument("--check", action="store_true", help="exit 1 when docs/report.md is not what the result files give")
    args = ap.parse_args(argv)
    if args.run is not None:
        known = {m.name: m for m in measurements()}
        unknown = [n for n in args.run if n not in known]
        if unknown:
            ap.error(f"unknown measurement(s) {unknown}; known: {', '.join(known)}")
        for name in args.run or list(known):
            run(known[name])
    page = render()
    if args.check:
        if not PAGE.is_file() or PAGE.read_text(encoding="utf-8") != page:
            print(f"{PAGE.relative_to(ROOT)} is out of date: run python benchmarks/report.py", file=sys.stderr)
            return 1
        return 0
    PAGE.write_text(page, encoding="utf-8")
    print(f"wrote {PAGE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
