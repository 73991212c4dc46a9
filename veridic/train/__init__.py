"""Training pipeline of veridic's embedded NLI model.

>>> from veridic.train import load_config, train_nli
>>> cfg = load_config("configs/nli-minilm.yaml")                              # doctest: +SKIP
>>> train_nli(config=cfg, output_dir="runs/nli-v1", max_minutes=95)     # doctest: +SKIP
PosixPath('runs/nli-v1/final')

From a shell (re-running the same line resumes from the newest checkpoint)::

    python -c "from veridic.train import train_nli; train_nli(config='configs/nli-minilm.yaml', output_dir='runs/nli-v1')"
"""

from veridic.train._loop import TrainConfig, Trainer, config_hash, load_config, train_nli

__all__ = ["TrainConfig", "Trainer", "config_hash", "load_config", "train_nli"]
