"""A self-contained HTML view of a detection result.

Each span is highlighted in its type's colour; hovering it (or focusing it
with the keyboard) shows the type, confidence, the rule that fired, the
proposed edit and the evidence it was judged against. The page has no
scripts and no external resources, so it opens offline and can be attached
to a report or an issue as one file.

>>> from veridic.detect._result import DetectionResult, HallucinationSpan
>>> s = HallucinationSpan(start=18, end=20, text="12", type="entity", confidence=0.8, evidence=None, suggestion="24")
>>> r = DetectionResult(passage="Messi was born on 12 June.", spans=(s,), edited="Messi was born on 24 June.",
...                     tagged="", sentences=())
>>> '<mark class="hl t-entity"' in render_html(result=r)
True
"""

from __future__ import annotations

import html
from typing import Any

from veridic.detect._result import DetectionResult
from veridic.detect._taxonomy import ERROR_TYPES

__all__ = ["render_html", "TYPE_COLOURS"]

# Colour-blind-safe (Okabe–Ito) background tints, one per taxonomy type.
TYPE_COLOURS: dict[str, str] = {
    "entity": "#e69f00",
    "relation": "#56b4e9",
    "contradictory": "#d55e00",
    "invented": "#cc79a7",
    "subjective": "#009e73",
    "unverifiable": "#999999",
}

_CSS = """
body{font:16px/1.6 system-ui,sans-serif;max-width:52rem;margin:2rem auto;padding:0 1rem;color:#222}
h1{font-size:1.2rem} h2{font-size:1rem;margin-top:2rem}
.passage{white-space:pre-wrap;border:1px solid #ddd;border-radius:6px;padding:1rem}
.hl{position:relative;border-radius:3px;padding:0 2px;cursor:help;outline:none}
.hl .tip{display:none;position:absolute;left:0;top:1.6em;z-index:10;min-width:18rem;max-width:28rem;background:#fff;
 border:1px solid #888;border-radius:6px;padding:.5rem .7rem;box-shadow:0 2px 8px rgba(0,0,0,.2);font-size:.85rem;
 white-space:normal;color:#222}
.hl:hover .tip,.hl:focus .tip{display:block}
.tip b{text-transform:uppercase;letter-spacing:.03em}
.legend span{display:inline-block;margin-right:.8rem;padding:0 .4rem;border-radius:3px}
.edited{white-space:pre-wrap;background:#f6f6f6;border-radius:6px;padding:1rem}
"""


def _tip(span: Any, passage: str) -> str:
    parts = [f"<b>{html.escape(span.type)}</b>"]
    if span.confidence is not None:
        parts.append(f" · confidence {span.confidence:.2f}")
    if span.suggestion is not None:
        parts.append(f"<br>edit: {'delete' if span.suggestion == '' else '→ ' + html.escape(span.suggestion)}")
    elif span.type not in ("entity", "relation"):
        # The marked words alone cannot go: say what the edit removes.
        wider = "" if span.edit_range is None else f" “{html.escape(passage[span.edit_range[0] : span.edit_range[1]])}”"
        parts.append("<br>edit: delete" + wider)
    if span.evidence is not None:
        parts.append(f"<br>evidence [{span.evidence.start}:{span.evidence.end}]: “{html.escape(span.evidence.text)}”")
    if span.reason:
        parts.append(f"<br><small>rule: {html.escape(span.reason)}</small>")
    return "".join(parts)


def render_html(*, result: DetectionResult, title: str = "veridic: detected hallucinations") -> str:
    """The result as one HTML page (UTF-8 string); all text is escaped."""
    p = result.passage
    out: list[str] = []
    pos = 0
    for i, s in enumerate(result.spans):
        out.append(html.escape(p[pos : s.start]))
        colour = TYPE_COLOURS.get(s.type, "#cccccc")
        out.append(
            f'<mark class="hl t-{html.escape(s.type)}" tabindex="0" data-type="{html.escape(s.type)}" '
            f'data-start="{s.start}" data-end="{s.end}" style="background:{colour}55" id="span-{i}">'
            f'{html.escape(s.text)}<span class="tip" role="tooltip">{_tip(s, p)}</span></mark>'
        )
        pos = s.end
    out.append(html.escape(p[pos:]))
    legend = "".join(f'<span style="background:{TYPE_COLOURS[t]}55">{t}</span>' for t in ERROR_TYPES if t in TYPE_COLOURS)
    counts = ", ".join(f"{sum(1 for s in result.spans if s.type == t)} {t}" for t in ERROR_TYPES
                       if any(s.type == t for s in result.spans)) or "no hallucination found"
    if not result.judged:  # an explicit "cannot judge" is not a clean bill
        counts = result.note or "cannot judge"
    evidence = f"<h2>Evidence</h2><div class=\"passage\">{html.escape(result.evidence)}</div>" if result.evidence else ""
    return (
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f"<title>{html.escape(title)}</title><style>{_CSS}</style></head><body>"
        f"<h1>{html.escape(title)}</h1><p class=\"legend\">{legend}</p><p>{html.escape(counts)}</p>"
        f"<div class=\"passage\" id=\"passage\">{''.join(out)}</div>"
        f"<h2>Edited passage</h2><div class=\"edited\" id=\"edited\">{html.escape(result.edited)}</div>"
        f"{evidence}</body></html>\n"
    )
