"""Fine-grained hallucination detection and editing (paper 002, FAVA's taxonomy) on a CPU.

>>> from veridic.detect import ERROR_TYPES, parse_tagged
>>> ERROR_TYPES[:3]
('entity', 'relation', 'contradictory')
"""

from veridic.detect.detector import HallucinationDetector, Retriever
from veridic.detect.edit import apply_edits
from veridic.detect.html import render_html
from veridic.detect.load import load_detector
from veridic.detect.result import DetectionResult, HallucinationSpan
from veridic.detect.subjective import LexiconSubjectivity, SubjectivityClassifier, SubjectivityResult
from veridic.detect.tags import ParsedTagged, parse_tagged, to_tagged
from veridic.detect.taxonomy import ERROR_TYPES, LABEL_MAPS, TAXONOMY, ErrorType, ErrorTypeInfo, map_label

__all__ = [
    "load_detector",
    "render_html",
    "HallucinationDetector",
    "Retriever",
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
