"""The README's examples run: its ``>>>`` blocks as doctests, and the "Adding a model" excerpt is
verbatim from the file it points to (so neither can go stale)."""
import doctest
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
_CODE = re.sub(r"(?m)^```.*$", "", README)          # a fence ends an example's expected output


def _section(title):
    start = README.index(f"## {title}\n")
    end = README.find("\n## ", start + 1)
    return README[start:end if end > 0 else None]


_FLOAT = re.compile(r"-?\d+\.\d+(?:e[-+]?\d+)?")


class _Checker(doctest.OutputChecker):
    """Floats agree to 1e-10 relative (the last digits of a printed double depend on the machine)."""

    def check_output(self, want, got, optionflags):
        if super().check_output(want, got, optionflags):
            return True
        if _FLOAT.sub("#", want).split() != _FLOAT.sub("#", got).split():
            return False
        pairs = zip(map(float, _FLOAT.findall(want)), map(float, _FLOAT.findall(got)))
        return all(abs(a - b) <= 1e-10 * max(1.0, abs(a)) for a, b in pairs)


def test_readme_doctests():
    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    parser = doctest.DocTestParser()
    test = parser.get_doctest(_CODE, {}, "README.md", str(ROOT / "README.md"), 0)
    assert len(test.examples) >= 8, "README lost its examples"
    runner = doctest.DocTestRunner(checker=_Checker(), optionflags=flags)
    runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} README example(s) failed (see output above)"


def test_adding_a_model_points_to_a_real_short_file():
    section = _section("Adding a model")
    paths = re.findall(r"\(\s*(statmech/[\w/]+\.py)\s*\)", section)
    assert paths, "the section must link a model file"
    source = (ROOT / paths[0]).read_text()
    assert len(source.splitlines()) < 200, "the template must stay short"
    excerpt = re.search(r"```python\n(@kernels.*?)```", section, re.S).group(1)
    assert excerpt.strip() in source, "the excerpt in the README differs from the file"
