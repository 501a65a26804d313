"""Label Studio (annotation.platform label_studio): the judgments stage's tasks on a self-hosted server and its
exports read back as judgments (SQUID-E §3.2; Sherlock §4.3 for the comparison sets). One module per side of the
exchange, so a reader finds each where the data goes:

- `tasks`: the labeling configs and import JSON of the annotation tasks, and the names every other module shares
  (the platforms, the tasks, the image keys of a task); judgments written in the export format;
- `export`: one JSON export read into the judgments schema, with the `on_error` rule of the MTurk reader;
- `run_exports`: a run's exports into one judgments table and its ingestion report (rule ingest_judgments);
- `server`: `squidflow label-studio push | pull` against a running server, through `client`;
- `client`: the SDK calls, standard library only, run by path in whichever Python has `label-studio-sdk`.

The demo's simulated exports are in `squidflow.demo.label_studio`.
"""
