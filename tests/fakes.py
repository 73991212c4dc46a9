"""The dummy NLI backend for unit tests (it ships in the package as ``veridic.nli.dummy``)."""

from veridic.nli.dummy import CONTRA, ENTAIL, NEUTRAL, DummyNLIBackend

FakeNLIBackend = DummyNLIBackend

__all__ = ["CONTRA", "ENTAIL", "NEUTRAL", "FakeNLIBackend", "DummyNLIBackend"]
