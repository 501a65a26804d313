"""Stage `text` (workflow/rules/text.smk): how much of an image the text that comes with it already gives away.

Per frame, its co-occurring text (title, description, tags, subtitles around its timestamp) gives tf and tf·idf
keyword baselines, scored with the SemEval best/oot measures against human keywords, and a text-only event
classifier: "Apples to Oranges" (Mason and Charniak, NAACL 2012), its baselines and the UNT dataset's evaluation.
"""
