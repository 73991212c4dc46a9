"""Print the training inputs of a model and their licences as a Markdown table, for its model card.

    python scripts/licence_table.py configs/nli-minilm.yaml configs/nli-minilm-v3.yaml \\
        configs/nli-minilm-v4.yaml configs/nli-minilm-v5.yaml

Give every config in the model's lineage (each stage continues from the one before): a model carries
the terms of every input any of its stages was trained on. The last line says what use the weights allow.
"""

from __future__ import annotations

import argparse

from veridic.train._licences import licence_rows
from veridic.train._loop import load_config


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("configs", nargs="+", help="training configs of the model's stages, in order")
    args = ap.parse_args()
    rows: dict[str, dict[str, str]] = {}
    for path in args.configs:
        for r in licence_rows({"config": load_config(path).to_dict()}):
            if r["input"].startswith("continued from"):
                continue
            rows.setdefault(r["input"], r)
    print("| training input | licence | commercial use |")
    print("|---|---|---|")
    for r in rows.values():
        note = f" ({r['note']})" if r["note"] else ""
        print(f"| {r['input']} | {r['licence']}{note} | {r['commercial']} |")
    blocked = [k for k, r in rows.items() if r["commercial"] != "yes"]
    verdict = ("**commercial use allowed** by every input's licence" if not blocked else
               f"**non-commercial research use only**: {len(blocked)} of {len(rows)} inputs do not allow commercial use "
               "(marked no, unknown or inherits above)")
    print(f"\nWhat the weights allow: {verdict}.")


if __name__ == "__main__":
    main()
