"""Knowledge distillation: a teacher NLI model's soft labels for every training pair, and the loss.

The teacher (e.g. the base-size accurate tier) scores each training pair once, before the student
trains; its logits are cached in the run folder so that a run cut into stages labels each pair
once. Labelling is itself resumable: it writes its progress after every chunk, and a time budget
can stop it between chunks.

The student's loss mixes the gold label with the teacher's tempered distribution, as in Hinton et
al. (2015): ``(1 - alpha) * gold + alpha * T^2 * KL(teacher_T || student_T)``.

>>> import torch
>>> s = torch.tensor([[2.0, 0.0, -1.0]]); t = torch.tensor([[2.0, 0.0, -1.0]])
>>> abs(float(distill_loss(s, torch.tensor([0]), t, temperature=2.0, alpha=1.0))) < 1e-6  # same as the teacher
True
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Sequence
from contextlib import nullcontext
from pathlib import Path
from typing import Any

from veridic.errors import ConfigError

__all__ = ["teacher_logits", "distill_loss", "examples_digest"]

logger = logging.getLogger("veridic.train")

_CHUNK = 2048


def examples_digest(examples: Sequence[Any]) -> str:
    """A hash of the pairs in order: cached logits are reused only for exactly these pairs."""
    h = hashlib.sha256()
    for e in examples:
        h.update(e.premise.encode("utf-8", "surrogatepass") + b"\x00" + e.hypothesis.encode("utf-8", "surrogatepass") + b"\x01")
    return h.hexdigest()[:16]


def teacher_logits(*, examples: Sequence[Any], teacher: str | Path, cache_dir: str | Path, max_length: int,
                   batch_size: int = 64, bf16: bool = False, device: str = "cpu", deadline: float | None = None,
                   progress: bool = True) -> Any | None:
    """The teacher's 3-way logits for ``examples`` (``float32[N, 3]``, in order), cached in ``cache_dir``.

    Returns ``None`` when ``deadline`` (a ``time.monotonic()`` value) passes before every pair is
    labelled; the pairs labelled so far are kept and the next call continues from them.
    """
    import numpy as np
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    cache = Path(cache_dir)
    cache.mkdir(parents=True, exist_ok=True)
    data, meta_path = cache / "teacher_logits.npy", cache / "teacher_logits.json"
    n = len(examples)
    want = {"teacher": str(teacher), "digest": examples_digest(examples), "n": n, "max_length": max_length}
    meta = json.loads(meta_path.read_text()) if meta_path.exists() else None
    if meta is not None and {k: meta.get(k) for k in want} != want:
        raise ConfigError(f"{cache} holds teacher logits for other pairs or another teacher ({meta.get('teacher')}, "
                          f"{meta.get('n')} pairs); this run needs {want['teacher']} on {n} pairs. "
                          "Use a new run folder, or delete teacher_logits.* to label again.")
    if meta is None or not data.exists():
        np.lib.format.open_memmap(data, mode="w+", dtype=np.float32, shape=(n, 3)).flush()
        meta = {**want, "done": 0}
        meta_path.write_text(json.dumps(meta))
    out = np.lib.format.open_memmap(data, mode="r+")
    done = int(meta["done"])
    if done >= n:
        return np.array(out)
    from veridic.nli.packed import is_packed, load_packed_model

    tok = AutoTokenizer.from_pretrained(str(teacher), local_files_only=True)
    if is_packed(teacher):  # a shipped base-size model: int8 rows, dequantised once
        model = load_packed_model(teacher, auto_cls=AutoModelForSequenceClassification)
    else:
        model = AutoModelForSequenceClassification.from_pretrained(str(teacher), local_files_only=True)
    model = model.eval().to(device)
    label2id = {str(k).lower(): int(v) for k, v in model.config.label2id.items()}
    try:
        perm = [label2id["entailment"], label2id["neutral"], label2id["contradiction"]]
    except KeyError as exc:
        raise ConfigError(f"teacher {teacher}: expected labels entailment/neutral/contradiction in its config, "
                          f"got {sorted(label2id)}") from exc
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=n, initial=done, desc="teacher labels", unit="pair", mininterval=30)
    ctx = torch.autocast(torch.device(device).type, dtype=torch.bfloat16) if bf16 else nullcontext()
    with torch.inference_mode(), ctx:
        while done < n:
            if deadline is not None and time.monotonic() >= deadline:
                break
            end = min(n, done + _CHUNK)
            # Within a chunk, similar lengths share a batch (less padding); results go back by index.
            order = sorted(range(done, end), key=lambda i: len(examples[i].premise) + len(examples[i].hypothesis))
            for s in range(0, len(order), batch_size):
                idx = order[s: s + batch_size]
                enc = tok([examples[i].premise for i in idx], [examples[i].hypothesis for i in idx], truncation=True,
                          max_length=max_length, padding=True, return_tensors="pt").to(device)
                logits = model(**enc).logits.float()[:, perm].cpu().numpy()
                out[idx] = logits
            out.flush()
            done = end
            meta["done"] = done
            tmp = meta_path.with_suffix(".json.tmp")
            tmp.write_text(json.dumps(meta))
            tmp.replace(meta_path)  # progress is recorded only after its logits are on disk
            if bar is not None:
                bar.update(end - bar.n)
    if bar is not None:
        bar.close()
    if done < n:
        logger.info("teacher labelling stopped by the time budget at %d of %d pairs; run again to continue", done, n)
        return None
    return np.array(out)


def distill_loss(logits: Any, labels: Any, teacher: Any, *, temperature: float, alpha: float,
                 label_smoothing: float = 0.0) -> Any:
    """``(1 - alpha) * gold loss + alpha * T^2 * KL(teacher_T || student_T)``, averaged over the batch.

    The gold part is :func:`veridic.train._losses.nli_loss` (3-way and 2-way rows); ``T^2`` keeps the soft
    part's gradients on the gold part's scale whatever the temperature.
    """
    import torch

    from veridic.train._losses import nli_loss

    gold = nli_loss(logits, labels, label_smoothing=label_smoothing)
    if alpha == 0:
        return gold
    t = float(temperature)
    log_s = torch.log_softmax(logits.float() / t, dim=-1)
    p_t = torch.softmax(teacher.float() / t, dim=-1)
    kl = (p_t * (torch.log(p_t.clamp_min(1e-12)) - log_s)).sum(-1).mean()
    return (1 - alpha) * gold + alpha * (t * t) * kl
