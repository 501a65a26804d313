"""Stage `comparison` (workflow/rules/comparison.smk): Sherlock-style comparison sets of plausible hard negatives.

A corpus of (image, region, clue, inference), plausibility scorers, SBERT soft dedup and hard dedup, greedy diverse
sampling and ranking (Sherlock (Hessel et al., 2022) §4.3 and Appendix E), Likert tasks, and the task metrics (§4.1–4.3).
"""
