"""The language-model room: request bodies for each dialect, answers decoded to one
mapping, and the strict schema check. Pure: it builds and reads bytes, and the adapter
that sends them lives in ``memhtml.adapters``."""
