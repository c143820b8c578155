"""What the pages share: session state, the sidebar, cached corpora and traces, rendering.

The UI layer: it may import streamlit and bpe; bpe never imports it.
"""
