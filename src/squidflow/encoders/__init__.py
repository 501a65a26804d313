"""The pretrained models every stage loads: image backbones (`pretrained`, their names without torch in
`backbone_names`), CLIP (`clip`) and SBERT sentence embeddings (`text_embed`)."""
