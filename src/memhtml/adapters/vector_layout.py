"""Where the vector cache keeps its file sets: the names both the light handle
(``vector_cache``) and the file sets' code (``vector_files``) read, kept apart so
neither imports the other at load."""

from __future__ import annotations

MANIFEST = "manifest.json"
"""Each file set's manifest: its format, space and generation (``vector_files``)."""
