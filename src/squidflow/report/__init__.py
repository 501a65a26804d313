"""The HTML report a researcher opens after a run (`make report`): every table and figure captioned, in one page.

It gathers SQUID-E's tables and figures (Sanders et al., 2022, §4-§5 and supplement D) and Sherlock's comparison sets
(Hessel et al., 2022, §4.3 and Appendix E); this package holds the self-contained annotation task pages and the run
summary (what ran, with which config files, how long). The plotting style every figure uses is `squidflow.presentation.style`.
"""
