"""References (§2.1) and multiple-choice items (§2.2 claims, §2.3 descriptions) of paper 000.

**References for generated descriptions** (:func:`build_references`):

* ``accurate``: the gold description;
* ``incongruous``: what else is true of the entity: its facts not marked
  ``used`` plus its knowledge-base descriptions (the paper uses the whole
  Wikipedia article, which PoMo does not ship);
* ``nonfactual``: descriptions of the other entities of the article when
  the source has them, else (PoMo, §6) the article context (previous,
  current and next sentence) with every word that is true of the entity
  removed.

The gold description's words are removed from both distractor references.

**Claim identification** (:func:`build_claim_items`), four options:

* ``accurate``: the ``used`` claim with the highest unigram overlap with the gold;
* ``incongruous``: an unused claim of the entity;
* ``nonfactual``: a claim of another entity *of the same article*
  (``nonfactual="same-article"``, the default and the paper's design): the
  used claim of another described entity of the article, or a claim of
  another person of the split's Wikidata dump whose name occurs in the
  article text (``example.meta["mentioned_entities"]``, filled by
  :func:`~veridic.congruity._data.load_pomo`). PoMo rarely has one, and
  items without one are **dropped** and counted (``no nonfactual``).
  ``nonfactual="neighbour"`` is the earlier proxy, kept for comparison and
  for training data: the used claim of the entity in the most similar
  context of the corpus (TF-IDF cosine over previous + current + next
  sentence); such items carry ``source["nonfactual"] == "neighbour"``;
* ``both``: the used claim of an entity from a random other article.

**Description identification** (:func:`build_description_items`):

* ``accurate``: the gold; ``incongruous``: a description of the same entity
  from another article; ``nonfactual``: a description of another entity of
  the article (its post-modifiers elsewhere in the split or its Wikidata
  descriptions; with ``nonfactual="neighbour"``: of the entity in the most
  similar context);
  ``both``: a description of an entity from a random other article.

**Overlap constraints** (both tasks): every distractor shares no content
word (stop words excluded, :func:`veridic.ling.lexical.content_words`) with the
gold; ``nonfactual`` and ``both`` also share none with anything known about
the target entity (all its facts, KB descriptions and gold descriptions in
the corpus). Candidates that break a constraint are skipped; an example
with no valid candidate for some class yields no item (the count is in
:class:`BuildStats`).

>>> from veridic.congruity._data import CongruityExample, Fact
>>> mk = lambda i, a, ent, gold, facts: CongruityExample(id=i, article_id=a, entity=ent, context=ent + " , [DESC] , spoke.",
...     gold=gold, facts=tuple(Fact(text=t, used=u) for t, u in facts))
>>> exs = [mk("1", "a", "Ann Lee", "the senator", [("senator", True), ("born in Ohio", False)]),
...        mk("2", "b", "Bo Ray", "a drummer", [("drummer", True), ("born in Peru", False)]),
...        mk("3", "c", "Cy Dunn", "the chef", [("chef", True), ("graduate of Yale", False)])]
>>> items, stats = build_claim_items(examples=exs, seed=0, nonfactual="neighbour")  # three one-entity articles
>>> sorted(items[0].options)
['accurate', 'both', 'incongruous', 'nonfactual']
>>> items[0].options["accurate"], items[0].options["incongruous"]
('senator', 'born in Ohio')
"""

from __future__ import annotations

import math
import random
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from veridic.congruity._data import CongruityExample, facts_by_entity
from veridic.errors import ConfigError, InputError
from veridic.ling.lexical import content_words, tokens
from veridic.types import _Record

__all__ = [
    "CLASSES",
    "NONFACTUAL_SOURCES",
    "REFERENCE_CLASSES",
    "BuildStats",
    "MCItem",
    "References",
    "build_claim_items",
    "build_description_items",
    "build_references",
    "context_neighbours",
    "overlaps",
]

CLASSES = ("accurate", "incongruous", "nonfactual", "both")
REFERENCE_CLASSES = ("accurate", "incongruous", "nonfactual")
Task = Literal["claim", "description"]
NonfactualSource = Literal["same-article", "neighbour"]
NONFACTUAL_SOURCES = ("same-article", "neighbour")


def overlaps(a: str, b: str | set[str]) -> bool:
    """Whether two texts share a content word (stop words excluded).

    >>> overlaps("the Pulitzer Prize-winning writer", "writer of books"), overlaps("the writer", "the actor")
    (True, False)
    """
    wa = set(content_words(a))
    wb = b if isinstance(b, set) else set(content_words(b))
    return bool(wa & wb)


@dataclass(frozen=True)
class MCItem(_Record):
    """A multiple-choice item: the context with a slot, and one option per class.

    ``source`` records where each distractor came from (``same-article``,
    ``neighbour``, ``random-article``, ``other-article``, ``unused-claim``).
    """

    id: str
    task: Task
    entity: str
    left: str
    right: str
    previous: str
    options: dict[str, str]
    familiar: bool | None = None
    source: dict[str, str] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)
    next: str = ""


    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> MCItem:
        try:
            return cls(id=str(d["id"]), task=d["task"], entity=d["entity"], left=d["left"], right=d["right"], previous=d.get("previous", ""),
                       options=dict(d["options"]), familiar=d.get("familiar"), source=dict(d.get("source") or {}), meta=dict(d.get("meta") or {}),
                       next=str(d.get("next") or ""))
        except KeyError as exc:
            raise InputError(f"An item row needs id, task, entity, left, right and options; {exc.args[0]!r} is missing.") from None


@dataclass
class BuildStats:
    """How many examples became items and why the others did not."""

    n_examples: int = 0
    n_items: int = 0
    skipped: Counter = field(default_factory=Counter)
    sources: Counter = field(default_factory=Counter)

    def to_dict(self) -> dict[str, Any]:
        return {"n_examples": self.n_examples, "n_items": self.n_items, "skipped": dict(self.skipped), "sources": dict(self.sources)}


# ---------------------------------------------------------------------------
# context similarity (the nonfactual fallback)


def _context_text(e: CongruityExample) -> str:
    # The slot and the entity's own name are left out: similarity should
    # come from what the article is about, not from who it names.
    ent = set(tokens(e.entity))
    words = [w for w in content_words(" ".join((e.previous, e.context.replace("[DESC]", " "), e.next))) if w not in ent]
    return " ".join(words)


def context_neighbours(examples: Sequence[CongruityExample], *, k: int = 20) -> list[list[int]]:
    """For every example, the indices of the ``k`` most similar contexts (TF-IDF cosine), best first, itself excluded."""
    from scipy import sparse

    docs = [_context_text(e).split() for e in examples]
    vocab: dict[str, int] = {}
    rows, cols, vals = [], [], []
    for i, d in enumerate(docs):
        for w, c in Counter(d).items():
            rows.append(i)
            cols.append(vocab.setdefault(w, len(vocab)))
            vals.append(1.0 + math.log(c))
    n = len(docs)
    m = sparse.csr_matrix((vals, (rows, cols)), shape=(n, max(1, len(vocab))))
    df = np.bincount(m.indices, minlength=m.shape[1])
    m = m @ sparse.diags(np.log((1 + n) / (1 + df)) + 1.0)
    norms = np.sqrt(np.asarray(m.multiply(m).sum(axis=1)).ravel())
    m = sparse.diags(1.0 / np.maximum(norms, 1e-12)) @ m
    out: list[list[int]] = []
    for a in range(0, n, 512):  # blocks keep the dense similarity rows small
        sims = (m[a : a + 512] @ m.T).toarray()
        for r, row in enumerate(sims):
            row[a + r] = -1.0
            top = np.argpartition(-row, min(k, n - 1) - 1)[:k] if n > 1 else np.array([], dtype=int)
            out.append([int(j) for j in top[np.argsort(-row[top], kind="stable")]])
    return out


# ---------------------------------------------------------------------------
# references (§2.1)


@dataclass(frozen=True)
class References:
    """Reference texts of one example for precision scoring of a generated description."""

    id: str
    accurate: str
    incongruous: str
    nonfactual: str
    familiar: bool | None = None

    def get(self, cls: str) -> str:
        return getattr(self, cls)


def _strip_words(text: str, banned: set[str]) -> str:
    return " ".join(w for w in tokens(text) if w not in banned)


def build_references(*, examples: Sequence[CongruityExample]) -> list[References]:
    """Accurate / incongruous / nonfactual references of every example (see the module docstring)."""
    known = facts_by_entity(examples)
    out = []
    for e in examples:
        gold_words = set(content_words(e.gold))
        inc = " ; ".join([f.text for f in e.facts if not f.used] + list(e.kb_descriptions))
        if e.other_descriptions:
            nf = " ; ".join(d for d in e.other_descriptions if not overlaps(d, known[e.entity_key]))
        else:
            nf = _strip_words(" ".join((e.previous, e.context.replace("[DESC]", " "), e.next)), known[e.entity_key] | set(tokens(e.entity)))
        out.append(References(id=e.id, accurate=e.gold, incongruous=_strip_words(inc, gold_words), nonfactual=_strip_words(nf, gold_words), familiar=e.familiar))
    return out


# ---------------------------------------------------------------------------
# multiple-choice items (§2.2, §2.3)


def _best_used(e: CongruityExample) -> str | None:
    used = [f.text for f in e.facts if f.used]
    if not used:
        return None
    gold = Counter(content_words(e.gold))
    return max(used, key=lambda t: (sum((Counter(content_words(t)) & gold).values()), -len(t)))


def _pick(cands: Sequence[tuple[str, str]], ok, rng: random.Random, *, ordered: bool) -> tuple[str, str] | None:
    seen: set[str] = set()
    pool = list(cands) if ordered else rng.sample(list(cands), len(cands))
    for text, src in pool:
        if text and text.lower() not in seen and ok(text):
            return text, src
        seen.add(text.lower())
    return None


def _other_entity_options(examples: Sequence[CongruityExample], *, task: Task) -> dict[str, list[str]]:
    """Per Wikidata id: what can stand for that person in a slot (used claims first, then the rest; or descriptions)."""
    out: dict[str, list[str]] = defaultdict(list)
    for e in examples:
        if not e.entity_id:
            continue
        opts = out[e.entity_id]
        if task == "claim":
            new = [f.text for f in e.facts if f.used] + [f.text for f in e.facts if not f.used]
        else:
            new = [e.gold, *e.kb_descriptions]
        opts.extend(t for t in new if t not in opts)
    return out


def _build(
    examples: Sequence[CongruityExample], *, task: Task, seed: int, neighbours: int, max_random_tries: int, nonfactual: NonfactualSource = "same-article"
) -> tuple[list[MCItem], BuildStats]:
    if not examples:
        raise InputError("No examples to build items from.")
    if neighbours < 1:
        raise ConfigError(f"neighbours must be >= 1; got {neighbours}.")
    if nonfactual not in NONFACTUAL_SOURCES:
        raise ConfigError(f"nonfactual must be one of {NONFACTUAL_SOURCES}; got {nonfactual!r}.")
    by_qid = _other_entity_options(examples, task=task)
    rng = random.Random(seed)
    known = facts_by_entity(examples)
    nbrs = context_neighbours(examples, k=neighbours)
    answer: list[str | None] = [(_best_used(e) if task == "claim" else e.gold) for e in examples]
    # descriptions of each entity, per article (for the §2.3 incongruous option)
    desc_by_entity: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for e in examples:
        desc_by_entity[e.entity_key].append((e.article_id, e.gold))
    by_article: dict[str, list[int]] = defaultdict(list)
    for i, e in enumerate(examples):
        by_article[e.article_id].append(i)
    mentions = Counter(e.entity_key for e in examples)  # recurrence, for the familiarity proxy
    stats = BuildStats(n_examples=len(examples))
    items: list[MCItem] = []
    for i, e in enumerate(examples):
        acc = answer[i]
        if acc is None:
            stats.skipped["no used claim"] += 1
            continue
        gold_words = set(content_words(e.gold)) | set(content_words(acc))
        target = known[e.entity_key] | set(tokens(e.entity))

        def not_gold(t: str, gw=gold_words) -> bool:
            return not (set(content_words(t)) & gw)

        def not_target(t: str, gw=gold_words, tw=target) -> bool:
            w = set(content_words(t))
            return bool(w) and not (w & gw) and not (w & tw)

        # incongruous
        if task == "claim":
            inc = _pick([(f.text, "unused-claim") for f in e.facts if not f.used], not_gold, rng, ordered=False)
        else:
            inc = _pick([(d, "other-article") for a, d in desc_by_entity[e.entity_key] if a != e.article_id], not_gold, rng, ordered=False)
        # nonfactual: another entity of the same article (described in it, or named in its text)
        same = [j for j in by_article[e.article_id] if j != i and examples[j].entity_key != e.entity_key]
        cands = [(answer[j], "same-article") for j in same if answer[j]]
        if task == "description":
            cands += [(d, "same-article") for d in e.other_descriptions]
        for qid in e.meta.get("mentioned_entities") or ():
            if qid != e.entity_id:
                cands += [(t, "same-article-mention") for t in by_qid.get(qid, ())]
        if nonfactual == "neighbour":
            cands += [(answer[j], "neighbour") for j in nbrs[i] if answer[j] and examples[j].entity_key != e.entity_key and examples[j].article_id != e.article_id]
        nf = _pick(cands, not_target, rng, ordered=True)
        # both: a random other article
        both = None
        # Keep "both" out of the context's close neighbours (they are the nonfactual pool);
        # a tiny corpus has no room for that, so the exclusion shrinks with it.
        avoid = set(nbrs[i][: max(0, min(neighbours, (len(examples) - 2) // 2))])
        for _ in range(max_random_tries):
            j = rng.randrange(len(examples))
            if j == i or examples[j].article_id == e.article_id or examples[j].entity_key == e.entity_key or j in avoid or not answer[j]:
                continue
            if nf is not None and answer[j].lower() == nf[0].lower():
                continue
            if not_target(answer[j]):
                both = (answer[j], "random-article")
                break
        missing = [c for c, v in (("incongruous", inc), ("nonfactual", nf), ("both", both)) if v is None]
        if missing:
            stats.skipped["no " + "/".join(missing)] += 1
            continue
        opts = {"accurate": acc, "incongruous": inc[0], "nonfactual": nf[0], "both": both[0]}
        if len({o.lower() for o in opts.values()}) < 4:
            stats.skipped["duplicate options"] += 1
            continue
        src = {"incongruous": inc[1], "nonfactual": nf[1], "both": both[1]}
        stats.sources.update(f"{k}:{v}" for k, v in src.items())
        items.append(
            MCItem(id=e.id, task=task, entity=e.entity, left=e.left, right=e.right, previous=e.previous, next=e.next, options=opts, familiar=e.familiar,
                   source=src, meta={"entity": e.entity, "entity_id": e.entity_id, "article_id": e.article_id, "gold": e.gold, "n_mentions": mentions[e.entity_key],
                         "n_claims": e.meta.get("n_claims", len(e.facts)), "summary": e.summary})
        )
    stats.n_items = len(items)
    return items, stats


def build_claim_items(
    *, examples: Sequence[CongruityExample], seed: int = 0, neighbours: int = 20, max_random_tries: int = 200, nonfactual: NonfactualSource = "same-article"
) -> tuple[list[MCItem], BuildStats]:
    """Claim-identification items (§2.2) with the overlap constraints of the module docstring."""
    return _build(examples, task="claim", seed=seed, neighbours=neighbours, max_random_tries=max_random_tries, nonfactual=nonfactual)


def build_description_items(
    *, examples: Sequence[CongruityExample], seed: int = 0, neighbours: int = 20, max_random_tries: int = 200, nonfactual: NonfactualSource = "same-article"
) -> tuple[list[MCItem], BuildStats]:
    """Description-identification items (§2.3) with the overlap constraints of the module docstring."""
    return _build(examples, task="description", seed=seed, neighbours=neighbours, max_random_tries=max_random_tries, nonfactual=nonfactual)
