"""What runs the app on machines: the worker pool, the pool server the replicas share, the jobs, the replicas behind HAProxy.

Never imports Streamlit, pandas or Altair (tests/test_layers.py): a worker process starts with
`python -m serve.pool` and loads only this package and bpe. Jobs return data (byte pairs,
numbers); the app's views (ui/) format it. This file imports nothing, so that importing one
module here does not load the others.
"""
