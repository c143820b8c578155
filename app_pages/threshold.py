import streamlit as st

st.title("threshold")
st.info("Coming soon.")
