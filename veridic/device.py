"""The one device and dtype resolver: every model loader (NLI backends, language models, training) asks here.

>>> resolve_device("cpu"), check_dtype("bfloat16", device="cpu")
('cpu', 'bfloat16')
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from veridic.errors import ConfigError

__all__ = ["DEVICE_HELP", "DTYPES", "auto_dtype", "check_device", "check_dtype", "cpu_supports_bf16", "resolve_device"]

DEVICE_HELP = "auto (CUDA when present), cpu, cuda or cuda:N"
DTYPES = ("auto", "float32", "bfloat16", "float16", "int8")


def check_device(device: str, *, cuda_available: Callable[[], bool] | None = None) -> str:
    """Validate a ``--device`` value before any model loads; returns it resolved (``auto`` → ``cuda`` or ``cpu``).

    >>> check_device("cpu")
    'cpu'
    >>> check_device("cuda:0", cuda_available=lambda: False)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    veridic.errors.ConfigError: --device cuda:0 was requested but CUDA is not available ...
    """
    if not isinstance(device, str) or not re.fullmatch(r"auto|cpu|cuda(:\d+)?", device):
        raise ConfigError(f"device must be {DEVICE_HELP}; got {device!r}.")
    if device == "cpu":
        return device
    if cuda_available is None:
        def cuda_available() -> bool:
            try:
                import torch
            except ImportError:
                return False
            return bool(torch.cuda.is_available())
    ok = cuda_available()
    if device == "auto":
        return "cuda" if ok else "cpu"
    if not ok:
        raise ConfigError(f"--device {device} was requested but CUDA is not available on this machine (no GPU, or a CPU-only torch); "
                          "use --device cpu or --device auto.")
    if ":" in device:
        import torch

        idx, n = int(device.split(":")[1]), torch.cuda.device_count()
        if idx >= n:
            raise ConfigError(f"--device {device} names GPU {idx}, but this machine has {n} (cuda:0 to cuda:{n - 1}).")
    return device


def check_dtype(dtype: str, *, device: str | None = None) -> str:
    """Validate a ``--dtype`` value (and, given the resolved ``device``, the pair) before any model loads.

    >>> check_dtype("int8", device="cuda")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    veridic.errors.ConfigError: dtype='int8' (dynamic quantisation) runs on the CPU only; got device='cuda'...
    """
    if dtype not in DTYPES:
        raise ConfigError(f"dtype must be one of {', '.join(DTYPES)}; got {dtype!r}.")
    if dtype == "int8" and device is not None and device != "cpu":
        raise ConfigError(f"dtype='int8' (dynamic quantisation) runs on the CPU only; got device={device!r}. "
                          "Use --dtype float16 or bfloat16 on a GPU, or --device cpu.")
    return dtype


def resolve_device(device: str = "auto") -> str:
    """``device`` validated and resolved: ``auto`` → ``cuda`` when a GPU is usable, else ``cpu``."""
    return check_device(device)


def cpu_supports_bf16() -> bool:
    """True when the CPU has native bf16 matrix units (AMX or AVX512-BF16).

    Without them bf16 autocast is emulated and slower than fp32. One check for inference and
    for every trainer (NLI, congruity multiple choice, loss-truncation fine-tunes).
    """
    try:
        flags = Path("/proc/cpuinfo").read_text()
    except OSError:
        return False
    return "amx_bf16" in flags or "avx512_bf16" in flags


def auto_dtype(device: str) -> str:
    """What inference runs in for ``dtype="auto"`` on a resolved ``device`` (``cpu``, ``cuda`` or ``cuda:N``): bf16
    autocast on a GPU or on a CPU with native bf16 units, else fp32 (emulated bf16 is slower than fp32).

    >>> auto_dtype("cuda:0")
    'bfloat16'
    """
    return "bfloat16" if device.startswith("cuda") or cpu_supports_bf16() else "float32"
