"""The look of the whole app: sizes a projector at the back of a room can read, and presenter mode.

The theme (.streamlit/config.toml) sets the root font to 18 px; Streamlit draws
captions, buttons, widget labels and some inputs smaller than the root, so the
CSS here lifts them to 1rem. Charts take their sizes from
ui/chart_style.py. Presenter mode zooms the page (not the sidebar) and lets the step
page drop what a projector does not need.

Also here: the classes of the HTML that ui/render.py and ui/views/step.py write
(token chips, the merge card, the pair table, the heap diagram).

Not here: what any page shows; st.dataframe, whose cells are drawn on a canvas
at 0.875 of the root size (15.75 px) that CSS cannot reach: the pages use st.table
(or their own HTML) for what a class must read.
"""

from __future__ import annotations

import streamlit as st

PRESENTER_ZOOM = 1.25  # presenter mode enlarges the page (not the sidebar, which is for the teacher): 18 px text reads as 22.5

APP_CSS = """
/* ---- projector sizes ---- */
[data-testid="stMainBlockContainer"]{padding:2.7rem 1.6rem 3rem 1.6rem}
[data-testid="stHeader"]{background:transparent}  /* the page title may pass under its empty middle */
section[data-testid="stSidebar"][data-collapsed="false"]{width:20.8rem !important} /* the longest preset name (ui.sidebar.short_label), 375 px at 18 px */
[data-testid="stSidebarUserContent"]{padding-left:1rem;padding-right:1rem}
.playlist-bar{font-size:1rem;color:#111;background:#eef3fb;border-left:5px solid #1f4e9c;padding:.35rem .7rem;border-radius:6px}
.playlist-bar .next{color:#333}
.nav-section{font-weight:600;color:#444;margin:.5rem 0 0 .2rem}  /* the sidebar's page sections (ui.sidebar._page_links) */
[data-testid="stCaptionContainer"], [data-testid="stCaptionContainer"] p,
[data-testid="stWidgetLabel"] p, [data-testid="stWidgetLabel"] label,
[data-testid="stMetricLabel"] p, [data-testid="stMetricDelta"],
[data-testid^="stBaseButton"] p, [data-testid^="stBaseButton"] div,
[data-testid="stSidebarNavLink"] span, [data-testid="stSidebarNavSeparator"] span, [data-testid="stNavSectionHeader"], [data-testid="stNavSectionHeader"] span,
[data-testid="stSelectbox"] input, [data-testid="stSelectbox"] div[value],
[data-baseweb="popover"] li, [data-baseweb="popover"] li div,
[data-testid="stTextInput"] input, [data-testid="stNumberInput"] input, [data-testid="stTextArea"] textarea,
[data-testid="stCheckbox"] p, [data-testid="stRadio"] p,
[data-testid="stSliderThumbValue"],
[data-testid="stSliderTickBar"] p, [data-testid="stMarkdownContainer"] code, [data-testid="stCaptionContainer"] code,
[data-testid="stTooltipContent"] p, [data-testid="stExpander"] summary p, [data-testid="stTab"] p,
[data-testid="stAlertContent"] p, [data-testid="stTable"] td, [data-testid="stTable"] th,
[data-testid="stMarkdownContainer"] td, [data-testid="stMarkdownContainer"] th,
[data-testid="stFileUploader"] :not([data-testid="stIconMaterial"]),
[data-testid="stCode"] pre, [data-testid="stCode"] code, [data-testid="stCode"] span,
[data-testid^="stPageLink"] p, [data-testid^="stPageLink"] span:not([data-testid="stIconMaterial"]),
[data-testid="stHeadingWithActionElements"] + div p, kbd,
[data-testid="stButtonGroup"] button p, [data-testid="stButtonGroup"] button div
{font-size:1rem !important}
/* a metric's label and delta wrap onto a second line rather than end in "…" ("Vocabulary at t = 36,504") */
[data-testid="stMetricLabel"] *, [data-testid="stMetricDelta"] *{white-space:normal !important;text-overflow:clip !important;overflow:visible !important}
[data-testid="stMetricLabel"]{height:auto !important;min-height:1.5rem}
/* sliders over merges draw their numbers without thousands separators (Streamlit's format cannot group digits):
   these two hide them, and the page says the same number beside them with separators (the merge card, the metric) */
.st-key-w_step [data-testid="stSliderThumbValue"], .st-key-w_step [data-testid="stSliderTickBar"],
.st-key-w_tok_k [data-testid="stSliderThumbValue"], .st-key-w_tok_k [data-testid="stSliderTickBar"]{visibility:hidden}
/* a button too narrow for its label grows a line taller rather than cut the label off */
[data-testid^="stBaseButton"] *{white-space:normal !important;text-overflow:clip !important;overflow:visible !important}
[data-testid^="stBaseButton"]{height:auto !important}
/* a page link in a narrow column ("Merge 3 on the step page", presenter mode's zoom) wraps rather than ends in "…" */
[data-testid^="stPageLink"] *{white-space:normal !important;text-overflow:clip !important;overflow:visible !important}
/* a projector washes grey out: captions (Streamlit draws them at opacity 0.6, 3.9:1 against white) and
   faint marks stay at least 4.5:1 (WCAG AA), still lighter than the text around them */
[data-testid="stCaptionContainer"]{opacity:.8 !important}
[data-testid^="stBaseButton"] kbd{opacity:1 !important}  /* a button's key (Next →): drawn at 0.6, 2.8:1 on the red button */
h1{font-size:1.95rem !important;padding:0 0 .4rem 0 !important}
h2{font-size:1.7rem !important}
h3{font-size:1.35rem !important;padding:.2rem 0 .3rem 0 !important}
.stHtml h3{margin:0 0 .2rem 0;padding:0 !important}

.caption{color:rgba(49,51,63,.7);font-size:1rem;margin:.3rem 0 0 0;line-height:1.45}

/* ---- token chips (ui/render.py) ---- */
.toks{display:flex;flex-wrap:wrap;row-gap:6px;font-family:monospace;font-size:1.15rem;align-items:center}
.toks.nowrap{flex-wrap:nowrap}
.tok{white-space:pre-wrap;overflow-wrap:anywhere;padding:2px 3px;margin:0 1px;border-radius:4px;border:1px solid #0002;color:#111}
.tok.joined{border:2px dashed #555}
/* ids under the tokens (render.chips show_ids): each chip its text over its id, on a projector without hover */
.toks.ids{row-gap:8px}
.toks.ids .tok{display:inline-flex;flex-direction:column;align-items:center;line-height:1.25}
.toks.ids .tid{font-family:sans-serif;font-size:1rem;color:#222;border-top:1px solid #0003;padding:0 2px;font-variant-numeric:tabular-nums}
.tok .ntok{font-size:.9em;font-weight:700;color:#333;margin-left:3px;padding:0 2px;border-left:1px solid #0003}  /* how many tokens a dashed chip is */
.char{display:inline-flex;align-items:center;white-space:nowrap}  /* a character's parts, each token its own chip */
.tok.part{border:2px dashed #555}
.char .of{color:#444;margin:0 4px 0 2px}
.tok.new{outline:3px solid #1f4e9c;outline-offset:0}
.pre{display:inline-flex;align-items:center;margin-right:10px;padding-bottom:3px;border-bottom:3px solid #9aa7b8}
.dropped{color:#707070;margin-right:10px}
.special{display:inline-flex;margin-right:10px}

/* ---- the code beside the step (ui/views/code.py) ---- */
.code-excerpt{font-family:monospace;font-size:1rem;line-height:1.45;color:#111;margin:.2rem 0 .6rem}
.code-excerpt .where{font-family:sans-serif;font-weight:600;margin-bottom:.2rem}
/* a row: its number in the margin (padding, the number pulled into it), its code, and for a lit line what it did: beside
   the code when both fit, else under it, lined up with the code. A long line wraps under itself, four columns in
   (--i: the line's indentation, in characters), never back at column 0. The number takes no room on the line (its
   margin cancels it and the gap), so a code line as wide as the row stays beside its number */
.code-excerpt > div:not(.where){display:flex;flex-wrap:wrap;column-gap:.8em;align-items:baseline;padding-left:3.4em}
.code-excerpt .ln{color:#555;width:2.6em;margin-left:-3.4em;text-align:right;flex:none;font-variant-numeric:tabular-nums}
.code-excerpt code{flex:0 1 auto;min-width:0;max-width:100%;white-space:pre-wrap;overflow-wrap:anywhere;background:none;color:#111;font-size:1rem;
  padding:0 0 0 calc((var(--i, 0) + 4) * 1ch);text-indent:-4ch}
.code-excerpt .lit{background:#fff1b8;border-left:5px solid #b8860b}
.code-excerpt .what{font-family:sans-serif;font-weight:700;color:#173f7a;flex:1 1 14em}
.st-key-arrows, .st-key-enc_arrows{display:none !important}  /* the arrow keys' counter (ui/play.py): a script, no view */
.code-excerpt .fold{font-family:sans-serif;font-style:italic;color:#444}  /* an `if detail:` block, folded: set apart */

/* ---- the step page's layout (pages/step.py): one grid for the views its fragment redraws on a click and the
   widgets drawn outside it (Play and the speed, at the right end of the row of buttons; the sentence box under the
   sentence), so that a click sends no st.columns blocks and not those widgets. The fragment's own wrapper and block
   take no box (display:contents): its elements are the grid's items. Narrower than 640 px, one column, as st.columns. */
[data-testid="stLayoutWrapper"]:has(> .st-key-step_page){container-type:inline-size}
.st-key-step_page{display:grid !important;grid-template-columns:minmax(0,3fr) minmax(0,2fr);gap:1rem 2rem;
  grid-template-areas:"controls controls" "top top" "code code" "sentence words" "sample words" "counts counts";
  grid-template-rows:auto auto auto auto 1fr auto}
.st-key-step_page > [data-testid="stLayoutWrapper"]:not(:has(> [class*="st-key-"])),
.st-key-step_page > [data-testid="stLayoutWrapper"]:not(:has(> [class*="st-key-"])) > [data-testid="stVerticalBlock"]{display:contents}
.st-key-step_page [data-testid="stLayoutWrapper"]:has(> .st-key-step_play){grid-area:controls;justify-self:end;width:auto;z-index:1}
.st-key-step_page [data-testid="stLayoutWrapper"]:has(> .st-key-step_controls){grid-area:controls;width:calc(100% - var(--play-width)) !important}
.st-key-step_page{--play-width:calc(175px + 9rem)}  /* the speed box (175 px), Play (~5 rem) and the row's two 2 rem gaps */
.st-key-step_page [data-testid="stElementContainer"]:has(.merge-card){grid-area:top}
.st-key-step_page .st-key-step_code{grid-area:code}
.st-key-step_page [data-testid="stElementContainer"]:has(.toks.sentence){grid-area:sentence}
.st-key-step_page [data-testid="stLayoutWrapper"]:has(> .st-key-step_sample){grid-area:sample;align-self:start}
.st-key-step_page [data-testid="stElementContainer"]:has(.words){grid-area:words;align-self:start}
.st-key-step_page [data-testid="stLayoutWrapper"]:has(> .st-key-step_counts){grid-area:counts}
.st-key-step_counts{display:grid !important;grid-template-columns:minmax(0,2fr) minmax(0,3fr);gap:1rem 2rem;
  grid-template-areas:"changes heading" "changes chart";grid-template-rows:auto 1fr}
.st-key-step_counts > :nth-child(1){grid-area:changes}
.st-key-step_counts > :nth-child(2){grid-area:heading}
.st-key-step_counts > :nth-child(3){grid-area:chart;align-self:start}
@container (max-width:640px){
  .st-key-step_page{grid-template-columns:minmax(0,1fr);grid-template-rows:none;
    grid-template-areas:"play" "controls" "top" "code" "sentence" "sample" "words" "counts"}
  .st-key-step_page [data-testid="stLayoutWrapper"]:has(> .st-key-step_play){grid-area:play;justify-self:start}
  .st-key-step_page [data-testid="stLayoutWrapper"]:has(> .st-key-step_controls){width:100% !important}
  .st-key-step_counts{grid-template-columns:minmax(0,1fr);grid-template-areas:"changes" "heading" "chart";grid-template-rows:none}
}

/* ---- the step page's views (ui/views/step.py) ---- */
.step-row{display:flex;flex-wrap:wrap;gap:.8rem 2rem;margin-top:1rem}
.step-row > .left{flex:2 1 300px;min-width:0}
.step-row > .right{flex:3 1 420px;min-width:0}
.merge-card{border:2px solid #4c78a8;border-radius:10px;padding:.4rem 1rem .5rem;background:#f6f9fd;color:#111}
.merge-card .head{display:flex;flex-wrap:wrap;align-items:center;column-gap:1.5rem}
.merge-card .big{font-size:1.8rem;font-family:monospace;display:flex;flex-wrap:wrap;align-items:center;gap:.4rem}
.merge-card .times{font-size:1.3rem}
.merge-card .work{color:#333;margin-top:.2rem}
details.tie-rules{display:inline}
details.tie-rules summary{display:inline;cursor:pointer}
details.tie-rules summary .mine{background:#c8f0cf;border-radius:5px;padding:0 4px}
details.tie-rules summary .open{color:#1f4e9c;text-decoration:underline}
details.tie-rules[open] summary .open{display:none}
.mono{font-family:monospace;white-space:pre}
.merge-card .tie-head{margin-top:.3rem}
table.tie-rules{border-collapse:collapse;width:100%;margin:.1rem 0 .3rem}
table.tie-rules th{text-align:left;font-weight:600;border-bottom:2px solid #0003;padding:1px 8px}
table.tie-rules td{padding:1px 8px;border-bottom:1px solid #0001;vertical-align:top;line-height:1.3}
table.tie-rules td.rule{white-space:nowrap}
table.tie-rules td.pair{font-family:monospace;white-space:pre}
table.tie-rules tr.mine td{background:#c8f0cf}
.pill{display:inline-block;padding:0 7px;border-radius:6px;background:#fff;border:1px solid #0003;font-family:monospace;white-space:pre;color:#111}
table.pairs{border-collapse:collapse;width:100%;font-size:1rem}
table.pairs th{text-align:left;font-weight:600;border-bottom:2px solid #0003;padding:2px 8px}
table.pairs td{padding:0 8px;line-height:1.35;border-bottom:1px solid #0001;color:#111}
table.pairs td.n, table.pairs th.n{text-align:right;font-variant-numeric:tabular-nums}
table.pairs td.pair{font-family:monospace;white-space:pre-wrap;overflow-wrap:anywhere}
table.pairs tr.chosen td{background:#c8f0cf}
table.pairs tr.tie td{background:#fff1b8}
table.pairs tr.runner td{background:#e3ecfb}
table.pairs tr.yours td{background:#ffd0d0;font-weight:600}  /* a student's merge (the check-your-merges page) */
table.pairs tr.gap td{border-bottom:none;color:#555}
/* the SentencePiece step page (ui/views/sp_step.py): a pair that is no candidate, greyed with its reason in dark red;
   a piece still to come, greyed; each character chip with its count */
.step-row.sp > .left{flex:3 1 340px}
.step-row.sp > .right{flex:2 1 340px}
table.sp-pairs td.pair, table.sp-pieces td.pair, table.sp-pairs th{white-space:pre;overflow-wrap:normal}
table.pairs tr.refused td{background:#eeeff2;color:#555}
table.pairs tr.refused td:last-child{color:#8b1a1a;font-weight:600}
table.pairs tr.refused td.pair{text-decoration:line-through;text-decoration-color:#8b1a1a}
table.pairs tr.later td{color:#555}
table.pairs tr.meta td{color:#333}
.sp-kept, .sp-dropped{margin:.3rem 0}
.sp-kept .tok .cnt, .sp-dropped .tok .cnt{font-family:sans-serif;font-size:1rem;color:#333;margin-left:4px}
.sp-dropped .tok{border:1px dashed #8b1a1a}
p.sp-chars{margin:.2rem 0;color:#111}

/* ---- the check-your-merges page (ui/views/diff.py) ---- */
.diff-head{font-size:1.35rem;line-height:1.45;margin:.2rem 0 .6rem 0;padding:.5rem .9rem;border-radius:8px;background:#f6f9fd;border:2px solid #4c78a8;color:#111}
.diff-head.same{background:#e6f6e9;border-color:#2e8b57}
.diff-head .why{font-size:1.1rem;margin-top:.3rem}
.diff-head code{font-size:1rem}
.diff-cause p{margin:.2rem 0 .6rem 0;line-height:1.5}
table.lists{border-collapse:collapse;width:100%;font-size:1rem}
table.lists th{text-align:left;font-weight:600;border-bottom:2px solid #0003;padding:2px 8px}
table.lists td{padding:1px 8px;border-bottom:1px solid #0001;color:#111;font-family:monospace;white-space:pre-wrap;overflow-wrap:anywhere}
table.lists td.n, table.lists th.n{text-align:right;font-family:inherit;font-variant-numeric:tabular-nums;color:#444;width:4.5rem}
table.lists tr.first td{background:#ffd0d0;font-weight:600}
table.lists tr.first td.ref{background:#c8f0cf}
table.lists tr.after td{color:#666}
table.tried{border-collapse:collapse;width:100%;font-size:1rem}
table.tried th{text-align:left;font-weight:600;border-bottom:2px solid #0003;padding:2px 8px}
table.tried td{padding:2px 8px;border-bottom:1px solid #0001;color:#111;vertical-align:middle}
table.tried td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
table.tried tr.cause td{background:#e6f6e9;font-weight:600}
table.tried .bar{height:.9rem;background:#4c78a8;border-radius:3px;min-width:2px}
table.tried tr.cause .bar{background:#2e8b57}
table.tried td.id{font-family:monospace;color:#333}
.heap{display:flex;flex-wrap:wrap;gap:.6rem 1.2rem;align-items:flex-start}
.heap{display:flex;flex-wrap:wrap;gap:.6rem 1.2rem;align-items:flex-start}
.htree{display:grid;flex:1 1 330px;min-width:0;max-width:640px}
.hnode{justify-self:center;box-sizing:border-box;border:2px solid #4c78a8;border-radius:9px;background:#fff;color:#111;
  padding:2px 4px 3px;text-align:center;display:flex;flex-direction:column;align-items:center;min-width:0}
.hnode.stale{border:2px dashed #d62728;background:#fdecec}
.hnode .hidx{color:#666}
.hnode .hpair{font-family:monospace;white-space:pre-wrap;overflow-wrap:anywhere;line-height:1.2}
.hnode .hcount{font-variant-numeric:tabular-nums;line-height:1.2}
.hnode.stale .hcount{color:#b51d1f}
.hedge{position:relative;height:22px}
.hedge .hstub{position:absolute;left:50%;top:0;height:9px;border-left:2px solid #7d8ea3}
.hedge .hbar{position:absolute;top:9px;height:13px;border:2px solid #7d8ea3;border-bottom:0}
.hedge .hbar.one{border-right:0}
table.heap-array{border-collapse:collapse;font-size:1rem;flex:0 0 auto;align-self:flex-start}
table.heap-array td, table.heap-array th{padding:0 8px;line-height:1.35;border-bottom:1px solid #0001;white-space:pre}
table.heap-array td.pair{font-family:monospace}
table.heap-array tr.stale td{color:#b51d1f}
table.heap-array td.n, table.heap-array th.n{text-align:right}
.words{display:flex;flex-direction:column;gap:6px;min-width:0;overflow-x:auto}
.words .wrow{display:flex;flex-wrap:wrap;align-items:center;gap:4px 8px}  /* wraps between a row's parts, never inside a word */
.words .toks.word{flex:0 1 auto;max-width:100%}  /* a word breaks only when it alone is wider than the column */
.words .count{font-weight:600;white-space:nowrap}
.words .then{display:flex;align-items:center;gap:8px;flex:0 1 auto;min-width:0;max-width:100%}  /* → after × n: one piece */
.changes{display:grid;grid-template-columns:minmax(0,max-content) 1fr 1fr;gap:3px 8px;align-items:center}
.changes .pair{font-family:monospace;white-space:pre-wrap;overflow-wrap:anywhere}
.changes .neg{display:flex;justify-content:flex-end;align-items:center;gap:6px}
.changes .pos{display:flex;justify-content:flex-start;align-items:center;gap:6px;border-left:2px solid #555}
.changes .neg{border-right:0}
.changes .bar{height:1.1rem;border-radius:3px}
.changes .neg .bar{background:#d62728}
.changes .pos .bar{background:#2ca02c}
.work-table{border-collapse:collapse;font-size:1rem}
.work-table td{padding:2px 10px;border-bottom:1px solid #0001}
.work-table td.n{text-align:right;font-variant-numeric:tabular-nums;font-weight:600}

/* ---- encoding, real tokenizers side by side, quirks (ui/views/encode.py, ui/views/compare.py, ui/lessons/quirks.py) ---- */
.tok.diff{box-shadow:inset 0 -4px 0 #d62728}
.toks .more{color:#555;margin-left:8px;font-family:sans-serif}
table.compare{border-collapse:collapse;font-size:1rem;margin:.2rem 0 .6rem}
table.compare th{text-align:left;font-weight:600;border-bottom:2px solid #0003;padding:2px 12px 2px 4px;white-space:nowrap}
table.compare td:first-child{white-space:nowrap}
table.compare td{padding:2px 12px 2px 4px;border-bottom:1px solid #0001;color:#111;vertical-align:top;line-height:1.3}
table.compare td.n, table.compare th.n{text-align:right;font-variant-numeric:tabular-nums}
table.compare tr.best td{font-weight:600;background:#e9f6ec}
table.compare td.tax{background:#fdeaea}
table.compare .sub{color:#555;font-size:1rem;font-weight:400;white-space:nowrap}
table.compare.tax .sub{white-space:normal}  /* seven tokenizers across 1280 px: "37 tok ·" over "1.0×" where it must */
.difftext{font-family:monospace;font-size:1.15rem;white-space:pre-wrap;overflow-wrap:anywhere;line-height:1.7;color:#111}
.difftext .diffspan{background:#fff1b8;box-shadow:inset 0 -4px 0 #d62728}
.cmp-row{margin:.35rem 0 .7rem}
.cmp-row .rowhead{margin-bottom:.15rem}
.quirk{margin:.2rem 0 1rem}
.quirk .qtext{font-family:monospace;font-size:1.2rem;font-weight:600;white-space:pre-wrap;overflow-wrap:anywhere;margin-bottom:.2rem}
.qgrid{display:grid;grid-template-columns:max-content max-content minmax(0,1fr);gap:4px 14px;align-items:center}
.qgrid .qname{font-weight:600}
.qgrid .qcount{font-variant-numeric:tabular-nums;white-space:nowrap}
.qgrid .ids{color:#444;margin-left:.3rem}
.enc-rows{display:grid;grid-template-columns:max-content minmax(0,1fr);gap:6px 14px;align-items:center}
.enc-rows .what{white-space:nowrap;color:#333}
.enc-rows .what.now{font-weight:700;color:#111}
.epair{display:flex;flex-wrap:wrap;align-items:center;row-gap:8px;font-family:monospace;font-size:1.15rem}
.epair .tok{margin:0}
.epair .tok.hit{outline:3px solid #1f7a35;outline-offset:0}
.drop-rows{display:grid;grid-template-columns:max-content minmax(120px,1fr) max-content;gap:8px 16px;align-items:center}
.drop-bar{height:18px;background:#eef1f5;border-radius:3px}
.drop-bar span{display:block;height:100%;background:#4c78a8;border-radius:3px}
.drop-n{white-space:nowrap;color:#111}
.drop-plain{margin-left:10px;padding:1px 6px;border-radius:4px;background:#1f7a35;color:#fff}
.drop-more{color:#333}
.rank{display:inline-flex;flex-direction:column;align-items:center;margin:0 4px;font-family:sans-serif;font-size:1.1rem;line-height:1.05;color:#555;min-width:1.6rem}
.rank a{color:inherit}
.rank .cnt{color:#444}
.rank.hit .cnt{color:#fff}
.rank.none{color:#767676}
.rank.hit{color:#fff;background:#1f7a35;border-radius:5px;padding:1px 4px;font-weight:700}
.rank.hit a{color:#fff}
.enc-ids{display:flex;flex-wrap:wrap;align-items:center;gap:.3rem .8rem}  /* the text's ids, in order (pages/encode.py) */
.enc-ids .lead{color:#111}
.enc-ids .toks{flex:1 1 18rem;min-width:0}
.enc-line{display:flex;flex-wrap:wrap;align-items:center;gap:6px 12px;font-family:monospace;font-size:1.15rem}
.enc-line .pt{display:inline-flex;padding:2px 3px;border-radius:6px;border-bottom:3px solid #9aa7b8}
.enc-line .pt.now{border:3px solid #1f4e9c}
.enc-line .pt.todo{opacity:.45}
.tree{display:flex;justify-content:flex-start;overflow-x:auto;padding:.2rem 0 .4rem}
.tree ul{display:flex;justify-content:center;padding:10px 0 0 0;margin:0;position:relative;list-style:none}
.tree li{display:flex;flex-direction:column;align-items:center;position:relative;padding:10px 2px 0 2px}
.tree > ul{padding-top:0}
.tree > ul > li{padding-top:0}
.tree li::before,.tree li::after{content:"";position:absolute;top:0;width:50%;height:10px;border-top:2px solid #7d8ea3}
.tree li::before{right:50%}
.tree li::after{left:50%;border-left:2px solid #7d8ea3}
.tree li:first-child::before,.tree li:last-child::after{border:0}
.tree li:last-child::before{border-right:2px solid #7d8ea3;border-radius:0 6px 0 0}
.tree li:first-child::after{border-radius:6px 0 0 0}
.tree li:only-child::before,.tree li:only-child::after{display:none}
.tree > ul > li::before,.tree > ul > li::after{display:none}
.tree ul ul::before{content:"";position:absolute;top:0;left:50%;height:10px;border-left:2px solid #7d8ea3}
.tnode{display:flex;align-items:center;gap:5px;border:2px solid #4c78a8;border-radius:8px;background:#fff;padding:2px 5px;color:#111}
.tnode.byte{border:1px dashed #9aa7b8;background:#f4f6f9;padding:2px}
.tnode .tok{font-family:monospace;font-size:1.15rem;margin:0}
.tnode .meta{font-size:1rem;color:#333;white-space:nowrap;line-height:1.2}
.tnode .meta a{color:#1f4e9c}
"""


# presenter mode: everything larger; the step page's pair table shorter (8 pairs) and its views without
# their captions (the teacher says it), so that the card, the pairs and the heap fit on a projector's screen
PRESENTER_CSS = f"""
[data-testid="stMainBlockContainer"]{{zoom:{PRESENTER_ZOOM}}}
/* subtle: a chart measures its width on screen (zoomed) and would be zoomed again, past the right edge;
   undone here, a chart fills its column exactly, its labels at the sizes of ui/chart_style.py */
[data-testid="stVegaLiteChart"]{{zoom:{1 / PRESENTER_ZOOM}}}
table.pairs tr:nth-child(n+10){{display:none}}
/* only the step page's view notes (views.caption): other pages' captions say what their numbers are, or
   are the explanation itself (the Encode page's sentence, the span diff's count, the token tax's legend) */
.stHtml p.caption.view-note{{display:none}}
"""


def apply(presenter: bool) -> None:
    """Add the app's CSS to this run (presenter mode: the page zoomed, the step page simpler)."""
    st.html(f"<style>{APP_CSS}{PRESENTER_CSS if presenter else ''}</style>")
