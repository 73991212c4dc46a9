"""Loss truncation (basic and grounded) as a training utility for causal LMs."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from veridic.ablation._loss_truncation import GroundedLossTruncator, LossTruncator, RunningLossHistogram, sequence_losses, truncated_mean
from veridic.errors import ConfigError, InputError


def test_histogram_window_and_quantile():
    h = RunningLossHistogram(window=5)
    h.update(range(10))
    assert len(h) == 5 and h.quantile(0.0) == 5.0 and h.quantile(1.0) == 9.0
    with pytest.raises(InputError, match="finite"):
        h.update([float("nan")])


def test_basic_truncation_drops_the_top_fraction():
    rng = np.random.default_rng(0)
    lt = LossTruncator(keep=0.8, window=10_000, min_history=100)
    kept = []
    for _ in range(50):
        losses = rng.exponential(size=32)
        kept.append(lt.keep_mask(losses).mean())
    assert lt.stats.seen == 50 * 32
    assert 0.75 < np.mean(kept[5:]) < 0.85  # after warm-up, ~keep of each batch survives
    assert lt.stats.kept_fraction > 0.8 - 0.05


def test_warm_up_keeps_everything_and_mask_type_follows_input():
    lt = LossTruncator(keep=0.5, min_history=10)
    m = lt.keep_mask(torch.tensor([100.0, 0.1, 5.0]))
    assert m.dtype == torch.bool and m.all()
    assert isinstance(lt.keep_mask(np.ones(3)), np.ndarray)
    with pytest.raises(ConfigError, match=r"\(0, 1\]"):
        LossTruncator(keep=0.0)


def test_grounded_truncation_drops_examples_grounding_does_not_help():
    lt = GroundedLossTruncator(keep=1.0, keep_grounded=0.5, min_history=4)
    lt.keep_mask(torch.tensor([1.0, 1.0, 1.0, 1.0]), ungrounded_losses=torch.tensor([1.0, 2.0, 3.0, 4.0]))  # gains 0..3
    m = lt.keep_mask(torch.tensor([2.0, 2.0]), ungrounded_losses=torch.tensor([2.1, 6.0]))  # gains 0.1, 4.0
    assert m.tolist() == [False, True]
    assert lt.stats.dropped_grounding == 1 and lt.stats.dropped_loss == 0
    with pytest.raises(InputError, match="ungrounded_losses"):
        lt.keep_mask(torch.tensor([1.0]))


def test_sequence_losses_match_transformers_and_dropped_examples_get_no_gradient():
    from test_lm_backend import make_tiny_llama

    torch.set_num_threads(1)
    model = make_tiny_llama().train()
    ids = torch.randint(1, 257, (4, 12))
    labels = ids.clone()
    labels[:, :6] = -100  # prompt tokens do not count
    mask = torch.ones_like(ids)
    per = sequence_losses(model=model, input_ids=ids, attention_mask=mask, labels=labels)
    for i in range(4):
        ref = model(input_ids=ids[i : i + 1], attention_mask=mask[i : i + 1], labels=labels[i : i + 1]).loss
        assert per[i].item() == pytest.approx(ref.item(), abs=1e-5)
    summed = sequence_losses(model=model, input_ids=ids, attention_mask=mask, labels=labels, reduction="sum")
    assert torch.allclose(summed, per * 6, atol=1e-4)
    # Keep only example 0: the gradient equals that of example 0's loss alone.
    keep = torch.tensor([True, False, False, False])
    model.zero_grad()
    truncated_mean(per, keep).backward()
    g_trunc = model.lm_head.weight.grad.clone()
    model.zero_grad()
    sequence_losses(model=model, input_ids=ids[:1], attention_mask=mask[:1], labels=labels[:1])[0].backward()
    assert torch.allclose(g_trunc, model.lm_head.weight.grad, atol=1e-6)
    assert truncated_mean(per, torch.zeros(4, dtype=torch.bool)).item() == 0.0
