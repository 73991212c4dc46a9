import numpy as np
import pytest

from veridic.errors import ConfigError
from veridic.nli._labels import LabelMap


@pytest.mark.parametrize(
    "id2label, expected",
    [
        ({0: "entailment", 1: "neutral", 2: "contradiction"}, (0, 1, 2)),
        ({0: "CONTRADICTION", 1: "NEUTRAL", 2: "ENTAILMENT"}, (2, 1, 0)),  # roberta-large-mnli order
        ({"0": "entailment", "1": "contradiction", "2": "neutral"}, (0, 2, 1)),
        ({0: "Entailment", 1: "Not Entailment"}, (0, 1, None)),
        ({0: "not_entailment", 1: "entailment"}, (1, 0, None)),
    ],
)
def test_reads_label_names_from_config(id2label, expected):
    lm = LabelMap.from_id2label(id2label)
    assert (lm.entailment, lm.neutral, lm.contradiction) == expected


def test_two_way_model_reports_not_entailment_as_neutral():
    lm = LabelMap.from_id2label({0: "not_entailment", 1: "entailment"})
    assert lm.two_way
    enc = lm.to_enc(np.array([[0.3, 0.7]]))
    np.testing.assert_allclose(enc, [[0.7, 0.3, 0.0]])


def test_reorders_probabilities_to_e_n_c():
    lm = LabelMap.from_id2label({0: "contradiction", 1: "neutral", 2: "entailment"})
    np.testing.assert_allclose(lm.to_enc(np.array([[0.1, 0.2, 0.7]])), [[0.7, 0.2, 0.1]])


def test_generic_label_names_give_an_actionable_error():
    with pytest.raises(ConfigError) as exc:
        LabelMap.from_id2label({0: "LABEL_0", 1: "LABEL_1", 2: "LABEL_2"})
    msg = str(exc.value)
    assert "LABEL_0" in msg and "label_map=" in msg


def test_explicit_mapping_is_validated():
    lm = LabelMap.from_mapping({"entailment": 2, "neutral": 1, "contradiction": 0}, num_labels=3)
    assert lm.names == ("contradiction", "neutral", "entailment")
    with pytest.raises(ConfigError, match="outside"):
        LabelMap.from_mapping({"entailment": 3}, num_labels=3)
    with pytest.raises(ConfigError, match="entailment required"):
        LabelMap.from_mapping({"neutral": 0}, num_labels=3)


def test_backend_reads_labels_from_saved_config(tmp_path):
    from conftest import make_tiny_nli

    from veridic.nli import load_backend

    d = make_tiny_nli(tmp_path / "m", id2label={0: "contradiction", 1: "entailment", 2: "neutral"})
    b = load_backend(d, dtype="float32")
    assert (b.label_map.entailment, b.label_map.neutral, b.label_map.contradiction) == (1, 2, 0)
