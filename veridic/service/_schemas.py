"""Pydantic request and response models of the HTTP service.

The response models mirror the library's result types field for field
(:meth:`veridic.types.Verdict.to_dict`,
:meth:`veridic.detect.DetectionResult.to_dict`), so a verdict from the
service and one from :func:`veridic.score` serialise the same way.

>>> ScoreRequest.model_validate({"pairs": [{"source": "A cat sat.", "claim": "A cat sat."}]}).pairs[0].claim
'A cat sat.'
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictStr, model_serializer

__all__ = [
    "DetectRequest",
    "DetectionResultModel",
    "ErrorBody",
    "ErrorResponse",
    "HallucinationSpanModel",
    "HealthResponse",
    "ModelsResponse",
    "PairIn",
    "ScoreRequest",
    "ScoreResponse",
    "SentenceVerdictModel",
    "SpanModel",
    "VerdictModel",
]


_UNCERTAINTY = "The standard deviation of the score over Monte-Carlo dropout samples; null without them (mc_samples=0)."


class _Strict(BaseModel):
    # Unknown keys are a typo more often than not: say so instead of ignoring them.
    model_config = ConfigDict(extra="forbid")


class PairIn(_Strict):
    """One claim to check against its source (``context``: dialogue history, a string or a list of turns)."""

    source: StrictStr = Field(description="The grounding text.", examples=["The company hired 200 engineers in 2023."])
    claim: StrictStr = Field(description="The generated text to check.", examples=["The company laid off engineers in 2023."])
    context: StrictStr | list[StrictStr] | None = Field(default=None, description="Dialogue history the claim responds to (optional).")
    id: StrictStr | None = Field(default=None, description="Your id for the pair; echoed back in `ids`.")


class ScoreRequest(_Strict):
    pairs: list[PairIn] = Field(min_length=1, description="Pairs to score; verdicts come back in the same order.")
    options: dict[str, Any] | None = Field(
        default=None,
        description="Scorer options for this request (veridic.config.ScorerConfig fields: method, granularity, max_windows, "
                    "context_mode, threshold, mc_samples up to the server's --max-mc-samples, ...); an unknown option is a 422.",
        examples=[{"max_windows": 4, "context_mode": "premise"}],
    )


class SpanModel(BaseModel):
    """:class:`veridic.types.Span` (offsets into the source)."""

    start: int
    end: int
    text: str
    label: str | None = None
    score: float | None = None

    @model_serializer(mode="wrap")
    def _drop_unset(self, handler):
        # Span.to_dict leaves out label/score when they are None; so does the service.
        d = handler(self)
        return {k: v for k, v in d.items() if v is not None or k in ("start", "end", "text")}


class StructureConflictModel(BaseModel):
    """:class:`veridic.types.StructureConflict`."""

    start: int
    end: int
    text: str
    kind: Literal["swap", "reversal"]
    suggestion: str
    evidence_start: int
    evidence_end: int


class SentenceVerdictModel(BaseModel):
    """:meth:`veridic.types.SentenceVerdict.to_dict`: ``start``/``end``/``text`` locate the sentence in the claim."""

    start: int
    end: int
    text: str
    score: float
    e: float
    n: float
    c: float
    uncertainty: float | None = Field(description=_UNCERTAINTY)
    evidence: SpanModel | None
    conflict: StructureConflictModel | None = Field(
        default=None, description="Exchanged roles or a reversed predicate found by the structure check (offsets into the claim and the source); "
                                  "the sentence is then judged a contradiction (e, n, c = 0, 0, 1).")


class VerdictModel(BaseModel):
    """:meth:`veridic.types.Verdict.to_dict`."""

    score: float
    label: Literal["supported", "unsupported", "abstain"]
    e: float
    n: float
    c: float
    uncertainty: float | None = Field(description=_UNCERTAINTY)
    method: str
    model: str
    sentences: list[SentenceVerdictModel]
    evidence: list[SpanModel]


class ScoreResponse(BaseModel):
    verdicts: list[VerdictModel]
    ids: list[str | None] = Field(description="The request's pair ids, in order.")
    model: str
    method: str
    version: str


class DetectRequest(_Strict):
    passage: StrictStr = Field(description="Text to check.", examples=["Messi was born on June 12, 1987."])
    evidence: StrictStr = Field(description="Evidence text to check it against.", examples=["Lionel Messi was born on June 24, 1987, in Rosario."])


class HallucinationSpanModel(BaseModel):
    """:meth:`veridic.detect.HallucinationSpan.to_dict` (offsets into the passage)."""

    start: int
    end: int
    text: str
    type: str
    confidence: float | None
    evidence: SpanModel | None
    suggestion: str | None
    reason: str | None
    edit_range: list[int] | None = None


class DetectionResultModel(BaseModel):
    """:meth:`veridic.detect.DetectionResult.to_dict`."""

    passage: str
    spans: list[HallucinationSpanModel]
    edited: str
    tagged: str
    sentences: list[SentenceVerdictModel]
    retrieved: list[Any]


class HealthResponse(BaseModel):
    status: Literal["ok"]
    version: str
    model: str
    method: str
    detector: bool
    queued_pairs: int
    settings: dict[str, Any]


class ModelsResponse(BaseModel):
    version: str
    scorer: dict[str, Any]
    detector: dict[str, Any] | None


class ErrorBody(BaseModel):
    type: str = Field(description="Machine-readable kind: validation_error, input_error, too_large, timeout, overloaded, unauthorized, ...")
    message: str = Field(description="What was expected, what arrived, what to do.")
    details: list[dict[str, Any]] | None = None


class ErrorResponse(BaseModel):
    error: ErrorBody
