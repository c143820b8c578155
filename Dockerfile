# The app for one machine: `scripts/app.sh --replicas $REPLICAS` (HAProxy in front of REPLICAS app processes
# and one worker pool) on port 8501. Several machines: deploy/compose.yaml puts the same proxy in front of them.
#   bash scripts/image.sh              (docker build -t bpe-workbench .)
#   docker run -p 8501:8501 -e REPLICAS=4 bpe-workbench
# BASE is any Debian bookworm with python3 and its venv module: Docker Hub's python image by default;
# `bash scripts/image.sh --local-base` builds one from the Debian mirror instead (no Docker Hub needed).
ARG BASE=python:3.11-slim-bookworm
FROM $BASE
RUN apt-get update && apt-get install -y --no-install-recommends haproxy && rm -rf /var/lib/apt/lists/*
WORKDIR /srv/bpe
COPY requirements.txt .
RUN python3 -m venv .venv && .venv/bin/pip install --no-cache-dir -r requirements.txt
COPY . .
# the compiled core (C, bpe/c): built here with Debian's gcc, which goes again (the image runs the core, never rebuilds it)
RUN apt-get update && apt-get install -y --no-install-recommends gcc libc6-dev \
    && BPE_CORE_REQUIRED=1 .venv/bin/python setup.py --quiet build_ext --inplace && rm -rf build \
    && apt-get purge -y --auto-remove gcc libc6-dev && rm -rf /var/lib/apt/lists/*
# what scripts/setup.sh looks for: the requirements are installed, and the project (editable: .venv/bin/bpe). The code and
# its libraries stay root's (read-only to the app, and not copied into a second layer by a chown): the app writes to
# /tmp and its home only
RUN touch .venv/.installed-requirements.txt \
    && BPE_CORE_IN_PLACE=1 .venv/bin/pip install --no-cache-dir --quiet --no-deps --no-build-isolation -e . && rm -rf build \
    && useradd --system --create-home bpe
USER bpe
# app processes per machine: one per core is a good start (the worker pool uses what they leave)
ENV REPLICAS=2 PYTHONDONTWRITEBYTECODE=1
EXPOSE 8501
CMD ["sh", "-c", "exec bash scripts/app.sh --replicas \"$REPLICAS\" --server.address 0.0.0.0 --server.port 8501"]
