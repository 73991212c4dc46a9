import veridic
import veridic.errors
import veridic.nli


def test_exported_members_exist_and_are_listed():
    for mod in (veridic, veridic.errors, veridic.nli):
        for name in mod.__all__:
            assert hasattr(mod, name), f"{mod.__name__}.{name} is in __all__ but missing"
        public = {n for n in vars(mod) if not n.startswith("_") and getattr(vars(mod)[n], "__module__", "").startswith("veridic")}
        assert public <= set(mod.__all__) | {n for n in public if getattr(vars(mod)[n], "__module__", "") != mod.__name__}


def test_exception_tree():
    e = veridic.errors
    for cls in (e.InputError, e.DataFormatError, e.ConfigError, e.ModelLoadError, e.MissingDependencyError, e.RegistryError):
        assert issubclass(cls, e.VeridicError)
    assert issubclass(e.DataFormatError, e.InputError)
    err = e.MissingDependencyError("onnxruntime", extra="onnx", purpose="The ONNX backend")
    assert "pip install 'veridic[onnx]'" in str(err)


def test_score_is_keyword_only():
    import inspect

    params = inspect.signature(veridic.score).parameters
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in params.values() if p.kind is not inspect.Parameter.VAR_KEYWORD)


def test_api_score_with_a_local_model(tiny_nli_dir):
    vs = \
        veridic.score(sources=["A cat sat."], claims=["A cat sat."], model=tiny_nli_dir, method="e-c")
    assert len(vs) == 1 and isinstance(vs[0], veridic.Verdict)
