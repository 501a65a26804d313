"""Rule download_settings: write the `download` settings the shard jobs read (an ancient input: no rerun on change)."""

from squidflow.runtime.logs import setup

log = setup(snakemake)

import json

from squidflow.contracts.io import write_text
from squidflow.fetch import redact_url_credentials
from squidflow.videos.download import DownloadOptions

settings = dict(snakemake.params.download)
DownloadOptions.from_config(settings)  # a key the library does not know fails here, not in a download job
if settings.get("proxy"):  # its password reaches the download jobs in their environment (squidflow.fetch.PROXY_ENV)
    settings["proxy"] = redact_url_credentials(settings["proxy"])
log.info("download settings: %s", settings)
write_text(snakemake.output[0], json.dumps(settings, indent=2, sort_keys=True) + "\n")
