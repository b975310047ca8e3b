"""Build-time tools: run from the repository, never imported by the package."""
