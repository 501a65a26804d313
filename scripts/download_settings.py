"""Rule download_settings: write the `download` settings the shard jobs read (an ancient input: no rerun on change)."""

from squidflow.logs import setup

log = setup(snakemake)

import json

from squidflow.io import write_text
from squidflow.videos.download import DownloadOptions

settings = dict(snakemake.params.download)
DownloadOptions.from_config(settings)  # a key the library does not know fails here, not in a download job
log.info("download settings: %s", settings)
write_text(snakemake.output[0], json.dumps(settings, indent=2, sort_keys=True) + "\n")
