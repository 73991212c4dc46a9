"""Held-out items for the congruity fine-tune: no id, article or (by default) entity is both trained on and evaluated."""

from __future__ import annotations

import pytest

from veridic.congruity._build import MCItem
from veridic.congruity._split import EVAL_GROUPS, article_key, entity_key, hold_out
from veridic.errors import ConfigError, InputError


def _it(i: str, entity: str, article: str | None, *, task: str = "claim", entity_id: str | None = "auto") -> MCItem:
    meta = {"entity_id": entity.upper() if entity_id == "auto" else entity_id}
    if article is not None:
        meta["article_id"] = article
    return MCItem(id=i, task=task, entity=entity, left="x ,", right=" .", previous="", options={"accurate": "a", "both": "b"}, meta=meta)


TRAIN = [
    _it("A:0", "ann", "A"), _it("A:0", "ann", "A", task="description"),  # the held item's own builds
    _it("A:1", "bob", "A"),  # same article, other person
    _it("B:0", "ann", "B"),  # same person, other article
    _it("C:0", "cy", "C"), _it("D:0", "dee", "D"),
]


@pytest.mark.parametrize(("group", "kept", "by"), [
    ("id", ["A:1", "B:0", "C:0", "D:0"], {"id": 2, "article": 0, "entity": 0}),
    ("article", ["B:0", "C:0", "D:0"], {"id": 2, "article": 1, "entity": 0}),
    ("entity", ["C:0", "D:0"], {"id": 2, "article": 1, "entity": 1}),
])
def test_each_group_removes_what_it_names(group, kept, by):
    split = hold_out(train=TRAIN, candidates=[_it("A:0", "ann", "A")], group=group)
    assert [x.id for x in split.train] == kept
    assert split.dropped_by == by and split.dropped == sum(by.values()) == len(TRAIN) - len(kept)
    assert [x.id for x in split.held] == ["A:0"]
    assert split.describe()["group"] == group and split.describe()["train"] == len(kept)


def test_no_held_entity_or_article_is_left_in_training():
    train = [_it(f"{a}:{k}", f"p{(3 * k + ord(a)) % 7}", a) for a in "ABCDEFGH" for k in range(4)]
    split = hold_out(train=train, candidates=train, n=5, seed=3, group="entity")
    assert len(split.held) == 5 and 0 < len(split.train) < len(train)
    assert not {entity_key(x) for x in split.held} & {entity_key(x) for x in split.train}
    assert not {article_key(x) for x in split.held} & {article_key(x) for x in split.train}
    # Without the grouping the same sample leaves both its people and its articles in training.
    loose = hold_out(train=train, candidates=train, n=5, seed=3, group="id")
    assert [x.id for x in loose.held] == [x.id for x in split.held]
    assert {entity_key(x) for x in loose.held} & {entity_key(x) for x in loose.train}


def test_sample_is_the_seeded_one_of_the_id_rule():
    import random

    cands = [_it(f"X:{k}", f"q{k}", f"X{k}") for k in range(20)]
    split = hold_out(train=cands, candidates=cands, n=6, seed=7)
    assert [x.id for x in split.held] == [x.id for x in random.Random(7).sample(cands, 6)]
    assert split.held_entities == 6 and split.held_articles == 6 and len(split.train) == 14


def test_keys_fall_back_to_name_and_id():
    a = _it("Z:0", "  Ann Lee ", None, entity_id=None)
    assert entity_key(a) == "ann lee" and article_key(a) is None
    # No article recorded: only the id and the entity name group it.
    split = hold_out(train=[a, _it("Z:1", "ann lee", None, entity_id=None), _it("Z:2", "bo", None, entity_id=None)], candidates=[a])
    assert [x.id for x in split.train] == ["Z:2"]


def test_bad_requests_are_clear_errors():
    with pytest.raises(ConfigError, match="one of"):
        hold_out(train=TRAIN, candidates=TRAIN, group="person")
    with pytest.raises(ConfigError, match="between 1 and the 6"):
        hold_out(train=TRAIN, candidates=TRAIN, n=7)
    with pytest.raises(InputError, match="empty"):
        hold_out(train=TRAIN, candidates=[])
    with pytest.raises(InputError, match="nothing to train on"):
        hold_out(train=TRAIN, candidates=TRAIN)
    assert EVAL_GROUPS == ("id", "article", "entity")
