from __future__ import annotations

from workspace_tools.core.text.snippets import best_snippet, mark_hits
from workspace_tools.core.text.tokenizer import Tokenizer

TOK = Tokenizer()


def test_best_window_not_first_to_last_line() -> None:
    text = (
        "search here\n"
        + "filler\n" * 50
        + "the parser parses requests\nmore parser requests\n"
        + "filler\n" * 50
        + "requests at the end"
    )
    snip = best_snippet(text, TOK.query_terms("parser requests"), TOK)
    assert snip.first_line == 51
    assert snip.last_line == 52
    assert "<<parser>>" in snip.text and "<<requests>>" in snip.text


def test_hits_match_stems_and_identifiers() -> None:
    marked = mark_hits("Installing parseHttpRequest now", TOK.query_terms("install http"), TOK)
    assert marked == "<<Installing>> <<parseHttpRequest>> now"


def test_no_lexical_hit_gives_first_lines() -> None:
    snip = best_snippet("\n\nfirst real line\nsecond", TOK.query_terms("zebra"), TOK)
    assert snip.first_line == 2
    assert snip.hits == 0
    assert snip.text.startswith("first real line")


def test_long_line_is_cut_around_the_hits() -> None:
    text = "word " * 500 + "the magic parser " + "tail " * 500
    snip = best_snippet(text, TOK.query_terms("magic parser"), TOK, max_chars=200)
    assert snip.text.startswith("…") and snip.text.endswith("…")
    assert "<<magic>> <<parser>>" in snip.text
    assert len(snip.text) < 260


def test_words_already_marked_in_the_text_are_not_marked_twice() -> None:
    assert mark_hits("see <<install>> and install", TOK.query_terms("install"), TOK) == (
        "see <<install>> and <<install>>"
    )


def test_every_occurrence_of_a_repeated_word_is_marked() -> None:
    line = "Cells, cells and CELLS: cell-cycle of cells.cell p53 cells"
    marked = mark_hits(line, TOK.query_terms("cell"), TOK)
    assert marked == (
        "<<Cells>>, <<cells>> and <<CELLS>>: <<cell-cycle>> of <<cells.cell>> p53 <<cells>>"
    )
    assert mark_hits(line, TOK.query_terms("p53 zebra"), TOK) == line.replace("p53", "<<p53>>")
    assert mark_hits(line, TOK.query_terms("zebra"), TOK) == line
