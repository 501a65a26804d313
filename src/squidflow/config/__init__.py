"""A configuration, read and checked before any job: the YAML and its schema (`validation`), what a config may ask
for (`bounds`), which files make it (`layers`), what a config of your own must set (`own_data`) and the config
`squidflow init` writes for a folder of videos (`from_folder`)."""
