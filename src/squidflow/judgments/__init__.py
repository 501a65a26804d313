"""Stage `judgments` (workflow/rules/judgments.smk): annotation tasks, human judgments, their quality and agreement.

Variants A and B as MTurk tasks (SQUID-E (Sanders et al., 2022) §3.2, supplement A.2 and B), ingestion of MTurk
batches, the release's judgments or a simulated panel; annotator quality, per-image scores, Table 7 and Figure 3 (§4).
"""
