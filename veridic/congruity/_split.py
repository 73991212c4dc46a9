"""Held-out items for the multiple-choice fine-tune's learning curve, without entity or article leakage.

PoMo's splits share no entity, so test accuracy measures how the model
does on people it has never seen. A held-out set that only removes the
held items' own ids (``group="id"``, the earlier rule) keeps
other items about the same person in training: on the 48 items held out by
the run ``mc-minilm-64-s5``, 42 had their entity in training and 37 had the
very (entity, accurate claim) pair trained as the accurate answer. Its
curve (73-77 %) then measured memorised entities as well as the task; on
test the same model reached 63.6 %.

``group="entity"`` (the default) drops from training every item that
shares an id, an article or an entity with a held-out item, so the curve
estimates accuracy on unseen people, as the test does; ``"article"`` drops
ids and articles only. Items carry their keys in ``meta`` (``entity_id``,
``article_id``, written by ``congruity build``); an item without
``entity_id`` is keyed by its entity's name, one without ``article_id`` by
its id alone.

>>> from veridic.congruity._build import MCItem
>>> def it(i, ent, art):
...     return MCItem(id=i, task="claim", entity=ent, left="x ,", right=" .", previous="", options={"accurate": "a", "both": "b"},
...                   meta={"entity_id": ent, "article_id": art})
>>> split = hold_out(train=[it("1", "Ann", "A"), it("2", "Ann", "B"), it("3", "Bob", "A"), it("4", "Cy", "C")],
...                  candidates=[it("1", "Ann", "A")], group="entity")
>>> [x.id for x in split.train], split.dropped
(['4'], 3)
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from veridic.congruity._build import MCItem
from veridic.errors import ConfigError, InputError

__all__ = ["EVAL_GROUPS", "HeldOutSplit", "article_key", "entity_key", "hold_out"]

EVAL_GROUPS = ("id", "article", "entity")


def entity_key(item: MCItem) -> str:
    """The item's entity: its Wikidata id when the build recorded one, else its name (case-folded)."""
    return str(item.meta.get("entity_id") or item.entity.strip().casefold())


def article_key(item: MCItem) -> str | None:
    """The item's article, or ``None`` when the build recorded none."""
    art = item.meta.get("article_id")
    return str(art) if art else None


@dataclass(frozen=True)
class HeldOutSplit:
    """Training items, held-out items, and what the split removed from training."""

    train: list[MCItem]
    held: list[MCItem]
    group: str
    dropped: int
    dropped_by: dict[str, int] = field(default_factory=dict)
    held_entities: int = 0
    held_articles: int = 0

    def describe(self) -> dict[str, Any]:
        return {"group": self.group, "held": len(self.held), "train": len(self.train), "dropped": self.dropped, "dropped_by": dict(self.dropped_by),
                "held_entities": self.held_entities, "held_articles": self.held_articles}


def hold_out(*, train: Sequence[MCItem], candidates: Sequence[MCItem], n: int | None = None, seed: int = 0, group: str = "entity") -> HeldOutSplit:
    """Hold out ``n`` seeded items of ``candidates`` (all when ``n`` is None) and remove what they would leak from ``train``.

    The sample is ``random.Random(seed).sample(candidates, n)``, the same
    items the earlier id-only rule held out for the same seed. A training
    item is dropped when it shares the held items' id (every ``group``),
    article (``article``, ``entity``) or entity (``entity``); ``dropped_by``
    counts each item under the first reason that applies, in that order.
    """
    if group not in EVAL_GROUPS:
        raise ConfigError(f"The held-out group must be one of {EVAL_GROUPS}; got {group!r}.")
    if not candidates:
        raise InputError("No items to hold out: the evaluation items file is empty.")
    if n is None:
        held = list(candidates)
    else:
        if not 0 < n <= len(candidates):
            raise ConfigError(f"The held-out sample must be between 1 and the {len(candidates)} evaluation items; got {n}.")
        held = random.Random(seed).sample(list(candidates), n)
    ids = {it.id for it in held}
    articles = {a for a in (article_key(it) for it in held) if a is not None} if group in ("article", "entity") else set()
    entities = {entity_key(it) for it in held} if group == "entity" else set()
    kept: list[MCItem] = []
    dropped_by = {"id": 0, "article": 0, "entity": 0}
    for it in train:
        if it.id in ids:
            dropped_by["id"] += 1
        elif article_key(it) in articles:
            dropped_by["article"] += 1
        elif entity_key(it) in entities:
            dropped_by["entity"] += 1
        else:
            kept.append(it)
    if not kept:
        raise InputError(f"Holding out {len(held)} items by {group!r} leaves nothing to train on; hold out fewer items or use a coarser --eval-group.")
    return HeldOutSplit(train=kept, held=held, group=group, dropped=len(train) - len(kept), dropped_by=dropped_by,
                        held_entities=len({entity_key(it) for it in held}), held_articles=len({article_key(it) or it.id for it in held}))
