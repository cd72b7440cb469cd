"""Character language modelling for the Backpack chapter: encoded corpus and batches (`data`), perplexity
(`evaluate`), the WPLC-style cloze (`cloze`), the Backpack/GPT-2 experiment (`experiment`) and its tables."""
