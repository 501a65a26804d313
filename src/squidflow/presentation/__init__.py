"""How a result is shown to people: one look for every figure (`style`) and one writer for every Markdown and LaTeX
table (`table_format`)."""
