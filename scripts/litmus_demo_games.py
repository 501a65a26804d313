"""Rule litmus_demo_games: the offline demo's SYNTHETIC games in the GuessWhat?! JSON Lines format."""

from squidflow.logs import setup

log = setup(snakemake)

from squidflow.demo.litmus import write_demo_games

demo = snakemake.params.demo
write_demo_games(snakemake.output.train, snakemake.output.test, **demo)
log.info("wrote %d train and %d test SYNTHETIC games", demo["train_games"], demo["test_games"])
