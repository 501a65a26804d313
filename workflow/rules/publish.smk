# Stage: the dataset handed over (results/publish/<publish.name>/): Parquet configs that `datasets.load_dataset`
# reads, the dataset card, croissant.json with its Responsible-AI fields (validated and read back by mlcroissant in
# the job), and the judgments in the LeWiDi 2025 format. Library: squidflow.publish; check any folder with
# `squidflow publish check FOLDER`.


include: "inputs/publish.smk"


rule publish_dataset:
    input:
        unpack(get_publish_inputs),
    output:
        directory(PUBLISH_DIR),
    log:
        "logs/publish_dataset/publish_dataset.log",
    benchmark:
        "results/benchmarks/publish_dataset/publish_dataset.tsv"
    conda:
        "../../envs/publish.yaml"
    params:
        publish=PUBLISH,
        demo=PUBLISH_DEMO,
        judgment_source=JUDGMENT_SOURCE,
        platform=config["annotation"]["platform"],
        sources=[s["type"] for s in config["sources"]],
        intervals=config["intervals"],
        frames=get_publish_frames_settings(),
    script:
        "../../scripts/publish_dataset.py"
