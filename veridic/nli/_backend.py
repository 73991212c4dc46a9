"""NLI model backends: one wrapper per runtime owns loading, device, dtype,
batching, length bucketing and inference mode.

``predict`` takes premise/hypothesis lists and returns probabilities as an
array ``[n, 3]`` in (entailment, neutral, contradiction) order — or
``[n, k, 3]`` with ``mc_samples=k`` Monte-Carlo dropout samples — whatever
order the model's own config uses.

>>> from veridic.nli import load_backend
>>> b = load_backend()                           # the embedded default model
>>> p = b.predict(["A man is sleeping on a couch."], ["A man is asleep."])
>>> p.shape, int(p.argmax(-1)[0])                 # column 0 is entailment
((1, 3), 0)
"""

from __future__ import annotations

import hashlib
import importlib.resources
import importlib.util
import json
import logging
import os
import shutil
from collections.abc import Callable, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from veridic.device import DEVICE_HELP, DTYPES, auto_dtype, check_device, check_dtype, cpu_supports_bf16
from veridic.errors import ConfigError, InputError, MissingDependencyError, ModelLoadError
from veridic.nli._labels import LabelMap
from veridic.nli._models import EMBEDDED_MODEL_NAME, EMBEDDED_MODELS, KNOWN_CHECKPOINTS, embedded_model_path, resolve_model_path
from veridic.nli.packed import is_packed

__all__ = [
    "cpu_supports_bf16",
    "NLIBackend",
    "TorchNLIBackend",
    "OnnxNLIBackend",
    "CachedBackend",
    "load_backend",
    "resolve_model_path",
    "embedded_model_path",
    "export_onnx",
    "packed_onnx_dir",
    "EMBEDDED_MODEL_NAME",
    "EMBEDDED_MODELS",
    "KNOWN_CHECKPOINTS",
    "BACKEND_KINDS",
    "check_device",
    "check_dtype",
    "resolve_backend_kind",
    "DEVICE_HELP",
    "DTYPES",
]

log = logging.getLogger(__name__)

@runtime_checkable
class NLIBackend(Protocol):
    """What a scorer needs from an NLI model."""

    model_id: str
    revision: str | None
    max_length: int
    label_map: LabelMap
    supports_mc: bool

    def predict(self, premises: Sequence[str], hypotheses: Sequence[str], *, mc_samples: int = 0, seed: int = 0, progress: bool = False) -> np.ndarray: ...

    def token_offsets(self, text: str) -> list[tuple[int, int]]: ...

    def count_tokens(self, text: str) -> int: ...

    def describe(self) -> dict[str, Any]: ...


def load_sequence_classifier(ref: str | Path, **kwargs: Any) -> Any:
    """``AutoModelForSequenceClassification.from_pretrained``, or a packed folder (int8 rows,
    :mod:`veridic.nli.packed`) built from its config and dequantised to fp32."""
    from transformers import AutoModelForSequenceClassification

    from veridic.nli.packed import load_packed_model

    if isinstance(ref, Path) and is_packed(ref):
        attn = kwargs.get("attn_implementation")
        return load_packed_model(ref, auto_cls=AutoModelForSequenceClassification, **({"attn_implementation": attn} if attn else {}))
    return AutoModelForSequenceClassification.from_pretrained(ref, **kwargs)


def _quiet_transformers() -> None:
    # Weight-loading progress bars are noise inside veridic's own progress output.
    try:
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
    except Exception:  # noqa: BLE001 - cosmetic only
        pass


def _stable_seed(seed: int, premise: str, hypothesis: str) -> int:
    h = hashlib.blake2b(f"{seed}\x00{premise}\x00{hypothesis}".encode("utf-8", "surrogatepass"), digest_size=8)
    return int.from_bytes(h.digest(), "little") & 0x7FFF_FFFF_FFFF


def _validate_pairs(premises: Sequence[str], hypotheses: Sequence[str]) -> None:
    if isinstance(premises, str) or isinstance(hypotheses, str):
        raise InputError("premises and hypotheses must be lists of strings, not single strings.")
    if len(premises) != len(hypotheses):
        raise InputError(f"Got {len(premises)} premises but {len(hypotheses)} hypotheses; they must pair up one to one.")
    for i, (p, h) in enumerate(zip(premises, hypotheses)):
        if not isinstance(p, str) or not isinstance(h, str):
            raise InputError(f"Pair {i}: premise and hypothesis must be strings; got {type(p).__name__} and {type(h).__name__}.")
        if not p.strip() or not h.strip():
            raise InputError(f"Pair {i}: empty {'premise' if not p.strip() else 'hypothesis'}; veridic does not score empty text.")


def _progress(total: int, enabled: bool, desc: str):
    if not enabled:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, unit="pair", leave=False)


#: characters per piece when a long text is tokenised for its offsets (see :func:`_pieces`).
OFFSET_PIECE_CHARS = 16_384


def _pieces(text: str, size: int = OFFSET_PIECE_CHARS) -> list[tuple[int, str]]:
    """``text`` cut at whitespace into pieces of about ``size`` characters, as ``(start, piece)``.

    The tokenizer's cost per character grows with the length of one input (its working set no longer
    fits the caches: +45 % per character at 1M characters); pieces keep it flat. Cutting only at
    whitespace, which every pre-tokenizer of ours splits on, leaves the tokens and offsets unchanged.

    >>> [(s, p) for s, p in _pieces("aa bb cc", size=3)]
    [(0, 'aa '), (3, 'bb '), (6, 'cc')]
    """
    out: list[tuple[int, str]] = []
    start, n = 0, len(text)
    while start < n:
        end = min(start + size, n)
        while end < n and not text[end - 1].isspace():
            end += 1  # extend to just after a whitespace character, so no word is cut
        out.append((start, text[start:end]))
        start = end
    return out


def _offsets_by_piece(text: str, encode: Callable[[list[str]], Sequence[Sequence[tuple[int, int]]]]) -> list[tuple[int, int]]:
    """Token offsets of ``text``: ``encode`` maps a batch of :func:`_pieces` to their offsets, shifted back here."""
    parts = _pieces(text)
    if not parts:
        return []
    return [(a + s, b + s) for (s, _), offs in zip(parts, encode([p for _, p in parts])) for a, b in offs]


class _FileTokenizer:
    """A model's ``tokenizer.json`` run by the ``tokenizers`` library alone.

    It gives the ids, type ids and offsets that transformers' fast tokenizer
    gives (which runs this same file), without importing transformers, which
    imports torch: about 3 CPU seconds, most of a one-pair ONNX run.
    """

    def __init__(self, folder: Path):
        from tokenizers import Tokenizer

        cfg = _read_json(folder / "tokenizer_config.json")
        self.model_max_length = cfg.get("model_max_length")
        self._side = "left" if cfg.get("truncation_side") == "left" else "right"
        self._plain = Tokenizer.from_file(str(folder / "tokenizer.json"))
        # The file may carry the truncation and padding it was saved with; each use sets its own.
        self._plain.no_truncation()
        self._plain.no_padding()
        self._pairs = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self._pairs.no_padding()
        self._pairs_max: int | None = None

    def offsets(self, text: str) -> list[tuple[int, int]]:
        return _offsets_by_piece(text, lambda ps: [e.offsets for e in self._plain.encode_batch(ps, add_special_tokens=False)])

    def count(self, text: str) -> int:
        return len(self._plain.encode(text, add_special_tokens=False).ids)

    def pairs(self, premises: Sequence[str], hypotheses: Sequence[str], max_length: int) -> tuple[list[list[int]], list[list[int]] | None]:
        if self._pairs_max != max_length:
            self._pairs.enable_truncation(max_length, strategy="longest_first", direction=self._side)
            self._pairs_max = max_length
        enc = self._pairs.encode_batch(list(zip(premises, hypotheses)))
        return [e.ids for e in enc], [e.type_ids for e in enc]


class _TokenizerMixin:
    tokenizer: Any
    max_length: int
    model_id: str
    revision: str | None
    label_map: LabelMap
    num_parameters: int | None

    def _describe(self, backend: str, **runtime: Any) -> dict[str, Any]:
        """The ``describe()`` record of a backend: the model and revision, how it runs (``runtime``: the torch
        dtype and device, or the ONNX file), and its window, labels and size, in that order."""
        return {"backend": backend, "model": self.model_id, "revision": self.revision, **runtime, "max_length": self.max_length,
                "labels": list(self.label_map.names), "parameters": self.num_parameters}

    def token_offsets(self, text: str) -> list[tuple[int, int]]:
        if isinstance(self.tokenizer, _FileTokenizer):
            return self.tokenizer.offsets(text)
        return _offsets_by_piece(text, lambda ps: self.tokenizer(ps, add_special_tokens=False, return_offsets_mapping=True,
                                                                 truncation=False, verbose=False)["offset_mapping"])

    def count_tokens(self, text: str) -> int:
        if isinstance(self.tokenizer, _FileTokenizer):
            return self.tokenizer.count(text)
        return len(self.tokenizer(text, add_special_tokens=False, truncation=False, verbose=False)["input_ids"])

    def _encode_lengths(self, premises: Sequence[str], hypotheses: Sequence[str]) -> tuple[list[list[int]], list[list[int]] | None]:
        if isinstance(self.tokenizer, _FileTokenizer):
            ids, types = self.tokenizer.pairs(premises, hypotheses, self.max_length)
        else:
            enc = self.tokenizer(
                list(premises), list(hypotheses), truncation=True, max_length=self.max_length, padding=False, verbose=False
            )
            ids, types = enc["input_ids"], enc.get("token_type_ids")
        n_trunc = sum(1 for x in ids if len(x) >= self.max_length)
        if n_trunc:
            log.warning("%d of %d pairs exceed the model's %d tokens and were truncated; use sentence-level or chunked scoring for long sources.", n_trunc, len(ids), self.max_length)
        return ids, types

    #: True for int8 models, whose activations are quantised with one scale per forward call: a pair then
    #: runs alone, so its score never depends on which other pairs shared its batch.
    one_pair_per_call: bool = False

    def _batches(self, lengths: Sequence[int], batch_size: int) -> list[list[int]]:
        # Length bucketing: sorting by length keeps padding (wasted compute) small.
        order = sorted(range(len(lengths)), key=lambda i: (lengths[i], i))
        if self.one_pair_per_call:
            return [[i] for i in order]
        return [order[i : i + batch_size] for i in range(0, len(order), batch_size)]

    def predict(self, premises: Sequence[str], hypotheses: Sequence[str], *, mc_samples: int = 0, seed: int = 0, progress: bool = False) -> np.ndarray:
        """Probabilities (e, n, c): ``[n, 3]``, or ``[n, k, 3]`` with ``mc_samples=k``.

        A pair that occurs more than once (the same window for two claim
        sentences, the same claim twice) runs once; its rows are copies.
        """
        _validate_pairs(premises, hypotheses)
        index: dict[tuple[str, str], int] = {}
        inverse = [index.setdefault(k, len(index)) for k in zip(premises, hypotheses)]
        if len(index) == len(inverse):
            return self._predict(premises, hypotheses, mc_samples=mc_samples, seed=seed, progress=progress)
        out = self._predict([p for p, _ in index], [h for _, h in index], mc_samples=mc_samples, seed=seed, progress=progress)
        return out[inverse]


class TorchNLIBackend(_TokenizerMixin):
    """A transformers sequence-classification NLI model on PyTorch.

    ``dtype="auto"`` uses bfloat16 autocast on CPUs with native bf16
    (AMX / AVX512-BF16), where it is 2–4× faster with near-identical outputs,
    and float32 elsewhere. ``dtype="int8"`` (CPU only) quantises the Linear
    layers' weights per output channel (``torch.ao.quantization.quantize_dynamic``);
    activations are quantised per call, so each pair runs alone (see
    ``one_pair_per_call``) and its scores do not depend on its neighbours.
    """

    supports_mc = True

    def __init__(
        self,
        model: str | Path | None = None,
        *,
        revision: str | None = None,
        device: str = "cpu",
        dtype: str = "auto",
        batch_size: int = 32,
        max_length: int | None = None,
        label_map: dict[str, int] | None = None,
        local_files_only: bool | None = None,
        trust_remote_code: bool = False,
    ):
        try:
            import torch
            from transformers import AutoModelForSequenceClassification, AutoTokenizer  # noqa: F401 - checked for the install hint
        except ImportError as exc:
            raise MissingDependencyError(exc.name or "torch", extra="torch", purpose="The PyTorch NLI backend") from None
        self._torch = torch
        # Bad device, dtype or batch size: said before seconds of model loading.
        device = check_device(device, cuda_available=torch.cuda.is_available)
        check_dtype(dtype, device=device)
        if batch_size < 1:
            raise ConfigError(f"batch_size must be >= 1; got {batch_size}.")
        _quiet_transformers()
        ref, kind = resolve_model_path(model)
        if local_files_only is None:
            local_files_only = kind != "hub" or os.environ.get("HF_HUB_OFFLINE") == "1"
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(ref, revision=revision, local_files_only=local_files_only)
            self.model = load_sequence_classifier(
                ref, revision=revision, local_files_only=local_files_only, trust_remote_code=trust_remote_code
            )
        except OSError as exc:
            hint = " It is a hub id: this needs network access to a model hub (or a local copy)." if kind == "hub" else ""
            raise ModelLoadError(f"Could not load NLI model {str(ref)!r} ({kind}).{hint} Cause: {exc}") from None
        self.device = torch.device(device)
        self.model.to(self.device).eval()
        if dtype == "auto":
            dtype = auto_dtype(self.device.type)
        if dtype == "int8":
            self.model = _quantize_int8(torch, self.model)
            self.one_pair_per_call = True
        self.dtype = dtype
        self.batch_size = batch_size
        cfg = self.model.config
        self.max_length = _max_length(max_length, getattr(cfg, "max_position_embeddings", None), getattr(self.tokenizer, "model_max_length", None))
        if label_map is not None:
            self.label_map = LabelMap.from_mapping(label_map, num_labels=cfg.num_labels)
        else:
            self.label_map = LabelMap.from_id2label(cfg.id2label)
        self.model_id = str(model) if kind == "hub" else (Path(ref).name if kind == "embedded" else str(ref))
        self.revision = revision or _read_revision(ref)
        self.kind = kind
        self.num_parameters = sum(p.numel() for p in self.model.parameters())

    def describe(self) -> dict[str, Any]:
        return self._describe("torch", dtype=self.dtype, device=str(self.device))

    @contextmanager
    def _autocast(self):
        torch = self._torch
        if self.dtype in ("float32", "int8"):
            yield
            return
        dt = torch.bfloat16 if self.dtype == "bfloat16" else torch.float16
        with torch.autocast(device_type=self.device.type, dtype=dt):
            yield

    def _forward(self, rows: list[list[int]], types: list[list[int]] | None) -> np.ndarray:
        torch = self._torch
        width = max(len(r) for r in rows)
        pad = self.tokenizer.pad_token_id or 0
        ids = torch.full((len(rows), width), pad, dtype=torch.long)
        mask = torch.zeros((len(rows), width), dtype=torch.long)
        tt = torch.zeros((len(rows), width), dtype=torch.long) if types is not None else None
        for i, r in enumerate(rows):
            ids[i, : len(r)] = torch.tensor(r)
            mask[i, : len(r)] = 1
            if tt is not None:
                tt[i, : len(r)] = torch.tensor(types[i])
        inputs = {"input_ids": ids.to(self.device), "attention_mask": mask.to(self.device)}
        if tt is not None:
            inputs["token_type_ids"] = tt.to(self.device)
        with self._autocast():
            logits = self.model(**inputs).logits
        return torch.softmax(logits.float(), dim=-1).cpu().numpy().astype(np.float64)

    def _predict(self, premises: Sequence[str], hypotheses: Sequence[str], *, mc_samples: int = 0, seed: int = 0, progress: bool = False) -> np.ndarray:
        # Monte-Carlo dropout: each pair runs as one batch of ``k`` copies with dropout on, seeded from
        # ``seed`` and the pair's text, so the samples for a pair do not depend on which other pairs share the call.
        if mc_samples < 0 or mc_samples == 1:
            raise ConfigError(f"mc_samples must be 0 (off) or >= 2; got {mc_samples}.")
        n = len(premises)
        if n == 0:
            return np.zeros((0, mc_samples, 3) if mc_samples else (0, 3))
        ids, types = self._encode_lengths(premises, hypotheses)
        torch = self._torch
        bar = _progress(n, progress, "NLI")
        try:
            with torch.inference_mode():
                if not mc_samples:
                    out = np.zeros((n, self.label_map.num_labels))
                    for batch in self._batches([len(x) for x in ids], self.batch_size):
                        out[batch] = self._forward([ids[i] for i in batch], None if types is None else [types[i] for i in batch])
                        if bar is not None:
                            bar.update(len(batch))
                    return self.label_map.to_enc(out)
                out = np.zeros((n, mc_samples, self.label_map.num_labels))
                self.model.train()  # dropout on, only here
                try:
                    for i in range(n):
                        torch.manual_seed(_stable_seed(seed, premises[i], hypotheses[i]))
                        done = 0
                        while done < mc_samples:
                            k = min(self.batch_size, mc_samples - done)
                            out[i, done : done + k] = self._forward([ids[i]] * k, None if types is None else [types[i]] * k)
                            done += k
                        if bar is not None:
                            bar.update(1)
                finally:
                    self.model.eval()
                return self.label_map.to_enc(out)
        finally:
            if bar is not None:
                bar.close()


def _read_revision(ref: str | Path) -> str | None:
    p = Path(str(ref))
    for name in ("veridic_model.json", "training_summary.json"):
        f = p / name
        if f.exists():
            try:
                meta = json.loads(f.read_text())
            except (OSError, json.JSONDecodeError):
                continue
            rev = meta.get("revision") or meta.get("config_hash")
            if rev:
                return str(rev)
    if p.is_dir() and (p / "model.safetensors").exists():
        # A content hash pins exactly which weights produced a score.
        h = hashlib.sha256()
        with open(p / "model.safetensors", "rb") as fh:
            h.update(fh.read(1 << 20))
        return "sha256-1MiB:" + h.hexdigest()[:16]
    return None


def ort_session_options(*, threads: int | None = None) -> Any:
    """ONNX Runtime session options for veridic's models: the thread count, no spinning, exact int8 products.

    >>> ort_session_options(threads=1).get_session_config_entry("session.x64quantprecision")
    '1'
    """
    import onnxruntime as ort

    opts = ort.SessionOptions()
    if threads:
        opts.intra_op_num_threads = threads
    if os.environ.get("VERIDIC_ORT_SPIN", "0") != "1":
        # Idle ORT threads spin for the next op by default; on a busy machine (or one core per process) that
        # doubled the CPU time of a one-pair-per-call int8 run for no speed.
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
    # x86 CPUs without VNNI (AVX2, AVX-512 before VNNI) sum int8 products in pairs into 16 bits, which saturate:
    # the same int8 file then scores differently by CPU (on an AVX2-only CPU the default's dev e-c mean AUC fell
    # 0.7, WiCE dev 1.7). This makes them compute exactly, as VNNI CPUs do, for about 15–30 % more int8 time there;
    # on other CPUs it changes nothing.
    opts.add_session_config_entry("session.x64quantprecision", "1")
    return opts


class OnnxNLIBackend(_TokenizerMixin):
    """An exported NLI model on ONNX Runtime (int8 by default).

    Dropout is folded away at export, so Monte-Carlo dropout is not
    available here; use the PyTorch backend for ``mc_samples > 0``.
    """

    supports_mc = False

    def __init__(
        self,
        model: str | Path | None = None,
        *,
        file: str | None = None,
        batch_size: int = 32,
        max_length: int | None = None,
        threads: int | None = None,
        label_map: dict[str, int] | None = None,
    ):
        try:
            import onnxruntime as ort
        except ImportError as exc:
            raise MissingDependencyError(exc.name or "onnxruntime", extra="onnx", purpose="The ONNX Runtime NLI backend") from None
        ref, kind = resolve_model_path(model)
        if kind == "hub":
            raise ModelLoadError(f"The ONNX backend needs a local directory with an exported model; got hub id {ref!r}. Run `veridic export onnx` first.")
        ref = Path(ref)
        onnx_dir = ref / "onnx" if (ref / "onnx").is_dir() else ref
        candidates = [file] if file else ["model.int8.onnx", "model.onnx"]
        if is_packed(ref) and not any((onnx_dir / c).exists() for c in candidates if c) and file in (None, "model.int8.onnx"):
            onnx_dir = packed_onnx_dir(ref)
        path = next((onnx_dir / c for c in candidates if c and (onnx_dir / c).exists()), None)
        if path is None:
            raise ModelLoadError(f"No ONNX file ({' or '.join(c for c in candidates if c)}) in {onnx_dir}. Export one with: veridic export onnx --model {ref}")
        self.session = ort.InferenceSession(str(path), sess_options=ort_session_options(threads=threads or _env_threads()),
                                            providers=["CPUExecutionProvider"])
        self._input_names = {i.name for i in self.session.get_inputs()}
        tok_dir = ref if (ref / "tokenizer.json").exists() or (ref / "vocab.txt").exists() else onnx_dir
        if (tok_dir / "tokenizer.json").exists():
            self.tokenizer = _FileTokenizer(tok_dir)
        else:
            try:
                from transformers import AutoTokenizer
            except ImportError:
                raise MissingDependencyError("transformers", extra="torch", purpose=f"Reading the tokenizer in {tok_dir} (it has no tokenizer.json)") from None
            self.tokenizer = AutoTokenizer.from_pretrained(tok_dir)
        cfg_file = (ref if (ref / "config.json").exists() else onnx_dir) / "config.json"
        cfg = _read_json(cfg_file)
        if "id2label" not in cfg:
            raise ModelLoadError(f"{cfg_file} has no id2label; an NLI model's config names its labels (entailment, neutral, contradiction).")
        num_labels = len(cfg["id2label"])
        self.label_map = LabelMap.from_mapping(label_map, num_labels=num_labels) if label_map else LabelMap.from_id2label(cfg["id2label"])
        # The same limit as the torch backend (the tokenizer's model_max_length counts), so both build the same windows.
        self.max_length = _max_length(max_length, cfg.get("max_position_embeddings"), getattr(self.tokenizer, "model_max_length", None))
        self.batch_size = batch_size
        self.model_id = (Path(ref).name if kind == "embedded" else str(ref)) + f"#{path.name}"
        self.revision = _read_revision(ref)
        self.file = path
        self.num_parameters = None
        # A dynamically quantised graph scales activations over the whole batch: a pair's score would depend
        # on its batch mates (up to 0.35 in e-c on FRANK windows), so such a model runs one pair per call.
        self.one_pair_per_call = _is_dynamically_quantised(path)

    def describe(self) -> dict[str, Any]:
        # In the record (and so in every score-cache key): int8 scores cached before products were exact differ by CPU.
        return self._describe("onnx", file=self.file.name, int8_products="exact")

    def _predict(self, premises, hypotheses, *, mc_samples: int = 0, seed: int = 0, progress: bool = False) -> np.ndarray:
        if mc_samples:
            raise ConfigError("The ONNX backend cannot run Monte-Carlo dropout (dropout is removed at export). Use the torch backend or mc_samples=0.")
        n = len(premises)
        if n == 0:
            return np.zeros((0, 3))
        ids, types = self._encode_lengths(premises, hypotheses)
        out = np.zeros((n, self.label_map.num_labels))
        bar = _progress(n, progress, "NLI (onnx)")
        try:
            for batch in self._batches([len(x) for x in ids], self.batch_size):
                width = max(len(ids[i]) for i in batch)
                a = np.zeros((len(batch), width), dtype=np.int64)
                m = np.zeros_like(a)
                t = np.zeros_like(a)
                for r, i in enumerate(batch):
                    a[r, : len(ids[i])] = ids[i]
                    m[r, : len(ids[i])] = 1
                    if types is not None:
                        t[r, : len(ids[i])] = types[i]
                feed = {"input_ids": a, "attention_mask": m}
                if "token_type_ids" in self._input_names:
                    feed["token_type_ids"] = t
                logits = self.session.run(None, feed)[0].astype(np.float64)
                logits -= logits.max(axis=-1, keepdims=True)
                p = np.exp(logits)
                out[batch] = p / p.sum(axis=-1, keepdims=True)
                if bar is not None:
                    bar.update(len(batch))
        finally:
            if bar is not None:
                bar.close()
        return self.label_map.to_enc(out)


def _env_threads() -> int | None:
    # ONNX Runtime ignores OMP_NUM_THREADS, which the torch backend (and users' scripts) use to cap threads.
    try:
        n = int(os.environ.get("OMP_NUM_THREADS", ""))
    except ValueError:
        return None
    return n if n > 0 else None


def _read_json(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ModelLoadError(f"Could not read {path}: {exc}. Re-export or re-save the model folder.") from None


def _max_length(explicit: int | None, model_max: int | None, tok_max: int | None) -> int:
    """Tokens per pair: ``explicit``, else the smallest of the model's positions, the tokenizer's limit and 512."""
    if explicit:
        return int(explicit)
    model_max = model_max or 512
    tok_max = tok_max if tok_max and tok_max < 100_000 else model_max
    return int(min(model_max, tok_max, 512))


def _is_dynamically_quantised(path: Path) -> bool:
    # The op name is stored verbatim in the protobuf; reading the bytes avoids importing onnx.
    return b"DynamicQuantizeLinear" in path.read_bytes()


def _quantize_int8(torch: Any, model: Any) -> Any:
    """The model with int8 Linear weights (one scale per output channel); fp32 activations between layers."""
    from torch.ao.quantization import per_channel_dynamic_qconfig, quantize_dynamic

    if "fbgemm" in torch.backends.quantized.supported_engines:
        torch.backends.quantized.engine = "fbgemm"
    return quantize_dynamic(model, {torch.nn.Linear: per_channel_dynamic_qconfig}, dtype=torch.qint8)


def backend_kinds() -> tuple[str, ...]:
    """``auto`` and every registered backend (:data:`veridic.registry.BACKENDS`, plugins included)."""
    from veridic.registry import BACKENDS

    names = BACKENDS.names()
    return ("auto", *[k for k in BACKEND_KINDS[1:] if k in names], *[k for k in names if k not in BACKEND_KINDS])


#: the built-in kinds (plugins add theirs to :func:`backend_kinds`).
BACKEND_KINDS = ("auto", "torch", "onnx", "dummy")


#: keyword arguments both runtimes accept: with others (revision, trust_remote_code...) ``auto`` means torch.
_SHARED_KWARGS = frozenset({"device", "dtype", "batch_size", "max_length", "label_map"})


def _int8_declined(folder: Path) -> bool:
    """The model's ``veridic_model.json`` says ``"auto_backend": "torch"``: its card measured its ONNX int8 copy too
    far from its own weights (a deeper encoder accumulates the activation rounding), so ``auto`` keeps the weights."""
    try:
        info = json.loads((folder / "veridic_model.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(info, dict) and info.get("auto_backend") == "torch"


def resolve_backend_kind(kind: str, *, model: str | Path | None = None, device: str = "cpu", dtype: str = "auto",
                         mc_samples: int = 0, options: Sequence[str] = ()) -> str:
    """The backend ``kind="auto"`` loads: ``onnx`` (the model's ``model.int8.onnx``) where it can run, else ``torch``.

    ONNX int8 is the fastest path measured on CPU (docs/report.md, speed) at no dev AUC cost, and
    loads without torch. It is picked when the device is the CPU, ``dtype`` is ``auto`` or ``int8``, no
    Monte-Carlo dropout is asked for (``mc_samples``; ONNX has no dropout), onnxruntime is installed, the
    model folder holds an int8 export (``veridic export onnx``) or is packed, and the model does not decline int8
    (``"auto_backend": "torch"`` in its ``veridic_model.json``). Any other kind is returned as it is.

    >>> resolve_backend_kind("auto", mc_samples=15)
    'torch'
    """
    if kind != "auto":
        return kind
    if mc_samples or dtype not in ("auto", "int8") or set(options) - _SHARED_KWARGS or check_device(device) != "cpu":
        return "torch"
    if importlib.util.find_spec("onnxruntime") is None:
        return "torch"
    try:
        ref, where = resolve_model_path(model)
    except ModelLoadError:
        return "torch"  # torch gives the full error
    if where == "hub":
        return "torch"
    if _int8_declined(Path(ref)):
        return "torch"
    folder = Path(ref) / "onnx" if (Path(ref) / "onnx").is_dir() else Path(ref)
    if not (folder / "model.int8.onnx").exists():
        # A packed model ships no ONNX file: its int8 copy is built once into the model cache (packed_onnx_dir).
        return "onnx" if is_packed(ref) and _can_export() else "torch"
    if _export_is_stale(Path(ref), folder):
        log.warning("%s was exported from other weights than those in %s (see %s); using torch. "
                    "Re-export with: veridic export onnx --model %s --output %s", folder / "model.int8.onnx", ref, EXPORT_RECORD, ref, folder)
        return "torch"
    return "onnx"


def load_backend(model: str | Path | None = None, *, kind: str = "auto", **kwargs: Any) -> NLIBackend:
    """Load an NLI backend; ``model`` None = the embedded model.

    ``kind``: ``"auto"`` (default: ONNX int8 on the CPU when the model has an int8 export, onnxruntime is
    installed and no option needs torch, else torch; see :func:`resolve_backend_kind`), ``"torch"`` (runs
    every option, Monte-Carlo dropout included), ``"onnx"``, ``"dummy"`` (tests, examples) or a plugin's
    kind (:data:`veridic.registry.BACKENDS`). This is the one place that decides which runtime and dtype a
    model runs on: :func:`veridic.score`, ``veridic score``, the service and the benchmark all load here, so
    the same pair and configuration give the same numbers through each. ``device`` and ``dtype`` apply to
    the torch backend; the ONNX backend runs on the CPU and refuses another device.
    """
    from veridic.errors import RegistryError
    from veridic.registry import BACKENDS

    if kind != "auto" and kind not in BACKENDS.names():
        raise ConfigError(f"Unknown backend kind {kind!r}; expected one of {', '.join(backend_kinds())}.")
    if kind == "auto":
        kind = resolve_backend_kind(kind, model=model, device=kwargs.get("device", "cpu"), dtype=kwargs.get("dtype", "auto"),
                                    mc_samples=kwargs.pop("mc_samples", 0), options=list(kwargs))
        if kind == "onnx" and kwargs.get("dtype", "auto") == "auto":
            kwargs["dtype"] = "int8"
    kwargs.pop("mc_samples", None)
    if kind == "onnx":
        device = kwargs.pop("device", "cpu")
        if check_device(device) != "cpu":
            raise ConfigError(f"The onnx backend runs on the CPU; got device={device!r}. Use --backend torch for a GPU, or --device cpu.")
        dtype = kwargs.pop("dtype", "auto")
        if dtype not in ("auto", "float32", "int8"):
            raise ConfigError(f"The onnx backend runs float32 (model.onnx) or int8 (model.int8.onnx); got dtype={dtype!r}. Use --dtype int8, float32 or auto.")
        if dtype != "auto" and "file" not in kwargs:
            kwargs["file"] = "model.int8.onnx" if dtype == "int8" else "model.onnx"
    try:
        loader = BACKENDS.get(kind).load_loader()
    except RegistryError as exc:
        raise ConfigError(str(exc)) from None
    return loader(model, **kwargs)


def export_onnx(*, model: str | Path | None, out_dir: str | Path, quantize: bool = True, opset: int = 17, device: str = "cpu") -> dict[str, Path]:
    """Export a PyTorch NLI model to ONNX (fp32) and an int8 copy (per-channel dynamic quantisation).

    The folder also gets what the default method needs beside the model:
    the hybrid weights (``hybrid.json``) and the model card files, so
    ``--backend onnx --model OUT`` scores with ``hybrid`` as the torch model does.
    ``device``: where the model is traced (the graph runs anywhere ONNX Runtime does).

    Per-channel int8 keeps MiniLM hidden states at cosine ≈0.99 to fp32;
    per-tensor quantisation loses far more, so it is not offered.
    Returns the written files.
    """
    try:
        import torch
        from transformers import AutoModelForSequenceClassification, AutoTokenizer  # noqa: F401 - checked for the install hint
    except ImportError as exc:
        raise MissingDependencyError(exc.name or "torch", extra="torch", purpose="ONNX export") from None
    device = check_device(device)
    _quiet_transformers()
    ref, _ = resolve_model_path(model)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tok = AutoTokenizer.from_pretrained(ref)
    mdl = load_sequence_classifier(ref, attn_implementation="eager").eval().to(device)
    tok.save_pretrained(out)
    mdl.config.save_pretrained(out)
    enc = tok(["A premise sentence."], ["A hypothesis."], return_tensors="pt")
    names = [k for k in ("input_ids", "attention_mask", "token_type_ids") if k in enc]
    fp32 = out / "model.onnx"
    dyn = {k: {0: "batch", 1: "seq"} for k in names}
    dyn["logits"] = {0: "batch"}
    with torch.inference_mode():
        torch.onnx.export(
            mdl,
            tuple(enc[k].to(device) for k in names),
            str(fp32),
            input_names=names,
            output_names=["logits"],
            dynamic_axes=dyn,
            opset_version=opset,
            dynamo=False,
        )
    files = {"fp32": fp32}
    if quantize:
        try:
            from onnxruntime.quantization import QuantType, quantize_dynamic
        except ImportError:
            raise MissingDependencyError("onnxruntime", extra="onnx", purpose="int8 quantisation") from None
        q = out / "model.int8.onnx"
        quantize_dynamic(str(fp32), str(q), per_channel=True, weight_type=QuantType.QInt8)
        files["int8"] = q
    for extra in ("veridic_model.json", "training_summary.json", "hybrid.json"):
        src = Path(str(ref)) / extra
        if src.exists():
            shutil.copy(src, out / extra)
    fingerprint = _weights_fingerprint(Path(str(ref)))
    if fingerprint is not None:
        # What backend="auto" checks before it prefers this export to the torch weights it was made from.
        (out / EXPORT_RECORD).write_text(json.dumps({"weights": fingerprint}, indent=2) + "\n")
        files["record"] = out / EXPORT_RECORD
    return files


EXPORT_RECORD = "export.json"


def _can_export() -> bool:
    return all(importlib.util.find_spec(m) is not None for m in ("torch", "transformers", "onnx", "onnxruntime"))


def packed_onnx_dir(model_dir: str | Path) -> Path:
    """The ONNX int8 copy of a packed model (:mod:`veridic.nli.packed`), exported on first use into
    :func:`veridic.io._paths.model_cache_dir` and reused after.

    A packed model ships its weights once, as int8 rows, to keep the package small; ONNX Runtime runs
    int8 about five times faster than torch on a CPU. The copy is keyed by the model's revision, so
    new weights get a new copy, and it is written to a temporary folder and renamed into place, so an
    interrupted export is never used.
    """
    from veridic.io._paths import model_cache_dir

    src = Path(model_dir)
    rev = (_read_revision(src) or "unversioned").replace(":", "-")
    dest = model_cache_dir("onnx", f"{src.name}-{rev}")
    if (dest / "model.int8.onnx").exists():
        return dest
    log.warning("Exporting %s to ONNX int8 once (about 20 s for a base-size model) into %s", src.name, dest)
    tmp = dest.with_name(dest.name + f".tmp{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        files = export_onnx(model=src, out_dir=tmp, quantize=True)
        files["fp32"].unlink()  # only the int8 graph is run
        dest.parent.mkdir(parents=True, exist_ok=True)
        try:
            tmp.rename(dest)
        except OSError:  # another process finished the same export first
            if not (dest / "model.int8.onnx").exists():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return dest


def _weights_fingerprint(folder: Path) -> str | None:
    """Size and the first and last MiB of ``model.safetensors``: cheap, and changed by any retraining; for packed
    weights (int8 rows) their recorded revision, the digest of every shard."""
    f = folder / "model.safetensors"
    if not f.is_file():
        rev = _read_revision(folder) if is_packed(folder) else None
        return None if rev is None else f"packed:{rev}"
    size = f.stat().st_size
    h = hashlib.sha256(str(size).encode())
    with open(f, "rb") as fh:
        h.update(fh.read(1 << 20))
        fh.seek(max(0, size - (1 << 20)))
        h.update(fh.read(1 << 20))
    return f"{size}:{h.hexdigest()[:16]}"


def _export_is_stale(model_dir: Path, onnx_dir: Path) -> bool:
    """True when the export records weights other than those in ``model_dir`` (retrained, not re-exported, or
    packed weights shipped again without a new export)."""
    record = _read_json(onnx_dir / EXPORT_RECORD).get("weights")
    if record is None or onnx_dir == model_dir:
        return False
    current = _weights_fingerprint(model_dir)
    return current is not None and current != record


def _canonical_model_id(model_id: Any) -> Any:
    """A local model folder by its real path, so the same weights reached through a relative path or a
    symlink share cached predictions; names and hub ids are kept as they are."""
    if isinstance(model_id, str) and model_id and model_id != EMBEDDED_MODEL_NAME and Path(model_id).is_dir():
        return str(Path(model_id).resolve())
    return model_id


class CachedBackend:
    """Wrap a backend and remember its predictions per (premise, hypothesis, mc_samples, seed).

    Scorers that share pairs (``e`` and ``e-c``, sentence-level and hybrid)
    then share model calls, in the spirit of lm-evaluation-harness's
    ``CachingLM``. With ``path`` the cache also lives on disk (a
    :class:`~veridic.io._store.DiskStore` folder, keyed by the model's id and
    revision too), so a later run reuses it. Cached
    results are exactly the wrapped backend's, since predictions are
    deterministic per pair (MC dropout is seeded per pair). On disk, new
    predictions are committed every ``chunk_size`` pairs, so a stopped run
    resumes where it was.

    >>> cb = CachedBackend(backend, path="~/.cache/veridic/nli-predictions")   # doctest: +SKIP
    """

    def __init__(self, backend: NLIBackend, *, path: str | Path | None = None, max_items: int = 2_000_000, chunk_size: int = 256):
        if chunk_size < 1:
            raise ConfigError(f"chunk_size must be >= 1; got {chunk_size}.")
        self.inner = backend
        self.chunk_size = chunk_size
        self._memo: dict[tuple[str, str, int, int], np.ndarray] = {}
        self.max_items = max_items
        self.hits = 0
        self.misses = 0
        self._db = None
        if path is not None:
            from veridic.io._store import DiskStore

            self._db = DiskStore(path)
            d = backend.describe()
            key = [_canonical_model_id(backend.model_id), backend.revision, d.get("dtype"), backend.max_length]
            if d.get("int8_products"):
                # int8 predictions cached before products were exact differ by CPU: never serve them as exact ones.
                key.append(d["int8_products"])
            self._model_key = json.dumps(key)

    def __getattr__(self, name: str) -> Any:
        # Everything but predict() is the wrapped backend's own.
        return getattr(self.inner, name)

    def _predict_missing(self, missing: list[tuple[str, str, int, int]], *, mc_samples: int, seed: int, progress: bool) -> None:
        # With a disk cache, predict in chunks and commit each one, so a run that is stopped (a long MC job,
        # a session that ends) keeps what it computed. Chunks are cut from the length-sorted pairs, which
        # keeps the inner backend's length bucketing; results do not depend on batching (seeded per pair).
        chunk = self.chunk_size if self._db is not None else len(missing)
        order = sorted(missing, key=lambda k: len(k[0]) + len(k[1])) if len(missing) > chunk else missing
        bar = None
        if progress and len(order) > chunk:
            from tqdm.auto import tqdm

            bar = tqdm(total=len(order), desc="NLI", unit="pair")
        try:
            for i in range(0, len(order), chunk):
                part = order[i : i + chunk]
                got = self.inner.predict([k[0] for k in part], [k[1] for k in part], mc_samples=mc_samples, seed=seed,
                                         progress=progress and bar is None)
                for k, row in zip(part, got):
                    self._memo[k] = row
                if self._db is not None:
                    self._db.put_many((self._db_key(k), np.asarray(r, dtype=np.float64)) for k, r in zip(part, got))
                if bar is not None:
                    bar.update(len(part))
        finally:
            if bar is not None:
                bar.close()

    def _db_key(self, k: tuple[str, str, int, int]) -> str:
        return hashlib.sha256(json.dumps([self._model_key, *k]).encode("utf-8", "surrogatepass")).hexdigest()

    def predict(self, premises: Sequence[str], hypotheses: Sequence[str], *, mc_samples: int = 0, seed: int = 0, progress: bool = False) -> np.ndarray:
        _validate_pairs(premises, hypotheses)
        keys = [(p, h, mc_samples, seed if mc_samples else 0) for p, h in zip(premises, hypotheses)]
        missing = list(dict.fromkeys(k for k in keys if k not in self._memo))
        if missing and self._db is not None:
            by_key = {self._db_key(k): k for k in missing}
            for dk, row in self._db.get_many(list(by_key)).items():
                self._memo[by_key[dk]] = row
            missing = [k for k in missing if k not in self._memo]
        self.hits += len(keys) - len(missing)
        self.misses += len(missing)
        if missing:
            if len(self._memo) + len(missing) > self.max_items:
                self._memo.clear()
            self._predict_missing(missing, mc_samples=mc_samples, seed=seed, progress=progress)
        if not keys:
            return self.inner.predict([], [], mc_samples=mc_samples, seed=seed)
        return np.stack([self._memo[k] for k in keys])
