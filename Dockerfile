# The app for one machine: `scripts/app.sh --replicas $REPLICAS` (HAProxy in front of REPLICAS app processes
# and one worker pool) on port 8501. Several machines: deploy/compose.yaml puts the same proxy in front of them.
#   docker build -t bpe-workbench .
#   docker run -p 8501:8501 -e REPLICAS=4 bpe-workbench
FROM python:3.11-slim-bookworm
RUN apt-get update && apt-get install -y --no-install-recommends haproxy && rm -rf /var/lib/apt/lists/*
WORKDIR /srv/bpe
COPY requirements.txt .
RUN python -m venv .venv && .venv/bin/pip install --no-cache-dir -r requirements.txt
COPY . .
# what scripts/setup.sh looks for: the requirements are installed
RUN touch .venv/.installed-requirements.txt && useradd --system bpe && chown -R bpe /srv/bpe
USER bpe
# app processes per machine: one per core is a good start (the worker pool uses what they leave)
ENV REPLICAS=2 PYTHONDONTWRITEBYTECODE=1
EXPOSE 8501
CMD ["sh", "-c", "exec bash scripts/app.sh --replicas \"$REPLICAS\" --server.address 0.0.0.0 --server.port 8501"]
