"""Outputs: functions of the board's view-model (:mod:`sourcesum.board.view`) and of per-pair
data, for people (Markdown, LaTeX, terminal tables, plot, static site, per-pair view) and for
machines (JSON, CSV, TREC). None reads a store or instantiates a ranker."""
