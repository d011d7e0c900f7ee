"""Streamlit-facing helpers shared by pages: inputs, the job runner, layout and downloads. ``ui/figures`` holds pure
plotly builders (data -> Figure) with no streamlit import."""
