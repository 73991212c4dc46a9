"""Ablation data: West et al.'s synthetic set, flat rows, prompt templates and window fitting."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from veridic.ablation._data import WEST_BROKEN_IDS, AblationExample, load_ablation_set, load_west_synthetic, west_synthetic_path
from veridic.ablation._templates import TEMPLATES, PromptTemplate, fit_to_window, get_template
from veridic.errors import ConfigError, DataFormatError, InputError
from veridic.lm._dummy import DummyLM

WEST = west_synthetic_path()
needs_west = pytest.mark.skipif(not WEST.exists(), reason=f"West et al.'s synthetic set is not at {WEST} (set VERIDIC_DATA to the shared data folder)")


@needs_west
def test_west_synthetic_gives_both_directions():
    exs = load_west_synthetic()
    assert len(exs) == 168  # 84 entries x 2; the authors' loader skips one broken entry
    assert len(load_west_synthetic(include_broken=True)) == 170
    assert not any(e.group in WEST_BROKEN_IDS for e in exs)
    raw = json.loads(WEST.read_text())
    orig, edit = exs[0], exs[1]
    key = orig.group
    assert (orig.grounding, orig.ablated_grounding, orig.target) == (raw[key]["source"], raw[key]["new_source"], raw[key]["target"])
    assert (edit.grounding, edit.ablated_grounding, edit.target) == (raw[key]["new_source"], raw[key]["source"], raw[key]["new_target"])
    assert orig.context == edit.context and orig.group == edit.group
    assert [e.id for e in exs[:2]] == [f"{key}:orig", f"{key}:edit"]
    assert load_ablation_set(WEST) == exs  # auto-detected


def test_flat_rows_and_aliases(tmp_path: Path):
    p = tmp_path / "fa.jsonl"
    p.write_text(
        json.dumps({"id": "a", "grounding": "G 4.", "ablated_grounding": "G 2.", "context": "C.", "target": "Y 4."})
        + "\n"
        + json.dumps({"grounding_true": "H 5.", "grounding_false": "H 6.", "context": "D.", "target": "Z 5."})
        + "\n"
    )
    exs = load_ablation_set(p)
    assert [e.id for e in exs] == ["a", "2"]
    assert exs[1].ablated_grounding == "H 6."


def test_bad_rows_name_the_row(tmp_path: Path):
    p = tmp_path / "bad.jsonl"
    p.write_text(json.dumps({"grounding": "G", "ablated_grounding": "G2", "target": "Y"}) + "\n" + json.dumps({"grounding": "G", "target": "Y"}) + "\n")
    with pytest.raises(DataFormatError, match=r"row 2: missing column 'ablated_grounding'"):
        load_ablation_set(p)
    p.write_text(json.dumps({"grounding": "G", "ablated_grounding": "G", "target": "Y"}) + "\n")
    with pytest.raises(DataFormatError, match="identical; nothing was ablated"):
        load_ablation_set(p)
    with pytest.raises(InputError, match="target must be non-blank"):
        AblationExample(grounding="g", ablated_grounding="h", context="", target="  ", id="x")


def test_template_golden_strings():
    t = get_template("west-zs")
    assert t.prompt(grounding="Four miners.", context="The mine.") + t.continuation(target=" They were freed.") == "Four miners.\n\nThe mine.\n\n They were freed.\n"
    assert t.prompt(grounding=None, context="The mine.") == "The mine.\n\n"
    old = get_template("single-newline")
    assert old.prompt(grounding="Four miners.", context="The mine.") + old.continuation(target="Y") == "Four miners.\nThe mine.\nY\n"
    custom = PromptTemplate(name="x", grounding_prefix="<g>", grounding_suffix="</g>", context_prefix="<c>", context_suffix="</c>", target_prefix="<y>", target_suffix="</y>")
    assert custom.prompt(grounding="G", context="C") + custom.continuation(target="Y") == "<g>G</g><c>C</c><y>Y</y>"
    assert TEMPLATES["labelled"].prompt(grounding=None, context="C") == "Article: C"
    with pytest.raises(ConfigError, match="Did you mean 'west-zs'"):
        get_template("west_zs")


def test_fit_to_window_trims_the_longer_part():
    lm = DummyLM(max_length=64)  # bytes are tokens
    t = get_template("west-zs")
    g, c, y = "G" * 100, "c" * 20, "yy"
    fp = fit_to_window(backend=lm, template=t, grounding=g, context=c, target=y)
    assert len(lm.tok_encode(fp.prompt + fp.continuation)) == 63  # one token left for the start token
    assert fp.context_tokens_dropped == 0 and fp.grounding_tokens_dropped == 100 + 20 + 2 + 5 - 63
    assert fp.prompt.startswith("G") and fp.prompt.endswith("c" * 20 + "\n\n")
    # When both are long, they are trimmed to equal length: grounding from its end, context from its start.
    fp = fit_to_window(backend=lm, template=t, grounding="G" * 50 + "H" * 50, context="a" * 50 + "b" * 50, target=y)
    g_part, c_part = fp.prompt.split("\n\n")[:2]
    assert abs(len(g_part) - len(c_part)) <= 1 and g_part.startswith("G") and c_part.endswith("b")
    untouched = fit_to_window(backend=lm, template=t, grounding="G", context="C", target=y)
    assert untouched.prompt == "G\n\nC\n\n" and untouched.grounding_tokens_dropped == untouched.context_tokens_dropped == 0


def test_west_zs_is_what_the_authors_script_feeds_the_model():
    """score_zeroshot_gpt2.py: encode "{g}\\n" / "{c}\\n", decode, then format with "{}\\n" again."""
    lm = DummyLM()  # byte tokenizer: decode(encode(x)) == x, like GPT-2 on plain text
    g, c, y = "Four miners were stuck.", "The mine collapsed.", "Four miners were freed."
    gnd = lm.tok_decode(lm.tok_encode(f"{g}\n"))  # get_truncated_inputs_gpt2_zs
    ctxt = lm.tok_decode(lm.tok_encode(f"{c}\n"))
    script_input = f"{gnd}\n" + f"{ctxt}\n"  # tokenize_for_gpt2_zs: precontext + context
    script_target = f"{y}\n"
    fp = fit_to_window(backend=lm, template=get_template("west-zs"), grounding=g, context=c, target=y)
    assert (fp.prompt, fp.continuation) == (script_input, script_target)
    assert fit_to_window(backend=lm, template=get_template("single-newline"), grounding=g, context=c, target=y).prompt != script_input
