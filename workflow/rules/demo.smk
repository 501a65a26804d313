# Stage: the synthetic demo video corpus (foundation issue). Filled in by its owner.
