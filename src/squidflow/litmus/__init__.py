"""The probability distribution of a guesser as a litmus test of its grounding, on GuessWhat?! first turns.
Rule-based soft labels (category; spatial R1–R3), their check against human reference sets, guessers trained with
CE and KL, and the litmus metrics: GuessWhat?! litmus test (Lucassen, Testoni and Bernardi, 2022) §3, §4.2, §5, App. A.
"""
