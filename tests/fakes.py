"""The dummy NLI backend for unit tests (it ships in the package as ``veridic.nli._dummy``)."""

from veridic.nli._dummy import CONTRA, ENTAIL, NEUTRAL, DummyNLIBackend

FakeNLIBackend = DummyNLIBackend

__all__ = ["CONTRA", "ENTAIL", "NEUTRAL", "FakeNLIBackend", "DummyNLIBackend"]
