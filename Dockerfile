# Method Lab CPU image: runs the app offline on the embedded models. Mirrors `make install` (Makefile):
# torch==2.13.0 first (CPU wheel), then requirements.txt, then requirements-nodeps.txt with --no-deps.
#   docker build -t method-lab .
#   docker build --build-arg TORCH_INDEX=https://<your CPU wheel index> -t method-lab .
#   docker run -p 8501:8501 method-lab
ARG PYTHON_IMAGE=python:3.11-slim

FROM ${PYTHON_IMAGE} AS builder
# Where the CPU torch wheel comes from: a plain `torch==2.13.0` from the default index is a multi-GB CUDA build.
ARG TORCH_INDEX=""
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
RUN apt-get update && apt-get install -y --no-install-recommends build-essential git \
    && rm -rf /var/lib/apt/lists/*
RUN python -m venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH
WORKDIR /app
COPY requirements.txt requirements-nodeps.txt ./
RUN if [ -n "$TORCH_INDEX" ]; then pip install --index-url "$TORCH_INDEX" torch==2.13.0; \
    else pip install torch==2.13.0; fi \
 && pip install -r requirements.txt \
 && pip install --no-deps -r requirements-nodeps.txt
COPY . .
# Bake the one-time conversions (SmolLM2 GGUF -> safetensors, DINOv2 ONNX -> transformers) into the image.
ENV METHOD_LAB_CACHE=/opt/method-lab-cache HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 OMP_NUM_THREADS=1
RUN python -m backend models check smollm2 --json >/dev/null && python -m backend models check dinov2 --json >/dev/null

FROM ${PYTHON_IMAGE}
ENV PATH=/opt/venv/bin:$PATH PIP_NO_CACHE_DIR=1 PYTHONUNBUFFERED=1 MALLOC_ARENA_MAX=2 \
    METHOD_LAB_CACHE=/opt/method-lab-cache HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 \
    OMP_NUM_THREADS=1 METHOD_LAB_THREADS=1 STREAMLIT_BROWSER_GATHER_USAGE_STATS=false
RUN useradd --create-home --uid 10001 lab
COPY --from=builder /opt/venv /opt/venv
COPY --from=builder --chown=lab:lab /opt/method-lab-cache /opt/method-lab-cache
WORKDIR /app
COPY --from=builder --chown=lab:lab /app /app
USER lab
EXPOSE 8501
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
  CMD python -c "import urllib.request,sys; sys.exit(0 if urllib.request.urlopen('http://127.0.0.1:8501/_stcore/health', timeout=4).read()==b'ok' else 1)"
ENTRYPOINT ["python", "-m", "streamlit", "run", "app.py", "--server.port=8501", "--server.address=0.0.0.0"]
