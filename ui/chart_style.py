"""How every chart of ours reads from the back of a room: one set of sizes, for Altair charts and Vega-Lite specs.

Every chart takes its text sizes from here -- axis labels and titles, legends,
chart titles, labels written on marks -- so a projector size is changed in one
place. Vega-Lite dicts use `config()` (or AXIS, LEGEND, TITLE in place);
Altair charts use `styled()`.

Not here: colours (a trainer's is its class's: bpe Trainer.colour; the labels' ink is here), or the CSS of
our HTML (ui/style.py).
"""

from __future__ import annotations

import altair as alt

FONT = 18  # px: no text on a chart is smaller than the page's 18 px
# the labels as dark as the page's text: Streamlit's chart theme draws them light grey, which a projector washes out
INK = {"labelColor": "#111", "titleColor": "#111"}
AXIS = {"labelFontSize": FONT, "titleFontSize": FONT, **INK}
LEGEND = {"labelFontSize": FONT, "titleFontSize": FONT, "symbolStrokeWidth": 4, "labelLimit": 460, **INK}
TITLE = {"fontSize": FONT}
MARK_TEXT = FONT  # labels written on a chart's marks


def config(**legend) -> dict:
    """A Vega-Lite spec's "config": these sizes for its axes, legend (with any legend options given) and title."""
    return {"axis": AXIS, "legend": {**LEGEND, **legend}, "title": TITLE}


def styled(chart: alt.Chart, **legend) -> alt.Chart:
    """An Altair chart with these sizes (legend options such as orient="top", columns=2 pass through)."""
    return chart.configure_axis(**AXIS).configure_legend(**LEGEND, **legend).configure_title(**TITLE)
