"""The pages' views, one module per page: HTML, charts and tables built from bpe's data (ui/render.py escapes every byte)."""
