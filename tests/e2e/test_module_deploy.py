"""squidflow used the way Snakemake users take a workflow: deployed by `snakedeploy deploy-workflow`, imported by the
user's own Snakefile as a module, with the user's config and results in the user's folder.

The checkout is copied (its tracked and not-ignored files, as a fresh clone has them) into a folder of its own,
committed and tagged there like a release, with the shared public data beside it (`../shared/data`, as beside a
clone). `snakedeploy deploy-workflow` then writes the user's folder: `workflow/Snakefile` (a `module squidflow:`
with `config: config` and `use rule * from squidflow`), a copy of `config/`, `profiles/` and the licence. snakedeploy
0.17.1 writes a local repository's Snakefile as the relative path `"Snakefile"`, which Snakemake resolves from the
user's `workflow/` folder: the test points that one line at the module's Snakefile, which is what a user of a local
checkout writes (a GitHub repository gets `github("owner/repo", path="Snakefile", tag="v0.3.0")`).

The user's config asks for Table 7 from the SQUID-E release's judgments (config/squid-e-release.yaml's path: no
video, four jobs) and names the judgments by a path relative to the workflow's clone, so the run also shows that the
module finds its own files (library, schema, scripts, captions, data beside the clone) from its folder and not from
the user's.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from helpers.checkout import copy_checkout
from helpers.runs import cores, planned_jobs, snakemake

import squidflow

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent

TABLE7 = "results/tables/table7_agreement.csv"


def deploy(repo: Path, dest: Path) -> None:
    """`snakedeploy deploy-workflow` of the local repository, then the module's Snakefile as an absolute path."""
    res = subprocess.run(
        [str(BIN / "snakedeploy"), "deploy-workflow", str(repo), str(dest), "--branch", "main", "--name", "squidflow"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert res.returncode == 0, res.stdout + res.stderr
    snakefile = dest / "workflow" / "Snakefile"
    text = snakefile.read_text()
    declared = re.search(r"snakefile:\s*\n\s*\"([^\"]+)\"", text)
    assert declared, text
    if not (snakefile.parent / declared.group(1)).resolve() == (repo / "Snakefile").resolve():
        text = text.replace(f'"{declared.group(1)}"', f'"{repo / "Snakefile"}"')
    assert "config:\n        config" in text and "use rule * from squidflow" in text
    snakefile.write_text(text)


def in_users_folder(folder: Path, *args: str) -> subprocess.CompletedProcess:
    """snakemake run in the user's folder, as the user runs it there (the module brings its library)."""
    return snakemake(*args, cwd=folder, timeout=600)


def test_workflow_files_do_not_locate_themselves_from_the_main_snakefile():
    """`workflow.basedir` is the folder of the main Snakefile: the user's, when squidflow is a module. The workflow's
    own files are found from SQUIDFLOW_ROOT (workflow/checks.smk) or by paths relative to the rules file."""
    offenders = [
        f"{p.relative_to(ROOT)}:{n}"
        for p in [ROOT / "Snakefile", *sorted((ROOT / "workflow").rglob("*.smk"))]
        for n, line in enumerate(p.read_text().splitlines(), 1)
        if "workflow.basedir" in line.split("#", 1)[0]
    ]
    assert not offenders, f"use SQUIDFLOW_ROOT instead of workflow.basedir: {offenders}"


@pytest.mark.slow
def test_deployed_as_a_module_runs_in_the_users_folder(tmp_path, shared_data):
    upstream = tmp_path / "upstream"
    (upstream / "shared").mkdir(parents=True)
    (upstream / "shared" / "data").symlink_to(shared_data)  # public data beside the clone, as ../shared/data
    repo = copy_checkout(upstream / "squidflow", tag=f"v{squidflow.__version__}")
    user = tmp_path / "my-analysis"
    deploy(repo, user)

    # the user's own config: the deployed copy of config/config.yaml, edited
    config_path = user / "config" / "config.yaml"
    config = yaml.safe_load(config_path.read_text())
    config["stages"] = ["judgments"]
    config.setdefault("judgments", {}).update(source="release", kappa_bins=[3, 4, 5])  # the demo's: the default
    config["squid_e_release"] = {"judgments_csv": "../shared/data/squid-e/huj_annotations.csv"}  # beside the clone
    config_path.write_text(yaml.safe_dump(config, sort_keys=False))

    res = in_users_folder(user, "--cores", str(cores()), TABLE7)
    assert res.returncode == 0, res.stdout[-4000:] + res.stderr[-4000:]
    table = (user / TABLE7).read_text()
    assert table.count("\n") >= 2, table

    # the report's front page names the release and the commit of the module it ran (git describe of the clone)
    res = in_users_folder(user, "--report", "results/report.html", TABLE7)
    assert res.returncode == 0, res.stdout[-4000:] + res.stderr[-4000:]
    front = (user / "results" / "report.html").read_text()
    assert f"squidflow {squidflow.__version__} (v{squidflow.__version__})" in front

    # the user's folder holds their Snakefile, config (and what snakedeploy copies with it), results and logs;
    # the workflow's folder is left exactly as committed
    assert {p.name for p in user.iterdir()} <= {
        "workflow",
        "config",
        "profiles",
        "LICENSE",
        "results",
        "logs",
        ".snakemake",
    }
    assert [p.name for p in (user / "workflow").iterdir()] == ["Snakefile"]
    assert sorted(p.name for p in (user / "config").iterdir()) == sorted(p.name for p in (ROOT / "config").iterdir())
    status = subprocess.run(["git", "-C", str(repo), "status", "--porcelain"], capture_output=True, text=True)
    assert status.stdout == "", status.stdout

    # nothing to redo; one config value changed redoes exactly the job that reads it
    res = in_users_folder(user, "-n", TABLE7)
    assert res.returncode == 0 and "Nothing to be done" in res.stdout + res.stderr, res.stdout + res.stderr
    config["judgments"]["kappa_bins"] = [3, 4, 6]
    config_path.write_text(yaml.safe_dump(config, sort_keys=False))
    res = in_users_folder(user, "-n", TABLE7)
    assert res.returncode == 0, res.stdout + res.stderr
    assert planned_jobs(res.stdout) == {"agreement_table": 1}

    # the same module under a prefix (`use rule * from squidflow as squidflow_*`), in a folder of its own
    prefixed = tmp_path / "prefixed"
    shutil.copytree(user / "config", prefixed / "config")
    (prefixed / "workflow").mkdir()
    (prefixed / "workflow" / "Snakefile").write_text(
        (user / "workflow" / "Snakefile")
        .read_text()
        .replace("use rule * from squidflow", "use rule * from squidflow as squidflow_*")
    )
    res = in_users_folder(prefixed, "-n", TABLE7)
    assert res.returncode == 0, res.stdout + res.stderr
    assert planned_jobs(res.stdout) == {
        "squidflow_ingest_judgments": 1,
        "squidflow_annotator_quality": 1,
        "squidflow_aggregate_judgments": 1,
        "squidflow_agreement_table": 1,
    }
    # and the whole demo plans there under the prefixed names (input functions, checkpoints, `rules.` references)
    shutil.copy2(repo / "config" / "config.yaml", prefixed / "config" / "config.yaml")
    res = in_users_folder(prefixed, "-n")
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    plan = planned_jobs(res.stdout)
    assert plan["squidflow_all"] == 1 and plan["squidflow_make_demo_videos"] == 4 and plan["squidflow_run_summary"] == 1
    assert all(name.startswith("squidflow_") for name in plan), plan

    # the user's own config file, whatever its name, is read strictly: a key given twice names its file and line
    mine = prefixed / "config" / "mine.yaml"
    mine.write_text((prefixed / "config" / "config.yaml").read_text() + "on_empty: error\non_empty: skip\n")
    (prefixed / "config" / "config.yaml").unlink()
    snakefile = prefixed / "workflow" / "Snakefile"
    snakefile.write_text(snakefile.read_text().replace('"config/config.yaml"', '"config/mine.yaml"'))
    res = in_users_folder(prefixed, "-n")
    out = res.stdout + res.stderr
    assert res.returncode != 0 and "config/mine.yaml line" in out and "'on_empty' is given twice" in out, out
