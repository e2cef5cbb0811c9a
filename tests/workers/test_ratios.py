"""Characters per token learned from an endpoint's own reports (``workers.ratios``)."""

from __future__ import annotations

import json

from conductor_lsp.context.window import CHARS_PER_TOKEN
from conductor_lsp.workers.ratios import KEEP, MARGIN, TokenRatios, estimate


def test_digits_are_a_token_each_the_rest_at_the_ratio() -> None:
    assert estimate("abcdefgh", 4.0) == 2
    assert estimate("1234 abc", 4.0) == 4 + 1  # a test report's numbers cost a token a digit
    assert estimate("", 3.0) == 0


def test_a_ratio_learned_on_code_indented_by_spaces_fits_code_indented_by_tabs() -> None:
    """A tokenizer spends on a tab what it spends on four spaces: the ratio learned on
    one indentation estimates the other as many tokens, not a fifth fewer."""
    spaces = "".join(f"        return value_{i}\n" for i in range(100))
    tabs = spaces.replace("        ", "\t\t")
    ratios = TokenRatios.load(None)
    ratios.learn("k", spaces, 500)
    assert estimate(tabs, ratios.chars_per_token("k")) == estimate(
        spaces, ratios.chars_per_token("k")
    )


def test_the_least_ratio_reported_less_a_margin_is_used_and_kept(tmp_path) -> None:
    path = tmp_path / "state" / "tokens.json"
    ratios = TokenRatios.load(path)
    assert ratios.chars_per_token("a") == CHARS_PER_TOKEN  # nothing reported yet
    ratios.learn("a", "x" * 400 + "7" * 100, 200)  # 400 characters in 100 tokens besides digits
    ratios.learn("a", "x" * 450, 100)
    assert ratios.chars_per_token("a") == 4.0 * MARGIN
    assert ratios.chars_per_token("b") == CHARS_PER_TOKEN  # per endpoint
    again = TokenRatios.load(path)  # the next job starts from it
    assert again.chars_per_token("a") == 4.0 * MARGIN
    for _ in range(KEEP):
        again.learn("a", "x" * 500, 100)
    assert again.chars_per_token("a") == 5.0 * MARGIN  # the oldest went


def test_reports_no_tokenizer_gives_are_not_learned(tmp_path) -> None:
    ratios = TokenRatios.load(tmp_path / "tokens.json")
    ratios.learn("a", "x" * 100, 0)  # a provider that reports no usage
    ratios.learn("a", "x" * 1000, 10)  # 100 characters a token
    ratios.learn("a", "123", 2)  # fewer tokens than digits
    assert ratios.chars_per_token("a") == CHARS_PER_TOKEN
    assert not (tmp_path / "tokens.json").exists()


def test_a_damaged_state_file_starts_from_the_fixed_guess(tmp_path) -> None:
    path = tmp_path / "tokens.json"
    for bad in ("{not json", "[1, 2]", json.dumps({"a": "x", "b": [99, "y"], "c": [3.5]})):
        path.write_text(bad, encoding="utf-8")
        ratios = TokenRatios.load(path)
        assert ratios.chars_per_token("a") == CHARS_PER_TOKEN
        assert ratios.chars_per_token("b") == CHARS_PER_TOKEN
    assert ratios.chars_per_token("c") == 3.5 * MARGIN  # what did read is kept
    ratios.learn("d", "x" * 400, 100)
    assert set(json.loads(path.read_text(encoding="utf-8"))) == {"c", "d"}
