"""How a job runs: its log (`logs`), its GPU slot (`gpu`), Slurm (`slurm`, `slurm_plugin`), the targets a user may
name (`targets`), which configuration made a results folder (`run_record`) and the dependency versions squidflow was
tested on (`upstream`)."""
