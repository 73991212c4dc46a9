"""What each training input's licence allows, and which models may be used commercially.

A model trained on a set inherits that set's terms, so every shipped model card lists its
training sets with these licences. ``commercial`` is ``"yes"`` only where the licence plainly
allows commercial use (permissive or share-alike licences); non-commercial, research-only,
restricted and unstated licences are ``"no"`` or ``"unknown"``, and both keep a set out of a
model sold as commercially usable. The licences are those recorded in the shared data's
manifests (``nli/MANIFEST.md``, ``nli/MANIFEST-2.md``, the data README); this table is a
reading of them, not legal advice.

>>> LICENCES["snli"].commercial
'yes'
>>> LICENCES["anli"].commercial
'no'
>>> commercial_problems(sets=["snli", "anli"], contrast_sources=[], extra_corpora=[])
['data.sets.anli: CC BY-NC 4.0 (non-commercial)']
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from veridic.train._backbones import BACKBONE_PREFIX, BACKBONES, DEFAULT_BACKBONE

__all__ = ["Licence", "LICENCES", "SOURCE_LICENCES", "BACKBONE_LICENCES", "commercial_problems", "licence_rows"]


@dataclass(frozen=True)
class Licence:
    """One training input's licence as recorded in its manifest."""

    licence: str
    commercial: str  # "yes" | "no" | "unknown"
    note: str = ""


_Y, _N, _U = "yes", "no", "unknown"

#: NLI sets in ``shared/data/nli`` (file stem -> licence).
LICENCES: dict[str, Licence] = {
    # tier A
    "mnli": Licence("OANC (free use); fiction genre CC BY-SA 3.0", _Y),
    "snli": Licence("CC BY-SA 4.0", _Y),
    "anli": Licence("CC BY-NC 4.0 (non-commercial)", _N),
    "xnli_en": Licence("CC BY-NC 4.0 (non-commercial)", _N),
    "sick": Licence("CC BY-NC-SA 3.0 (non-commercial)", _N),
    "rte": Licence("PASCAL RTE challenge data, research use", _N),
    "rte_pascal": Licence("PASCAL RTE challenge data, research use", _N),
    "cad_snli": Licence("Apache-2.0; SNLI text CC BY-SA 4.0", _Y),
    "taxinli": Licence("Computational Use of Data Agreement (C-UDA) 1.0; MNLI text", _U,
                       "C-UDA limits use to computational analysis; left out of commercial models"),
    "scitail": Licence("Apache-2.0", _Y),
    "commitment_bank": Licence("research use (BNC / Switchboard / WSJ excerpts)", _N),
    "mpe": Licence("none stated (Flickr30k captions, research use)", _U),
    "control": Licence("CC BY-NC-SA 4.0 (non-commercial)", _N),
    "negation_nli": Licence("MIT; pairs derived from GLUE RTE (research use), SNLI and MNLI", _U),
    "nope": Licence("none stated (research release)", _U),
    "ambient": Licence("CC BY 4.0", _Y),
    "climate_fever": Licence("none stated; evidence from Wikipedia (CC BY-SA 3.0)", _U),
    "healthver": Licence("none stated (research release)", _U),
    "scifact": Licence("CC BY-NC 2.0 (non-commercial)", _N),
    "nli4ct": Licence("none stated (SemEval task data)", _U),
    "conjnli": Licence("MIT; premises from Wikipedia (CC BY-SA)", _Y),
    "joci_snli": Licence("none stated for JOCI; SNLI text CC BY-SA 4.0", _U),
    "lingnli": Licence("none stated; MNLI premises, new crowd-written hypotheses", _U),
    "semiauto_nli": Licence("Wikipedia parts CC BY-SA 3.0 / GFDL; news parts LDC Gigaword (restricted)", _Y,
                            "commercial only without the *_news subsets (exclude subset base_news, sim_news)"),
    # tier B
    "add_one_rte": Licence("none stated (research release)", _U),
    "fracas": Licence("freely distributed, no licence", _U),
    "med": Licence("CC BY-SA 4.0", _Y),
    "monli": Licence("none stated (research release)", _U),
    "breaking_nli": Licence("CC BY-SA 4.0", _Y),
    "nan_nli": Licence("none stated", _U),
    "folio": Licence("CC BY-SA 4.0", _Y),
    "infotabs": Licence("Apache-2.0, with a datasheet to read for non-academic use", _U),
    "qnli": Licence("CC BY-SA 4.0 (from SQuAD 1.1)", _Y),
    "covidfact": Licence("none stated (research release)", _U),
    "fnc1": Licence("none stated (from Emergent); check terms before commercial use", _U),
    "averitec": Licence("CC BY-NC 4.0 (non-commercial)", _N),
    "wanli_sample": Licence("CC BY 4.0", _Y),
    "politihop": Licence("none stated (PolitiFact text)", _U),
    "tabfact": Licence("MIT; tables from Wikipedia (CC BY-SA)", _Y),
    # tier C
    "conjnli_adv": Licence("MIT; premises from Wikipedia (CC BY-SA)", _Y),
    "joci": Licence("none stated (research use)", _U),
    "dnc_recast": Licence("mixed, per source corpus", _U),
    "scone": Licence("CC0 1.0", _Y),
    "logiqa2nli": Licence("CC BY-NC-SA 4.0 (non-commercial)", _N),
    "wnli": Licence("CC BY 4.0", _Y),
}

#: Text that synthetic corpora (``veridic synth contrast`` / ``frames``) are built from.
SOURCE_LICENCES: dict[str, Licence] = {
    "pomo_valid": Licence("PoMo: none stated (research use); CNN/DM and NYT sentences", _N),
    "pomo_test": Licence("PoMo: none stated (research use); CNN/DM and NYT sentences", _N),
    "fnc1": LICENCES["fnc1"],
    "control": LICENCES["control"],
    "mnli": LICENCES["mnli"],
    "snli": LICENCES["snli"],
    "lingnli": LICENCES["lingnli"],
    "anli": LICENCES["anli"],
    "semiauto_wiki": Licence("Wikipedia / Simple Wikipedia / WikiMatrix: CC BY-SA 3.0 / GFDL", _Y),
    "augment_phrases": Licence("ten generic conversational fillers listed by paper 004 (a method, not a dataset)", _Y),
}

#: Pretrained encoders the trainer starts from, as their registry records them.
BACKBONE_LICENCES: dict[str, Licence] = {
    name: Licence(f"{b.licence} (sentence-transformers {name})", _Y if b.commercial_use else _U)
    for name, b in BACKBONES.items()
}


def _problem(where: str, lic: Licence | None) -> str | None:
    if lic is None:
        return f"{where}: no licence recorded in veridic's licence table (veridic/train/_licences.py)"
    if lic.commercial != _Y:
        return f"{where}: {lic.licence}"
    return None


def commercial_problems(*, sets: Iterable[str], contrast_sources: Iterable[str], extra_corpora: Iterable[str],
                        semiauto_excludes: Iterable[str] = ("base_news", "sim_news")) -> list[str]:
    """Every training input that keeps a model from commercial use, as ``"where: licence"`` lines.

    ``sets``: NLI set names trained on (weight > 0); ``contrast_sources``: the text the contrast
    corpus was built from; ``extra_corpora``: further synthetic corpora, which must name their
    sources (``frames[src1,src2]``). ``semiauto_excludes``: the semi-automatic NLI subsets left out.
    """
    out: list[str] = []
    for name in sets:
        if name == "semiauto_nli" and not {"base_news", "sim_news"} <= set(semiauto_excludes):
            out.append("data.sets.semiauto_nli: its *_news subsets quote LDC Gigaword (restricted); "
                       "exclude subset [base_news, sim_news]")
            continue
        p = _problem(f"data.sets.{name}", LICENCES.get(name))
        if p:
            out.append(p)
    for src in contrast_sources:
        p = _problem(f"contrast.sources.{src}", SOURCE_LICENCES.get(src))
        if p:
            out.append(p)
    for corpus in extra_corpora:
        out.append(f"contrast.extra_corpora.{corpus}: a corpus file does not record its sources; "
                   "build the commercial model without extra corpora")
    return out


def _path_licence(path: str) -> Licence | None:
    """The licence of a data file named by its path (``pomo/valid.pm.zip``, ``nli/fnc1.jsonl.gz``)."""
    if path.startswith("pomo/"):
        return SOURCE_LICENCES["pomo_valid"]
    stem = path.rsplit("/", 1)[-1].split(".", 1)[0]
    return LICENCES.get(stem)


def licence_rows(summary: dict[str, Any]) -> list[dict[str, str]]:
    """One row per training input of a run (its ``training_summary.json``), for a model card.

    >>> licence_rows({"config": {"data": {"sets": {"snli": {"weight": 1.0}}}, "contrast": {"enabled": False},
    ...               "model": {"path": "backbone:all-minilm-l6-v2"}, "augment": {"fraction": 0.0}}})[0]["input"]
    'backbone all-minilm-l6-v2'
    """
    cfg = summary["config"]
    rows: list[dict[str, str]] = []

    def add(kind: str, name: str, lic: Licence | None) -> None:
        lic = lic or Licence("not recorded", _U)
        rows.append({"input": f"{kind} {name}".strip(), "licence": lic.licence, "commercial": lic.commercial,
                     "note": lic.note})

    path = str(cfg.get("model", {}).get("path") or DEFAULT_BACKBONE)
    if path.startswith(BACKBONE_PREFIX):
        name = path[len(BACKBONE_PREFIX):]
        add("backbone", name, BACKBONE_LICENCES.get(name))
    else:
        rows.append({"input": f"continued from {path}", "licence": "that model's inputs (see its card)",
                     "commercial": "inherits", "note": ""})
    for name, spec in sorted(cfg.get("data", {}).get("sets", {}).items()):
        if float(spec.get("weight", 1.0)) > 0:
            add("NLI set", name, LICENCES.get(name))
    if float(cfg.get("augment", {}).get("fraction", 0.0)) > 0:
        add("augmentation", "paper 004 phrases", SOURCE_LICENCES["augment_phrases"])
    syn = cfg.get("synthetic", {})
    if syn.get("enabled"):
        for src in syn.get("sources", []):
            add("synthetic pairs from", str(src.get("path")), _path_licence(str(src.get("path", ""))))
        if syn.get("pomo_modifier"):
            add("synthetic pairs from", str(syn["pomo_modifier"].get("path")), SOURCE_LICENCES["pomo_test"])
    con = cfg.get("contrast", {})
    if con.get("enabled"):
        from veridic.synth._corpus import DEFAULT_SOURCES

        for src in con.get("sources") or sorted(DEFAULT_SOURCES):
            add("contrast corpus text", src, SOURCE_LICENCES.get(src))
        for extra in con.get("extra_corpora", []):
            rows.append({"input": f"extra corpus {extra}", "licence": "built from the sources named in its card",
                         "commercial": "unknown", "note": ""})
    dis = cfg.get("distill", {})
    if dis.get("enabled"):
        # The student learns the teacher's judgments, so it carries the terms of the teacher's training data.
        rows.append({"input": f"distillation teacher {dis.get('teacher')}", "licence": "its training inputs' (list its configs too)",
                     "commercial": "inherits", "note": ""})
    return rows
