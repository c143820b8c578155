"""The app as served to a class: app.py behind a cache of Streamlit's own browser files. `streamlit run web.py`

serve/replicas.py runs this file behind HAProxy, for scripts/app.sh (one process, or
every replica); scripts/app.sh runs it alone where HAProxy is not installed.
`streamlit run app.py` serves the same app without the cache: each student's
first visit then costs the server ~175 ms of processor for Streamlit's
JavaScript alone (serve/assets.py says why and what changes).
"""

import streamlit as st
from starlette.middleware import Middleware

from serve.assets import Assets

app = st.App("app.py", middleware=[Middleware(Assets)])
