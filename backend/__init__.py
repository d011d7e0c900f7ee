"""Method Lab backend: pure Python/torch implementations of ICLR 2026 methods. Never imports streamlit or plotly."""

__version__ = "0.1.0"
