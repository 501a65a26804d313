"""Arithmetic the stages share: certainty bins (`certainty`), the binned gap every ECE sums (`ece`) and confidence
intervals for every number of a table (`intervals`)."""
