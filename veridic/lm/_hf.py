"""transformers causal-LM backend: one class owns loading, device, dtype,
batching and inference mode.

``HFCausalLM.from_pretrained(ref)`` accepts a local folder written by
``save_pretrained``, a hub id (same ``from_pretrained`` code path; offline
when ``HF_HUB_OFFLINE=1``), a ``.gguf`` file (dequantised once into the
model cache, see :mod:`veridic.lm._embedded`), or the name of an embedded LM
(``"embedded"`` = ``"smollm2-135m"``, or ``"gemma3-270m"``).

Batches are formed from requests of similar length (length bucketing) and
left-padded with explicit position ids, so every continuation ends at the
last column and only its logits are materialised (``logits_to_keep``): a
49k-token vocabulary times 1,024 positions would otherwise be 200 MB per row.

>>> import torch                                      # doctest: +SKIP
>>> lm = HFCausalLM.from_pretrained("embedded")       # doctest: +SKIP
>>> from veridic.lm._api import LoglikelihoodRequest   # doctest: +SKIP
>>> r, = lm.loglikelihood([LoglikelihoodRequest(context="Paris is the capital of", continuation=" France")])  # doctest: +SKIP
>>> r.logprob < 0                                     # doctest: +SKIP
True
"""

from __future__ import annotations

import contextlib
import inspect
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from veridic.errors import ConfigError, InputError, MissingDependencyError, ModelLoadError
from veridic.lm._api import GenerationRequest, GenerationResult, LogitsProcessor, LoglikelihoodRequest, LoglikelihoodResult, check_requests, stop_at

__all__ = ["HFCausalLM", "load_lm"]

_DTYPES = ("float32", "bfloat16", "float16")


def _import_torch():
    try:
        import torch
        import transformers  # noqa: F401
    except ImportError as exc:
        raise MissingDependencyError(exc.name or "torch", extra="torch", purpose="The transformers causal-LM backend") from None
    return torch


def _quiet_transformers() -> None:
    # Weight-loading progress bars are noise inside veridic's own output.
    try:
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
        hf_logging.set_verbosity_error()
    except Exception:  # noqa: BLE001, S110 - cosmetic only: a failure leaves progress bars on
        pass


class HFCausalLM:
    """A transformers ``AutoModelForCausalLM`` behind the :class:`~veridic.lm._api.LanguageModel` protocol.

    Build it from objects already in memory (tests, training loops) or with
    :meth:`from_pretrained`. ``dtype`` defaults to float32: log-probability
    *differences* between two groundings are often a few tenths of a nat, and
    bfloat16 rounding is of that order, so half precision is opt-in.
    """

    def __init__(self, *, model: Any, tokenizer: Any, model_id: str, revision: str | None = None, device: str = "cpu", dtype: str = "float32",
                 batch_size: int = 8, max_batch_tokens: int = 8192, max_length: int | None = None, start_token: str | None = None):
        torch = _import_torch()
        self._torch = torch
        if dtype not in _DTYPES:
            raise ConfigError(f"dtype must be one of {_DTYPES}; got {dtype!r}.")
        from veridic.device import check_device

        device = check_device(str(device))
        if batch_size < 1 or max_batch_tokens < 1:
            raise ConfigError(f"batch_size and max_batch_tokens must be >= 1; got {batch_size}, {max_batch_tokens}.")
        self.device = torch.device(device)
        self.dtype = dtype
        self.model = model.to(device=self.device, dtype=getattr(torch, dtype)).eval()
        self.tokenizer = tokenizer
        self.model_id = model_id
        self.revision = revision
        self.batch_size = batch_size
        self.max_batch_tokens = max_batch_tokens
        cfg = model.config
        model_max = getattr(cfg, "max_position_embeddings", None) or getattr(cfg, "n_positions", None) or 2048
        self.max_length = int(max_length or model_max)
        if self.max_length > model_max:
            raise ConfigError(f"max_length={self.max_length} exceeds the model's {model_max} positions.")
        self.vocab_size = int(model.get_output_embeddings().weight.shape[0])
        self.num_parameters = sum(p.numel() for p in model.parameters())
        self._prefix = self._special_prefix()
        eos = tokenizer.eos_token_id if tokenizer.eos_token_id is not None else getattr(cfg, "eos_token_id", None)
        bos = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else getattr(cfg, "bos_token_id", None)
        if isinstance(eos, list):
            eos = eos[0]
        # An empty context still needs one token to predict from: the
        # tokenizer's own prefix if it has one, else BOS, else EOS (as GPT-2 does).
        start = self._prefix or ([bos] if bos is not None else ([eos] if eos is not None else []))
        if start_token is not None:
            tid = tokenizer.convert_tokens_to_ids(start_token)
            if tid is None or (tid == tokenizer.unk_token_id and start_token != tokenizer.unk_token):
                raise ConfigError(f"start_token {start_token!r} is not in the vocabulary of {model_id}.")
            start = [tid]
        if not start:
            raise ModelLoadError(f"{model_id}: the tokenizer has no BOS/EOS token to condition an empty context on.")
        self._start = list(start)
        self.eos_token_id = eos
        self.pad_token_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else (eos if eos is not None else 0)
        self._accepts_logits_to_keep = "logits_to_keep" in inspect.signature(model.forward).parameters

    # ------------------------------------------------------------------ loading
    @classmethod
    def from_pretrained(cls, ref: str | Path = "embedded", *, revision: str | None = None, gguf_file: str | None = None, device: str = "cpu",
                        dtype: str = "float32", batch_size: int = 8, max_batch_tokens: int = 8192, max_length: int | None = None,
                        local_files_only: bool | None = None, trust_remote_code: bool = False, cache_dir: str | Path | None = None) -> HFCausalLM:
        """Load from an embedded name, a folder, a ``.gguf`` file or a hub id (see module docs)."""
        torch = _import_torch()
        from transformers import AutoModelForCausalLM, AutoTokenizer

        from veridic.lm._embedded import DEFAULT_EMBEDDED_LM, EMBEDDED_LMS, cached_gguf_dir, embedded_model_dir

        _quiet_transformers()
        name = str(ref)
        path = Path(name).expanduser()
        start_token = None
        if name == "embedded" or name in EMBEDDED_LMS:
            key = DEFAULT_EMBEDDED_LM if name == "embedded" else name
            folder, kind, model_id = embedded_model_dir(key, cache_dir=cache_dir, verbose=True), "embedded", key
            start_token = EMBEDDED_LMS[key].start_token
        elif gguf_file is not None or (path.is_file() and path.suffix == ".gguf"):
            gguf = (path / gguf_file) if gguf_file is not None else path
            if not gguf.is_file():
                raise ModelLoadError(f"GGUF file {str(gguf)!r} does not exist.")
            folder, kind, model_id = cached_gguf_dir(gguf, name=gguf.stem, cache_dir=cache_dir, verbose=True), "gguf", gguf.name
        elif path.is_dir():
            if not (path / "config.json").is_file():
                raise ModelLoadError(f"{name!r} is a directory but holds no config.json; point at a folder written by save_pretrained().")
            folder, kind, model_id = path, "directory", str(path)
            marker = path / "veridic_model.json"
            if marker.is_file():  # a veridic fine-tune records the start token it was trained with
                try:
                    start_token = json.loads(marker.read_text()).get("start_token")
                except (OSError, ValueError):
                    start_token = None
        elif path.suffix or name.startswith((".", "/", "~")):
            raise ModelLoadError(f"Model path {name!r} does not exist.")
        else:
            folder, kind, model_id = name, "hub", name
        if local_files_only is None:
            local_files_only = kind != "hub" or os.environ.get("HF_HUB_OFFLINE") == "1"
        try:
            tok = AutoTokenizer.from_pretrained(folder, revision=revision, local_files_only=local_files_only, trust_remote_code=trust_remote_code)
            model = AutoModelForCausalLM.from_pretrained(
                folder, revision=revision, local_files_only=local_files_only, trust_remote_code=trust_remote_code, dtype=torch.float32
            )
        except OSError as exc:
            hint = " It is a hub id: this needs network access to a model hub (or a local copy)." if kind == "hub" else ""
            raise ModelLoadError(f"Could not load causal LM {str(folder)!r} ({kind}).{hint} Cause: {exc}") from None
        lm = cls(model=model, tokenizer=tok, model_id=model_id, revision=revision or _read_revision(folder), device=device, dtype=dtype,
                 batch_size=batch_size, max_batch_tokens=max_batch_tokens, max_length=max_length, start_token=start_token)
        lm.kind = kind
        return lm

    kind: str = "in-memory"

    def describe(self) -> dict[str, Any]:
        return {
            "backend": "hf-causal-lm",
            "model": self.model_id,
            "revision": self.revision,
            "kind": self.kind,
            "dtype": self.dtype,
            "device": str(self.device),
            "max_length": self.max_length,
            "start_tokens": list(self._start),
            "parameters": self.num_parameters,
            "batch_size": self.batch_size,
        }

    # ------------------------------------------------------------------ tokens
    def _special_prefix(self) -> list[int]:
        # Tokens the tokenizer puts *before* text (BOS for Llama/Gemma, nothing
        # for GPT-2), read from the tokenizer rather than hard-coded per model.
        with_sp = self.tokenizer("x", add_special_tokens=True)["input_ids"]
        without = self.tokenizer("x", add_special_tokens=False)["input_ids"]
        if without and with_sp[len(with_sp) - len(without) :] == without:
            return list(with_sp[: len(with_sp) - len(without)])
        return []

    def tok_encode(self, text: str) -> list[int]:
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def tok_decode(self, token_ids: Sequence[int]) -> str:
        return self.tokenizer.decode(list(token_ids), skip_special_tokens=False, clean_up_tokenization_spaces=False)

    def _encode_request(self, req: LoglikelihoodRequest) -> tuple[list[int], list[int], int]:
        cont = self.tok_encode(req.continuation)
        if not cont:
            raise InputError(f"The continuation {req.continuation!r} encodes to no tokens.")
        ctx = self._start + (self.tok_encode(req.context) if req.context else [])
        if len(cont) >= self.max_length:
            raise InputError(f"The continuation is {len(cont)} tokens; the model window is {self.max_length}. Shorten the target.")
        dropped = max(0, len(ctx) + len(cont) - self.max_length)
        if dropped:
            # Keep the start token(s), drop the oldest context tokens: the end of
            # the context is what the continuation depends on most.
            keep = len(self._start)
            ctx = ctx[:keep] + ctx[keep + dropped :]
        return ctx, cont, dropped

    # ------------------------------------------------------------------ forward
    def _batches(self, lengths: Sequence[int]) -> list[list[int]]:
        order = sorted(range(len(lengths)), key=lambda i: (-lengths[i], i))
        batches: list[list[int]] = []
        cur: list[int] = []
        for i in order:
            width = lengths[cur[0]] if cur else lengths[i]  # longest first within a batch
            if cur and (len(cur) >= self.batch_size or (len(cur) + 1) * width > self.max_batch_tokens):
                batches.append(cur)
                cur = []
            cur.append(i)
        if cur:
            batches.append(cur)
        return batches

    def _continuation_logprobs(self, rows: list[tuple[list[int], list[int]]]) -> list[Any]:
        """Log-softmax rows predicting each continuation token, one [n_i, V] float32 tensor per row."""
        torch = self._torch
        width = max(len(c) + len(t) for c, t in rows)
        keep = max(len(t) for _, t in rows) + 1
        ids = torch.full((len(rows), width), self.pad_token_id, dtype=torch.long)
        mask = torch.zeros((len(rows), width), dtype=torch.long)
        for i, (c, t) in enumerate(rows):
            seq = c + t
            ids[i, width - len(seq) :] = torch.tensor(seq, dtype=torch.long)
            mask[i, width - len(seq) :] = 1
        # Left padding needs explicit positions; otherwise padded rows would
        # start at position k > 0 and score differently from the same row alone.
        pos = (mask.cumsum(dim=1) - 1).clamp(min=0)
        kwargs = {"input_ids": ids.to(self.device), "attention_mask": mask.to(self.device), "position_ids": pos.to(self.device), "use_cache": False}
        logits = self._call_model(kwargs, keep)  # [B, keep', V]
        logits = logits[:, -keep:, :].float()
        out = []
        for i, (_, t) in enumerate(rows):
            n = len(t)
            # column -1 predicts the token after the sequence; the n before it predict the continuation.
            out.append(torch.log_softmax(logits[i, keep - 1 - n : keep - 1, :], dim=-1))
        return out

    def _call_model(self, kwargs: dict[str, Any], keep: int) -> Any:
        if self._accepts_logits_to_keep:
            return self.model(**kwargs, logits_to_keep=keep).logits
        return self.model(**kwargs).logits  # architectures without logits_to_keep: full logits

    def _scored(self, requests: Sequence[LoglikelihoodRequest], *, progress: bool, want_full: bool) -> list[tuple[Any, list[int], list[int], int]]:
        torch = self._torch
        reqs = check_requests(requests, LoglikelihoodRequest)
        enc = [self._encode_request(r) for r in reqs]
        results: list[Any] = [None] * len(reqs)
        batches = self._batches([len(c) + len(t) for c, t, _ in enc])
        bar = None
        if progress:
            from tqdm.auto import tqdm

            bar = tqdm(total=len(reqs), desc=f"loglikelihood ({self.model_id})", unit="req")
        with torch.inference_mode():
            for b in batches:
                lps = self._continuation_logprobs([(enc[i][0], enc[i][1]) for i in b])
                for i, lp in zip(b, lps):
                    results[i] = (lp if want_full else _summarise(torch, lp, enc[i][1]), enc[i][0], enc[i][1], enc[i][2])
                if bar is not None:
                    bar.update(len(b))
        if bar is not None:
            bar.close()
        return results

    # ------------------------------------------------------------------ protocol
    def loglikelihood(self, requests: Sequence[LoglikelihoodRequest], *, progress: bool = False) -> list[LoglikelihoodResult]:
        """log P(continuation | context) per request, in the order given."""
        out = []
        for (tok_lps, greedy), ctx, cont, dropped in self._scored(requests, progress=progress, want_full=False):
            out.append(
                LoglikelihoodResult(
                    logprob=float(sum(tok_lps)),
                    is_greedy=greedy,
                    token_logprobs=tuple(tok_lps),
                    token_ids=tuple(cont),
                    n_context_tokens=len(ctx),
                    context_tokens_dropped=dropped,
                )
            )
        return out

    def next_token_logprobs(self, requests: Sequence[LoglikelihoodRequest]) -> list[np.ndarray]:
        """Full log-softmax [n_continuation_tokens, vocab] (float32) per request."""
        return [lp.cpu().numpy().astype(np.float32, copy=False) for lp, *_ in self._scored(requests, progress=False, want_full=True)]

    def stream(self, context: str, *, reserve: int = 0) -> _HFStream:
        """A KV-cached incremental scorer starting after ``context`` (left-truncated to leave ``reserve`` tokens)."""
        ids = self._start + (self.tok_encode(context) if context else [])
        room = self.max_length - reserve
        if room < len(self._start) + 1:
            raise ConfigError(f"reserve={reserve} leaves no room in a {self.max_length}-token window.")
        if len(ids) > room:
            ids = ids[: len(self._start)] + ids[len(ids) - room + len(self._start) :]
        return _HFStream(self, ids)

    def generate(
        self,
        requests: Sequence[GenerationRequest],
        *,
        logits_processors: Sequence[LogitsProcessor] | None = None,
    ) -> list[GenerationResult]:
        """Greedy or seeded-sampling continuations, one request at a time.

        ``logits_processors`` run first, on the raw logits, *before* temperature
        and top-p (transformers would otherwise apply custom processors after
        its own warpers, so top-p would filter the unmodified distribution).
        """
        torch = self._torch
        from transformers import GenerationConfig, LogitsProcessorList, TemperatureLogitsWarper, TopPLogitsWarper

        reqs = check_requests(requests, GenerationRequest)
        results = []
        for req in reqs:
            ids = self._start + (self.tok_encode(req.context) if req.context else [])
            room = self.max_length - req.max_new_tokens
            if room <= len(self._start):
                raise InputError(f"max_new_tokens={req.max_new_tokens} leaves no room for the context in a {self.max_length}-token window.")
            if len(ids) > room:
                ids = ids[: len(self._start)] + ids[len(ids) - room + len(self._start) :]
            procs = LogitsProcessorList(list(logits_processors or []))
            if req.do_sample:
                if req.temperature != 1.0:
                    procs.append(TemperatureLogitsWarper(req.temperature))
                if req.top_p < 1.0:
                    procs.append(TopPLogitsWarper(top_p=req.top_p))
            cfg = GenerationConfig(
                max_new_tokens=req.max_new_tokens,
                do_sample=req.do_sample,
                temperature=1.0,
                top_p=1.0,
                top_k=0,
                num_beams=1,
                pad_token_id=self.pad_token_id,
                eos_token_id=self.eos_token_id,
            )
            input_ids = torch.tensor([ids], dtype=torch.long, device=self.device)
            # fork_rng keeps a seeded draw from disturbing the caller's global RNG.
            rng = torch.random.fork_rng(devices=[self.device] if self.device.type == "cuda" else []) if req.do_sample else contextlib.nullcontext()
            with torch.inference_mode(), rng:
                if req.do_sample:
                    torch.manual_seed(req.seed)
                seq = self.model.generate(
                    input_ids=input_ids,
                    attention_mask=torch.ones_like(input_ids),
                    generation_config=cfg,
                    logits_processor=procs,
                    stopping_criteria=_stop_criteria(self, req.stop, len(ids)),
                )
            new = [int(t) for t in seq[0, len(ids) :].tolist()]
            finish = "length"
            if self.eos_token_id is not None and self.eos_token_id in new:
                new = new[: new.index(self.eos_token_id)]
                finish = "eos"
            text, stopped = stop_at(self.tok_decode(new), req.stop)
            results.append(GenerationResult(text=text, token_ids=tuple(new), finish_reason="stop" if stopped else finish))
        return results


def _summarise(torch: Any, lp: Any, cont: list[int]) -> tuple[list[float], bool]:
    idx = torch.tensor(cont, dtype=torch.long, device=lp.device)
    tok = lp.gather(1, idx[:, None])[:, 0]
    greedy = bool((lp.argmax(dim=-1) == idx).all())
    return [float(x) for x in tok.tolist()], greedy


def _stop_criteria(lm: HFCausalLM, stop: Sequence[str], prompt_len: int):
    from transformers import StoppingCriteria, StoppingCriteriaList

    if not stop:
        return StoppingCriteriaList()

    class _Stop(StoppingCriteria):
        def __call__(self, input_ids, scores, **kwargs):
            text = lm.tok_decode(input_ids[0, prompt_len:].tolist())
            done = any(s and s in text for s in stop)
            return lm._torch.full((input_ids.shape[0],), done, dtype=lm._torch.bool, device=input_ids.device)

    return StoppingCriteriaList([_Stop()])


class _HFStream:
    """KV-cached incremental scorer (see :class:`veridic.lm._api.TokenStream`)."""

    def __init__(self, lm: HFCausalLM, ids: list[int]):
        self._lm = lm
        self._past = None
        self._last = None
        self.length = 0
        self.push(ids)

    def push(self, token_ids: Sequence[int]) -> None:
        torch = self._lm._torch
        ids = [int(t) for t in token_ids]
        if not ids:
            return
        if self.length + len(ids) > self._lm.max_length:
            raise InputError(f"The stream would exceed the model window of {self._lm.max_length} tokens.")
        x = torch.tensor([ids], dtype=torch.long, device=self._lm.device)
        pos = torch.arange(self.length, self.length + len(ids), device=self._lm.device)[None, :]
        kwargs = {"input_ids": x, "position_ids": pos, "past_key_values": self._past, "use_cache": True}
        with torch.inference_mode():
            if not self._lm._accepts_logits_to_keep:
                out = self._lm.model(**kwargs)
            else:
                out = self._lm.model(**kwargs, logits_to_keep=1)
        self._past = out.past_key_values
        self._last = torch.log_softmax(out.logits[0, -1].float(), dim=-1)
        self.length += len(ids)

    def logprobs(self) -> Any:
        return self._last


def _read_revision(ref: str | Path) -> str | None:
    # A folder written by veridic's GGUF cache records where it came from.
    p = Path(str(ref)) / "veridic_model.json"
    if p.is_file():
        import json

        meta = json.loads(p.read_text())
        return f"{meta.get('gguf')}@{meta.get('gguf_fingerprint')}"
    return None


def load_lm(ref: str | Path = "embedded", **kwargs: Any) -> HFCausalLM:
    """Build the causal-LM backend the CLI uses (alias of :meth:`HFCausalLM.from_pretrained`)."""
    return HFCausalLM.from_pretrained(ref, **kwargs)
