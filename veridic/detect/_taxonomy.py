"""The hallucination taxonomy of FAVA (paper 002, §3.1) in one place.

Six types in two families: statements that *contradict* the evidence
(``entity``, ``relation``, ``contradictory``) and statements the evidence
cannot *verify* (``invented``, ``subjective``, ``unverifiable``). The
definitions are those of the paper's detection prompt (its Table 13), so a
span typed by veridic means what a FAVA annotator meant.

Other datasets label errors in their own words; :data:`LABEL_MAPS` maps each
of them onto this taxonomy explicitly (``None`` = not a hallucination, or out
of the taxonomy's scope, e.g. grammar errors), and :func:`map_label` looks a
label up with a clear error for unknown names.

>>> TAXONOMY["entity"].edit
'replace'
>>> map_label(dataset="frank", label="CircE")
'entity'
>>> map_label(dataset="fava", label="sentence")
'contradictory'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from veridic.errors import RegistryError, did_you_mean

__all__ = [
    "ErrorType",
    "ERROR_TYPES",
    "ErrorTypeInfo",
    "TAXONOMY",
    "LABEL_MAPS",
    "map_label",
    "PHRASE_TYPES",
    "SENTENCE_TYPES",
]

ErrorType = Literal["entity", "relation", "contradictory", "invented", "subjective", "unverifiable"]
ERROR_TYPES: tuple[str, ...] = ("entity", "relation", "contradictory", "invented", "subjective", "unverifiable")


@dataclass(frozen=True, slots=True)
class ErrorTypeInfo:
    """One type of the taxonomy.

    ``family`` is the paper's top-level split (``contradiction`` = type 1,
    ``unverifiable`` = types 2–4); ``edit`` is how FAVA fixes it (``replace``
    a 1–3 word phrase from the evidence, or ``delete`` the span);
    ``definition`` is quoted from the paper's Table 13 prompt; ``example`` is
    the paper's Table 1 example, with the erroneous text in brackets.
    """

    name: str
    tag: str
    family: Literal["contradiction", "unverifiable"]
    granularity: Literal["phrase", "sentence"]
    edit: Literal["replace", "delete"]
    definition: str
    example: str


TAXONOMY: dict[str, ErrorTypeInfo] = {
    "entity": ErrorTypeInfo(
        "entity", "entity", "contradiction", "phrase", "replace",
        "a small part of a sentence, often an entity (e.g., location name), is incorrect (usually 1-3 words). "
        "Entity errors often involve noun phrases or nouns.",
        "Lionel Andrés Messi was born on June [12 → 24], 1987.",
    ),
    "relation": ErrorTypeInfo(
        "relation", "relation", "contradiction", "phrase", "replace",
        "a sentence is partially incorrect as a small part (usually 1 - 3 words). Relational errors often involve "
        "verbs and are often the opposite of what it should be.",
        "Lionel Messi [acquired → was acquired by] Paris Saint-Germain.",
    ),
    "contradictory": ErrorTypeInfo(
        "contradictory", "contradictory", "contradiction", "sentence", "delete",
        "a sentence where the entire sentence is contradicted by the given reference, meaning the sentence can be "
        "proven false due to a contradiction with information in the passage.",
        "[Messi has yet to be captain for the Argentina football team.]",
    ),
    "invented": ErrorTypeInfo(
        "invented", "invented", "unverifiable", "sentence", "delete",
        "these errors refer to entities that are not known or do not exist. This does not include fictional "
        "characters in books or movies. invented errors include phrases or sentences which have unknown entities "
        "or misleading information.",
        "[Messi is known for his famous airplane kick technique.]",
    ),
    "subjective": ErrorTypeInfo(
        "subjective", "subjective", "unverifiable", "sentence", "delete",
        "an entire sentence or phrase that is subjective and cannot be verified, so it should not be included.",
        "[Lionel Messi is the best soccer player in the world.]",
    ),
    "unverifiable": ErrorTypeInfo(
        "unverifiable", "unverifiable", "unverifiable", "sentence", "delete",
        "a sentence where the whole sentence or phrase is unlikely to be factually grounded although it can be "
        "true, and the sentence cannot be confirmed nor denied using the reference given or internet search, it is "
        "often something personal or private and hence cannot be confirmed.",
        "[In his free time, Messi enjoys singing songs for his family.]",
    ),
}

PHRASE_TYPES = frozenset(t for t, info in TAXONOMY.items() if info.granularity == "phrase")
SENTENCE_TYPES = frozenset(t for t, info in TAXONOMY.items() if info.granularity == "sentence")

# Each dataset's own labels -> the taxonomy. None: not a hallucination, or an
# error the taxonomy leaves out of scope (grammar; the paper's footnote 3 also
# excludes common-sense and reasoning errors). Choices that are judgement
# calls carry a comment.
LABEL_MAPS: dict[str, dict[str, str | None]] = {
    # FAVA's own tags; the paper's tables call the contradictory type "Sentence".
    "fava": {**{t: t for t in ERROR_TYPES}, "sentence": "contradictory"},
    # FRANK (Pagnoni et al. 2021) per-sentence categories.
    "frank": {
        "RelE": "relation",  # semantic frame: wrong predicate
        "EntE": "entity",  # semantic frame: wrong core argument
        "CircE": "entity",  # wrong time/location/manner: FAVA treats dates and places as entities
        "CorefE": "entity",  # a pronoun/reference resolves to the wrong entity; fixed by naming the right one
        "LinkE": "relation",  # wrong discourse link (cause/temporal order) between statements
        "OutE": "unverifiable",  # content not in the article: cannot be verified against the source
        "GramE": None,  # grammar: out of FAVA's scope
        "OtherE": None,
        "Other": None,
        "NoE": None,
    },
    # FaithBench (Bao et al. 2024) summary-level categories.
    "faithbench": {
        "Unwanted.Intrinsic": "contradictory",  # contradicts the source; finer typing needs the span
        "Unwanted.Extrinsic": "unverifiable",  # adds facts the source cannot verify
        "Unwanted": "contradictory",
        "Questionable": None,  # annotators could not agree it is a hallucination
        "Benign": None,  # unsupported by the source but true world knowledge
        "Consistent": None,
    },
    # WiCE (Kamoi et al. 2023): it does not separate refuted from unverifiable
    # content, so non-supported spans map to the weaker claim.
    "wice": {
        "supported": None,
        "partially_supported": "unverifiable",
        "not_supported": "unverifiable",
        "non_supported_token": "unverifiable",
    },
    # veridic.synth perturbation kinds (see veridic.detect._benchmark for why).
    "veridic-synth": {
        "extract": None,
        "compress": None,
        "doc_entailment": None,
        "drop_modifier": None,
        "entity_swap": "entity",
        "number_change": "entity",
        "negation": "relation",
        "antonym": "relation",
        "swap_args": "relation",
        "neutral_other_doc": "invented",  # a sentence about another document's entities
        "neutral_same_doc": "unverifiable",  # same entities, a fact the evidence window lacks
        "add_modifier": "unverifiable",  # an added description of a known entity
    },
}


def map_label(*, dataset: str, label: str) -> str | None:
    """Map ``label`` of ``dataset`` onto the taxonomy (``None`` = no hallucination / out of scope)."""
    if dataset not in LABEL_MAPS:
        raise RegistryError(f"No label map for dataset {dataset!r}; known: {sorted(LABEL_MAPS)}." + did_you_mean(dataset, LABEL_MAPS))
    table = LABEL_MAPS[dataset]
    if label not in table:
        raise RegistryError(f"Unknown {dataset} label {label!r}; expected one of {sorted(table)}." + did_you_mean(label, table))
    return table[label]
