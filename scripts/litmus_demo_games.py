"""Rule litmus_demo_games: the offline demo's SYNTHETIC games in the GuessWhat?! JSON Lines format."""

from squidflow.runtime.logs import setup

log = setup(snakemake)

from squidflow.contracts import io
from squidflow.demo.litmus import demo_games

train, test = demo_games(**snakemake.params.demo)
io.write_json_lines(snakemake.output.train, train)
io.write_json_lines(snakemake.output.test, test)
log.info("wrote %d train and %d test SYNTHETIC games", len(train), len(test))
