"""Stage publish: the dataset handed over the way the field takes datasets (results/publish/<name>/).

- `data/<config>/<split>-XXXXX-of-YYYYY.parquet`: one `datasets` config per table (images, judgments, soft_labels,
  comparison_sets, keywords), split as the `datasets` library names splits; `datasets.load_dataset(folder, config)`
  reads each (squidflow.publish.tables builds the rows, squidflow.publish.shards writes them);
- `README.md`: the dataset card with the Hugging Face Hub's YAML header, every figure from the run's own outputs
  (squidflow.publish.card);
- `croissant.json`: Croissant 1.1 with its Responsible-AI fields, validated and read back by mlcroissant before the
  folder counts as done (squidflow.publish.croissant), as the NeurIPS datasets track asks;
- `lewidi/`: the judgments of each variant in the LeWiDi 2025 JSON format (squidflow.publish.lewidi).

`squidflow publish check FOLDER` runs the same checks on any such folder (squidflow.publish.check). The SQUID-E
release publishes in `reference` mode, as its authors published it: video ids and frame numbers, no pixels.
"""
