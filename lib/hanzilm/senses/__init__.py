"""Sense-vector analyses of a trained character Backpack (Sun & Hewitt 2023, Section 5 and Appendix B):
sense projections (`projection`), composition ratios lambda (`composition`), lexical similarity
(`similarity`), gender debiasing (`bias`), amplification control (`amplify`) and idiom composition
(`idioms`). `common` loads the chapter's trained models; `paper` holds the paper's prompts and words."""
