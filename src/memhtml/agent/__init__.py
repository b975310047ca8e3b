"""The agent's loop: briefing, recall and capture, pure over a head and bytes."""
