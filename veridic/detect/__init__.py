"""Fine-grained hallucination detection and editing (paper 002, FAVA's taxonomy) on a CPU.

>>> from veridic.detect import ERROR_TYPES, parse_tagged
>>> ERROR_TYPES[:3]
('entity', 'relation', 'contradictory')
"""

from veridic.detect._detector import HallucinationDetector, Retriever
from veridic.detect._edit import apply_edits
from veridic.detect._html import render_html
from veridic.detect._load import load_detector
from veridic.detect._result import DetectionResult, HallucinationSpan
from veridic.detect._subjective import LexiconSubjectivity, SubjectivityClassifier, SubjectivityResult
from veridic.detect._tagger import EMBEDDED_TAGGER_NAME, SpanTagger
from veridic.detect._tags import ParsedTagged, parse_tagged, to_tagged
from veridic.detect._taxonomy import ERROR_TYPES, LABEL_MAPS, TAXONOMY, ErrorType, ErrorTypeInfo, map_label

__all__ = [
    "load_detector",
    "render_html",
    "HallucinationDetector",
    "Retriever",
    "SpanTagger",
    "EMBEDDED_TAGGER_NAME",
    "DetectionResult",
    "HallucinationSpan",
    "apply_edits",
    "to_tagged",
    "parse_tagged",
    "ParsedTagged",
    "LexiconSubjectivity",
    "SubjectivityClassifier",
    "SubjectivityResult",
    "ERROR_TYPES",
    "ErrorType",
    "ErrorTypeInfo",
    "TAXONOMY",
    "LABEL_MAPS",
    "map_label",
]
