# Stage: probability distributions as a litmus test of grounding (GuessWhat?! litmus test, Lucassen, Testoni and
# Bernardi 2022: §3 soft labels and the human sample, §4 guessers and metrics, §5, Appendix A rules R1-R3).
# games (GuessWhat?! JSON Lines; the offline demo writes synthetic ones) -> first turns -> rule soft labels
# -> counts, rule accuracy, human sample check -> guessers (STL-CE, MTL-KL per seed; probability files)
# -> litmus metrics -> Tables 2 (correlation) and 3 (well-grounded QA pairs).


include: "inputs/litmus.smk"


# Tables and figures drawn from result tables (a second or two at any scale) run where Snakemake runs
# (localrules): on a cluster, a Slurm job each would wait in the queue and start a Snakemake for them.
localrules:
    litmus_tables,


rule litmus_games:
    input:
        get_litmus_game_files,
    output:
        LITMUS_GAMES_TABLE,
    log:
        "logs/litmus_games/litmus_games.log",
    conda:
        "../../envs/reporting.yaml"
    params:
        sources=get_litmus_game_sources(),
        cache_dir=DOWNLOADS_DIR,
    script:
        "../../scripts/litmus_games.py"


rule litmus_soft_labels:
    input:
        LITMUS_GAMES_TABLE,
    output:
        LITMUS_SOFT_LABELS_TABLE,
    log:
        "logs/litmus_soft_labels/litmus_soft_labels.log",
    conda:
        "../../envs/reporting.yaml"
    params:
        normalisation=LITMUS["normalisation"],
    script:
        "../../scripts/litmus_soft_labels.py"


rule litmus_dataset_tables:
    input:
        games=LITMUS_GAMES_TABLE,
        soft_labels=LITMUS_SOFT_LABELS_TABLE,
    output:
        questions_csv=report(
            "results/tables/litmus_questions.csv",
            caption="../report/litmus/questions.rst",
            category="Litmus test (GuessWhat?!)",
            subcategory="Soft labels",
            labels={"table": "first turns per question type", "format": "csv"},
        ),
        questions_md=report(
            "results/tables/litmus_questions.md",
            caption="../report/litmus/questions.rst",
            category="Litmus test (GuessWhat?!)",
            subcategory="Soft labels",
            labels={"table": "first turns per question type", "format": "md"},
        ),
        rules_csv=report(
            "results/tables/litmus_rules.csv",
            caption="../report/litmus/rules.rst",
            category="Litmus test (GuessWhat?!)",
            subcategory="Soft labels",
            labels={"table": "rule accuracy on the target", "format": "csv"},
        ),
        rules_md=report(
            "results/tables/litmus_rules.md",
            caption="../report/litmus/rules.rst",
            category="Litmus test (GuessWhat?!)",
            subcategory="Soft labels",
            labels={"table": "rule accuracy on the target", "format": "md"},
        ),
    log:
        "logs/litmus_dataset_tables/litmus_dataset_tables.log",
    conda:
        "../../envs/reporting.yaml"
    params:
        note=get_litmus_data_note(),
        intervals=config["intervals"],
    script:
        "../../scripts/litmus_dataset_tables.py"


rule litmus_human_check:
    input:
        unpack(get_litmus_human_inputs),
    output:
        csv=report(
            "results/tables/litmus_human.csv",
            caption="../report/litmus/human.rst",
            category="Litmus test (GuessWhat?!)",
            subcategory="Human sample check",
            labels={"table": "human vs rule soft labels", "format": "csv"},
        ),
        md=report(
            "results/tables/litmus_human.md",
            caption="../report/litmus/human.rst",
            category="Litmus test (GuessWhat?!)",
            subcategory="Human sample check",
            labels={"table": "human vs rule soft labels", "format": "md"},
        ),
    log:
        "logs/litmus_human_check/litmus_human_check.log",
    conda:
        "../../envs/reporting.yaml"
    params:
        annotations=get_litmus_human_annotations(),
        normalisation=LITMUS["normalisation"],
        cache_dir=DOWNLOADS_DIR,
        note=get_litmus_data_note(),
        intervals=config["intervals"],
    script:
        "../../scripts/litmus_human_check.py"


# Every guesser run (litmus.guesser.methods x seeds) in one job: one torch process, one GPU slot, the runs one after
# the other, each seeded afresh (train_guesser) and writing its own run folder and log, so the files are the same
# bytes as from a job per run; the runs are small (an LSTM over the first turns), the torch start-up is not. Asking
# for one run's file builds them all.
rule litmus_train_guesser:
    input:
        games=LITMUS_GAMES_TABLE,
        soft_labels=LITMUS_SOFT_LABELS_TABLE,
    output:
        probabilities=expand(LITMUS_RUN_PROBABILITIES, method=LITMUS_METHODS, seed=LITMUS_SEEDS),
        train_log=expand("results/litmus/runs/{method}/seed{seed}/train.log", method=LITMUS_METHODS, seed=LITMUS_SEEDS),
    log:
        expand("logs/litmus_train_guesser/{method}/seed{seed}.log", method=LITMUS_METHODS, seed=LITMUS_SEEDS),
    benchmark:
        "results/benchmarks/litmus_train_guesser/litmus_train_guesser.tsv"
    conda:
        "../../envs/training.yaml"
    threads: LITMUS["guesser"]["threads"]
    resources:
        gpu=1,
    params:
        guesser=config_fields(GuesserConfig, LITMUS["guesser"]),
        train_split=LITMUS["train_split"],
        eval_split=LITMUS["eval_split"],
    script:
        "../../scripts/litmus_train_guesser.py"


rule litmus_model_probabilities:
    input:
        unpack(get_litmus_model_inputs),
    output:
        "results/litmus/models/{model}/probabilities.parquet",
    log:
        "logs/litmus_model_probabilities/{model}.log",
    wildcard_constraints:
        model=r"[A-Za-z0-9][A-Za-z0-9._+\-]*",
    conda:
        "../../envs/reporting.yaml"
    params:
        source=get_litmus_model_source,
        cache_dir=DOWNLOADS_DIR,
    script:
        "../../scripts/litmus_model_probabilities.py"


rule litmus_metrics:
    input:
        soft_labels=LITMUS_SOFT_LABELS_TABLE,
        probabilities=get_litmus_probability_files(),
    output:
        metrics=LITMUS_METRICS_TABLE,
        intervals=LITMUS_METRIC_INTERVALS_TABLE,
    log:
        "logs/litmus_metrics/litmus_metrics.log",
    conda:
        "../../envs/reporting.yaml"
    params:
        taus=LITMUS["taus"],
        eval_split=LITMUS["eval_split"],
        intervals=config["intervals"],
    script:
        "../../scripts/litmus_metrics.py"


rule litmus_tables:
    input:
        metrics=LITMUS_METRICS_TABLE,
        intervals=LITMUS_METRIC_INTERVALS_TABLE,
    output:
        correlation_csv=report(
            "results/tables/litmus_correlation.csv",
            caption="../report/litmus/correlation.rst",
            category="Litmus test (GuessWhat?!)",
            subcategory="Guessers",
            labels={"table": "Table 2: accuracy and correlation", "format": "csv"},
        ),
        correlation_md=report(
            "results/tables/litmus_correlation.md",
            caption="../report/litmus/correlation.rst",
            category="Litmus test (GuessWhat?!)",
            subcategory="Guessers",
            labels={"table": "Table 2: accuracy and correlation", "format": "md"},
        ),
        grounding_csv=report(
            "results/tables/litmus_grounding.csv",
            caption="../report/litmus/grounding.rst",
            category="Litmus test (GuessWhat?!)",
            subcategory="Guessers",
            labels={"table": "Table 3: well-grounded QA pairs", "format": "csv"},
        ),
        grounding_md=report(
            "results/tables/litmus_grounding.md",
            caption="../report/litmus/grounding.rst",
            category="Litmus test (GuessWhat?!)",
            subcategory="Guessers",
            labels={"table": "Table 3: well-grounded QA pairs", "format": "md"},
        ),
    log:
        "logs/litmus_tables/litmus_tables.log",
    conda:
        "../../envs/reporting.yaml"
    params:
        models=get_litmus_model_order(),
        note=get_litmus_data_note(),
        taus=LITMUS["taus"],
        normalisation=LITMUS["normalisation"],
    script:
        "../../scripts/litmus_tables.py"
