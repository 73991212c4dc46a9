"""Build veridic/detect/data/contrast_suite.jsonl from the hand-written facts in contrast_suite_facts.py.

    python benchmarks/build_contrast_suite.py            # rewrite the suite
    python benchmarks/build_contrast_suite.py --check    # fail if the committed file is stale

Each passage is the fact's correct first sentence ``a`` followed by one second sentence: a correct
paraphrase (``ok``, ``ok2``) or one error variant. Offsets are computed here, never typed by hand;
a wrong phrase that is missing from, or not unique in, its sentence stops the build. Schema: see
docs/contrast_suite.md.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from contrast_suite_facts import FACTS  # noqa: E402

OUT = Path(__file__).resolve().parents[1] / "veridic" / "detect" / "data" / "contrast_suite.jsonl"
SENTENCE_TYPES = {"con": "contradictory", "inv": "invented", "subj": "subjective", "unv": "unverifiable"}


def _phrase_item(fact: dict, variant: str, typ: str) -> dict:
    sent, wrong, right, *rest = fact[variant]
    alts = rest[0] if rest else []
    if sent.count(wrong) != 1:
        raise SystemExit(f"{fact['id']}/{variant}: {wrong!r} occurs {sent.count(wrong)} times in {sent!r}")
    passage = fact["a"] + " " + sent
    start = len(fact["a"]) + 1 + sent.index(wrong)
    fixed = passage[:start] + right + passage[start + len(wrong):]
    accept = [fixed] + [fact["a"] + " " + a for a in alts]
    return {"passage": passage, "correct": False,
            "spans": [{"start": start, "end": start + len(wrong), "text": wrong, "type": typ, "edit": right}],
            "accept": list(dict.fromkeys(accept))}


def build() -> list[dict]:
    rows = []
    seen = set()
    for f in FACTS:
        if f["id"] in seen:
            raise SystemExit(f"duplicate fact id {f['id']}")
        seen.add(f["id"])
        items = []
        for v in ("ok", "ok2"):
            if f.get(v):
                items.append((v, {"passage": f["a"] + " " + f[v], "correct": True, "spans": [], "accept": []}))
        items.append(("entity", _phrase_item(f, "ent", "entity")))
        items.append(("relation", _phrase_item(f, "rel", "relation")))
        for key, typ in SENTENCE_TYPES.items():
            sent = f[key]
            start = len(f["a"]) + 1
            items.append((typ, {"passage": f["a"] + " " + sent, "correct": False,
                                "spans": [{"start": start, "end": start + len(sent), "text": sent, "type": typ, "edit": ""}],
                                "accept": [f["a"]]}))
        for variant, item in items:
            row = {"id": f"{f['id']}-{variant}", "group": f["id"], "variant": variant, "evidence": f["ev"], **item}
            for s in row["spans"]:
                assert row["passage"][s["start"]:s["end"]] == s["text"], row["id"]
            rows.append(row)
    return rows


def main() -> None:
    rows = build()
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    if "--check" in sys.argv:
        if not OUT.exists() or OUT.read_text(encoding="utf-8") != text:
            raise SystemExit(f"{OUT} is stale; run python benchmarks/build_contrast_suite.py")
        print(f"{OUT}: up to date ({len(rows)} passages)")
        return
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(text, encoding="utf-8")
    counts: dict[str, int] = {}
    for r in rows:
        counts[r["variant"]] = counts.get(r["variant"], 0) + 1
    print(f"wrote {len(rows)} passages to {OUT}: {counts}")


if __name__ == "__main__":
    main()
