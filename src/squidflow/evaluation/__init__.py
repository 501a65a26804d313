"""Evaluation: any model's ranked predictions measured against human certainty judgments, per certainty bin.
Implements the verb-prediction experiment of SQUID-E (Sanders et al., 2022) §5.2 with supplement D.2–D.3 (Tables 2
and 8, mean and per-judgment "alt" bins), and scores the trained classifiers of §5.1/§5.3 with D.4 the same way.
"""
