import streamlit as st

st.title("race")
st.info("Coming soon.")
