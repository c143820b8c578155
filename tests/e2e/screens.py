"""Looking at a page as a class would: screenshots scrolled to a section, and what is cut off there at 1280x720."""

from __future__ import annotations

from .conftest import SHOTS, SIZES, clipped, settled


def clipped_in_main(page) -> list[str]:
    """clipped(page), less the sidebar's (shared by every page, and not this page's to fix)."""
    sidebar = page.locator('[data-testid="stSidebar"]')
    shown = [sidebar.inner_text()] + [box.input_value() for box in sidebar.locator("input").all()]
    return [text for text in clipped(page) if not any(text in s for s in shown)]


PAST_EDGE_JS = """
() => [...document.querySelectorAll('[data-testid="stMain"] [data-testid="stVegaLiteChart"]')].filter(c => {
  // the drawing inside a chart's box: wider than the box, it is cut off at either side
  const box = c.getBoundingClientRect(), art = c.querySelector('canvas, svg');
  if (!c.offsetParent || !art) return false;
  const r = art.getBoundingClientRect();
  return r.right > box.right + 1 || r.left < box.left - 1;
}).map(c => 'a chart cut off at its sides')
"""


def past_edge(page) -> list[str]:
    """Charts wider than the page shows (presenter mode's zoom once drew them a quarter too wide)."""
    return page.evaluate(PAST_EDGE_JS)


def look(page, name: str, heading: str | None = None) -> list[str]:
    """shots() at each of SIZES with the view scrolled to heading; returns what is cut off at 1280x720 (clipped_in_main, past_edge)."""
    page.mouse.move(5, 5)  # no tooltip in the screenshots
    before, cut = page.viewport_size, []
    for width, height in SIZES:
        page.set_viewport_size({"width": width, "height": height})
        settled(page)  # charts and columns re-lay out
        if heading:
            page.get_by_role("heading", name=heading).first.evaluate("e => e.scrollIntoView({block: 'start'})")
            settled(page)
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / f"{name}-{width}x{height}.png"))
        if (width, height) == (1280, 720):
            cut = clipped_in_main(page) + past_edge(page)
    page.set_viewport_size(before)
    settled(page)
    return cut
