"""PoMo loader on a tiny in-test fixture (plain and zipped) and on the real files; the generic JSONL format."""

from __future__ import annotations

import json
import zipfile

import pytest
from conftest import DATA

from veridic.congruity._data import MASK, CongruityExample, load_examples, load_generic, load_pomo, verbalize_claim
from veridic.errors import DataFormatError, InputError

PM_ROWS = [
    ["John Alton .", "John Alton", "cinematographer", "John Alton , cinematographer .", "Q1", "Chiyo Uno , writer .", "n/a", "5.0", "1996/a.story:50"],
    ["`` Clauses , '' said J. Anthony Lukas .", "J. Anthony Lukas", "the Pulitzer Prize-winning writer",
     "`` Clauses , '' said J. Anthony Lukas , the Pulitzer Prize-winning writer .", "Q2", "Before .", "After .", "4.666666667", "1990/b.story:36"],
    ["Lukas said he used notes .", "J. Anthony Lukas", "the author and journalist", "J. Anthony Lukas , the author and journalist , said he used notes .",
     "Q2", "n/a", "n/a", "4.0", "1997/c.story:66"],
    ["Ann Bee spoke .", "Ann Bee", "a critic", "Ann Bee , a critic , spoke .", "Q3", "n/a", "n/a", "3.0", "1996/a.story:51"],
]
WIKI_ROWS = [
    ["Q1", "John Alton", "", "cinematographer", json.dumps([
        {"property": ["occupation", "cinematographer"], "qualifiers": [], "used": ["1996/a.story:50"]},
        {"property": ["sex or gender", "male"], "qualifiers": [], "used": []},
        {"property": ["date of birth", "+1901-10-05T00:00:00Z"], "qualifiers": [], "used": []}]), ""],
    ["Q2", "J. Anthony Lukas", "", "American journalist", json.dumps([
        {"property": ["award received", "Pulitzer Prize"], "qualifiers": [], "used": ["1990/b.story:36"]},
        {"property": ["occupation", "journalist"], "qualifiers": [], "used": ["1997/c.story:66"]}]), ""],
    ["Q3", "Ann Bee", "", "", json.dumps([{"property": ["occupation", "critic"], "qualifiers": [], "used": []}]), ""],
]


def _write(folder, split="test", zipped=False):
    folder.mkdir(parents=True, exist_ok=True)
    pm = "".join("\t".join(r) + "\n" for r in PM_ROWS)
    wiki = "".join("\t".join(r) + "\n" for r in WIKI_ROWS)
    for ext, text in (("pm", pm), ("wiki", wiki)):
        if zipped:
            with zipfile.ZipFile(folder / f"{split}.{ext}.zip", "w") as zf:
                zf.writestr(f"{split}.{ext}", text)
        else:
            (folder / f"{split}.{ext}").write_text(text)
    return folder


@pytest.mark.parametrize("zipped", [False, True])
def test_pomo_loader_on_tiny_fixture(tmp_path, zipped):
    exs = load_pomo(split="test", data_dir=_write(tmp_path / "pomo", zipped=zipped))
    assert len(exs) == 4
    a, b, c, d = exs
    assert a.context == f"John Alton , {MASK} ." and a.gold == "cinematographer" and a.previous == "Chiyo Uno , writer ." and a.next == ""
    assert a.left == "John Alton ," and a.right == " ."
    # skipped property gone, date verbalised, 'used' is per row (file id)
    assert [(f.text, f.used) for f in a.facts] == [("cinematographer", True), ("born in 1901", False)]
    assert b.context.endswith(f"said J. Anthony Lukas , {MASK} .") and b.filled.endswith("the Pulitzer Prize-winning writer .")
    assert [(f.text, f.used) for f in b.facts] == [("winner of the Pulitzer Prize", True), ("journalist", False)]
    assert [(f.text, f.used) for f in c.facts] == [("winner of the Pulitzer Prize", False), ("journalist", True)]
    # the two rows of article 1996/a.story describe two entities: each sees the other's description
    assert a.article_id == d.article_id == "1996/a.story" and a.other_descriptions == ("a critic",) and d.other_descriptions == ("cinematographer",)
    assert b.relevance == pytest.approx(4.666666667) and b.kb_descriptions == ("American journalist",) and b.entity_id == "Q2"


def test_pomo_loader_errors(tmp_path):
    with pytest.raises(InputError, match="No PoMo 'wiki' file"):
        load_pomo(split="test", data_dir=tmp_path)
    with pytest.raises(InputError, match="split must be one of"):
        load_pomo(split="dev", data_dir=tmp_path)
    folder = _write(tmp_path / "pomo")
    (folder / "test.pm").write_text("only\tthree\tfields\n")
    with pytest.raises(DataFormatError, match="needs 9 tab-separated fields"):
        load_pomo(split="test", data_dir=folder)


def test_generic_jsonl(tmp_path):
    rows = [
        {"id": "a1:3", "article_id": "a1", "entity": "Noam Chomsky", "context": "Noam Chomsky , [DESC] , said .", "gold": "the MIT professor",
         "facts": [{"text": "linguist", "used": False}, "professor at MIT"], "other_descriptions": ["a historian"], "familiar": "yes", "summary": "Chomsky said ."},
    ]
    p = tmp_path / "g.jsonl"
    p.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    (ex,) = load_generic(p)
    assert ex.familiar is True and ex.summary == "Chomsky said ." and ex.other_descriptions == ("a historian",)
    assert [(f.text, f.used) for f in ex.facts] == [("linguist", False), ("professor at MIT", True)]  # bare string: used if it shares a word
    assert load_examples(p)[0].id == "a1:3"
    p.write_text(json.dumps({**rows[0], "context": "no mask here"}) + "\n")
    with pytest.raises(DataFormatError, match=r"mask '\[DESC\]' exactly once"):
        load_generic(p)


def test_example_validation_and_verbalizer():
    with pytest.raises(InputError, match="gold must be non-empty"):
        CongruityExample(id="1", article_id="a", entity="X", context="X , [DESC] .", gold=" ")
    assert verbalize_claim("member of sports team", "Wiggins") == "player for Wiggins"
    assert verbalize_claim("some new property", "value") == "some new property value"


@pytest.mark.skipif(not (DATA / "pomo" / "test.pm.zip").exists(), reason="PoMo not found under ../shared/data/pomo")
def test_real_pomo_test_split():
    exs = load_pomo(split="test", data_dir=DATA)
    assert len(exs) == 5242  # every row's post-modifier is found in its sentence
    assert sum(any(f.used for f in e.facts) for e in exs) > 5000
    assert all(e.context.count(MASK) == 1 for e in exs)
    assert len({e.entity_id for e in exs}) == 1342
