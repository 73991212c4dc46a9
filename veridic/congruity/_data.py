"""Examples for the factual-vs-contextual probe (paper 000) and their loaders.

An example is one entity mention whose description has been masked out of
its sentence: ``context`` holds the sentence with :data:`MASK` where the
description was, ``gold`` the description, ``facts`` what a knowledge base
says about the entity (each marked ``used`` when it supports the gold
description), ``article_id`` groups the mentions of one article and
``other_descriptions`` holds descriptions of the *other* entities of that
article when the source provides them.

Two sources:

* **PoMo** (Kang et al., 2019): ``<split>.pm`` rows (sentence without the
  post-modifier, entity, post-modifier, full sentence, Wikidata id,
  previous / next sentence, crowd context-relevance score, file id
  ``<article path>:<line>``) joined with ``<split>.wiki`` rows (Wikidata
  id, label, aliases, descriptions, claims JSON with ``used`` lists of the
  file ids whose post-modifier the claim supports). The ``.zip`` files are
  read directly. :func:`load_pomo` fills ``other_descriptions`` from the
  other PoMo rows of the same article (few articles have more than one).
* **Generic JSONL** (:func:`load_generic`), one object per line::

      {"id": "a1:3", "article_id": "a1", "entity": "Noam Chomsky",
       "context": "Noam Chomsky , [DESC] , said Dr. Melman helped ...",
       "gold": "the MIT professor and antiwar activist",
       "facts": [{"text": "linguist", "used": false}, "professor at MIT"],
       "other_descriptions": ["a historian at Columbia"],
       "previous": "...", "next": "...",              # optional
       "summary": "Chomsky said ...",                  # optional (familiarity heuristic)
       "familiar": true}                               # optional (user-supplied familiarity)

  A fact given as a bare string counts as ``used`` when it shares a
  content word with ``gold``.

>>> ex = CongruityExample(id="x", article_id="a", entity="John Alton", context="John Alton , [DESC] .",
...                       gold="cinematographer", facts=(Fact(text="cinematographer", used=True),))
>>> ex.left, ex.right
('John Alton ,', ' .')
>>> verbalize_claim("date of birth", "+1917-09-26T00:00:00Z")
'born in 1917'
>>> verbalize_claim("educated at", "University of Southern California")
'graduate of University of Southern California'
"""

from __future__ import annotations

import io
import json
import re
import zipfile
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from veridic.errors import DataFormatError, InputError
from veridic.ling.lexical import content_words

__all__ = [
    "MASK",
    "POMO_SPLITS",
    "SKIP_PROPERTIES",
    "CongruityExample",
    "Fact",
    "load_examples",
    "load_generic",
    "load_pomo",
    "pomo_dir",
    "verbalize_claim",
]

MASK = "[DESC]"
POMO_SPLITS = ("train", "valid", "test")
PM_FIELDS = ("sent_wo_post_modifier", "entity_name", "post_modifier", "sent", "wiki_id", "prev_sent", "next_sent", "context_relevance_score", "file_info")

#: Wikidata properties that never make a description (names, gender, images,
#: body measurements); they are kept out of the fact list entirely.
SKIP_PROPERTIES = frozenset(
    {"sex or gender", "given name", "family name", "Commons category", "height", "mass", "topic 's main category",
     "image", "signature", "name in native language", "birth name", "pseudonym", "described by source",
     "Commons gallery", "on focus list of Wikimedia project", "category for people born here"}
)

# How a claim reads when it stands in a description slot ("X , <claim> , said").
_TEMPLATES = {
    "occupation": "{v}", "position held": "{v}", "noble title": "{v}", "military rank": "{v}",
    "position played on team / speciality": "{v}", "field of work": "expert in {v}", "sport": "{v} player",
    "member of sports team": "player for {v}", "member of political party": "member of the {v}",
    "member of": "member of {v}", "employer": "employee of {v}", "educated at": "graduate of {v}",
    "award received": "winner of the {v}", "nominated for": "nominee for the {v}", "place of birth": "born in {v}",
    "place of death": "died in {v}", "date of birth": "born in {v}", "date of death": "died in {v}",
    "country of citizenship": "citizen of {v}", "spouse": "spouse of {v}", "child": "parent of {v}",
    "father": "child of {v}", "mother": "child of {v}", "sibling": "sibling of {v}", "genre": "{v} artist",
    "instrument": "{v} player", "notable work": "author of {v}", "residence": "resident of {v}",
    "participant of": "participant in the {v}", "record label": "artist on {v}", "religion": "follower of {v}",
    "military branch": "member of the {v}", "conflict": "veteran of the {v}", "work location": "working in {v}",
    "languages spoken , written or signed": "speaker of {v}", "ethnic group": "{v}", "student of": "student of {v}",
    "student": "teacher of {v}", "influenced by": "influenced by {v}", "place of burial": "buried in {v}",
    "manner of death": "died of {v}", "cause of death": "died of {v}", "league": "player in the {v}",
    "member of the crew of": "crew member of {v}", "candidacy in election": "candidate in the {v}",
    "academic degree": "holder of a {v}", "doctoral advisor": "student of {v}", "owner of": "owner of {v}",
}
_DATE = re.compile(r"^[+-]?(\d{3,4})-\d\d-\d\dT")


def verbalize_claim(prop: str, value: str) -> str:
    """Read a Wikidata claim as a description (dates become years; unknown properties read ``<property> <value>``)."""
    m = _DATE.match(value)
    v = m.group(1).lstrip("0") if m else value
    tpl = _TEMPLATES.get(prop)
    return tpl.format(v=v) if tpl else f"{prop} {v}"


@dataclass(frozen=True)
class Fact:
    """One thing known about the entity; ``used`` = it supports the gold description."""

    text: str
    used: bool = False
    property: str | None = None
    value: str | None = None


@dataclass(frozen=True)
class CongruityExample:
    """One masked entity description in context (see the module docstring)."""

    id: str
    article_id: str
    entity: str
    context: str
    gold: str
    facts: tuple[Fact, ...] = ()
    other_descriptions: tuple[str, ...] = ()
    entity_id: str | None = None
    previous: str = ""
    next: str = ""
    summary: str | None = None
    familiar: bool | None = None
    relevance: float | None = None
    kb_descriptions: tuple[str, ...] = ()
    meta: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def __post_init__(self) -> None:
        for name in ("id", "entity", "context", "gold"):
            v = getattr(self, name)
            if not isinstance(v, str) or not v.strip():
                raise InputError(f"CongruityExample.{name} must be non-empty text; got {v!r:.80}.")
        if self.context.count(MASK) != 1:
            raise InputError(f"CongruityExample.context must contain the mask {MASK!r} exactly once; got {self.context!r:.120} (example {self.id}).")

    @property
    def left(self) -> str:
        """The sentence up to the description slot, right-stripped."""
        return self.context.split(MASK)[0].rstrip()

    @property
    def right(self) -> str:
        """The sentence after the description slot (starts with its own space)."""
        return self.context.split(MASK)[1]

    @property
    def filled(self) -> str:
        return self.context.replace(MASK, self.gold)

    @property
    def entity_key(self) -> str:
        return self.entity_id or self.entity.lower()

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["facts"] = [asdict(f) for f in self.facts]
        d["other_descriptions"] = list(self.other_descriptions)
        d["kb_descriptions"] = list(self.kb_descriptions)
        return d


# ---------------------------------------------------------------------------
# PoMo


def pomo_dir(data_dir: str | Path | None = None) -> Path:
    """``<data_dir>/pomo`` (default data dir: ``$VERIDIC_DATA`` or ``../shared/data`` from the repo)."""
    from veridic.io._paths import default_data_dir

    d = Path(data_dir) if data_dir is not None else default_data_dir()
    return d if d.name == "pomo" else d / "pomo"


def _open_text(path: Path) -> io.TextIOBase:
    if path.suffix == ".zip":
        zf = zipfile.ZipFile(path)
        names = [n for n in zf.namelist() if not n.endswith("/")]
        if len(names) != 1:
            raise DataFormatError(f"{path} should hold exactly one file; it holds {names[:5]}.")
        return io.TextIOWrapper(zf.open(names[0]), encoding="utf-8")
    return open(path, encoding="utf-8")


def _find(folder: Path, split: str, ext: str) -> Path:
    for name in (f"{split}.{ext}", f"{split}.{ext}.zip"):
        if (folder / name).is_file():
            return folder / name
    raise InputError(
        f"No PoMo {ext!r} file for split {split!r}: neither {folder / f'{split}.{ext}'} nor {folder / f'{split}.{ext}.zip'} exists. "
        f"Get {split}.pm and {split}.wiki from https://github.com/StonyBrookNLP/PoMo (the data/ folder) into {folder}, "
        "or point --data-dir / $VERIDIC_DATA at the folder that holds pomo/."
        + (" The shared data folder ships only valid and test; `veridic congruity train` trains on valid by default." if split == "train" else "")
    )


def _read_wiki(path: Path) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    with _open_text(path) as fh:
        for n, line in enumerate(fh, 1):
            parts = line.rstrip("\n").split("\t")
            if len(parts) < 5:
                raise DataFormatError(f"{path}:{n}: a .wiki row needs 5 tab-separated fields (id, label, aliases, descriptions, claims JSON); got {len(parts)}.")
            try:
                claims = json.loads(parts[4]) if parts[4] else []
            except json.JSONDecodeError as exc:
                raise DataFormatError(f"{path}:{n}: the claims field is not JSON ({exc}).") from None
            descs = tuple(d.strip() for d in parts[3].split(",") if d.strip())
            out[parts[0]] = {"label": parts[1], "descriptions": descs, "claims": claims}
    return out


def _slot(sent: str, entity: str, pm: str) -> str | None:
    start = sent.find(entity)
    i = sent.find(pm, start + len(entity) if start >= 0 else 0)
    if i < 0:
        i = sent.find(pm)
    if i < 0:
        return None
    return sent[:i] + MASK + sent[i + len(pm) :]


def _facts(claims: Iterable[dict[str, Any]], file_info: str) -> tuple[Fact, ...]:
    out: list[Fact] = []
    seen: set[str] = set()
    for c in claims:
        prop, value = (list(c.get("property") or []) + ["", ""])[:2]
        if not prop or not value or prop in SKIP_PROPERTIES:
            continue
        text = verbalize_claim(prop, value)
        used = file_info in (c.get("used") or [])
        key = text.lower()
        if key in seen:  # the same award nominated for several works
            if used:
                out = [Fact(text=f.text, used=True, property=f.property, value=f.value) if f.text.lower() == key else f for f in out]
            continue
        seen.add(key)
        out.append(Fact(text=text, used=used, property=prop, value=value))
    return tuple(out)


def _mention_finder(wiki: dict[str, dict[str, Any]]):
    """A function text -> Wikidata ids of the split's entities whose label occurs in the text.

    This is how other people *of the same article* get their claims (paper
    000 takes them from the article itself): PoMo only ships Wikidata for
    described entities, so an article's other people are found by their
    full label (at least two words, whole-word match) in the previous,
    current and next sentence.
    """
    names: dict[str, set[str]] = defaultdict(set)
    for qid, w in wiki.items():
        label = str(w.get("label") or "").strip()
        if len(label.split()) >= 2:
            names[label].add(qid)
    if not names:
        return lambda text: set()
    pattern = re.compile(r"\b(" + "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True)) + r")\b")
    return lambda text: {q for m in pattern.finditer(text) for q in names[m.group(1)]}


def load_pomo(*, split: str = "test", data_dir: str | Path | None = None, limit: int | None = None) -> list[CongruityExample]:
    """Read PoMo ``<split>.pm`` + ``<split>.wiki`` (plain or ``.zip``) into examples.

    Rows whose post-modifier cannot be located in the full sentence are
    skipped (counted in ``example.meta`` of none; see :func:`pomo_stats`).
    """
    if split not in POMO_SPLITS:
        raise InputError(f"PoMo split must be one of {POMO_SPLITS}; got {split!r}.")
    folder = pomo_dir(data_dir)
    wiki = _read_wiki(_find(folder, split, "wiki"))
    rows: list[list[str]] = []
    pm_path = _find(folder, split, "pm")
    with _open_text(pm_path) as fh:
        for n, line in enumerate(fh, 1):
            parts = line.rstrip("\n").split("\t")
            if len(parts) != len(PM_FIELDS):
                raise DataFormatError(f"{pm_path}:{n}: a .pm row needs {len(PM_FIELDS)} tab-separated fields ({', '.join(PM_FIELDS)}); got {len(parts)}.")
            rows.append(parts)
    by_article: dict[str, list[int]] = defaultdict(list)
    for i, r in enumerate(rows):
        by_article[r[8].rsplit(":", 1)[0]].append(i)
    find_mentions = _mention_finder(wiki)
    out: list[CongruityExample] = []
    for r in rows:
        _wo, entity, pm, sent, qid, prev, nxt, rel, info = r
        context = _slot(sent, entity, pm)
        if context is None or context.count(MASK) != 1 or not pm.strip():
            continue
        article = info.rsplit(":", 1)[0]
        others = tuple(rows[j][2] for j in by_article[article] if rows[j][4] != qid)
        w = wiki.get(qid, {"label": entity, "descriptions": (), "claims": []})
        try:
            relevance = float(rel)
        except ValueError:
            relevance = None
        out.append(
            CongruityExample(
                id=info, article_id=article, entity=entity, context=context, gold=pm, facts=_facts(w["claims"], info),
                other_descriptions=others, entity_id=qid, previous="" if prev == "n/a" else prev, next="" if nxt == "n/a" else nxt,
                relevance=relevance or None, kb_descriptions=tuple(w["descriptions"]),
                meta={"n_claims": len(w["claims"]), "source": "pomo", "split": split,
                      "mentioned_entities": sorted(find_mentions(" ".join((prev, sent, nxt))) - {qid})},
            )
        )
        if limit is not None and len(out) >= limit:
            break
    return out


# ---------------------------------------------------------------------------
# generic JSONL


def _generic_fact(f: Any, gold: str, where: str) -> Fact:
    if isinstance(f, str):
        return Fact(text=f, used=bool(set(content_words(f)) & set(content_words(gold))))
    if isinstance(f, dict) and isinstance(f.get("text"), str):
        return Fact(text=f["text"], used=bool(f.get("used", False)), property=f.get("property"), value=f.get("value"))
    raise DataFormatError(f"{where}: a fact must be a string or an object with 'text' (and optional 'used'); got {f!r:.80}.")


def _from_row(row: dict[str, Any], where: str) -> CongruityExample:
    missing = [k for k in ("entity", "context", "gold") if not row.get(k)]
    if missing:
        raise DataFormatError(f"{where}: missing {missing}; a congruity row needs id, article_id, entity, context (with {MASK}), gold, facts.")
    gold = str(row["gold"])
    fam = row.get("familiar")
    if isinstance(fam, str):
        fam = {"true": True, "1": True, "yes": True, "familiar": True, "false": False, "0": False, "no": False, "unfamiliar": False}.get(fam.strip().lower())
    try:
        return CongruityExample(
            id=str(row.get("id", where)), article_id=str(row.get("article_id", row.get("id", where))), entity=str(row["entity"]),
            context=str(row["context"]), gold=gold, facts=tuple(_generic_fact(f, gold, where) for f in row.get("facts") or ()),
            other_descriptions=tuple(str(d) for d in row.get("other_descriptions") or ()), entity_id=row.get("entity_id"),
            previous=str(row.get("previous") or ""), next=str(row.get("next") or ""), summary=row.get("summary"),
            familiar=None if fam is None else bool(fam), relevance=row.get("relevance"),
            kb_descriptions=tuple(row.get("kb_descriptions") or ()), meta=dict(row.get("meta") or {}),
        )
    except InputError as exc:
        raise DataFormatError(f"{where}: {exc}") from None


def load_generic(path: str | Path) -> list[CongruityExample]:
    """Read the generic JSONL format of the module docstring (also ``.csv``/``.parquet`` via veridic.io)."""
    from veridic.io._records import read_records

    return [_from_row(dict(r), f"{path} row {i}") for i, r in enumerate(read_records(path))]


def load_examples(spec: str | Path, *, data_dir: str | Path | None = None, limit: int | None = None) -> list[CongruityExample]:
    """``pomo:<split>`` (e.g. ``pomo:test``) or a path to generic JSONL."""
    s = str(spec)
    if s.startswith("pomo:") or s in POMO_SPLITS:
        return load_pomo(split=s.split(":", 1)[-1], data_dir=data_dir, limit=limit)
    exs = load_generic(s)
    return exs[:limit] if limit is not None else exs


def facts_by_entity(examples: Sequence[CongruityExample]) -> dict[str, set[str]]:
    """Content words of everything known about each entity (its facts, KB descriptions and all its gold descriptions)."""
    out: dict[str, set[str]] = defaultdict(set)
    for e in examples:
        words = out[e.entity_key]
        for f in e.facts:
            words.update(content_words(f.text))
        for d in e.kb_descriptions:
            words.update(content_words(d))
        words.update(content_words(e.gold))
    return out
