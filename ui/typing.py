"""A text area that applies what is typed once the typing pauses, so that the counts beside it follow as a class types.

st.text_input has live= (it commits after a pause); st.text_area (Streamlit 1.67) commits only on leaving the box or
on Ctrl+Enter, the key its own hint names. `live(key)` mounts a script with no view of its own (an
st.components.v2 component) that presses Ctrl+Enter in the text area holding `key` once the typing has paused for
pause_ms: the box is still Streamlit's, with its value, its callbacks and its state.widget default unchanged, and a
run happens per pause, not per key.

Not here: what the page does with the text (it reruns as it would after Ctrl+Enter).
"""

from __future__ import annotations

import streamlit as st

PAUSE_MS = 500

# One listener for the whole page, installed by the first mount: a text area is drawn anew on each visit to its page,
# so the listener asks, for each input event, whether the box typed in sits in a live holder (class st-key-<key>).
JS = """
export default function (component) {
  const { data } = component;
  const live = window.__bpeLive || (window.__bpeLive = { keys: new Map(), timers: new WeakMap() });
  live.keys.set(data.key, data.pause);
  if (live.listening) return;
  live.listening = true;
  document.addEventListener('input', event => {
    const box = event.target;
    if (!box || box.tagName !== 'TEXTAREA') return;
    const key = [...live.keys.keys()].find(k => box.closest('.st-key-' + k));
    if (key === undefined) return;
    clearTimeout(live.timers.get(box));
    live.timers.set(box, setTimeout(() => {
      if (!box.isConnected) return;
      box.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter', code: 'Enter', keyCode: 13, ctrlKey: true, bubbles: true, cancelable: true }));
    }, live.keys.get(key)));
  }, true);
}
"""


@st.cache_resource(show_spinner=False)
def _component():
    """Registered once per server (a component's name must be unique in an app)."""
    return st.components.v2.component("bpe_live_text_area", js=JS)


def live(key: str, pause_ms: int = PAUSE_MS) -> None:
    """Make the text area drawn by state.widget(st.text_area, ..., key=key) apply its text after each pause in the typing."""
    _component()(data={"key": "w_" + key, "pause": pause_ms}, key=f"live_{key}")
