"""Stage `frames` (workflow/rules/frames.smk): frames by seeking, backbone features, six frames per video, splits.

36 frames per video, ResNet50 (or EfficientNet-Lite0) features with two pooling layers, k-means with k=6 and the
nearest frame per centroid (SQUID-E (Sanders et al., 2022) supplement A.1); train/val/test splits by video.
"""
