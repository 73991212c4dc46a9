"""What every veridic fine-tune shares: a wall-clock budget, seeding and resumable checkpoints.

The probes' fine-tunes (paper 000's multiple-choice encoder, paper 001's
loss-truncated LM) run on laptop CPUs next to other work, so each run is
bounded by ``max_minutes`` as well as by steps. :class:`TimeBudgetCallback`
is a ``transformers.TrainerCallback`` that stops training cleanly (the
Trainer then saves its checkpoint) once the budget is spent, and raises a
:class:`~veridic.errors.ConfigError` when the budget cannot hold even one
optimisation step: a run that trains nothing must not look like a result.
The long runs trained in stages (the NLI models, the span tagger) use
:class:`StageClockCallback` instead: a deadline fixed when the stage began,
data preparation included, and a checkpoint every few minutes of wall time.

>>> check_budget(max_minutes=0.5, max_steps=10)
>>> check_budget(max_minutes=0, max_steps=10)
Traceback (most recent call last):
...
veridic.errors.ConfigError: max_minutes must be > 0 (a wall-clock budget for training); got 0.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from veridic.errors import ConfigError, MissingDependencyError

__all__ = ["StageClockCallback", "TimeBudgetCallback", "TrainerCallbackBase", "check_budget", "last_checkpoint", "require_transformers", "training_arguments"]


def check_budget(*, max_minutes: float, max_steps: int | None = None) -> None:
    """Reject budgets that cannot train anything before any model is loaded."""
    if not max_minutes or max_minutes <= 0:
        raise ConfigError(f"max_minutes must be > 0 (a wall-clock budget for training); got {max_minutes}.")
    if max_steps is not None and max_steps < 1:
        raise ConfigError(f"max_steps must be >= 1; got {max_steps}.")


def check_batches(*, max_length: int, min_length: int, batch_size: int, learning_rate: float) -> None:
    """Reject a sequence length under ``min_length`` tokens, an empty batch or a learning rate that is not positive."""
    if max_length < min_length:
        raise ConfigError(f"max_length must be >= {min_length} tokens; got {max_length}.")
    if batch_size < 1:
        raise ConfigError(f"batch_size must be >= 1; got {batch_size}.")
    if not learning_rate > 0:
        raise ConfigError(f"learning_rate must be > 0; got {learning_rate}.")


def require_transformers(purpose: str) -> tuple[Any, Any]:
    """``(torch, transformers)`` or a :class:`MissingDependencyError` naming the extra."""
    try:
        import torch
        import transformers
    except ImportError as exc:
        raise MissingDependencyError(exc.name or "transformers", extra="torch", purpose=purpose) from None
    return torch, transformers


def last_checkpoint(folder: str | Path) -> str | None:
    """The newest ``checkpoint-<step>`` folder under ``folder`` (to resume from), or None."""
    p = Path(folder)
    if not p.is_dir():
        return None
    cks = [c for c in p.glob("checkpoint-*") if c.is_dir() and c.name.split("-")[-1].isdigit()]
    return str(max(cks, key=lambda c: int(c.name.split("-")[-1]))) if cks else None


def training_arguments(*, out_dir: str | Path, batch_size: int, learning_rate: float, weight_decay: float, max_steps: int,
                       warmup_steps: int, save_steps: int, save_total_limit: int, seed: int, bf16: bool | None,
                       progress: bool, logging_every: int, **extra: Any) -> Any:
    """The ``transformers.TrainingArguments`` every veridic fine-tune shares.

    Fixed here so the probes cannot drift apart: a linear schedule, step checkpoints under
    ``out_dir/checkpoints``, the same seed for the model and the data order, CPU unless CUDA
    is present, bf16 where the CPU has it natively (``bf16=None``), no reporting integrations,
    no worker processes (deterministic on 2-core machines), and our own collated columns kept.
    ``logging_every`` is the most steps between log lines (fewer on short runs); ``extra``
    carries the run's own options (evaluation, ``save_only_model``).
    """
    torch, _ = require_transformers("Fine-tuning")
    from transformers import TrainingArguments

    from veridic.device import cpu_supports_bf16

    return TrainingArguments(
        output_dir=str(Path(out_dir) / "checkpoints"),
        per_device_train_batch_size=batch_size,
        learning_rate=learning_rate,
        weight_decay=weight_decay,
        max_steps=max_steps,
        warmup_steps=warmup_steps,
        lr_scheduler_type="linear",
        logging_steps=max(1, min(logging_every, max_steps // 10)),
        save_strategy="steps",
        save_steps=save_steps,
        save_total_limit=save_total_limit,
        seed=seed,
        data_seed=seed,
        use_cpu=not torch.cuda.is_available(),
        bf16=cpu_supports_bf16() if bf16 is None else bf16,
        report_to=[],
        dataloader_num_workers=0,
        remove_unused_columns=False,
        disable_tqdm=not progress,
        **extra,
    )


try:  # only training code imports this module; the rest of veridic.lm stays torch-free
    from transformers import TrainerCallback as TrainerCallbackBase
except ImportError:  # pragma: no cover - exercised only without the extra
    TrainerCallbackBase = object  # type: ignore[assignment,misc]


class TimeBudgetCallback(TrainerCallbackBase):  # type: ignore[misc,valid-type]
    """Stop a ``transformers.Trainer`` when ``max_minutes`` of wall time are spent.

    The clock starts at the first step (loading and tokenising are not
    training). If the first step alone overran the budget, training stops
    with a :class:`ConfigError` that says how long one step took. Otherwise
    training stops (with a checkpoint save) at the first step that ends
    past the budget, so a run overshoots by at most one step.
    ``stopped_by_budget`` and ``seconds`` say what happened.
    """

    def __init__(self, *, max_minutes: float):
        if TrainerCallbackBase is object:
            raise MissingDependencyError("transformers", extra="torch", purpose="Fine-tuning")
        check_budget(max_minutes=max_minutes)
        self.budget_s = float(max_minutes) * 60.0
        self.t0: float | None = None
        self.first_step_s: float | None = None
        self.seconds = 0.0
        self.stopped_by_budget = False

    def on_step_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
        if self.t0 is None:
            self.t0 = time.perf_counter()
        return control

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
        if self.t0 is None:  # resumed runs may skip on_step_begin bookkeeping
            self.t0 = time.perf_counter()
        self.seconds = time.perf_counter() - self.t0
        if self.first_step_s is None:
            self.first_step_s = self.seconds
            if self.first_step_s > self.budget_s:
                raise ConfigError(
                    f"The training budget ({self.budget_s / 60:g} min) is smaller than one optimisation step, which took "
                    f"{self.first_step_s:.1f} s here. Raise --max-minutes, or lower --batch-size / --max-length."
                )
        if self.seconds >= self.budget_s:
            self.stopped_by_budget = True
            control.should_training_stop = True
            control.should_save = True
        return control


class StageClockCallback(TrainerCallbackBase):  # type: ignore[misc,valid-type]
    """A checkpoint every ``save_minutes`` of wall time, and a clean stop with one at ``deadline``.

    Checkpoints go by the clock, not by steps, because a step's time varies with the load on shared cores.
    ``deadline`` is a ``time.monotonic()`` value (``None``: no deadline), so the time spent before training
    counts against the stage; the stop comes at the end of the first step past it. No periodic checkpoint
    is asked for at the last step (the run saves its end itself). ``stopped_by_deadline`` says what happened.
    """

    def __init__(self, *, save_minutes: float | None, deadline: float | None):
        if TrainerCallbackBase is object:
            raise MissingDependencyError("transformers", extra="torch", purpose="Fine-tuning")
        self.save_s = None if save_minutes is None else float(save_minutes) * 60.0
        self.deadline = deadline
        self.last_save = time.monotonic()
        self.stopped_by_deadline = False

    def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
        self.last_save = time.monotonic()
        return control

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
        now = time.monotonic()
        if self.deadline is not None and now >= self.deadline:
            self.stopped_by_deadline = True
            control.should_save = control.should_training_stop = True
        elif self.save_s is not None and now - self.last_save >= self.save_s and state.global_step < state.max_steps:
            control.should_save = True
        return control

    def on_save(self, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
        # From the end of the save: the time a checkpoint takes is not training time between checkpoints.
        self.last_save = time.monotonic()
        return control
