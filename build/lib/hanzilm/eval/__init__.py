"""Evaluation metrics (the SIGHAN bakeoff scorer)."""
