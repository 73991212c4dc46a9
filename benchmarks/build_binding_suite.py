"""Build veridic/bench/data/binding_suite.jsonl: does a score follow which entity a fact belongs to?

    python benchmarks/build_binding_suite.py            # rewrite the suite
    python benchmarks/build_binding_suite.py --check    # fail if the committed file is stale

Each item is a short premise that gives two entities an attribute of the same kind each (two places, two years, two
designers ...), and two hypothesis frames, one per entity. Filling each frame with its own entity's value gives a
faithful hypothesis (``binding_keep``, label 1); filling it with the other entity's value gives one that moves a fact
to the wrong entity (``binding_swap``, label 0). The two hypotheses of a frame differ only in which of the premise's
two values fills it (minimal pairs): word overlap cannot tell them apart, and a judge that reads the premise as a bag
of facts cannot either. Written by hand for this project (invented names and figures, so world knowledge cannot stand in for
reading the premise); this script only fills the frames and checks that each value occurs once in its premise.
Data card: docs/contrast-data.md, "The binding suite".
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "veridic" / "bench" / "data" / "binding_suite.jsonl"

# (kind, premise, frame for the first entity, its value, frame for the second entity, its value)
ITEMS: list[tuple[str, str, str, str, str, str]] = [
    ("place", "The agency has opened a new deep-space tracking station in Malargüe, Argentina. It already operates a similar "
              "station in Cebreros, Spain, which opened in 2005.",
     "The new station is in {}.", "Malargüe, Argentina", "The station that opened in 2005 is in {}.", "Cebreros, Spain"),
    ("person", "The bridge over the river was designed by Edgar Lindqvist, and the stadium beside it by Tomas Varga.",
     "The bridge was designed by {}.", "Edgar Lindqvist", "The stadium was designed by {}.", "Tomas Varga"),
    ("date", "Maria Lopez founded the bakery in 1987. Her brother Carlos opened the café across the street in 1993.",
     "The bakery was founded in {}.", "1987", "The café across the street opened in {}.", "1993"),
    ("number", "The northern reservoir holds 40 million cubic metres of water, while the southern one holds 15 million.",
     "The northern reservoir holds {} cubic metres of water.", "40 million",
     "The southern reservoir holds {} cubic metres of water.", "15 million"),
    ("organisation", "In the final, Ana Serrano scored twice for Benfica and Marta Quental scored once for Porto.",
     "Ana Serrano scored for {}.", "Benfica", "Marta Quental scored for {}.", "Porto"),
    ("thing", "The museum's east wing houses the Egyptian collection. The west wing, added in 1962, houses the Roman sculptures.",
     "The east wing houses {}.", "the Egyptian collection", "The west wing houses {}.", "the Roman sculptures"),
    ("role", "Professor Chen leads the physics department, and Professor Okafor heads the chemistry department.",
     "Professor Chen leads the {} department.", "physics", "Professor Okafor heads the {} department.", "chemistry"),
    ("number", "The first vaccine trial enrolled 1,200 adults in Kenya; a second trial in Uganda enrolled 800 children.",
     "The trial in Kenya enrolled {}.", "1,200 adults", "The trial in Uganda enrolled {}.", "800 children"),
    ("time", "Flight 212 leaves Lisbon at 9:40 and lands in Paris at 13:05. Flight 318 leaves Madrid at 11:15.",
     "Flight 212 leaves at {}.", "9:40", "Flight 318 leaves at {}.", "11:15"),
    ("number", "The company's Berlin office employs 300 engineers. Its smaller office in Warsaw employs 45 people in sales.",
     "The Berlin office employs {}.", "300 engineers", "The Warsaw office employs {}.", "45 people in sales"),
    ("work", "Lena Marsh wrote The Salt Road, while her sister Ida wrote Winter Harbour.",
     "Lena Marsh wrote {}.", "The Salt Road", "Ida wrote {}.", "Winter Harbour"),
    ("number", "The red team finished the race in 41 minutes; the blue team needed 53 minutes.",
     "The red team finished the race in {} minutes.", "41", "The blue team needed {} minutes.", "53"),
    ("date", "Dr. Patel treated the patient in March, and Dr. Novak performed the surgery in June.",
     "Dr. Patel treated the patient in {}.", "March", "Dr. Novak performed the surgery in {}.", "June"),
    ("place", "The older of the two ships, the Aurora, was built in Glasgow. The Meridian was built in Gdańsk twenty years later.",
     "The Aurora was built in {}.", "Glasgow", "The Meridian was built in {}.", "Gdańsk"),
    ("thing", "Under the agreement, Norway will supply the turbines and Denmark will lay the cables.",
     "Norway will supply {}.", "the turbines", "Denmark will lay {}.", "the cables"),
    ("date", "The city council approved the new library in 2019, but the swimming pool was not approved until 2022.",
     "The new library was approved in {}.", "2019", "The swimming pool was approved in {}.", "2022"),
]


def rows() -> list[dict]:
    out: list[dict] = []
    for k, (kind, premise, frame_a, a, frame_b, b) in enumerate(ITEMS, 1):
        for value in (a, b):
            if premise.count(value) != 1:
                raise SystemExit(f"item {k}: {value!r} occurs {premise.count(value)} times in its premise; each value must occur once")
        for slot, frame, own, other in (("A", frame_a, a, b), ("B", frame_b, b, a)):
            if frame.count("{}") != 1:
                raise SystemExit(f"item {k}: frame {frame!r} needs exactly one {{}}")
            for rule, value, label in (("binding_keep", own, 1), ("binding_swap", other, 0)):
                out.append({"id": f"binding-{len(out) + 1:04d}", "dataset": "binding", "task": "contrast", "source": premise,
                            "context": None, "claim": frame.format(value), "label": label,
                            "meta": {"rule": rule, "kind": kind, "item": k, "slot": slot, "check": "hand"}})
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="fail if the committed suite differs from what this script writes")
    args = ap.parse_args(argv)
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows())
    if args.check:
        if not OUT.exists() or OUT.read_text(encoding="utf-8") != text:
            sys.stderr.write(f"{OUT} is stale: run python benchmarks/build_binding_suite.py\n")
            return 1
        return 0
    OUT.write_text(text, encoding="utf-8")
    print(json.dumps({"rows": text.count("\n"), "items": len(ITEMS), "out": str(OUT)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
