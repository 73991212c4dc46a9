"""AIS storage: alembic init via the CLI, item import, exports, released import, AutoAIS, PostgreSQL."""

from __future__ import annotations

import csv
import json
import os
import uuid

import numpy as np
import pytest

pytest.importorskip("sqlalchemy")
from conftest import DATA
from typer.testing import CliRunner

from veridic.ais._auto import AutoAIS
from veridic.ais._store import DeprecatedFieldWarning, StageError, Store
from veridic.ais.cli import app
from veridic.errors import ConfigError, DataFormatError
from veridic.nli._labels import LabelMap

runner = CliRunner()


class FakeNLI:
    """Entailment = share of output words found in the source."""

    model_id, revision, max_length, supports_mc = "fake-overlap", None, 512, False
    label_map = LabelMap.from_id2label({0: "entailment", 1: "neutral", 2: "contradiction"})

    def predict(self, premises, hypotheses, **kw):
        e = [len(set(h.lower().split()) & set(p.lower().split())) / max(len(set(h.split())), 1) for p, h in zip(premises, hypotheses)]
        return np.array([[x, 0.0, 1.0 - x] for x in e])

    def count_tokens(self, text):
        return len(text.split())

    def token_offsets(self, text):
        return []

    def describe(self):
        return {"model": self.model_id}


def _fill(store: Store, project: str) -> None:
    a = [store.add_annotator(f"{project}-r{i}", password="secret-pw") for i in range(3)]
    for ann in a:
        while (v := store.next_assignment(ann, project=project)) is not None:
            store.record(item_id=v.id, annotator_id=ann, stage="int", answer=True)
            store.record(item_id=v.id, annotator_id=ann, stage="ais", answer=v.ext_id != "bad")


def _exercise(store: Store, project: str) -> None:
    store.create_project(project, task="summarization", k=3)
    store.add_items(project, [{"id": "good", "system": "A", "claim": "the cat sat", "source": "the cat sat on the mat"},
                              {"id": "bad", "system": "B", "claim": "dogs fly home", "source": "the cat sat on the mat"}])
    _fill(store, project)
    rep = store.report(project=project, n_resamples=100)
    systems = {s["system"]: s for s in rep["systems"]}
    assert systems["A"]["ais_pct"] == 100.0 and systems["B"]["ais_pct"] == 0.0
    assert rep["agreement"]["ais"]["alpha"] == 1.0 and rep["progress"]["assignments_done"] == 6
    auto = store.auto_report(project=project, rater=AutoAIS(backend=FakeNLI(), method="e", threshold=0.5, granularity="document"))
    assert auto["decisions"] == {"good": True, "bad": False} and auto["agreement"]["f1"] == 1.0


def test_cli_init_import_export_and_report(tmp_path):
    db = tmp_path / "study.sqlite"
    assert runner.invoke(app, ["init", "--db", str(db)]).exit_code == 0
    items = tmp_path / "items.jsonl"
    items.write_text("\n".join(json.dumps(r) for r in [
        {"id": "x1", "system": "A", "claim": "Answer one.", "context": ["Q?"], "source": "Doc one."},
        {"id": "x2", "system": "B", "claim": "Answer two.", "context": "[\"Q?\", \"more\"]", "source": "Doc two."}]) + "\n")
    r = runner.invoke(app, ["import", str(items), "--project", "p", "--task", "qa", "--db", str(db), "--k", "2"])
    assert r.exit_code == 0 and "imported 2 items" in r.output, r.output
    store = Store(db)
    _fill(store, "p")
    for what, suffix in (("judgments", ".csv"), ("consensus", ".jsonl")):
        out = tmp_path / f"{what}{suffix}"
        r = runner.invoke(app, ["export", "--project", "p", "--out", str(out), "--what", what, "--db", str(db)])
        assert r.exit_code == 0, r.output
    rows = list(csv.DictReader((tmp_path / "judgments.csv").open()))
    assert len(rows) == 8 and {r["stage"] for r in rows} == {"int", "ais"}
    cons = [json.loads(line) for line in (tmp_path / "consensus.jsonl").read_text().splitlines()]
    assert [(c["item"], c["interpretable"], c["attributable"]) for c in cons] == [("x1", True, True), ("x2", True, True)]
    r = runner.invoke(app, ["report", "--project", "p", "--db", str(db), "--json", "--n-resamples", "50"])
    assert r.exit_code == 0 and json.loads(r.stdout)["progress"]["assignments_done"] == 4


def _import(tmp_path, *records):
    db = tmp_path / "ais.sqlite"
    assert runner.invoke(app, ["init", "--db", str(db)]).exit_code == 0
    items = tmp_path / "items.jsonl"
    items.write_text("".join(json.dumps(r) + "\n" for r in records))
    return runner.invoke(app, ["import", str(items), "--project", "p", "--db", str(db)]), db


def test_import_reads_the_claim_field(tmp_path):
    r, db = _import(tmp_path, {"id": "a", "claim": "Cats purr.", "source": "Cats purr when content."})
    assert r.exit_code == 0 and "imported 1 items" in r.stdout, r.output
    assert r.stderr == ""
    assert [it["claim"] for it in Store(db).items_with_sources(project="p")] == ["Cats purr."]


def test_import_still_reads_output_with_a_deprecation_note(tmp_path):
    r, db = _import(tmp_path, {"id": "a", "output": "Cats purr.", "source": "Cats purr when content."},
                    {"id": "b", "claim": "Dogs bark.", "output": "Dogs bark.", "source": "Dogs bark at night."})
    assert r.exit_code == 0 and "imported 2 items" in r.stdout, r.output
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("DeprecationWarning: ")
    assert "2 of 2 items" in r.stderr and "'output'" in r.stderr and "name the field 'claim'" in r.stderr
    assert [it["claim"] for it in Store(db).items_with_sources(project="p")] == ["Cats purr.", "Dogs bark."]
    with pytest.warns(DeprecatedFieldWarning, match="1 of 1 items.*'output'.*'claim'"):
        Store(db).add_items("p", [{"id": "c", "output": "Birds sing."}])


def test_import_refuses_claim_and_output_that_differ(tmp_path):
    r, db = _import(tmp_path, {"id": "a", "claim": "Cats purr.", "source": "Cats purr when content."},
                    {"id": "b", "claim": "Dogs bark.", "output": "Dogs howl.", "source": "Dogs bark at night."})
    assert r.exit_code == 2 and "Traceback" not in r.output
    assert "row 2" in r.stderr and "'claim' ('Dogs bark.')" in r.stderr and "'output' ('Dogs howl.')" in r.stderr and "keep only 'claim'" in r.stderr
    assert Store(db).items_with_sources(project="p") == []  # nothing was imported


def test_store_errors_say_what_to_do(tmp_path):
    with pytest.raises(ConfigError, match="veridic ais init"):
        Store(tmp_path / "empty.sqlite")
    s = Store(tmp_path / "s.sqlite", init=True)
    with pytest.raises(ConfigError, match="Unknown task 'poetry'"):
        s.create_project("x", task="poetry")
    s.create_project("t", task="table")
    with pytest.raises(DataFormatError, match="row 1.*needs 'table'"):
        s.add_items("t", [{"claim": "A sentence."}])
    with pytest.raises(StageError, match="not assigned"):
        s.record(item_id=1, annotator_id=1, stage="int", answer=True)


def test_sqlite_round_trip_and_autoais(tmp_path):
    _exercise(Store(tmp_path / "rt.sqlite", init=True), "rt")


def test_released_import_gives_the_same_report(tmp_path):
    path = DATA / "ais" / "ann_cnn_dm.csv"
    if not path.is_file():
        pytest.skip(f"released AIS ratings not found at {path}")
    s = Store(tmp_path / "rel.sqlite", init=True)
    assert s.import_released(path, project="cnn", task="summarization") == 798
    rep = s.report(project="cnn", n_resamples=200)
    assert {x["system"]: round(x["ais_pct"], 1) for x in rep["systems"]}["matchsum"] == 99.4
    assert rep["agreement"]["int"]["alpha"] == pytest.approx(0.463, abs=0.001)


def _pg_url() -> str | None:
    url = os.environ.get("VERIDIC_TEST_PG_URL")
    if url:
        return url
    try:
        import psycopg

        with psycopg.connect("postgresql://veridic:veridic@127.0.0.1:5432/veridic_test", connect_timeout=2):
            return "postgresql://veridic:veridic@127.0.0.1:5432/veridic_test"
    except Exception:  # noqa: BLE001 - any failure means "no server here"
        return None


def test_postgresql_round_trip():
    url = _pg_url()
    if url is None:
        pytest.skip("no PostgreSQL server: set VERIDIC_TEST_PG_URL (.ci/run starts one from Debian's postgresql package)")
    s = Store(url, init=True)
    try:
        _exercise(s, "pg-" + uuid.uuid4().hex[:8])
    finally:
        s.close()


@pytest.mark.slow
def test_autoais_with_the_embedded_model():
    from veridic.nli import load_backend

    rater = AutoAIS(backend=load_backend())
    got = rater.judge(sources=["The council approved the new budget on Monday after a long debate."] * 2,
                      outputs=["The council approved the budget.", "The council rejected the budget on Friday."])
    assert got == [True, False]


# --- the queue under concurrency: "done" only when nothing is open --------------------------------------
def _queue_race(store: Store, *, annotators: int = 20, items: int = 200, k: int = 3) -> tuple[int, list[str]]:
    """Annotators take and finish items concurrently until told "done"; returns (false "done" answers, errors)."""
    import threading

    project = "race-" + uuid.uuid4().hex[:8]
    store.create_project(project, task="summarization", k=k)
    store.add_items(project, [{"id": f"i{i}", "claim": f"Output {i}.", "source": "A source."} for i in range(items)])
    ids = [store.add_annotator(f"{project}-a{i}", password="secret-pw") for i in range(annotators)]
    done_at: dict[int, int] = {}
    errors: list[str] = []
    start = threading.Barrier(annotators)

    def work(ann: int) -> None:
        try:
            start.wait()
            while (v := store.next_assignment(ann, project=project)) is not None:
                store.record(item_id=v.id, annotator_id=ann, stage="int", answer=False)  # completes the assignment
            done_at[ann] = 1
        except Exception as exc:  # noqa: BLE001 - reported by the assertion
            errors.append(repr(exc))

    ts = [threading.Thread(target=work, args=(a,)) for a in ids]
    for t in ts:
        t.start()
    for t in ts:
        t.join(300)
    # Counts only grow, so an item open now (under k, not this annotator's) was open when they were told "done".
    false_done = 0
    rows = store.judgments(project=project)
    per_item: dict[str, set[str]] = {}
    for r in rows:
        per_item.setdefault(r["item"], set()).add(r["annotator"])
    counts = {f"i{i}": len(per_item.get(f"i{i}", ())) for i in range(items)}
    for ann in done_at:
        name = f"{project}-a{ids.index(ann)}"
        false_done += any(n < k and name not in per_item.get(item, ()) for item, n in counts.items())
    return false_done, errors


def test_the_queue_never_says_done_while_items_are_open_sqlite(tmp_path):
    s = Store(tmp_path / "race.sqlite", init=True)
    try:
        false_done, errors = _queue_race(s, annotators=8, items=40)
    finally:
        s.close()
    assert errors == [] and false_done == 0


def test_the_queue_never_says_done_while_items_are_open_postgresql():
    url = _pg_url()
    if url is None:
        pytest.skip("no PostgreSQL server: set VERIDIC_TEST_PG_URL (.ci/run starts one from Debian's postgresql package)")
    s = Store(url, init=True)
    try:
        false_done, errors = _queue_race(s, annotators=20, items=200)
    finally:
        s.close()
    assert errors == [] and false_done == 0


def test_postgresql_queue_keeps_looking_when_its_candidates_fill_up_meanwhile():
    # The race behind false "done" answers, made deterministic: between annotator A's candidate query and its row
    # locks, another annotator fills every candidate. Items past them are still open, so A must get one.
    import threading

    from sqlalchemy import event

    url = _pg_url()
    if url is None:
        pytest.skip("no PostgreSQL server: set VERIDIC_TEST_PG_URL (.ci/run starts one from Debian's postgresql package)")
    s = Store(url, init=True)
    project = "fill-" + uuid.uuid4().hex[:8]
    s.create_project(project, task="summarization", k=1)
    s.add_items(project, [{"id": f"i{i}", "claim": f"Output {i}.", "source": "A source."} for i in range(30)])
    a, b = (s.add_annotator(f"{project}-{n}", password="secret-pw") for n in "ab")
    queried, go = threading.Event(), threading.Event()

    def pause_after_the_candidates(conn, cursor, statement, params, context, executemany):
        if threading.current_thread().name == "annotator-a" and "LIMIT" in statement and "count(" in statement and not queried.is_set():
            queried.set()
            go.wait(30)

    event.listen(s.engine, "after_cursor_execute", pause_after_the_candidates)
    got = []
    t = threading.Thread(target=lambda: got.append(s.next_assignment(a, project=project)), name="annotator-a")
    try:
        t.start()
        assert queried.wait(30)
        for _ in range(20):  # b takes (and finishes) the 20 items a is about to lock
            v = s.next_assignment(b, project=project)
            s.record(item_id=v.id, annotator_id=b, stage="int", answer=False)
        go.set()
        t.join(30)
    finally:
        go.set()
        event.remove(s.engine, "after_cursor_execute", pause_after_the_candidates)
        s.close()
    assert got and got[0] is not None and got[0].ext_id == "i20", got
