# Stage: the dataset handed over (results/publish/<publish.name>/): Parquet configs that `datasets.load_dataset`
# reads, the dataset card, croissant.json with its Responsible-AI fields (validated and read back by mlcroissant in
# the job), and the judgments in the LeWiDi 2025 format. Library: squidflow.publish; check any folder with
# `squidflow publish check FOLDER`.


include: "inputs/publish.smk"


# A change of method (squidflow.publish.methods) is recorded once, as the next results/publish/methods/<n>.json.
if NEW_METHOD:

    rule method_record:
        output:
            squidflow_methods.record_path(NEW_METHOD),
        log:
            "logs/method_record/method_record.log",
        conda:
            "../../envs/publish.yaml"
        params:
            method=squidflow_methods.method(config),
            n=NEW_METHOD,
        script:
            "../../scripts/method_record.py"


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
