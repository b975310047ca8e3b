"""memhtml: an AI agent's long-term memory, kept in git as one semantic-HTML5 file per fact."""

__version__ = "0.1.0"
