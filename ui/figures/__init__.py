"""Pure plotly figure builders: data in, ``plotly.graph_objects.Figure`` out. No streamlit here."""
