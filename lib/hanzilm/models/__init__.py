"""Neural models of the three papers (each chapter's models in its own module)."""
