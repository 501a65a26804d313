"""Stage `training` (workflow/rules/training.smk): seed-replicated classifiers and the training tables.

Image pools SD and SE, the augmentations and calibration methods of SQUID-E (Sanders et al., 2022) §5.1, §5.3 and
supplement D.1, one run per (training set, method, seed), and Tables 1, 3 and 9 (supplement D.4) as mean ± std;
each way the authors' released code defines them (image sets, ECE, trainable layers, RS/MC, GA/AU) a config choice.
"""
