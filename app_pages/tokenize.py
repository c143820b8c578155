import streamlit as st

st.title("tokenize")
st.info("Coming soon.")
