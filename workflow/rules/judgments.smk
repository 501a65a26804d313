# Stage: human judgments (SQUID-E §3.2, §4; SQUID-E supplement A.2, B, C, D.3).
# annotation tasks (variants A, B) -> judgments (MTurk batch results | simulated panel | SQUID-E release)
# -> annotator quality -> image scores -> Table 7 (agreement) and Figure 3.
# `judgments.source: release` needs neither videos nor frames (config/squid-e-release.yaml).


rule annotation_hits:
    input:
        frames="results/dataset/frames.parquet",
    output:
        hits_A="results/annotation/hits_A.csv",
        hits_B="results/annotation/hits_B.csv",
        template="results/annotation/hit_template.html",
        preview="results/annotation/hit_preview.html",
    params:
        annotation=config["annotation"],
        events=config["events"],
    log:
        "logs/annotation_hits/annotation_hits.log",
    conda:
        "../../envs/reporting.yaml"
    script:
        "../../scripts/annotation_hits.py"


rule simulate_panel:
    input:
        hits_A="results/annotation/hits_A.csv",
        hits_B="results/annotation/hits_B.csv",
        truth="results/videos/demo/truth.parquet",
    output:
        batch="results/judgments/simulated/batch_results.csv",
        repeat="results/judgments/simulated/batch_results_repeat.csv",
    params:
        panel=config["judgments"]["panel"],
        assignments_per_hit=config["annotation"]["assignments_per_hit"],
    log:
        "logs/simulate_panel/simulate_panel.log",
    conda:
        "../../envs/reporting.yaml"
    script:
        "../../scripts/simulate_panel.py"


rule ingest_judgments:
    input:
        unpack(get_judgment_inputs),
    output:
        judgments="results/judgments/judgments.parquet",
        report="results/judgments/ingest_report.md",
    params:
        source=JUDGMENT_SOURCE,
        release_csv=get_release_judgments_csv(),
        batches=get_judgment_batches(),
        on_error=config["judgments"]["on_error"],
        cache_dir="results/downloads",
    log:
        "logs/ingest_judgments/ingest_judgments.log",
    conda:
        "../../envs/reporting.yaml"
    script:
        "../../scripts/ingest_judgments.py"


rule annotator_quality:
    input:
        unpack(get_judgment_frames),
        judgments="results/judgments/judgments.parquet",
    output:
        report="results/judgments/annotator_report.parquet",
    params:
        quality=config["judgments"]["quality"],
    log:
        "logs/annotator_quality/annotator_quality.log",
    conda:
        "../../envs/reporting.yaml"
    script:
        "../../scripts/annotator_quality.py"


rule aggregate_judgments:
    input:
        judgments="results/judgments/judgments.parquet",
        report="results/judgments/annotator_report.parquet",
    output:
        scores="results/judgments/image_scores.parquet",
        high_certainty="results/judgments/high_certainty.csv",
    params:
        high_certainty=config["judgments"]["high_certainty"],
    log:
        "logs/aggregate_judgments/aggregate_judgments.log",
    conda:
        "../../envs/reporting.yaml"
    script:
        "../../scripts/aggregate_judgments.py"


rule agreement_table:
    input:
        judgments="results/judgments/judgments.parquet",
        report="results/judgments/annotator_report.parquet",
        high_certainty="results/judgments/high_certainty.csv",
    output:
        csv="results/tables/table7_agreement.csv",
        md="results/tables/table7_agreement.md",
    params:
        pooling=config["judgments"]["pooling"],
        kappa_bins=config["judgments"]["kappa_bins"],
    log:
        "logs/agreement_table/agreement_table.log",
    conda:
        "../../envs/reporting.yaml"
    script:
        "../../scripts/agreement_table.py"


rule fig3_judgments:
    input:
        scores="results/judgments/image_scores.parquet",
    output:
        png="results/figures/fig3_judgments.png",
    params:
        title=FIG3_TITLES[JUDGMENT_SOURCE],
    log:
        "logs/fig3_judgments/fig3_judgments.log",
    conda:
        "../../envs/reporting.yaml"
    script:
        "../../scripts/fig3_judgments.py"
