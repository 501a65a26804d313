"""Stage `demo` (workflow/rules/demo.smk): an offline corpus of synthetic event videos whose every frame is known.

Each event is an ffmpeg scene with its own look; cross-fades, occlusion, blur and darkness make frames ambiguous the way
real uploads are (SQUID-E (Sanders et al., 2022) §3.1), and per-frame truth lets every later stage be checked exactly.
Every other SIMULATED input lives here too: the annotator panel and its keywords (`panel`, `keyword_panel`), its
Label Studio exports (`label_studio`), subtitles (`subtitles`) and the GuessWhat?! games (`litmus`).
"""
