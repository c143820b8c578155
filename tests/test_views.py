"""The step page's views as data: the heap diagram's geometry, bytes as they are, tables, the sentence.

These call ui.views.step and ui.render directly (plain functions returning HTML); the
page tests (test_app_step.py) and the browser tests check how they are drawn.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bpe import pretokenize, train
from bpe.events import DETAIL_CAP, HeapEntry, HeapView, MergeDetail, MergeEvent
from bpe.tokenizer.tokenizer import Tokenizer
from ui.render import character_runs, chips, show, show_pair
from ui.views import step as views

TEXTBOOK = "low low low low low lower lower widest widest widest newest newest newest newest newest newest"


def textbook_events(algorithm: str = "heap"):
    return train(pretokenize(TEXTBOOK, pretokenizer="whitespace"), 12, algorithm=algorithm, detail=True).events


def event_with(top_pairs, heap=None, count=None) -> MergeEvent:
    left, right, c = top_pairs[0]
    detail = MergeDetail(
        top_pairs=tuple(top_pairs), distinct_pairs=len(top_pairs), words=(), words_total=0, changes=(), changes_total=0, heap=heap
    )
    runner = top_pairs[1] if len(top_pairs) > 1 else None
    return MergeEvent(
        rank=0,
        pair=(0, 1),
        left=left,
        right=right,
        new_id=256,
        count=count or c,
        runner_up=(runner[0], runner[1]) if runner else None,
        runner_up_count=runner[2] if runner else 0,
        words=1,
        detail=detail,
    )


# ---------------------------------------------------------------------------
# the heap diagram


@pytest.mark.parametrize("levels", [1, 2, 3, 4, 5])
def test_every_heap_node_is_centred_over_its_two_children(levels):
    nodes = {node.index: node for node in views.heap_layout(2**levels - 1, levels)}
    for i, node in nodes.items():
        left, right = nodes.get(2 * i + 1), nodes.get(2 * i + 2)
        if left is None:
            continue
        assert node.centre == (left.centre + right.centre) / 2
        assert (left.start, left.end, right.start, right.end) == (node.start, node.centre, node.centre, node.end)  # they split its slots
        assert left.level == right.level == node.level + 1


@given(count=st.integers(0, 40), levels=st.integers(1, 5))
def test_the_layout_draws_the_first_entries_level_by_level_without_overlap(count, levels):
    nodes = views.heap_layout(count, levels)
    assert [n.index for n in nodes] == list(range(min(count, 2**levels - 1)))
    for level in range(levels):
        row = sorted((n.start, n.end) for n in nodes if n.level == level)
        assert all(a_end <= b_start for (_, a_end), (b_start, _) in zip(row, row[1:]))
        assert all(0 <= start < end <= 2 ** (levels - 1) for start, end in row)


def test_the_tree_places_each_node_where_the_layout_says_and_draws_its_edges():
    event = textbook_events()[0]
    tree = views.heap_tree(event.detail.heap.entries)
    drawn = re.findall(r'data-index="(\d+)" style="grid-row:(\d+);grid-column:(\d+)/(\d+)', tree)
    layout = views.heap_layout(len(event.detail.heap.entries))
    assert [(int(i), int(r), int(a), int(b)) for i, r, a, b in drawn] == [
        (n.index, 2 * n.level + 1, n.start + 1, n.end + 1) for n in layout
    ]
    parents = {n.index for n in layout if 2 * n.index + 1 < len(layout)}
    assert tree.count('class="hedge"') == len(parents)


def test_the_heap_caption_counts_what_is_drawn():
    event = textbook_events()[1]  # merge 2: the entry for 'e s' is stale
    view = event.detail.heap
    drawn = view.entries[:7]
    panel = views.heap_panel(event)
    assert panel.count('class="hnode') == len(drawn)
    assert f"Drawn: the top 3 levels, {len(drawn)} of {view.size:,} entries, {sum(e.stale for e in drawn)} of them stale" in panel
    assert panel.count('class="hnode stale"') == sum(e.stale for e in drawn)


def test_the_heap_caption_says_which_pops_found_the_winner_and_which_the_runner_up():
    """The root drawn current is the winner, popped at once; the stale entries under it were popped finding the runner-up."""
    winner, stale, runner = HeapEntry(7155, b" ", b"is", 7155), HeapEntry(7151, b"s", b"t", 5904), HeapEntry(6479, b"a", b"s", 6479)
    heap = HeapView(entries=(winner, stale, runner), size=3, stale_popped=(stale,), stale_popped_total=1, winner_pops=0)
    event = event_with([(b" ", b"is", 7155), (b"a", b"s", 6479)], heap=heap)
    said = re.sub(r"<[^>]+>", "", views.heap_panel(event))
    assert "Finding the winner: the root [0], ␣ + is 7,155, was current, so it was popped at once." in said
    assert "Finding the runner-up, a + s 6,479, then popped 1 stale entry: s + t [1] 7,151 → 5,904." in said
    assert "The heap before this merge" in said
    # the same pop made before the winner: the root was stale
    heap = HeapView(entries=(stale, winner, runner), size=3, stale_popped=(stale,), stale_popped_total=1, winner_pops=1)
    said = re.sub(r"<[^>]+>", "", views.heap_panel(event_with([(b" ", b"is", 7155), (b"a", b"s", 6479)], heap=heap)))
    assert "the root was stale, so 1 stale entry was popped first (s + t [0] 7,151 → 5,904); then ␣ + is 7,155" in said
    assert "Finding the runner-up: the new top, a + s 6,479, was current." in said


def test_the_last_merges_caption_says_the_pops_that_looked_for_a_runner_up_and_found_none():
    # /?corpus=textbook&merge=12: the card said "stale pops 1", the caption only "No other pair was left for a runner-up"
    from ui.views import code

    event = textbook_events()[11]
    heap = event.detail.heap
    assert event.runner_up is None and heap.stale_popped_total - heap.winner_pops == 1
    said = re.sub(r"<[^>]+>", "", views.heap_panel(event))
    popped = heap.stale_popped[heap.winner_pops]
    gone = f"{popped.current:,}" if popped.current else "gone"
    assert (
        f"Looking for a runner-up, it popped 1 stale entry ({show_pair(popped.left, popped.right)} [1] {popped.count:,} → {gone}); then no other pair was left."
        in said
    )
    assert code._stale(event, winner=False) == "popped 1 stale entry looking for a runner-up; none was left"


def test_the_heap_array_lists_the_drawn_entries_in_order_and_how_many_more():
    stale = HeapEntry(9, b"e", b"s", 0)
    entries = tuple(HeapEntry(c, b"a", b"b", c) for c in (40, 30, 20)) + (stale,)
    array = views.heap_array(entries, 1_234)
    assert re.findall(r'<tr class="[a-z]*"><td class="n">(\d+)</td>', array) == ["0", "1", "2", "3"]
    assert "9 → gone" in array and "1,230 more" in array


# ---------------------------------------------------------------------------
# bytes shown as the bytes they are


def test_invalid_bytes_show_as_escapes_and_text_as_characters():
    assert show("café".encode("latin-1")) == "caf\\xe9"
    assert show(b" a\n") == "␣a↵"
    assert show("大".encode()[:2]) == "\\xe5\\xa4"


@pytest.mark.parametrize(
    "tokens, runs",
    [
        ([b"a", *[bytes([b]) for b in "大".encode()]], [(0, 1), (1, 4)]),  # a CJK character in three tokens
        ([bytes([b]) for b in "🙂".encode()], [(0, 4)]),  # an emoji in four
        ([b"\xe5\xa4", b"\xa7\xe5", b"\xb0\x8f"], [(0, 3)]),  # 大小 over three tokens
        ([b"caf", b"\xe9", b" "], [(0, 1), (1, 2), (2, 3)]),  # Latin-1: no character to complete
    ],
)
def test_a_characters_bytes_split_over_tokens_are_one_chip(tokens, runs):
    assert character_runs(tokens) == runs


def test_a_joined_chip_shows_the_character_and_says_it_is_several_tokens():
    html = chips([bytes([b]) for b in "大".encode()], ids=[229, 164, 167])
    assert html.count('class="tok') == 1 and 'class="tok joined"' in html
    assert ">大<" in html and "3 tokens" in html and "ids 229, 164, 167" in html and 'data-tokens="3"' in html
    assert '<span class="ntok">×3</span>' in html  # said on the chip itself: a projector has no hover


def chip_texts(html: str) -> list[str]:
    """What each chip shows, in order: the boxes a student sees (hover text left out)."""
    return re.findall(r'<span class="tok[^"]*"[^>]*>([^<]*)', html)


def test_a_merge_inside_a_character_changes_the_rewritten_words_visibly():
    # en dashes: merge 1 is \xe2 + \x80, the first two of the dash's three bytes
    event = train(pretokenize("a – b – c – d –", pretokenizer="gpt2"), 1, detail=True).events[0]
    assert (event.left, event.right) == (b"\xe2", b"\x80")
    words = views.affected_words(event)
    rows = re.findall(
        r'<div class="toks word"[^>]*>(.*?)</div><span class="then"><span class="arrow">→</span><div class="toks word">(.*?)</div>', words
    )
    assert rows
    for before, after in rows:
        assert chip_texts(before) == ["␣", "\\xe2", "\\x80", "\\x93"]
        assert chip_texts(after) == ["␣", "\\xe2\\x80", "\\x93"]
        assert 'class="tok new part"' in after and "=–<" in before and "=–<" in after  # the new token outlined, the character named


def test_chips_escape_what_they_show():
    html = chips([b"<script>", b"&"])
    assert "<script>" not in html and "&lt;script&gt;" in html and "&amp;" in html


@given(st.lists(st.binary(min_size=1, max_size=4), max_size=12))
def test_runs_cover_every_token_once_in_order(tokens):
    runs = character_runs(tokens)
    assert [i for start, end in runs for i in range(start, end)] == list(range(len(tokens)))


# ---------------------------------------------------------------------------
# tables and charts


def test_the_pair_table_shows_counts_with_thousands_separators_and_every_row():
    pairs = [(b"a", b"b", 36_504), (b"c", b"d", 36_504)] + [(b"x", bytes([i]), 1_000 - i) for i in range(30)]
    table = views.pair_table(event_with(pairs), 1)
    assert "36,504" in table and "36504" not in table
    assert table.count("<tr") - 1 == views.PAIR_ROWS
    assert 'class="chosen"' in table and 'class="tie"' in table


def test_the_pair_table_grows_to_show_every_pair_tied_with_the_winner():
    pairs = [(b"a", bytes([i]), 7) for i in range(13)] + [(b"z", b"z", 1)]
    assert views.pair_table(event_with(pairs), 1).count("<tr") - 1 == 14  # 13 tied, and the first that is not


@pytest.mark.parametrize(
    "runner_up, legend",
    [
        (36_504, "Green: chosen; yellow: the same count as the winner."),  # the tied runner-up's row is yellow: no blue row
        (9_000, "Green: chosen; blue: runner-up."),
    ],
)
def test_the_pair_tables_legend_names_the_colours_its_rows_have(runner_up, legend):
    pairs = [(b"a", b"b", 36_504), (b"c", b"d", runner_up), (b"e", b"f", 10)]
    table = views.pair_table(event_with(pairs), 1)
    rows = re.findall(r'<tr class="(\w*)"><td class="pair">[^<]*</td><td class="n">[^<]*</td><td>(\w[\w-]*)?', table)
    assert rows[:2] == [("chosen", "chosen"), ("tie" if runner_up == 36_504 else "runner", "runner-up")]
    assert table.endswith(f"distinct pairs. {legend}</p>")


@pytest.mark.parametrize("counts, log", [([36_504, 9_000, 400, 12], True), ([9, 8, 7, 3, 2], False)])
def test_the_winning_count_chart_is_logarithmic_when_counts_span_a_wide_range(counts, log):
    y = views.counts_spec(counts)["layer"][0]["encoding"]["y"]
    assert (y["scale"] == {"type": "log"}) is log
    assert y["axis"]["labelFontSize"] >= 14


def test_the_merge_card_names_the_work_in_the_race_pages_words():
    event = textbook_events("naive")[2]
    assert "Work for this merge: pairs counted" in views.merge_card(event, 3, 12, 259)
    assert "words checked 4 · words rewritten 2" in views.merge_card(event, 3, 12, 259)


def test_rewritten_words_are_one_grid_that_keeps_counts_in_their_own_column():
    event = textbook_events()[1]
    words = views.affected_words(event)
    assert words.count('class="count"') == len(event.detail.words) == 2
    assert words.count('class="arrow"') == 2


# ---------------------------------------------------------------------------
# a sentence, with its pre-token boundaries


@pytest.fixture(scope="module")
def tok() -> Tokenizer:
    run = train(pretokenize(TEXTBOOK, pretokenizer="whitespace"), 12)
    return Tokenizer.from_training(run, "whitespace")


def test_whitespace_the_pre_tokenizer_drops_is_shown_apart_and_in_no_token(tok):
    segs = views.segments(tok, b"low  lowest", 12)
    assert [(s.kind, s.tokens) for s in segs] == [("pretoken", (b"low",)), ("dropped", (b"  ",)), ("pretoken", (b"low", b"est"))]
    html, note = views.sentence(tok, b"low  lowest", 12, b"est")
    assert html.count('class="pre"') == 2 and 'class="dropped"' in html
    # the text's bytes, as every page counts them (issue 28.11: this page alone said 9, the others 11)
    assert note.startswith("3 tokens in 2 pre-tokens (underlined), for the text's 11 bytes (2 of them whitespace the pre-tokenizer drops")
    assert "found 1 time here" in note


def test_special_tokens_stay_whole_and_gpt2_drops_nothing():
    tok = Tokenizer.from_merges([(b" ", b"l")], ["<|endoftext|>"], "gpt2")
    segs = views.segments(tok, b"a<|endoftext|> low", 1)
    assert [s.kind for s in segs] == ["pretoken", "special", "pretoken"]
    assert segs[1].tokens == (b"<|endoftext|>",) and segs[2].tokens == (b" l", b"o", b"w")


def test_a_latin1_sentence_keeps_its_bytes(tok):
    html, _ = views.sentence(tok, "café".encode("latin-1"), 12, b"st")
    assert "\\xe9" in html and "\\xef" not in html


# ---------------------------------------------------------------------------
# a tie: what each tie-break rule would take


def test_a_tie_every_rule_breaks_alike_is_one_phrase():
    # 'n' > ' ' for cs336, and n (110) is a smaller id than ' en' (a merge) for the id rules
    before = [(b"o", b"t"), (b" ", b"e"), (b" e", b"n")]
    event = event_with([(b"n", b"ot", 5), (b" en", b"d", 5), (b"x", b"y", 4)])
    html = views.merge_card(event, 4, 10, 260, "cs336", before, 0)
    assert "Every rule picks" in html and "Each rule&#x27;s pick" not in html and "Each rule's pick" not in html
    assert "after the same 3 merges" in html


def test_a_tie_of_more_pairs_than_the_trace_keeps_says_the_picks_are_among_those_kept():
    pairs = [(bytes([97 + i // 26]), bytes([97 + i % 26]), 7) for i in range(DETAIL_CAP)]
    html = views.merge_card(event_with(pairs), 1, 10, 260, "rustbpe")
    assert f"At least {DETAIL_CAP} pairs tie (the trace keeps {DETAIL_CAP}); among those kept" in html


def test_a_merge_without_a_tie_has_no_rule_picks():
    html = views.merge_card(event_with([(b"a", b"b", 5), (b"c", b"d", 4)]), 1, 10, 260, "huggingface")
    assert "tie-rules" not in html and "Highest count: 5" in html


def test_a_three_way_tie_names_both_other_pairs():
    events = textbook_events()
    before = [(e.left, e.right) for e in events[:4]]
    card = views.merge_card(events[4], 5, 12, 261, before=before)  # w + est, n + e and e + w all at 6
    pill = '<span class="pill">{}</span>+<span class="pill">{}</span>'
    assert f"Tied at 6 with {pill.format('n', 'e')} and {pill.format('e', 'w')}." in card


def test_a_tie_of_many_pairs_names_three_and_counts_the_rest():
    pairs = [(b"a", bytes([98 + i]), 7) for i in range(6)] + [(b"z", b"z", 1)]
    card = views.merge_card(event_with(pairs), 1, 1, 257)
    assert card.count('class="pill"') == 3 + 2 * 3  # the merge (pair and token), three tied pairs
    assert "and 2 more." in card


def test_pair_count_changes_are_drawn_to_scale_with_every_number_printed():
    """-7,155 beside +122: a log scale drew them about the same length on a projector (issue 28.7); to scale, with the numbers."""
    deltas = [-7_155, 122, 97]
    assert views.bar_share(-7_155, deltas) == 1.0 and views.bar_share(122, deltas) == pytest.approx(122 / 7_155)
    assert views.bar_share(2, [-4, 2]) == 0.5
    changes = tuple((b"a", bytes([98 + i]), d) for i, d in enumerate(deltas))
    detail = MergeDetail(top_pairs=(), distinct_pairs=0, words=(), words_total=0, changes=changes, changes_total=3, heap=None)
    event = MergeEvent(0, (0, 1), b"a", b"b", 256, 1, None, 0, 1, detail=detail)
    html = views.pair_changes(event)
    widths = [float(w) for w in re.findall(r'class="bar" style="width:([\d.]+)%"', html)]
    assert widths[0] > 50 * widths[1] > 0 and "+97" in html and "+122" in html and "-7,155" in html
    assert "log" not in html and "to scale" in html


def test_a_rewritten_word_is_one_unbreakable_row_of_chips():
    words = views.affected_words(textbook_events()[1])
    assert words.count('<div class="toks word"') == 2 * 2  # before and after of each word, each a unit the row wraps around
    assert words.count('<div class="wrow">') == 2
    # the arrow, the word after and its count are one piece: the row never leaves "× 18" alone on a line (issue 36.10)
    pieces = re.findall(
        r'<span class="then"><span class="arrow">→</span><div class="toks word">.*?</div><span class="count">× [\d,]+</span></span>', words
    )
    assert len(pieces) == 2


def test_numbers_on_the_step_page_have_thousands_separators():
    pairs = [(b"a", b"b", 36_504), (b"c", b"d", 1_200)]
    event = event_with(pairs)
    card = views.merge_card(event, 1_000, 5_000, 1_257)
    assert "Merge <b>1,000</b> of 5,000" in card and "vocabulary now 1,257" in card and "36,504" in card
    assert "before merge 1,000" in views.pair_table(event, 1_000)
    assert views.counts_spec([5, 3])["layer"][0]["encoding"]["x"]["axis"]["format"] == ",d"  # the axis: 1,000, not 1000
    assert re.search(r"\b\d{4,}\b", re.sub(r"<[^>]+>", " ", card)) is None  # no 1000 left anywhere on the card


def test_a_carriage_return_shows_as_backslash_r_not_a_picture_few_fonts_have():
    """␍ (U+240D) drew as an empty box in the browser tests' chromium; \\r reads in any font, like the other control bytes."""
    assert show(b"a\r\n") == "a\\r↵"
