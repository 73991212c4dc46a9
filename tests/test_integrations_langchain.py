"""VeridicGuard in LangChain chains (langchain-core only), offline."""

from __future__ import annotations

import math

import pytest

pytest.importorskip("langchain_core", reason="pip install 'veridic[langchain]'")

from langchain_core.documents import Document  # noqa: E402
from langchain_core.language_models.fake import FakeListLLM  # noqa: E402
from langchain_core.runnables import RunnableLambda, RunnablePassthrough  # noqa: E402
from test_integrations_common import BAD, CASES, FAST, cli_scores, good_rows, no_network  # noqa: E402,F401

from veridic.integrations import Judge  # noqa: E402
from veridic.integrations.langchain import UnsupportedAnswerError, VeridicGuard  # noqa: E402

DOCS = {q: [Document(page_content=c, metadata={"i": i}) for i, c in enumerate(ctx)] for q, ctx, _ in CASES}


def rag_chain(guard):
    """retrieve -> answer (a fake LLM with fixed replies) -> guard."""
    llm = FakeListLLM(responses=[a for _, _, a in CASES])
    retrieve = RunnableLambda(lambda q: DOCS[q])
    return (RunnablePassthrough.assign(documents=lambda x: retrieve.invoke(x["question"]))
            | RunnablePassthrough.assign(answer=lambda x: llm.invoke(x["question"])) | guard)


def test_chain_batch_gives_veridic_scores_and_reasons(tmp_path, no_network):
    guard = VeridicGuard(**FAST)
    out = rag_chain(guard).batch([{"question": q} for q, _, _ in CASES], config={"max_concurrency": 1})
    got = [o["veridic"]["score"] for o in out]
    assert got == pytest.approx(cli_scores(good_rows(), tmp_path), abs=1e-6)
    assert out[0]["veridic"]["label"] == "supported" and out[1]["veridic"]["label"] == "unsupported"
    assert "It never hired anyone." in out[1]["veridic"]["reason"]
    ev = out[3]["veridic"]["sentences"][0]["evidence"]
    assert ev["context"] == 0 and CASES[3][1][0][ev["start"]:ev["end"]] == ev["text"]


def test_guard_raises_or_replaces_an_unsupported_answer(no_network):
    item = {"question": CASES[1][0], "answer": CASES[1][2], "documents": DOCS[CASES[1][0]]}
    with pytest.raises(UnsupportedAnswerError, match="It never hired anyone"):
        (RunnablePassthrough() | VeridicGuard(on_unsupported="raise", **FAST)).invoke(item)
    out = VeridicGuard(on_unsupported="replace", fallback="No answer.", **FAST).invoke(item)
    assert out["answer"] == "No answer." and out["veridic"]["original_answer"] == CASES[1][2]
    ok = {"question": CASES[0][0], "answer": CASES[0][2], "documents": DOCS[CASES[0][0]]}
    assert VeridicGuard(on_unsupported="raise", **FAST).invoke(ok)["answer"] == CASES[0][2]


def test_batch_with_return_exceptions_keeps_the_others():
    items = [{"answer": a, "documents": ctx} for _, ctx, a in CASES[:2]]
    out = VeridicGuard(on_unsupported="raise", **FAST).batch(items, return_exceptions=True)
    assert out[0]["veridic"]["passing"] and isinstance(out[1], UnsupportedAnswerError)


def test_bad_inputs_get_a_documented_nan_in_the_chain(no_network):
    items = [{"answer": a, "documents": ctx} for _, ctx, a in BAD]
    out = (RunnablePassthrough() | VeridicGuard(**FAST)).batch(items)
    for o in out:
        assert o["veridic"]["label"] == "invalid" and o["veridic"]["score"] is None and o["veridic"]["error"]
    assert "no context" in out[0]["veridic"]["error"] and "answer is None" in out[3]["veridic"]["error"]


def test_a_message_answer_is_read_as_its_text():
    from langchain_core.messages import AIMessage

    out = VeridicGuard(**FAST).invoke({"answer": AIMessage(content=CASES[0][2]), "documents": CASES[0][1]})
    (ref,) = Judge(**FAST).judge(answers=[CASES[0][2]], contexts=[CASES[0][1]])
    assert out["veridic"]["score"] == pytest.approx(ref.score) and not math.isnan(ref.score)


@pytest.mark.slow
def test_embedded_model_in_a_chain_equals_veridic_score(tmp_path, no_network):
    out = rag_chain(VeridicGuard()).batch([{"question": q} for q, _, _ in CASES], config={"max_concurrency": 1})
    assert [o["veridic"]["score"] for o in out] == pytest.approx(cli_scores(good_rows(), tmp_path, fast=False), abs=1e-5)
    assert [o["veridic"]["label"] for o in out][:2] == ["supported", "unsupported"]
