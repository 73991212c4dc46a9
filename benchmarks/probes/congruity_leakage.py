"""How much of a congruity fine-tune's held-out set it has already seen, and what that does to the held-out accuracy.

Rebuilds the held-out split exactly as ``veridic congruity train`` does (same
items, ``--eval-sample``, ``--seed`` and ``--eval-group``) and counts, for the
held-out items and for the test items, how many have their entity, their
article or their (entity, accurate answer) pair in the training set. With
``--held-scores`` (``congruity score`` on the held-out items, in the order of
``--held-items``) it splits the held-out accuracy by whether the entity was
seen in training.

    python benchmarks/probes/congruity_leakage.py \\
        --items runs/congruity/claim-valid-proxy.jsonl --items runs/congruity/claim-valid-strict.jsonl \\
        --items runs/congruity/description-valid-proxy.jsonl --items runs/congruity/description-valid-strict.jsonl \\
        --eval-items runs/congruity/claim-valid-strict.jsonl --eval-sample 48 --seed 0 --eval-group id \\
        --test-items runs/congruity/claim-test-strict.jsonl
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from veridic.congruity._build import MCItem
from veridic.congruity._metrics import per_item_top
from veridic.congruity._split import EVAL_GROUPS, article_key, entity_key, hold_out


def _items(paths: list[str]) -> list[MCItem]:
    return [MCItem.from_dict(json.loads(line)) for p in paths for line in Path(p).read_text(encoding="utf-8").splitlines() if line.strip()]


def _write(path: str, items: list[MCItem]) -> None:
    Path(path).write_text("".join(json.dumps(i.to_dict(), ensure_ascii=False) + "\n" for i in items), encoding="utf-8")
    print(f"wrote {len(items)} items -> {path}")


def _overlap(items: list[MCItem], train: list[MCItem]) -> dict[str, int]:
    ents = {entity_key(t) for t in train}
    arts = {article_key(t) for t in train} - {None}
    pairs = {(entity_key(t), t.options.get("accurate")) for t in train}
    return {"items": len(items), "entity in training": sum(entity_key(i) in ents for i in items),
            "article in training": sum(article_key(i) in arts for i in items),
            "(entity, accurate answer) trained as accurate": sum((entity_key(i), i.options.get("accurate")) in pairs for i in items)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--items", action="append", required=True, help="Training items (as given to `congruity train`).")
    ap.add_argument("--eval-items", action="append", required=True)
    ap.add_argument("--eval-sample", type=int, default=None)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--eval-group", choices=EVAL_GROUPS, default="entity")
    ap.add_argument("--test-items", action="append", default=[])
    ap.add_argument("--held-items", help="Items file that --held-scores scored (default: the held-out sample, in sample order).")
    ap.add_argument("--held-scores", help="Scores of the held-out items, from `congruity score`.")
    ap.add_argument("--write-held", help="Write the held-out items here, in the order of --eval-items (for `congruity score`).")
    ap.add_argument("--write-removed", help="Write the items of --removed-from that the split takes out of training (validation items for other tasks).")
    ap.add_argument("--removed-from", action="append", default=[], help="Items file(s) among --items, written in the order given.")
    a = ap.parse_args()
    candidates = _items(a.eval_items)
    split = hold_out(train=_items(a.items), candidates=candidates, n=a.eval_sample, seed=a.seed, group=a.eval_group)
    if a.write_held:
        chosen = {id(h) for h in split.held}
        _write(a.write_held, [c for c in candidates if id(c) in chosen])
    if a.write_removed:
        kept = {(t.id, t.task, json.dumps(t.options, sort_keys=True)) for t in split.train}
        _write(a.write_removed, [i for i in _items(a.removed_from) if (i.id, i.task, json.dumps(i.options, sort_keys=True)) not in kept])
    out: dict[str, object] = {"split": split.describe(), "held-out": _overlap(split.held, split.train)}
    if a.test_items:
        out["test"] = _overlap(_items(a.test_items), split.train)
    if a.held_scores:
        held = _items([a.held_items]) if a.held_items else split.held
        rows = [json.loads(x) for x in Path(a.held_scores).read_text(encoding="utf-8").splitlines() if x.strip()]
        if [r["id"] for r in rows] != [h.id for h in held]:
            raise SystemExit("--held-scores does not follow the held-out items' order; pass the items file it scored as --held-items.")
        top = per_item_top([r["scores"] for r in rows])["accurate"]
        ents = {entity_key(t) for t in split.train}
        seen = [entity_key(h) in ents for h in held]
        for name, want in (("entity seen", True), ("entity unseen", False)):
            idx = [i for i, s in enumerate(seen) if s is want]
            out[f"held-out accuracy, {name}"] = {"n": len(idx), "T accurate": round(100 * float(top[idx].mean()), 1) if idx else None}
        out["held-out accuracy"] = round(100 * float(top.mean()), 1)
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
