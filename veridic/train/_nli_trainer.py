"""The NLI model's optimisation: a ``transformers.Trainer`` subclass, as sentence-transformers' ``CrossEncoderTrainer``.

:class:`veridic.train._loop.Trainer` prepares the data and the model and exports the result; this module trains.
The Trainer owns AdamW, the schedule, gradient clipping, bf16 autocast and the checkpoints (model, optimiser,
scheduler, RNG and data position). veridic adds the loss (3-way and 2-way labels, label smoothing, distillation),
the batch plan (length-bucketed batches in a fixed order, see :func:`veridic.train._loop.make_batches`), a record
of what each checkpoint belongs to, and the run's log.

>>> list(PlanBatches([[2, 0], [1]]))
[[2, 0], [1]]
>>> TokenizedPairs([[5, 6, 7], [5]], [[0, 0, 1], [0]], [0, 3], pad_id=1).collate([0, 1])["input_ids"].tolist()
[[5, 6, 7], [5, 1, 1]]
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import torch
from transformers import Trainer, TrainerCallback, TrainingArguments
from transformers.trainer_utils import PREFIX_CHECKPOINT_DIR

from veridic.io import atomic_write_text
from veridic.train._distill import distill_loss
from veridic.train._losses import nli_loss

__all__ = ["CHECKPOINT_META", "NLITrainer", "OneDeviceArguments", "PlanBatches", "RunLog", "TokenizedPairs", "training_arguments"]

# Written into each checkpoint folder after the Trainer's own files: its presence marks a complete checkpoint,
# and it names the config, data plan and backbone the checkpoint belongs to.
CHECKPOINT_META = "veridic_checkpoint.json"
_SCHEDULES = {"linear": "linear", "cosine": "cosine", "constant": "constant_with_warmup"}


class PlanBatches(torch.utils.data.Sampler):  # type: ignore[type-arg]
    """The batch plan as a batch sampler: a resumed Trainer skips the first ``global_step`` batches of the same list."""

    def __init__(self, plan: Sequence[list[int]]):
        self.plan = plan

    def __iter__(self) -> Iterator[list[int]]:
        return iter(self.plan)

    def __len__(self) -> int:
        return len(self.plan)


@dataclass
class TokenizedPairs:
    """Tokenised training pairs (a dataset of their indices) and the collation of a batch of them."""

    input_ids: list[list[int]]
    token_type_ids: list[list[int]]
    labels: list[int]  # 0/1/2, or 3 for a 2-way "not_entailment"
    pad_id: int = 0
    teacher: Any = None  # float32[N, 3] logits of a distillation teacher, or None

    def __len__(self) -> int:
        return len(self.input_ids)

    def __getitem__(self, i: int) -> int:
        return i

    def collate(self, idx: list[int]) -> dict[str, Any]:
        n = max(len(self.input_ids[i]) for i in idx)
        ids = torch.full((len(idx), n), self.pad_id, dtype=torch.long)
        tt = torch.zeros((len(idx), n), dtype=torch.long)
        mask = torch.zeros((len(idx), n), dtype=torch.long)
        for r, i in enumerate(idx):
            e = self.input_ids[i]
            ids[r, : len(e)] = torch.tensor(e)
            tt[r, : len(e)] = torch.tensor(self.token_type_ids[i])
            mask[r, : len(e)] = 1
        batch = {"input_ids": ids, "token_type_ids": tt, "attention_mask": mask,
                 "labels": torch.tensor([self.labels[i] for i in idx], dtype=torch.long)}
        if self.teacher is not None:
            batch["teacher"] = torch.from_numpy(self.teacher[idx])
        return batch


@dataclass
class OneDeviceArguments(TrainingArguments):
    """``TrainingArguments`` on the one device :func:`veridic.device.check_device` resolved.

    Left alone, the Trainer takes ``cuda:0`` whichever GPU was named, and splits each batch over every visible GPU.
    """

    one_device: str = field(default="cpu", metadata={"help": "cpu, cuda or cuda:N, as veridic.device resolved it"})

    @cached_property
    def _setup_devices(self) -> torch.device:
        device: torch.device = TrainingArguments._setup_devices.func(self)  # type: ignore[attr-defined]
        if self.one_device.startswith("cuda"):
            device = torch.device(self.one_device if ":" in self.one_device else "cuda:0")
            torch.cuda.set_device(device)
            self._n_gpu = 1
        return device


def training_arguments(output_dir: Path, *, optim: Any, runtime: Any, steps: int, seed: int, bf16: bool,
                       device: str) -> OneDeviceArguments:
    """The Trainer's arguments from a config's ``optim`` and ``runtime`` sections, for a plan of ``steps`` batches.

    Checkpoints are asked for by the clock (:class:`veridic.lm._training.StageClockCallback`), never by steps.
    """
    return OneDeviceArguments(
        output_dir=str(output_dir), one_device=device, use_cpu=device == "cpu", max_steps=steps,
        per_device_train_batch_size=optim.batch_size, learning_rate=optim.lr, weight_decay=optim.weight_decay,
        warmup_steps=int(round(optim.warmup_ratio * steps)), lr_scheduler_type=_SCHEDULES[optim.schedule],
        max_grad_norm=optim.max_grad_norm or 0.0, optim="adamw_torch_fused" if runtime.fused_adamw else "adamw_torch", seed=seed, bf16=bf16,
        logging_steps=runtime.log_every, save_strategy="no", save_total_limit=max(1, runtime.keep_checkpoints),
        report_to=[], disable_tqdm=not runtime.progress, dataloader_num_workers=0,
        dataloader_pin_memory=device.startswith("cuda"), remove_unused_columns=False,
    )


class NLITrainer(Trainer):
    """The Trainer with veridic's loss, its batch plan and a record in each checkpoint of what it belongs to.

    ``distill`` is ``(temperature, alpha)`` when the pairs carry a teacher's logits; ``checkpoint_meta(step)``
    gives the record written into the checkpoint of that step.
    """

    def __init__(self, *, pairs: TokenizedPairs, plan: Sequence[list[int]], checkpoint_meta: Callable[[int], dict[str, Any]],
                 label_smoothing: float = 0.0, distill: tuple[float, float] | None = None, **kwargs: Any):
        super().__init__(train_dataset=pairs, data_collator=pairs.collate, **kwargs)
        self.plan, self.checkpoint_meta = plan, checkpoint_meta
        self.label_smoothing, self.distill = label_smoothing, distill
        self.loss_is_scaled_for_ga = False  # a mean over the batch, as the Trainer's own loss

    def compute_loss(self, model: Any, inputs: dict[str, Any], return_outputs: bool = False,
                     num_items_in_batch: Any = None) -> Any:
        labels, teacher = inputs.pop("labels"), inputs.pop("teacher", None)
        outputs = model(**inputs)
        if teacher is None or self.distill is None:
            loss = nli_loss(outputs.logits, labels, label_smoothing=self.label_smoothing)
        else:
            temperature, alpha = self.distill
            loss = distill_loss(outputs.logits, labels, teacher, temperature=temperature, alpha=alpha,
                                label_smoothing=self.label_smoothing)
        return (loss, outputs) if return_outputs else loss

    def _load_optimizer_and_scheduler(self, checkpoint: str | None) -> None:
        # A checkpoint's param groups carry the kernel flags of the stage that wrote them; which kernel runs is a
        # runtime choice of this stage (runtime.fused_adamw), so it survives the load and the rest is restored.
        kernel = [{k: g.get(k) for k in ("fused", "foreach")} for g in self.optimizer.param_groups] if self.optimizer else []
        super()._load_optimizer_and_scheduler(checkpoint)
        for group, flags in zip(self.optimizer.param_groups if self.optimizer else [], kernel):
            group.update(flags)

    def get_train_dataloader(self) -> Any:
        loader = torch.utils.data.DataLoader(self.train_dataset, batch_sampler=PlanBatches(self.plan), collate_fn=self.data_collator,
                                             num_workers=0, pin_memory=self.args.dataloader_pin_memory)
        return self.accelerator.prepare(loader)

    def _save_checkpoint(self, model: Any, trial: Any) -> None:
        super()._save_checkpoint(model, trial)
        folder = Path(self._get_output_dir(trial)) / f"{PREFIX_CHECKPOINT_DIR}-{self.state.global_step}"
        atomic_write_text(folder / CHECKPOINT_META, json.dumps(self.checkpoint_meta(self.state.global_step), indent=2))


class RunLog(TrainerCallback):
    """The run's ``train_log.jsonl`` lines, the evaluation at each periodic checkpoint, and two stops of its own.

    ``write(record)`` appends a line; ``seen(step)`` is the number of pairs trained after ``step`` batches;
    ``on_checkpoint(model, step)`` evaluates a periodic checkpoint (not the one a stop writes). The run stops,
    with a checkpoint, after ``stop_after`` steps; the end of the plan is logged and checkpointed too.
    """

    def __init__(self, *, write: Callable[[dict[str, Any]], None], seen: Callable[[int], int], t0: float,
                 stop_after: int | None, on_checkpoint: Callable[[Any, int], None]):
        self.write, self.seen, self.t0, self.stop_after, self.on_checkpoint = write, seen, t0, stop_after, on_checkpoint
        self.last = (time.monotonic(), 0)
        self.stopped_after_steps = False

    def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
        self.last = (time.monotonic(), state.global_step)
        optimizer = kwargs.get("optimizer")
        if optimizer is not None:  # which kernel this stage runs (a runtime option; stages of one run may differ)
            optimizer = getattr(optimizer, "optimizer", optimizer)  # the torch optimiser inside accelerate's wrapper
            fused = bool(optimizer.param_groups[0].get("fused"))
            self.write({"event": "stage_start", "step": state.global_step, "optimizer": type(optimizer).__name__,
                        "kernel": "fused" if fused else "per-tensor loop"})
        return control

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
        if state.global_step >= state.max_steps:
            control.should_log = control.should_save = True
        if self.stop_after is not None and state.global_step >= self.stop_after:
            self.stopped_after_steps = True
            control.should_save = control.should_training_stop = True
        return control

    def on_log(self, args: Any, state: Any, control: Any, logs: dict[str, Any] | None = None, **kwargs: Any) -> Any:
        if logs and "loss" in logs:  # a step's log, not the Trainer's closing metrics
            now, (t, step) = time.monotonic(), self.last
            seen = self.seen(state.global_step)
            self.write({"step": state.global_step, "of": state.max_steps, "loss": logs["loss"], "lr": logs.get("learning_rate"),
                        "ex_per_s": (seen - self.seen(step)) / max(1e-9, now - t), "examples_seen": seen,
                        "elapsed_s": round(now - self.t0, 1)})
            self.last = (now, state.global_step)
        return control

    def on_save(self, args: Any, state: Any, control: Any, model: Any = None, **kwargs: Any) -> Any:
        if not control.should_training_stop:
            self.on_checkpoint(model, state.global_step)
        return control
